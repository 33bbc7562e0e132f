#!/usr/bin/env bash
# Starts the local PostgreSQL cluster and creates the role and database the store tests use
# (postgres://iocap:iocap@127.0.0.1:5432/iocap_test). Idempotent; needs root and Debian's
# postgresql package.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
if ! command -v pg_lsclusters >/dev/null; then
  echo "postgresql is not installed (apt-get install postgresql)" >&2
  exit 1
fi
ver=$(pg_lsclusters -h | awk 'NR==1 {print $1}')
name=$(pg_lsclusters -h | awk 'NR==1 {print $2}')
if [ -z "$ver" ]; then
  ver=$(ls /usr/lib/postgresql | sort -n | tail -1)
  pg_createcluster "$ver" main >/dev/null
  name=main
fi
pg_ctlcluster "$ver" "$name" start 2>/dev/null || true
for _ in $(seq 1 30); do
  su postgres -c "psql -qtAc 'SELECT 1'" >/dev/null 2>&1 && break
  sleep 1
done
su postgres -c "psql -qtAc \"SELECT 1 FROM pg_roles WHERE rolname = 'iocap'\"" | grep -q 1 ||
  su postgres -c "psql -qc \"CREATE ROLE iocap LOGIN PASSWORD 'iocap'\""
su postgres -c "psql -qtAc \"SELECT 1 FROM pg_database WHERE datname = 'iocap_test'\"" | grep -q 1 ||
  su postgres -c "psql -qc 'CREATE DATABASE iocap_test OWNER iocap'"
echo "PostgreSQL $ver/$name is up: postgres://iocap:iocap@127.0.0.1:5432/iocap_test"
