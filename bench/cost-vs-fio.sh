#!/usr/bin/env bash
# bench/cost-vs-fio.sh: CPU per I/O, iocap against fio, on the same file and workloads; writes
# the section "## CPU per I/O against fio" of docs/PERFORMANCE.md.
#
# A benchmark, not a test. For each workload (8K random read at qd 1 and qd 16, 64K random read
# at qd 16; O_DIRECT; io_uring and psync) it runs `iocap run --output json` and fio
# (`--output-format=json`) alternately, ROUNDS rounds each, and compares the process CPU per
# I/O: iocap's `cpu.us_per_io` (getrusage RUSAGE_SELF over the measured window) against fio's
# (usr_cpu + sys_cpu) / 100 × job_runtime / total_ios, summed over fio's jobs (psync at qd 16 is
# 16 fio jobs, as it is 16 threads in iocap). Medians, ratios iocap/fio.
#
# Like for like: iocap's io_uring registers the file and buffers, so fio runs with
# --fixedbufs --registerfiles; both run without a random map (fio --norandommap).
# fio's own t/io_uring benchmark is not in Debian's fio package, so it is not compared.
#
# Knobs (environment):
#   DURATION     measured seconds per run                     (default 5)
#   RAMP         unmeasured seconds before                    (default 1)
#   ROUNDS       runs per tool per workload                   (default 3)
#   BENCH_DIR    where the test file and raw results go       (default target/bench-cost)
#   BENCH_SIZE   size of the test file                        (default 1G)
#   IOCAP        the iocap binary (default: cargo build --release, target/release/iocap)
#   OUT          the report to update                         (default docs/PERFORMANCE.md)
#   SUBMIT       iocap's io_uring submission, batch or each (default: iocap's default, batch)
#
# The section is replaced where it is, or appended at the end (after "## Notes", so
# bench/vs-fio.sh keeps it); a "### Notes" subsection inside it, written by hand, is kept.
set -euo pipefail

die() { echo "cost-vs-fio.sh: error: $*" >&2; exit 2; }
say() { echo "cost-vs-fio.sh: $*" >&2; }

CALLER_PWD=$PWD
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

DURATION=${DURATION:-5}
RAMP=${RAMP:-1}
ROUNDS=${ROUNDS:-3}
BENCH_SIZE=${BENCH_SIZE:-1G}
BENCH_DIR=${BENCH_DIR:-$REPO/target/bench-cost}
OUT=${OUT:-$REPO/docs/PERFORMANCE.md}
case $BENCH_DIR in /*) ;; *) BENCH_DIR=$CALLER_PWD/$BENCH_DIR ;; esac
[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a whole number of seconds"
[[ $RAMP =~ ^[0-9]+$ ]] || die "RAMP must be a whole number of seconds"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive whole number"
[[ -z ${SUBMIT:-} || $SUBMIT == batch || $SUBMIT == each ]] || die "SUBMIT must be batch or each (got '$SUBMIT')"
command -v python3 >/dev/null || die "python3 is required"
command -v fio >/dev/null || die "fio is not installed (apt-get install fio)"
fio --enghelp=io_uring >/dev/null 2>&1 || die "this fio has no io_uring engine"

if [[ -z ${IOCAP:-} ]]; then
    say "building iocap (cargo build --release)"
    cargo build --release --quiet --bin iocap
    IOCAP=${CARGO_TARGET_DIR:-$REPO/target}/release/iocap
fi
[[ -x $IOCAP ]] || die "$IOCAP is not an executable"

# name engine bs qd
WORKLOADS=(
    "uring-8k-qd1 io_uring 8K 1"
    "uring-8k-qd16 io_uring 8K 16"
    "uring-64k-qd16 io_uring 64K 16"
    "psync-8k-qd1 psync 8K 1"
    "psync-8k-qd16 psync 8K 16"
    "psync-64k-qd16 psync 64K 16"
)

mkdir -p "$BENCH_DIR"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
FILE=$BENCH_DIR/cost.dat
RUN=$BENCH_DIR/results/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$RUN"

if [[ ! -f $FILE ]]; then
    say "creating $FILE ($BENCH_SIZE) with iocap"
    "$IOCAP" run "$FILE" --size "$BENCH_SIZE" --duration 0.1s --warmup 0s --no-save >/dev/null
fi

run_iocap() { # engine bs qd out
    "$IOCAP" run "$FILE" --rw randread --bs "$2" --qd "$3" --engine "$1" \
        --duration "${DURATION}s" --warmup "${RAMP}s" ${SUBMIT:+--submit "$SUBMIT"} \
        --no-save --output json >"$4"
}
run_fio() { # engine bs qd out
    local eng=(--ioengine=io_uring --iodepth="$3" --fixedbufs=1 --registerfiles=1) jobs=1
    if [[ $1 == psync ]]; then eng=(--ioengine=psync --iodepth=1); jobs=$3; fi
    fio --name=cost --filename="$FILE" --rw=randread --bs="$2" --direct=1 "${eng[@]}" \
        --numjobs="$jobs" --norandommap --randrepeat=0 --time_based --runtime="$DURATION" \
        --ramp_time="$RAMP" --output-format=json >"$4"
}

for w in "${WORKLOADS[@]}"; do
    read -r name eng bs qd <<<"$w"
    for r in $(seq 1 "$ROUNDS"); do
        run_iocap "$eng" "$bs" "$qd" "$RUN/$name.iocap.$r.json"
        run_fio "$eng" "$bs" "$qd" "$RUN/$name.fio.$r.json"
        say "$name round $r done"
    done
done
printf '%s\n' "${WORKLOADS[@]}" >"$RUN/workloads.txt"

python3 - "$RUN" "$OUT" "$ROUNDS" "$DURATION" "$RAMP" "$BENCH_SIZE" "$(fio --version)" \
    "$(git -C "$REPO" rev-parse --short HEAD)" "$(nproc)" "$(uname -r)" <<'PYEOF'
import json, os, statistics, sys
run, out, rounds, dur, ramp, size, fiov, commit, cpus, kernel = sys.argv[1:]
rounds = int(rounds)

def load(p):
    t = open(p).read()
    return json.loads(t[t.find("{"):])

def iocap(p):
    t = load(p)["tests"][0]
    return t["cpu"]["us_per_io"], t["total"]["iops"], t["engine_features"]

def fio(p):
    cpu_s, ios, iops = 0.0, 0, 0.0
    for j in load(p)["jobs"]:
        ms = j.get("job_runtime") or j["read"]["runtime"]
        cpu_s += (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * ms / 1000.0
        ios += j["read"]["total_ios"]
        iops += j["read"]["iops"]
    return (cpu_s * 1e6 / ios if ios else 0.0), iops, []

rows = []
for line in open(os.path.join(run, "workloads.txt")):
    name, eng, bs, qd = line.split()
    i = [iocap(os.path.join(run, f"{name}.iocap.{r}.json")) for r in range(1, rounds + 1)]
    f = [fio(os.path.join(run, f"{name}.fio.{r}.json")) for r in range(1, rounds + 1)]
    mi, mf = statistics.median(x[0] for x in i), statistics.median(x[0] for x in f)
    ii, fi = statistics.median(x[1] for x in i), statistics.median(x[1] for x in f)
    rows.append((name, eng, bs, qd, [x[0] for x in i], [x[0] for x in f], mi, mf, ii, fi, i[0][2]))

L = []
w = L.append
w("## CPU per I/O against fio")
w("")
w(f"Written by `bench/cost-vs-fio.sh` (commit `{commit}`); rerun it to refresh this section (a "
  "`### Notes` subsection at its end is kept). Host: "
  f"{cpus} CPUs, kernel `{kernel}`, {fiov}; test file {size}, created by iocap; "
  f"{dur} s measured after {ramp} s, {rounds} rounds alternating iocap and fio, medians.")
w("")
w("Random reads, O_DIRECT. CPU µs per I/O = user + system CPU of the tool over the measured "
  "time / I/Os completed: iocap's `cpu.us_per_io` (getrusage RUSAGE_SELF: every thread of the "
  "process, io_uring workers included); fio's (usr_cpu + sys_cpu) / 100 × job_runtime / "
  "total_ios, summed over its jobs (fio_getrusage() is getrusage(RUSAGE_THREAD) on Linux: "
  "the job's I/O thread only, not fio's helper threads or io_uring workers). fio runs `--fixedbufs --registerfiles --norandommap` so both register the file "
  "and buffers and keep no random map. psync at qd 16 is 16 threads in iocap and 16 fio jobs. "
  "fio's own t/io_uring benchmark is not in Debian's fio package and is not compared. "
  "Ratio below 1: iocap spends less CPU per I/O. Why they differ: [cost.md](cost.md#against-fio).")
w("")
w("| Workload | iocap µs/IO (rounds) | fio µs/IO (rounds) | iocap / fio | IOPS iocap / fio | iocap features |")
w("|---|---|---|---:|---|---|")
for name, eng, bs, qd, ir, fr, mi, mf, ii, fi, feat in rows:
    r = mi / mf if mf else float("nan")
    w(f"| {bs} randread {eng} qd {qd} | **{mi:.2f}** ({', '.join(f'{x:.2f}' for x in ir)}) | "
      f"**{mf:.2f}** ({', '.join(f'{x:.2f}' for x in fr)}) | **{r:.2f}×** | {ii:,.0f} / {fi:,.0f} | "
      f"{', '.join(feat) or '-'} |")
w("")
over = [row[0] for row in rows if row[7] and row[6] / row[7] > 1.0]
w("Bar (issue 7): iocap's process CPU per I/O at most fio's: "
  + ("**MET** for every workload." if not over else f"**MISSED** for {', '.join(over)}."))
w(f"Raw JSON: `{run}`.")
w("")
section = "\n".join(L) + "\n"
heading = "## CPU per I/O against fio"
old = open(out).read() if os.path.exists(out) else ""
lines = old.splitlines(keepends=True)
start = next((i for i, l in enumerate(lines) if l.rstrip() == heading), None)
if start is None:
    text = old.rstrip("\n") + ("\n\n" if old.strip() else "") + section
else:
    end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("## ")), len(lines))
    n0 = next((j for j in range(start + 1, end) if lines[j].rstrip() == "### Notes"), None)
    notes = "".join(lines[n0:end]).rstrip("\n") + "\n" if n0 is not None else ""
    rest = "".join(lines[end:])
    text = "".join(lines[:start]) + section + ("\n" + notes if notes else "") + ("\n" + rest if rest else "")
open(out + ".tmp", "w").write(text)
os.replace(out + ".tmp", out)
for name, eng, bs, qd, ir, fr, mi, mf, ii, fi, feat in rows:
    print(f"  {name:<16} iocap {mi:7.2f} µs/IO  fio {mf:7.2f} µs/IO  ratio {mi / mf if mf else float('nan'):.2f}")
PYEOF
