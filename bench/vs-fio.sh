#!/usr/bin/env bash
# bench/vs-fio.sh: iocap against fio (and t/io_uring and DiskSpd where present) in paired rounds,
# written to its own section of docs/PERFORMANCE.md.
#
# A benchmark, not a test. This VM's disk swings by +-30 % within minutes, so tools measured
# minutes apart cannot be compared. In each round every tool runs each workload once, the runs of
# one workload back to back, and the tools take turns going first (the order rotates each round);
# the ratio iocap/peer is taken per round, and the report gives, per workload and peer, the median
# and the interquartile range (25th-75th percentile) of the per-round ratios (IOPS, MB/s for the
# sequential row, CPU µs per I/O), every round's raw figures, and the project's targets (issue 13)
# marked MET or MISSED.
#
# Rows (WORKLOADS; all O_DIRECT, one file):      target, median of per-round ratios iocap/fio
#   a  4K random read, qd32, 1 thread            IOPS >= 1.2x (and >= 0.97x t/io_uring -s1 -c1)
#   b  8K random write, qd32                     IOPS >= 1.05x
#   c  8K random read, qd8 x 4 threads           IOPS >= 1.1x
#   d  64K random read, qd16                     IOPS >= 1.0x
#   e  1M sequential read, qd8                   MB/s >= 1.0x
#   f  8K random read/write 70/30, qd16          IOPS >= 1.0x
#   g  8K random read/write 50/50, qd32          IOPS >= 1.0x
#   h  8K random read/write 70/30, qd8           IOPS >= 1.0x
#      and on a-h CPU µs per I/O <= 0.75x fio's
#   q  4K random read, qd1 (latency)             p50 within +-5 % of fio's (iocap and fio only)
# t/io_uring runs the 1-thread random-read rows (a, d); DiskSpd every row but q.
#
# Knobs (environment):
#   DURATION     measured seconds per run                          (default 4)
#   RAMP         warm-up seconds per run, not measured             (default 2)
#   ROUNDS       rounds; each tool runs each workload once a round (default 5)
#   WORKLOADS    the rows to run, e.g. "a c f"                     (default "a b c d e f g h q")
#   BENCH_DIR    where the test file and raw results go            (default target/bench)
#   BENCH_SIZE   size of the test file, K/M/G/T = 1024^n           (default 4G; an existing
#                larger file is used whole, by every tool)
#   SUBMIT       iocap's --submit: batch, each or auto             (default: not passed, iocap's
#                default)
#   IOCAP        the iocap binary to use; no build                 (default: cargo build --release,
#                then target/release/iocap)
#   T_IO_URING   fio's t/io_uring                                  (default /work/shared/peers/t-io_uring)
#   DISKSPD      DiskSpd for Linux (needs libaio1)                 (default /work/shared/peers/diskspd)
#   OUT          the report to update                              (default docs/PERFORMANCE.md)
# An absent peer is skipped and named in the report ("not present: <path>").
#
# It writes only BENCH_DIR (bench.dat, results/<stamp>/ with every run's raw output, runs.json
# and info.tsv) and OUT, where it replaces only the text between <!-- vs-fio:begin --> and
# <!-- vs-fio:end --> (on the first run, the old unmarked vs-fio output at the top of the file, up
# to the "## Notes" written by hand); everything else in OUT is kept. See bench/README.md.
set -euo pipefail

die() { echo "vs-fio.sh: error: $*" >&2; exit 2; }
say() { echo "vs-fio.sh: $*" >&2; }

CALLER_PWD=$PWD
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
abs() { case $1 in /*) echo "$1" ;; *) echo "$CALLER_PWD/$1" ;; esac; }

# ---------------------------------------------------------------------------------------------
# Settings and pre-flight checks

ALL_WORKLOADS="a b c d e f g h q"
DURATION=${DURATION:-4}
RAMP=${RAMP:-2}
ROUNDS=${ROUNDS:-5}
WORKLOADS=${WORKLOADS:-$ALL_WORKLOADS}
BENCH_SIZE=${BENCH_SIZE:-4G}
BENCH_DIR=$(abs "${BENCH_DIR:-$REPO/target/bench}")
OUT=$(abs "${OUT:-$REPO/docs/PERFORMANCE.md}")
SUBMIT=${SUBMIT:-}
T_IO_URING_PATH=$(abs "${T_IO_URING:-/work/shared/peers/t-io_uring}")
DISKSPD_PATH=$(abs "${DISKSPD:-/work/shared/peers/diskspd}")

[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a whole number of seconds (got '$DURATION')"
[[ $RAMP =~ ^[0-9]+$ ]] || die "RAMP must be a whole number of seconds (got '$RAMP')"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive whole number (got '$ROUNDS')"
[[ -z $SUBMIT || $SUBMIT == batch || $SUBMIT == each || $SUBMIT == auto ]] ||
    die "SUBMIT must be batch, each or auto, or empty for iocap's default (got '$SUBMIT')"
[[ $BENCH_SIZE =~ ^[1-9][0-9]*[KMGT]?$ ]] || die "BENCH_SIZE must look like 4G, 512M or a byte count (got '$BENCH_SIZE')"
SIZE_BYTES=$(numfmt --from=iec "$BENCH_SIZE")
((SIZE_BYTES >= 64 * 1024 * 1024)) || die "BENCH_SIZE must be at least 64M (got '$BENCH_SIZE')"
read -r -a WL <<<"$WORKLOADS"
((${#WL[@]})) || die "WORKLOADS is empty (use some of: $ALL_WORKLOADS)"
declare -A seen=()
for w in "${WL[@]}"; do
    [[ " $ALL_WORKLOADS " == *" $w "* ]] || die "unknown workload '$w' in WORKLOADS (use some of: $ALL_WORKLOADS)"
    [[ -z ${seen[$w]:-} ]] || die "workload '$w' is named twice in WORKLOADS"
    seen[$w]=1
done
WORKLOADS="${WL[*]}"
[[ -d $(dirname "$OUT") ]] || die "OUT=$OUT: its directory does not exist"

command -v python3 >/dev/null || die "python3 is required to run the tools and read their results (apt-get install python3)"
command -v fio >/dev/null || die "fio is not installed (apt-get install fio)"
fio --enghelp=io_uring >/dev/null 2>&1 || die "this fio has no io_uring engine ($(fio --version))"
HELPER=$REPO/bench/lib/vs_fio.py
[[ -f $HELPER ]] || die "$HELPER is missing"

BUILT=0
if [[ -n ${IOCAP:-} ]]; then
    IOCAP=$(abs "$IOCAP")
    say "using IOCAP=$IOCAP (no build)"
else
    command -v cargo >/dev/null || die "cargo is required to build iocap (or set IOCAP=path to a built binary)"
    say "building iocap (cargo build --release)"
    cargo build --release -q
    IOCAP=$REPO/target/release/iocap
    BUILT=1
fi
[[ -x $IOCAP && -f $IOCAP ]] || die "iocap binary $IOCAP is not an executable file"
if [[ -n $SUBMIT ]]; then
    "$IOCAP" run --help 2>/dev/null | grep -Eq "^ +- $SUBMIT: " ||
        die "this iocap ($IOCAP) does not take --submit $SUBMIT (see '$IOCAP run --help')"
fi

# The peers: used where present, otherwise named in the report and skipped.
T_IO_URING="" T_IO_URING_WHY="" DISKSPD="" DISKSPD_WHY=""
if [[ -x $T_IO_URING_PATH && -f $T_IO_URING_PATH ]]; then
    T_IO_URING=$T_IO_URING_PATH
else
    say "t/io_uring not present: $T_IO_URING_PATH (set T_IO_URING=path); going on without it"
fi
if [[ ! -x $DISKSPD_PATH || ! -f $DISKSPD_PATH ]]; then
    say "diskspd not present: $DISKSPD_PATH (set DISKSPD=path); going on without it"
elif ldd "$DISKSPD_PATH" 2>/dev/null | grep -q 'libaio.*not found'; then
    DISKSPD_WHY="it needs the Debian package libaio1: apt-get install libaio1"
    say "diskspd cannot run: $DISKSPD_WHY; going on without it"
else
    DISKSPD=$DISKSPD_PATH
fi

# ---------------------------------------------------------------------------------------------
# Test file and run directory

mkdir -p "$BENCH_DIR"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
FILE=$BENCH_DIR/bench.dat
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RUN=$BENCH_DIR/results/$STAMP
mkdir -p "$RUN"

on_exit() {
    local rc=$?
    if ((rc != 0)); then
        say "stopped (exit $rc); $OUT was not changed; raw results so far in $RUN"
    fi
}
trap on_exit EXIT
trap 'exit 130' INT TERM

have=0
[[ -f $FILE ]] && have=$(stat -c %s "$FILE")
if ((have < SIZE_BYTES)); then
    say "creating $FILE ($BENCH_SIZE) with iocap"
    # creates (or completes) the file at BENCH_SIZE, fills it and marks it as iocap's own
    "$IOCAP" run --rw read --bs 1M --qd 4 --duration 1s --warmup 0s --size "$BENCH_SIZE" \
        --output json --no-save "$FILE" >"$RUN/create.json" 2>"$RUN/create.err" ||
        die "iocap could not create $FILE: $(tail -n 5 "$RUN/create.err")"
    have=$(stat -c %s "$FILE")
    ((have >= SIZE_BYTES)) || die "$FILE holds $have bytes, less than BENCH_SIZE $BENCH_SIZE"
else
    say "using the existing $FILE ($(numfmt --to=iec "$have"))"
fi
# every tool uses the whole file (t/io_uring cannot be given a smaller range)
SIZE_BYTES=$have

# ---------------------------------------------------------------------------------------------
# How long

runs_per_round=0
for w in "${WL[@]}"; do
    n=2
    if [[ $w != q ]]; then
        [[ -n $DISKSPD ]] && n=$((n + 1))
        [[ -n $T_IO_URING && ($w == a || $w == d) ]] && n=$((n + 1))
    fi
    runs_per_round=$((runs_per_round + n))
done
runs=$((runs_per_round * ROUNDS))
secs=$((runs * (DURATION + RAMP + 1)))
say "$ROUNDS rounds of $runs_per_round runs of ${DURATION}+${RAMP} s (t/io_uring: +1 s): about $((secs / 60)) min $((secs % 60)) s"

# ---------------------------------------------------------------------------------------------
# The rounds

export IOCAP FIO=fio T_IO_URING DISKSPD T_IO_URING_PATH DISKSPD_PATH T_IO_URING_WHY DISKSPD_WHY
export FILE SIZE_BYTES DURATION RAMP ROUNDS WORKLOADS SUBMIT
python3 "$HELPER" measure "$RUN" || die "a run failed; see above"

# ---------------------------------------------------------------------------------------------
# The report

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ $commit != unknown ]] &&
    [[ -n $(git status --porcelain --untracked-files=no -- . ':(exclude)docs/PERFORMANCE.md' 2>/dev/null) ]]; then
    commit="$commit (plus uncommitted changes)"
fi
# a binary given by IOCAP need not be built from this tree
((BUILT)) || commit="not known (IOCAP=$IOCAP given; the tree is at $commit)"
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
mem_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
{
    printf 'date\t%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf 'host\t%s\n' "$(hostname)"
    printf 'kernel\t%s\n' "$(uname -r)"
    printf 'cpu_model\t%s\n' "${cpu_model:-unknown}"
    printf 'cpus\t%s\n' "$(nproc)"
    printf 'mem\t%s\n' "$(awk -v kb="$mem_kb" 'BEGIN {printf "%.1f GiB", kb / 1048576}')"
    printf 'device\t%s\n' "$(df -P "$BENCH_DIR" | awk 'NR == 2 {print $1}')"
    printf 'fstype\t%s\n' "$(findmnt -n -o FSTYPE --target "$BENCH_DIR" 2>/dev/null || stat -f -c %T "$BENCH_DIR")"
    printf 'fio_version\t%s\n' "$(fio --version)"
    printf 'iocap_version\t%s\n' "$("$IOCAP" --version)"
    printf 'iocap\t%s\n' "$IOCAP"
    printf 'commit\t%s\n' "$commit"
    printf 'submit\t%s\n' "$SUBMIT"
    printf 't_io_uring\t%s\n' "$T_IO_URING"
    printf 't_io_uring_path\t%s\n' "$T_IO_URING_PATH"
    printf 't_io_uring_why\t%s\n' "$T_IO_URING_WHY"
    printf 'diskspd\t%s\n' "$DISKSPD"
    printf 'diskspd_path\t%s\n' "$DISKSPD_PATH"
    printf 'diskspd_why\t%s\n' "$DISKSPD_WHY"
    printf 'file\t%s\n' "$FILE"
    printf 'size_bytes\t%s\n' "$SIZE_BYTES"
    printf 'size_bytes_h\t%s\n' "$(numfmt --to=iec-i --suffix=B "$SIZE_BYTES")"
    printf 'duration\t%s\n' "$DURATION"
    printf 'ramp\t%s\n' "$RAMP"
    printf 'run_dir\t%s\n' "$RUN"
} >"$RUN/info.tsv"

say "writing $OUT (its vs-fio section only)"
python3 "$HELPER" report "$RUN" "$OUT" || die "the report could not be written"
say "done; raw results in $RUN (regenerate the section with: python3 bench/lib/vs_fio.py report $RUN $OUT)"
