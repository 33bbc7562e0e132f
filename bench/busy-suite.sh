#!/usr/bin/env bash
# bench/busy-suite.sh: the test suite on a busy machine (issue 36 §3), to find the tests that
# lean on a margin of time that load can eat.
#
# Not a benchmark of speed: it runs the README's test command (`cargo test`, every suite, with
# --no-fail-fast so one failure does not hide the suites after it) ROUNDS times, each with
# fio reading the disk (8K random O_DIRECT reads at qd 16, io_uring, on a file of its own) and
# two CPU hogs beside it, and lists every test that failed, with how often. The load stops
# when the suite ends. Run as root (the device tests need it); a test that passes here passes
# in a CI run with other jobs beside it.
#
# Knobs (environment):
#   ROUNDS     suite runs                                  (default 3)
#   HOGS       CPU hogs                                    (default 2)
#   FIO_FILE   fio's file (removed after)                  (default target/busy-fio.dat)
#   FILTER     a test-name filter for cargo test           (default: every test)
#   SUITE      cargo test's target selection               (default: every suite; e.g.
#              "--test integration" for the integration suite alone)
#   LOG_DIR    each round's output                         (default target/busy-suite)
#
# Prints "busy suite: N rounds, M failures" and one line per failing test; exits 1 when any
# test failed, 2 on bad input or a missing fio.
set -euo pipefail

die() { echo "busy-suite.sh: error: $*" >&2; exit 2; }

ROUNDS=${ROUNDS:-3}
HOGS=${HOGS:-2}
FIO_FILE=${FIO_FILE:-target/busy-fio.dat}
FILTER=${FILTER:-}
LOG_DIR=${LOG_DIR:-target/busy-suite}
SUITE=${SUITE:-}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive whole number, not '$ROUNDS'"
[[ $HOGS =~ ^[0-9]+$ ]] || die "HOGS must be a whole number, not '$HOGS'"
command -v fio >/dev/null || die "fio is not installed (apt-get install fio)"

cd "$(dirname "$0")/.."
mkdir -p "$LOG_DIR" "$(dirname "$FIO_FILE")"
# shellcheck disable=SC2086 # SUITE is a list of cargo arguments
cargo test $SUITE --no-run >/dev/null 2>&1 || die "the suite does not build"

load=()
stop_load() {
  for p in "${load[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -f "$FIO_FILE"
}
trap stop_load EXIT

failures=0
for round in $(seq 1 "$ROUNDS"); do
  load=()
  for _ in $(seq 1 "$HOGS"); do
    (while :; do :; done) &
    load+=($!)
  done
  fio --name=busy --filename="$FIO_FILE" --size=512M --rw=randread --bs=8k --direct=1 \
    --ioengine=io_uring --iodepth=16 --time_based --runtime=3600 >/dev/null 2>&1 &
  load+=($!)
  log="$LOG_DIR/round-$round.log"
  echo "busy suite: round $round of $ROUNDS ($HOGS hogs, fio on $FIO_FILE)" >&2
  # shellcheck disable=SC2086
  cargo test --no-fail-fast $SUITE -- $FILTER >"$log" 2>&1 || true
  stop_load
  n=$(grep -c '\.\.\. FAILED$' "$log" || true)
  failures=$((failures + n))
  grep '\.\.\. FAILED$' "$log" | sed "s/^test /round $round: /; s/ \.\.\. FAILED$//" || true
  grep -q '^test result:' "$log" || echo "round $round: the suite did not finish ($log)"
done
echo "busy suite: $ROUNDS rounds, $failures failures (logs in $LOG_DIR)"
[ "$failures" -eq 0 ]
