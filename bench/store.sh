#!/usr/bin/env bash
# bench/store.sh: time `iocap history`, `compare` and `show` on a result store holding 10,000
# runs, in SQLite and in PostgreSQL, and write the figures to docs/PERFORMANCE.md.
#
# A benchmark, not a test. The requirement it checks: history and compare on a store of 10,000
# runs answer in under 1 s. It fills a fresh store with constructed runs (`iocap store-fill`,
# timed: runs saved per second), then runs each operation ROUNDS times (plus one untimed warm-up),
# taking the wall time of the whole process (start-up, opening the store, the query, the output
# to /dev/null), and reports the median and the maximum. Operations taking 1 s or more are
# marked MISSED.
#
# Usage: bench/store.sh [--runs N] [--rounds N] [--pg URL|none] [--dir DIR] [--out FILE]
#                       [--no-build] [--keep]
#   --runs N       runs in each store                                    (default 10000)
#   --rounds N     timed runs of each operation                          (default 5)
#   --pg URL|none  PostgreSQL database to use; the script creates its own schema iocap_bench in
#                  it (dropped and recreated, dropped again at the end)  (default
#                  postgres://iocap:iocap@127.0.0.1:5432/iocap_test; none skips PostgreSQL)
#   --dir DIR      where the temporary SQLite store goes (default: a new directory under $TMPDIR
#                  or /tmp); put it on the volume you want to measure
#   --out FILE     the report to update (default docs/PERFORMANCE.md)
#   --no-build     do not run `cargo build --release`; use the binary that is there
#   --keep         keep the SQLite store and the PostgreSQL schema afterwards (for EXPLAIN)
#
# The binary is $CARGO_TARGET_DIR/release/iocap (default target/release/iocap in the repository).
# It writes only the temporary store, the schema iocap_bench and the section
# "## Result store: history and compare on 10,000 runs" of docs/PERFORMANCE.md, which it replaces
# (or appends); the rest of that file is left as it is. If a step fails, the file is unchanged.
set -euo pipefail

die() { echo "store.sh: error: $*" >&2; exit 2; }
say() { echo "store.sh: $*" >&2; }

CALLER_PWD=$PWD
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

# ---------------------------------------------------------------------------------------------
# Options and pre-flight checks

RUNS=10000
ROUNDS=5
PG_URL=postgres://iocap:iocap@127.0.0.1:5432/iocap_test
PG_SCHEMA=iocap_bench
DIR=
OUT=$REPO/docs/PERFORMANCE.md
BUILD=1
KEEP=0
while (($#)); do
    case $1 in
        --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
        --rounds) ROUNDS=${2:?--rounds needs a number}; shift 2 ;;
        --pg) PG_URL=${2:?--pg needs a URL or none}; shift 2 ;;
        --dir) DIR=${2:?--dir needs a directory}; shift 2 ;;
        --out) OUT=${2:?--out needs a file}; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --keep) KEEP=1; shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option '$1' (see --help)" ;;
    esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive whole number (got '$RUNS')"
((RUNS >= 10)) || die "--runs must be at least 10"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive whole number (got '$ROUNDS')"
case $OUT in /*) ;; *) OUT=$CALLER_PWD/$OUT ;; esac
command -v python3 >/dev/null || die "python3 is required (apt-get install python3)"

TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
case $TARGET_DIR in /*) ;; *) TARGET_DIR=$REPO/$TARGET_DIR ;; esac
IOCAP=$TARGET_DIR/release/iocap
if ((BUILD)); then
    command -v cargo >/dev/null || die "cargo is required to build iocap (or pass --no-build)"
    say "building iocap (cargo build --release)"
    cargo build --release --quiet --bin iocap
fi
[[ -x $IOCAP ]] || die "no iocap binary at $IOCAP (build it, or set CARGO_TARGET_DIR)"

if [[ -n $DIR ]]; then
    case $DIR in /*) ;; *) DIR=$CALLER_PWD/$DIR ;; esac
    mkdir -p "$DIR"
    WORK=$(mktemp -d "$DIR/iocap-store-bench.XXXXXX")
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/iocap-store-bench.XXXXXX")
fi
SQLITE_DB=$WORK/results.db

PG_STORE=
PG_NOTE=
# the URL for the report, without its password
PG_URL_SHOWN=$(sed -E 's#^([a-z]+://[^:/@]*):[^@/]*@#\1:***@#' <<<"$PG_URL")
pg_admin() { PGCONNECT_TIMEOUT=5 PGOPTIONS='-c client_min_messages=warning' psql "$PG_URL" -X -q -v ON_ERROR_STOP=1 -tA "$@"; }
if [[ $PG_URL == none ]]; then
    PG_NOTE="not measured: the script was run with \`--pg none\`."
elif ! command -v psql >/dev/null; then
    PG_NOTE="not measured: \`psql\` (Debian package postgresql-client) is needed to create the benchmark schema and is not installed."
elif ! pg_admin -c 'SELECT 1' >/dev/null 2>&1; then
    PG_NOTE="not measured: no PostgreSQL server answered at \`$PG_URL_SHOWN\` (start one, e.g. \`.ci/postgres.sh\`, or pass \`--pg URL\`)."
else
    sep='?'; [[ $PG_URL == *\?* ]] && sep='&'
    PG_STORE="$PG_URL${sep}options=-csearch_path%3D$PG_SCHEMA"
fi

cleanup() {
    if ((KEEP)); then
        say "kept the SQLite store $SQLITE_DB"
        [[ -n $PG_STORE ]] && say "kept the PostgreSQL schema $PG_SCHEMA: $PG_STORE"
    else
        rm -rf "$WORK"
        [[ -n $PG_STORE ]] && pg_admin -c "DROP SCHEMA IF EXISTS $PG_SCHEMA CASCADE" >/dev/null 2>&1
    fi
    return 0
}
trap cleanup EXIT

# ---------------------------------------------------------------------------------------------
# Measuring

now_ns() { date +%s%N; }
RAW=$WORK/raw.tsv # lines: store, fill|op|count|size, [key,] value
: >"$RAW"
ERR=$WORK/stderr

# run_op K DB: operation K of the six, output to /dev/null; dies with iocap's message on failure.
# The runs for compare and show (BASE RUN1 RUN2 ONE) are set by time_store.
run_op() {
    local k=$1 db=$2
    local -a a
    case $k in
        1) a=(history) ;;
        2) a=(history --limit 0 --output json) ;;
        3) a=(history --host db02 --tag nightly --limit 0) ;;
        4) a=(history --target /log/iocap.testfile --limit 0) ;;
        5) a=(compare "$BASE" "$RUN1" "$RUN2") ;;
        6) a=(show "$ONE") ;;
    esac
    if ! "$IOCAP" "${a[@]}" --db "$db" >/dev/null 2>"$ERR"; then
        cat "$ERR" >&2
        die "failed: iocap ${a[*]} --db $db"
    fi
}

fill_store() {
    local name=$1 db=$2 t0 t1
    say "$name: filling a new store with $RUNS runs"
    t0=$(now_ns)
    "$IOCAP" store-fill --runs "$RUNS" --db "$db" 2>"$ERR" || { cat "$ERR" >&2; die "store-fill failed on $name"; }
    t1=$(now_ns)
    printf '%s\tfill\t%s\n' "$name" $((t1 - t0)) >>"$RAW"
}

count() { # count DB HISTORY-OPTIONS...: how many runs history lists
    local db=$1
    shift
    "$IOCAP" history --db "$db" --output json "$@" 2>"$ERR" |
        python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
}

time_store() {
    local name=$1 db=$2 ids=$WORK/$1.ids n mid k r t
    # the ids, newest first; the runs for compare and show come from the middle of the store
    "$IOCAP" history --db "$db" --output json --limit 0 2>"$ERR" |
        python3 -c 'import json, sys; [print(r["run_id"]) for r in json.load(sys.stdin)]' >"$ids" ||
        { cat "$ERR" >&2; die "history failed on $name"; }
    n=$(wc -l <"$ids")
    ((n == RUNS)) || die "$name: the store holds $n runs after the fill, expected $RUNS"
    mid=$((RUNS / 2))
    BASE=$(sed -n "${mid}p" "$ids")
    RUN1=$(sed -n "$((mid + 1))p" "$ids")
    RUN2=$(sed -n "$((mid + 2))p" "$ids")
    ONE=$(sed -n "$((mid + 3))p" "$ids")

    printf '%s\tcount\t1\t%s\n' "$name" "$(count "$db")" >>"$RAW"
    printf '%s\tcount\t2\t%s\n' "$name" "$n" >>"$RAW"
    printf '%s\tcount\t3\t%s\n' "$name" "$(count "$db" --host db02 --tag nightly --limit 0)" >>"$RAW"
    printf '%s\tcount\t4\t%s\n' "$name" "$(count "$db" --target /log/iocap.testfile --limit 0)" >>"$RAW"

    say "$name: timing 6 operations, 1 warm-up + $ROUNDS rounds each"
    for k in 1 2 3 4 5 6; do run_op "$k" "$db"; done
    for ((r = 1; r <= ROUNDS; r++)); do
        for k in 1 2 3 4 5 6; do
            t=$(now_ns)
            run_op "$k" "$db"
            printf '%s\top\t%s\t%s\n' "$name" "$k" $(($(now_ns) - t)) >>"$RAW"
        done
    done
}

# ---------------------------------------------------------------------------------------------
# Set-up facts

DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
CPUS=$(nproc)
CPU_MODEL=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)
[[ -n $CPU_MODEL ]] || CPU_MODEL=$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ {print $2; exit}')
MEM=$(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
KERNEL=$(uname -r)
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git status --porcelain --untracked-files=no -- src crates Cargo.toml Cargo.lock 2>/dev/null) ]]; then
    COMMIT="$COMMIT (with uncommitted changes in the working tree)"
fi
VERSION=$("$IOCAP" --version)
DEVICE=$(df --output=source "$WORK" | tail -1)
FSTYPE=$(df --output=fstype "$WORK" | tail -1)

# ---------------------------------------------------------------------------------------------
# The runs

fill_store sqlite "$SQLITE_DB"
time_store sqlite "$SQLITE_DB"
sqlite_size=0
for f in "$SQLITE_DB" "$SQLITE_DB-wal" "$SQLITE_DB-shm"; do
    [[ -f $f ]] && printf 'sqlite\tsize\t%s\t%s\n' "${f##*/}" "$(stat -c %s "$f")" >>"$RAW"
done

PG_VERSION=
if [[ -n $PG_STORE ]]; then
    PG_VERSION=$(pg_admin -c 'SHOW server_version')
    pg_admin -c "DROP SCHEMA IF EXISTS $PG_SCHEMA CASCADE; CREATE SCHEMA $PG_SCHEMA" >/dev/null
    fill_store postgresql "$PG_STORE"
    # what autovacuum would do shortly after the fill: give the planner statistics
    pg_tables=$(pg_admin -c "SELECT string_agg(format('%I.%I', schemaname, tablename), ', ') FROM pg_tables WHERE schemaname = '$PG_SCHEMA'")
    pg_admin -c "ANALYZE $pg_tables" >/dev/null
    time_store postgresql "$PG_STORE"
    printf 'postgresql\tsize\ttables\t%s\n' "$(pg_admin -c "SELECT COALESCE(SUM(pg_table_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '$PG_SCHEMA' AND c.relkind = 'r'")" >>"$RAW"
    printf 'postgresql\tsize\tindexes\t%s\n' "$(pg_admin -c "SELECT COALESCE(SUM(pg_indexes_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '$PG_SCHEMA' AND c.relkind = 'r'")" >>"$RAW"
fi

# ---------------------------------------------------------------------------------------------
# The report: replace the section in docs/PERFORMANCE.md, or append it

say "writing $OUT"
export DATE CPUS CPU_MODEL MEM KERNEL COMMIT VERSION DEVICE FSTYPE RUNS ROUNDS PG_VERSION PG_NOTE
export RAW_FILE=$RAW OUT
export PG_URL_SHOWN
python3 - <<'PYEOF'
import os, statistics

E = os.environ
HEADING = "## Result store: history and compare on 10,000 runs"
runs, rounds = int(E["RUNS"]), int(E["ROUNDS"])
OPS = {
    "1": "`history` (the newest 50, text)",
    "2": f"`history --limit 0 --output json` (all {runs:,})",
    "3": "`history --host db02 --tag nightly --limit 0`",
    "4": "`history --target /log/iocap.testfile --limit 0`",
    "5": "`compare BASE RUN RUN` (3 runs from the middle)",
    "6": "`show RUN` (a run from the middle)",
}
data = {}
for line in open(E["RAW_FILE"]):
    f = line.rstrip("\n").split("\t")
    s = data.setdefault(f[0], {"op": {}, "count": {}, "size": {}})
    if f[1] == "fill":
        s["fill"] = int(f[2]) / 1e9
    elif f[1] == "op":
        s["op"].setdefault(f[2], []).append(int(f[3]) / 1e9)
    elif f[1] == "count":
        s["count"][f[2]] = int(f[3])
    elif f[1] == "size":
        s["size"][f[2]] = int(f[3])

def secs(x):
    return f"{x * 1000:,.0f} ms" if x >= 0.0995 else f"{x * 1000:.1f} ms"

def mib(b):
    return f"{b / 1048576:,.1f} MiB"

def table(s):
    out = ["| Operation | Runs listed | Median | Max | Target | Met? |",
           "|---|---:|---:|---:|---|---|"]
    missed = []
    for k, title in OPS.items():
        t = s["op"][k]
        med, mx = statistics.median(t), max(t)
        ok = mx < 1.0
        if not ok:
            missed.append(title)
        n = f"{s['count'][k]:,}" if k in s["count"] else "–"
        out.append(f"| {title} | {n} | {secs(med)} | {secs(mx)} | < 1 s | "
                   f"{'**MET**' if ok else '**MISSED**'} |")
    return out, missed

L = []
w = L.append
w(HEADING)
w("")
w(f"Written by `bench/store.sh` on {E['DATE']}; rerun it to refresh this section (the rest of "
  "the file is not touched). How to run it: [bench/README.md](../bench/README.md).")
w("")
w(f"Requirement: `iocap history` and `iocap compare` on a store holding {runs:,} runs answer in "
  "under 1 s, in SQLite and in PostgreSQL. `show` is measured as well.")
w("")
w("| | |")
w("|---|---|")
w(f"| Date | {E['DATE']} |")
w(f"| Host | {E['CPUS']} CPUs ({E['CPU_MODEL']}), {E['MEM']} RAM |")
w(f"| Kernel | `{E['KERNEL']}` |")
w(f"| iocap | {E['VERSION']}, commit `{E['COMMIT']}`, release build |")
w(f"| SQLite store | a new file in a temporary directory on `{E['DEVICE']}` ({E['FSTYPE']}) |")
if E["PG_VERSION"]:
    w(f"| PostgreSQL store | PostgreSQL {E['PG_VERSION']} on the same machine (TCP to 127.0.0.1), "
      "a new schema `iocap_bench`, `ANALYZE`d after the fill (as autovacuum would soon do) |")
w(f"| Store contents | {runs:,} runs from `iocap store-fill`: 4 hosts, 3 targets, 4 workloads, "
  "one test per run, a label on every 5th run, the tag `nightly` on every 3rd |")
w(f"| Timing | wall time of the whole `iocap` process (start-up, opening the store, the query, "
  f"output to /dev/null), 1 untimed warm-up and {rounds} rounds per operation, the operations "
  "interleaved round by round; median and maximum; an operation meets the target if even its "
  "slowest round is under 1 s |")
w("")
all_missed = []
for name, title in (("sqlite", "SQLite"), ("postgresql", "PostgreSQL")):
    w(f"### {title}")
    w("")
    if name not in data:
        w(f"PostgreSQL {E['PG_NOTE']}")
        w("")
        continue
    s = data[name]
    rows, missed = table(s)
    all_missed += [f"{title}: {m}" for m in missed]
    L.extend(rows)
    w("")
    rate = runs / s["fill"]
    w(f"Fill: {runs:,} runs saved in {s['fill']:.1f} s, **{rate:,.0f} runs/s** "
      "(`iocap store-fill`, each run saved as `iocap run` saves it).")
    w("")
    if name == "sqlite":
        parts = ", ".join(f"`{f}` {mib(b)}" for f, b in s["size"].items())
        total = sum(s["size"].values())
        w(f"Store size on disk: **{mib(total)}** ({parts}; {total / runs / 1024:.1f} KiB per run).")
    else:
        tb, ib = s["size"].get("tables", 0), s["size"].get("indexes", 0)
        w(f"Store size: **{mib(tb + ib)}** (tables with TOAST {mib(tb)}, indexes {mib(ib)}; "
          f"{(tb + ib) / runs / 1024:.1f} KiB per run).")
    w("")
if all_missed:
    w("**MISSED**: " + "; ".join(all_missed) + ".")
else:
    w(f"All operations on both stores answered in under 1 s: the requirement is **MET**."
      if "postgresql" in data else
      "All operations on the SQLite store answered in under 1 s (PostgreSQL not measured).")
w("")
w(f"Rerun: `bench/store.sh --runs {runs} --rounds {rounds} --pg {E['PG_URL_SHOWN']}`; the "
  "defaults are 10,000 runs, 5 rounds and the local server, and `--pg none` measures SQLite only.")
section = "\n".join(L) + "\n"

path = E["OUT"]
old = open(path).read() if os.path.exists(path) else ""
lines = old.splitlines(keepends=True)
start = next((i for i, l in enumerate(lines) if l.rstrip() == HEADING), None)
if start is None:
    text = old.rstrip("\n") + ("\n\n" if old.strip() else "") + section
else:
    end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("## ")), len(lines))
    rest = "".join(lines[end:])
    text = "".join(lines[:start]) + section + ("\n" + rest if rest else "")
tmp = path + ".tmp"
open(tmp, "w").write(text)
os.replace(tmp, path)
for l in L:
    if l.startswith("|") or l.startswith("Fill") or l.startswith("Store size") or l.startswith("###"):
        print(l)
PYEOF
say "done"
