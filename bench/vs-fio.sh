#!/usr/bin/env bash
# bench/vs-fio.sh: benchmark iocap against fio on the same file and write docs/PERFORMANCE.md.
#
# A benchmark, not a test: it runs five workloads, alternating the two tools (iocap, fio, iocap,
# fio, ...) for ROUNDS rounds each, takes the median of every metric and writes a Markdown report
# with every raw figure, the iocap/fio ratios and the project's targets (MET or MISSED).
#
# Knobs (environment):
#   DURATION     measured seconds per run              (default 10)
#   ROUNDS       runs per tool per workload            (default 3)
#   BENCH_DIR    where the test file and raw results go (default target/bench in the repository)
#   BENCH_SIZE   size of the test file, K/M/G/T = 1024^n (default 4G)
#   CACHED_SIZE  region used by the page-cache workload (c) (default 1G, at most BENCH_SIZE)
#   SUBMIT       iocap's io_uring submission, batch or each (default: iocap's default, batch);
#                each submits like fio's defaults (see docs/run.md)
#
# It writes only BENCH_DIR (bench.dat, results/<stamp>/) and docs/PERFORMANCE.md; an existing
# "## Notes" section of docs/PERFORMANCE.md is kept. See bench/README.md.
set -euo pipefail

die() { echo "vs-fio.sh: error: $*" >&2; exit 2; }
say() { echo "vs-fio.sh: $*" >&2; }

CALLER_PWD=$PWD
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

# ---------------------------------------------------------------------------------------------
# Settings and pre-flight checks

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
RAMP=2
BENCH_SIZE=${BENCH_SIZE:-4G}
BENCH_DIR=${BENCH_DIR:-$REPO/target/bench}
case $BENCH_DIR in /*) ;; *) BENCH_DIR=$CALLER_PWD/$BENCH_DIR ;; esac

[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a whole number of seconds (got '$DURATION')"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive whole number (got '$ROUNDS')"
[[ -z ${SUBMIT:-} || $SUBMIT == batch || $SUBMIT == each ]] || die "SUBMIT must be batch or each (got '$SUBMIT')"
size_re='^[1-9][0-9]*[KMGT]?$'
[[ $BENCH_SIZE =~ $size_re ]] || die "BENCH_SIZE must look like 4G, 512M or a byte count (got '$BENCH_SIZE')"
to_bytes() { numfmt --from=iec "$1"; }
SIZE_BYTES=$(to_bytes "$BENCH_SIZE")
CACHED_SIZE=${CACHED_SIZE:-1G}
[[ $CACHED_SIZE =~ $size_re ]] || die "CACHED_SIZE must look like 1G or 512M (got '$CACHED_SIZE')"
if (($(to_bytes "$CACHED_SIZE") > SIZE_BYTES)); then CACHED_SIZE=$BENCH_SIZE; fi
CACHED_BYTES=$(to_bytes "$CACHED_SIZE")

command -v python3 >/dev/null || die "python3 is required to read the JSON results (apt-get install python3)"
command -v fio >/dev/null || die "fio is not installed (apt-get install fio)"
command -v cargo >/dev/null || die "cargo is required to build iocap"
fio --enghelp=io_uring >/dev/null 2>&1 || die "this fio has no io_uring engine ($(fio --version))"
mem_avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
if ((CACHED_BYTES / 1024 > mem_avail_kb * 3 / 4)); then
    die "CACHED_SIZE $CACHED_SIZE does not fit comfortably in RAM ($((mem_avail_kb / 1024)) MiB available); lower it"
fi

WORKLOADS=(a b c d e)
declare -A TITLE RW BS QD DIRECT WSIZE
TITLE[a]="4K random read, O_DIRECT, qd32, 1 thread"
TITLE[b]="4K random read, O_DIRECT, qd1, 1 thread"
TITLE[c]="4K random read, buffered, from the page cache, qd32, 1 thread"
TITLE[d]="1M sequential read, O_DIRECT, qd8, 1 thread"
TITLE[e]="8K random write, O_DIRECT, qd32, 1 thread"
RW=([a]=randread [b]=randread [c]=randread [d]=read [e]=randwrite)
BS=([a]=4K [b]=4K [c]=4K [d]=1M [e]=8K)
QD=([a]=32 [b]=1 [c]=32 [d]=8 [e]=32)
DIRECT=([a]=1 [b]=1 [c]=0 [d]=1 [e]=1)
WSIZE=([a]=$BENCH_SIZE [b]=$BENCH_SIZE [c]=$CACHED_SIZE [d]=$BENCH_SIZE [e]=$BENCH_SIZE)

# ---------------------------------------------------------------------------------------------
# The JSON reader and report writer (python3)

read -r -d '' PY <<'PYEOF' || true
import json, os, re, statistics, sys

def load(path):
    text = open(path).read()
    i = text.find("{")
    if i < 0:
        raise SystemExit(f"no JSON in {path}")
    return json.loads(text[i:])

def parse_iocap(path):
    t = load(path)["tests"][0]
    if t.get("error"):
        raise SystemExit(f"iocap reported an error in {path}: {t['error']}")
    tot = t["total"]
    return {
        "iops": tot["iops"], "mbs": tot["mb_s"],
        "p50": tot["lat_us"]["p50"], "p99": tot["lat_us"]["p99"],
        "cpu": t["cpu"]["us_per_io"], "ios": tot["ios"],
        "features": t.get("engine_features", []), "warnings": t.get("warnings", []),
    }

def parse_fio(path):
    j = load(path)["jobs"][0]
    if j.get("error"):
        raise SystemExit(f"fio reported error {j['error']} in {path}")
    d = j["write"] if j["write"]["total_ios"] > 0 and j["read"]["total_ios"] == 0 else j["read"]
    pct = d["lat_ns"].get("percentile")
    if not pct:
        raise SystemExit(f"fio gave no total-latency percentiles in {path} (--lat_percentiles=1 missing?)")
    runtime_ms = j.get("job_runtime") or d["runtime"]
    ios = d["total_ios"]
    cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * runtime_ms * 1000.0 / ios if ios else 0.0
    return {
        "iops": d["iops"], "mbs": d["bw_bytes"] / 1e6,
        "p50": pct["50.000000"] / 1000.0, "p99": pct["99.000000"] / 1000.0,
        "cpu": cpu, "ios": ios, "features": [], "warnings": [],
    }

PARSE = {"iocap": parse_iocap, "fio": parse_fio}
METRICS = [("iops", "IOPS"), ("mbs", "MB/s"), ("p50", "p50 µs"), ("p99", "p99 µs"), ("cpu", "CPU µs/IO")]

def fmt(key, v):
    if v is None:
        return "–"
    if key == "iops":
        return f"{v:,.0f}"
    if key == "cpu":
        return f"{v:.2f}"
    return f"{v:,.1f}"

def ratio(a, b):
    return a / b if b else float("nan")

def summary(tool, path):
    r = PARSE[tool](path)
    print(f"{r['iops']:,.0f} IOPS, {r['mbs']:.1f} MB/s, p50 {r['p50']:.1f} µs, "
          f"p99 {r['p99']:.1f} µs, CPU {r['cpu']:.2f} µs/IO")

def report(run_dir, out_path):
    info = {}
    for line in open(os.path.join(run_dir, "info.tsv")):
        k, _, v = line.rstrip("\n").partition("\t")
        info[k] = v
    wls = info["workloads"].split()
    rounds = int(info["rounds"])
    res, cmds, title = {}, {}, {}
    features = []
    iocap_warnings = set()
    for wl in wls:
        title[wl] = info[f"title.{wl}"]
        for tool in ("iocap", "fio"):
            cmds[wl, tool] = open(os.path.join(run_dir, f"{wl}.{tool}.cmd")).read().strip()
            runs = []
            for r in range(1, rounds + 1):
                x = PARSE[tool](os.path.join(run_dir, f"{wl}.{tool}.{r}.json"))
                if tool == "iocap":
                    features = features or x["features"]
                    iocap_warnings.update(x["warnings"])
                runs.append(x)
            res[wl, tool] = runs
    med = {(wl, tool): {k: statistics.median(x[k] for x in res[wl, tool]) for k, _ in METRICS}
           for wl in wls for tool in ("iocap", "fio")}
    rat = {wl: {k: ratio(med[wl, "iocap"][k], med[wl, "fio"][k]) for k, _ in METRICS} for wl in wls}

    # targets from the issue
    targets = {}
    if "a" in rat:
        ok = rat["a"]["iops"] >= 1.25 and rat["a"]["cpu"] <= 0.75
        targets["a"] = ("IOPS ≥ 1.25× fio and CPU µs/IO ≤ 0.75× fio",
                        f"IOPS {rat['a']['iops']:.2f}×, CPU µs/IO {rat['a']['cpu']:.2f}×", ok)
    if "b" in rat:
        ok = abs(rat["b"]["p50"] - 1.0) <= 0.05
        targets["b"] = ("p50 latency within ±5 % of fio (either way: the target is agreement)",
                        f"p50 {rat['b']['p50']:.3f}× ({(rat['b']['p50'] - 1) * 100:+.1f} %)", ok)
    if "c" in rat:
        targets["c"] = ("IOPS ≥ 1.5× fio", f"IOPS {rat['c']['iops']:.2f}×", rat["c"]["iops"] >= 1.5)
    if "d" in rat:
        targets["d"] = ("MB/s ≥ 1.0× fio", f"MB/s {rat['d']['mbs']:.2f}×", rat["d"]["mbs"] >= 1.0)
    if "e" in rat:
        targets["e"] = ("IOPS ≥ 1.0× fio", f"IOPS {rat['e']['iops']:.2f}×", rat["e"]["iops"] >= 1.0)

    L = []
    w = L.append
    w("# Performance: iocap against fio")
    w("")
    w("The engine's comparison of record, against fio, t/io_uring and DiskSpd in paired rounds, "
      "is the section [iocap against its peers](#iocap-against-its-peers-in-paired-rounds) "
      "below (`bench/vs-peers.py`).")
    w("")
    w(f"Written by `bench/vs-fio.sh` on {info['date']}; rerun it to refresh this file (the Notes "
      "section at the end is kept). How to run it: [bench/README.md](../bench/README.md).")
    w("")
    w("## Set-up")
    w("")
    w("| | |")
    w("|---|---|")
    w(f"| Date | {info['date']} |")
    w(f"| Host | {info['cpus']} CPUs ({info['cpu_model']}), {info['mem']} RAM |")
    w(f"| Kernel | `{info['kernel']}` |")
    w(f"| Storage | test file on `{info['device']}` ({info['fstype']}) |")
    w(f"| fio | {info['fio_version']} |")
    w(f"| iocap | {info['iocap_version']}, commit `{info['commit']}` |")
    w(f"| Test file | `{info['file']}`, {info['size']} ({info['size_bytes']} bytes), created and filled "
      "with incompressible data by iocap; fio reads and writes the same file and does not lay it out |")
    w(f"| Page-cache workload (c) | first {info['cached_size']} of the file, read into the page cache "
      "before every run of either tool |")
    w(f"| Timing | {info['duration']} s measured after a {info['ramp']} s warm-up "
      "(iocap `--warmup`, fio `--ramp_time`), per run |")
    w(f"| Rounds | {rounds} per tool per workload, alternating iocap, fio, iocap, fio, …; "
      "the median of each metric is reported |")
    w("")
    w("Method:")
    w("")
    w("- Both tools use io_uring, one thread, one file. fio runs with its io_uring defaults: "
      "no `fixedbufs`, no `registerfiles`, no `sqthread_poll`, no `hipri` (and its default random "
      "map, `norandommap=0`). iocap reported these engine features: "
      + (", ".join(f"`{f}`" for f in features) if features else "none") + ".")
    w("- Latency is submission to completion for both: iocap's latency, and fio's total latency "
      "(`lat`, not `clat`; fio is run with `--lat_percentiles=1` so its percentiles are of total "
      "latency). Both record every I/O into a histogram.")
    w("- CPU µs/IO is user + system CPU time of the tool's process over the measured period "
      "divided by the I/Os completed in it: iocap's `cpu.us_per_io`; for fio "
      "(`usr_cpu` + `sys_cpu`) / 100 × `job_runtime` / `total_ios`.")
    w("- MB/s is 10^6 bytes per second. Ratios are iocap / fio: above 1 is better for IOPS and "
      "MB/s, below 1 is better for latency and CPU µs/IO.")
    if iocap_warnings:
        w("- iocap printed these warnings: " + "; ".join(sorted(iocap_warnings)))
    w("")
    w("## Summary")
    w("")
    w("Medians, iocap / fio (ratio iocap/fio):")
    w("")
    w("| Workload | " + " | ".join(n for _, n in METRICS) + " |")
    w("|---|" + "---:|" * len(METRICS))
    for wl in wls:
        cells = [f"{fmt(k, med[wl, 'iocap'][k])} / {fmt(k, med[wl, 'fio'][k])} ({rat[wl][k]:.2f}×)"
                 for k, _ in METRICS]
        w(f"| {wl}. {title[wl]} | " + " | ".join(cells) + " |")
    w("")
    w("## Targets")
    w("")
    w("| Workload | Target | Measured (iocap/fio, medians) | Result |")
    w("|---|---|---|---|")
    for wl in wls:
        if wl in targets:
            t, m, ok = targets[wl]
            w(f"| {wl}. {title[wl]} | {t} | {m} | {'**MET**' if ok else '**MISSED**'} |")
    w("")
    w("## Workloads")
    for wl in wls:
        w("")
        w(f"### {wl}. {title[wl]}")
        w("")
        w("```sh")
        w(cmds[wl, "iocap"])
        w(cmds[wl, "fio"])
        w("```")
        w("")
        if wl == "c" and info.get("cached_note"):
            w(info["cached_note"])
            w("")
        w("| Run | " + " | ".join(n for _, n in METRICS) + " |")
        w("|---|" + "---:|" * len(METRICS))
        for r in range(rounds):
            for tool in ("iocap", "fio"):
                x = res[wl, tool][r]
                w(f"| {tool} {r + 1} | " + " | ".join(fmt(k, x[k]) for k, _ in METRICS) + " |")
        for tool in ("iocap", "fio"):
            w(f"| **{tool} median** | " + " | ".join(f"**{fmt(k, med[wl, tool][k])}**" for k, _ in METRICS) + " |")
        w("| **iocap / fio** | " + " | ".join(f"**{rat[wl][k]:.2f}×**" for k, _ in METRICS) + " |")
        if wl in targets:
            t, m, ok = targets[wl]
            w("")
            w(f"Target: {t}. Measured: {m}. **{'MET' if ok else 'MISSED'}**.")
    w("")

    notes = "## Notes\n\n<!-- notes: filled in by hand after the run -->\n"
    if os.path.exists(out_path):
        old = open(out_path).read().splitlines(keepends=True)
        for i, line in enumerate(old):
            if line.rstrip() == "## Notes":
                notes = "".join(old[i:])
                break
    text = "\n".join(L) + "\n" + notes
    if not text.endswith("\n"):
        text += "\n"
    with open(out_path, "w") as f:
        f.write(text)
    # the summary on the terminal
    for wl in wls:
        if wl in targets:
            t, m, ok = targets[wl]
            print(f"  {wl}. {m:<40} {'MET' if ok else 'MISSED'}  ({t})")

if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "summary":
        summary(sys.argv[2], sys.argv[3])
    elif mode == "report":
        report(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(f"unknown mode {mode}")
PYEOF
py() { python3 -c "$PY" "$@"; }

# ---------------------------------------------------------------------------------------------
# Build, test file, run directory

say "building iocap (cargo build --release)"
cargo build --release -q
IOCAP=$REPO/target/release/iocap
[[ -x $IOCAP ]] || die "$IOCAP was not built"

mkdir -p "$BENCH_DIR"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
FILE=$BENCH_DIR/bench.dat
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RUN=$BENCH_DIR/results/$STAMP
mkdir -p "$RUN"

on_exit() {
    local rc=$?
    if ((rc != 0)); then
        say "stopped (exit $rc); docs/PERFORMANCE.md was not changed; raw results so far in $RUN"
    fi
}
trap on_exit EXIT
trap 'exit 130' INT TERM

runs=$((${#WORKLOADS[@]} * ROUNDS * 2))
secs=$((runs * (DURATION + RAMP)))
say "$runs runs of ${DURATION}+${RAMP} s: about $((secs / 60)) min $((secs % 60)) s plus start-up"

have=0
[[ -f $FILE ]] && have=$(stat -c %s "$FILE")
if ((have < SIZE_BYTES)); then
    say "creating $FILE ($BENCH_SIZE) with iocap"
else
    say "using the existing $FILE ($(numfmt --to=iec "$have"))"
fi
# Creates (or completes) the file at BENCH_SIZE and fills it; a no-op 1 s read if it is complete.
"$IOCAP" run --rw read --bs 1M --qd 4 --duration 1s --warmup 0s --size "$BENCH_SIZE" \
    --output json "$FILE" >"$RUN/create.json" 2>"$RUN/create.err" ||
    { cat "$RUN/create.err" >&2; die "iocap could not create $FILE"; }
have=$(stat -c %s "$FILE")
((have >= SIZE_BYTES)) || die "$FILE holds $have bytes, less than BENCH_SIZE $BENCH_SIZE ($SIZE_BYTES); remove it or pick another BENCH_DIR"

warm_cache() {
    dd if="$FILE" of=/dev/null bs=1M count="$CACHED_BYTES" iflag=count_bytes status=none
}
cached_note=""
cache_check() {
    command -v fincore >/dev/null || return 0
    local res
    res=$(fincore --bytes --noheadings --output RES "$FILE" 2>/dev/null) || return 0
    cached_note="Page-cache check before the first run (\`fincore\`): $(numfmt --to=iec "$res") of the file resident, $CACHED_SIZE wanted."
}

# ---------------------------------------------------------------------------------------------
# The runs

build_cmds() { # wl: fills the arrays ICMD and FCMD
    local wl=$1
    ICMD=("$IOCAP" run --rw "${RW[$wl]}" --bs "${BS[$wl]}" --qd "${QD[$wl]}" --threads 1
        --size "${WSIZE[$wl]}" --duration "${DURATION}s" --warmup "${RAMP}s" --engine io_uring)
    ((DIRECT[$wl])) || ICMD+=(--buffered)
    [[ -z ${SUBMIT:-} ]] || ICMD+=(--submit "$SUBMIT")
    ICMD+=(--output json "$FILE")
    FCMD=(fio "--name=$wl" "--filename=$FILE" "--size=${WSIZE[$wl]}" "--rw=${RW[$wl]}"
        "--bs=${BS[$wl],,}" "--iodepth=${QD[$wl]}" --numjobs=1 "--direct=${DIRECT[$wl]}"
        --ioengine=io_uring "--runtime=$DURATION" "--ramp_time=$RAMP" --time_based
        --group_reporting --lat_percentiles=1)
    # fio drops the file's cached pages before a job unless told not to
    ((DIRECT[$wl])) || FCMD+=(--invalidate=0)
    FCMD+=(--output-format=json)
}

run_one() { # wl round tool
    local wl=$1 r=$2 tool=$3 out=$RUN/$1.$3.$2
    local -a cmd
    if [[ $tool == iocap ]]; then cmd=("${ICMD[@]}"); else cmd=("${FCMD[@]}"); fi
    ((DIRECT[$wl])) || warm_cache
    if ! "${cmd[@]}" >"$out.json" 2>"$out.err"; then
        tail -n 20 "$out.err" >&2
        die "$tool failed in workload $wl round $r: ${cmd[*]}"
    fi
    say "[$wl $r/$ROUNDS] $(printf '%-5s' "$tool") $(py summary "$tool" "$out.json")"
}

for wl in "${WORKLOADS[@]}"; do
    build_cmds "$wl"
    printf '%q ' "${ICMD[@]}" | sed 's/ $//' >"$RUN/$wl.iocap.cmd"
    printf '%q ' "${FCMD[@]}" | sed 's/ $//' >"$RUN/$wl.fio.cmd"
    say "workload $wl: ${TITLE[$wl]}"
    if ((!DIRECT[$wl])); then
        warm_cache
        cache_check
    fi
    for ((r = 1; r <= ROUNDS; r++)); do
        run_one "$wl" "$r" iocap
        run_one "$wl" "$r" fio
    done
done

# ---------------------------------------------------------------------------------------------
# The report

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ $commit != unknown ]] &&
    [[ -n $(git status --porcelain --untracked-files=no -- . ':(exclude)docs/PERFORMANCE.md' 2>/dev/null) ]]; then
    commit="$commit (plus uncommitted changes)"
fi
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
mem_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
{
    printf 'workloads\t%s\n' "${WORKLOADS[*]}"
    for wl in "${WORKLOADS[@]}"; do printf 'title.%s\t%s\n' "$wl" "${TITLE[$wl]}"; done
    printf 'rounds\t%s\n' "$ROUNDS"
    printf 'duration\t%s\n' "$DURATION"
    printf 'ramp\t%s\n' "$RAMP"
    printf 'date\t%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf 'kernel\t%s\n' "$(uname -r)"
    printf 'cpu_model\t%s\n' "${cpu_model:-unknown}"
    printf 'cpus\t%s\n' "$(nproc)"
    printf 'mem\t%s\n' "$(awk -v kb="$mem_kb" 'BEGIN {printf "%.1f GiB", kb / 1048576}')"
    printf 'device\t%s\n' "$(df -P "$BENCH_DIR" | awk 'NR == 2 {print $1}')"
    printf 'fstype\t%s\n' "$(findmnt -n -o FSTYPE --target "$BENCH_DIR" 2>/dev/null || stat -f -c %T "$BENCH_DIR")"
    printf 'fio_version\t%s\n' "$(fio --version)"
    printf 'iocap_version\t%s\n' "$("$IOCAP" --version)"
    printf 'commit\t%s\n' "$commit"
    printf 'file\t%s\n' "$FILE"
    printf 'size\t%s\n' "$BENCH_SIZE"
    printf 'size_bytes\t%s\n' "$SIZE_BYTES"
    printf 'cached_size\t%s\n' "$CACHED_SIZE"
    printf 'cached_note\t%s\n' "$cached_note"
} >"$RUN/info.tsv"

mkdir -p docs
say "writing docs/PERFORMANCE.md"
py report "$RUN" "$REPO/docs/PERFORMANCE.md"
say "done; raw JSON in $RUN"
