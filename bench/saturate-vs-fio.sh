#!/usr/bin/env bash
# bench/saturate-vs-fio.sh: does the knee that `iocap saturate` finds hold up when fio, run by
# hand at the same queue depths, measures the same curve?
#
# A benchmark, not a test. Each round runs `iocap saturate` (8K random read, O_DIRECT, io_uring,
# one thread) on the test file, then fio on the same file at every queue depth iocap measured,
# plus one doubling beyond iocap's last step, and further doublings while fio's own curve has not
# yet stopped by the rule below (up to MAX_QD). The script applies iocap's knee rule to fio's
# curve:
#   a step is flat when its IOPS beat the best IOPS of all earlier steps by less than MIN_GAIN %
#   and its p99 rose over the previous step; two flat steps in a row make the knee, which is the
#   last qd that still gained (the qd just before the first of the two flat steps);
#   the curve also stops, unconfirmed, at MAX_QD.
# The knee is CONFIRMED when the median of fio's per-round knees is at the median of iocap's
# per-round knees or one doubling away (half or twice that qd).
#
# Knobs (environment):
#   ROUNDS       whole comparisons (iocap saturate + fio sweep)       (default 3)
#   STEP         measured seconds per step, both tools                (default 10)
#   WARMUP       unmeasured seconds before each step (iocap --warmup, fio --ramp_time) (default 2)
#   BS           block size                                           (default 8K)
#   MAX_QD       largest queue depth                                  (default 256)
#   MIN_GAIN     flat below this gain per doubling, percent           (default 5)
#   BENCH_DIR    where the test file and raw results go (default target/bench in the repository)
#   BENCH_SIZE   size of the test file, K/M/G/T = 1024^n (default 4G)
#   OUT          the report to update (default docs/PERFORMANCE.md)
#   NO_BUILD=1   do not run `cargo build --release`; use the binary that is there
#
# The binary is $CARGO_TARGET_DIR/release/iocap (default target/release/iocap in the repository).
# It writes only BENCH_DIR (bench.dat, shared with bench/vs-fio.sh, and results/sat-<stamp>/)
# and the section "## Saturation knee: iocap saturate against fio" of OUT, which it replaces (or
# appends after everything else, so it sits after "## Notes" and bench/vs-fio.sh keeps it). A
# "### Notes" subsection inside that section, written by hand, is kept. If a run fails or is
# interrupted, OUT is left unchanged. See bench/README.md.
set -euo pipefail

die() { echo "saturate-vs-fio.sh: error: $*" >&2; exit 2; }
say() { echo "saturate-vs-fio.sh: $*" >&2; }

CALLER_PWD=$PWD
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
fi
(($# == 0)) || die "no arguments are taken; the knobs are environment variables (see --help)"

# ---------------------------------------------------------------------------------------------
# Settings and pre-flight checks

ROUNDS=${ROUNDS:-3}
STEP=${STEP:-10}
WARMUP=${WARMUP:-2}
BS=${BS:-8K}
MAX_QD=${MAX_QD:-256}
MIN_GAIN=${MIN_GAIN:-5}
BENCH_SIZE=${BENCH_SIZE:-4G}
BENCH_DIR=${BENCH_DIR:-$REPO/target/bench}
OUT=${OUT:-$REPO/docs/PERFORMANCE.md}
NO_BUILD=${NO_BUILD:-0}
case $BENCH_DIR in /*) ;; *) BENCH_DIR=$CALLER_PWD/$BENCH_DIR ;; esac
case $OUT in /*) ;; *) OUT=$CALLER_PWD/$OUT ;; esac

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive whole number (got '$ROUNDS')"
[[ $STEP =~ ^[1-9][0-9]*$ ]] || die "STEP must be a whole number of seconds (got '$STEP')"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "WARMUP must be a whole number of seconds (got '$WARMUP')"
[[ $MAX_QD =~ ^[1-9][0-9]*$ ]] || die "MAX_QD must be a positive whole number (got '$MAX_QD')"
[[ $MIN_GAIN =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "MIN_GAIN must be a number of percent (got '$MIN_GAIN')"
size_re='^[1-9][0-9]*[KMGT]?$'
[[ $BENCH_SIZE =~ $size_re ]] || die "BENCH_SIZE must look like 4G, 512M or a byte count (got '$BENCH_SIZE')"
[[ $BS =~ $size_re ]] || die "BS must look like 8K or 4K (got '$BS')"
SIZE_BYTES=$(numfmt --from=iec "$BENCH_SIZE")

command -v python3 >/dev/null || die "python3 is required to read the JSON results (apt-get install python3)"
command -v fio >/dev/null || die "fio is not installed (apt-get install fio)"
fio --enghelp=io_uring >/dev/null 2>&1 || die "this fio has no io_uring engine ($(fio --version))"

TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
case $TARGET_DIR in /*) ;; *) TARGET_DIR=$REPO/$TARGET_DIR ;; esac
IOCAP=$TARGET_DIR/release/iocap
if [[ $NO_BUILD != 1 ]]; then
    command -v cargo >/dev/null || die "cargo is required to build iocap (or set NO_BUILD=1)"
    say "building iocap (cargo build --release)"
    cargo build --release --quiet --bin iocap
fi
[[ -x $IOCAP ]] || die "no iocap binary at $IOCAP (build it, or set CARGO_TARGET_DIR)"

# ---------------------------------------------------------------------------------------------
# The JSON reader, the knee rule and the report writer (python3)

read -r -d '' PY <<'PYEOF' || true
import json, math, os, statistics, sys

def load(path):
    text = open(path).read()
    i = text.find("{")
    if i < 0:
        raise SystemExit(f"no JSON in {path}")
    return json.loads(text[i:])

# ---- the knee rule, as in crates/iocap-assess/src/saturate.rs (no latency ceiling) ----------

def ok(v):
    return v is not None and math.isfinite(v) and v > 0

def gain_pct(steps, i):
    """Gain of step i over the best IOPS of the steps before it, in percent."""
    best = [s["iops"] for s in steps[:i] if ok(s["iops"])]
    if i == 0 or not best:
        return None
    cur = steps[i]["iops"] if math.isfinite(steps[i]["iops"]) else 0.0
    return (cur / max(best) - 1.0) * 100.0

def is_flat(steps, i, lat, min_gain):
    g = gain_pct(steps, i)
    if g is None:
        return False
    a, b = steps[i - 1].get(lat), steps[i].get(lat)
    rose = (b > a) if (a is not None and b is not None) else True
    return g < min_gain and rose

def next_step(steps, lat, min_gain, max_qd):
    """('continue', qd) or ('stop', reason, knee_qd) after the steps measured so far."""
    if not steps:
        return ("continue", 1)
    k = len(steps) - 1
    last = steps[k]
    if not ok(last["iops"]):
        return ("stop", "no I/O", None)
    flat = is_flat(steps, k, lat, min_gain)
    if flat and k >= 2 and is_flat(steps, k - 1, lat, min_gain):
        return ("stop", "knee", steps[k - 2]["qd"])
    nxt = max(1, last["qd"] * 2)
    if last["qd"] >= max_qd or nxt > max_qd:
        return ("stop", "max qd", steps[k - 1]["qd"] if flat else None)
    return ("continue", nxt)

def knee(steps, lat, min_gain, max_qd):
    """(knee_qd, reason, qd at which the rule stopped) for a whole curve: its first stop."""
    for k in range(1, len(steps) + 1):
        d = next_step(steps[:k], lat, min_gain, max_qd)
        if d[0] == "stop":
            return d[2], d[1], steps[k - 1]["qd"]
    return None, "not stopped", steps[-1]["qd"] if steps else None

# ---- parsing ---------------------------------------------------------------------------------

def parse_iocap(path):
    run = load(path)
    sat = run.get("saturation") or {}
    tests = run.get("tests", [])
    for t in tests:
        if t.get("error"):
            raise SystemExit(f"iocap reported an error in {path}: {t['error']}")
    steps = []
    for p in sat.get("steps", []):
        t = tests[p["test_idx"]] if p.get("test_idx") is not None and p["test_idx"] < len(tests) else {}
        lat = (t.get("total") or {}).get("lat_us") or {}
        steps.append({"qd": p["qd"], "iops": p["iops"], "mbs": p["mb_s"],
                      "p50": p.get("lat_us_p50"), "p99": p.get("lat_us_p99"),
                      "qd_mean": t.get("qd_mean"),
                      "cpu": (t.get("cpu") or {}).get("us_per_io")})
    eng = tests[0].get("engine") if tests else None
    feats = tests[0].get("engine_features", []) if tests else []
    return {"steps": steps, "knee_qd": sat.get("knee_qd"), "stop_reason": sat.get("stop_reason", ""),
            "max_iops": sat.get("max_iops"), "engine": eng, "features": feats,
            "warnings": sorted({w for t in tests for w in t.get("warnings", [])})}

def parse_fio(path, qd):
    j = load(path)["jobs"][0]
    if j.get("error"):
        raise SystemExit(f"fio reported error {j['error']} in {path}")
    d = j["read"]
    lat = d["lat_ns"].get("percentile")
    clat = d["clat_ns"].get("percentile") or {}
    if not lat:
        raise SystemExit(f"fio gave no total-latency percentiles in {path} (--lat_percentiles=1 missing?)")
    ios = d["total_ios"]
    runtime_ms = j.get("job_runtime") or d["runtime"]
    cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * runtime_ms * 1000.0 / ios if ios else 0.0
    g = lambda pct, k: pct[k] / 1000.0 if k in pct else None
    return {"qd": qd, "iops": d["iops"], "mbs": d["bw_bytes"] / 1e6,
            "p50": g(lat, "50.000000"), "p99": g(lat, "99.000000"),
            "clat_p50": g(clat, "50.000000"), "clat_p99": g(clat, "99.000000"), "cpu": cpu}

def fio_points(run_dir, r):
    pts = []
    for name in os.listdir(run_dir):
        pre = f"r{r}.fio.qd"
        if name.startswith(pre) and name.endswith(".json"):
            qd = int(name[len(pre):-5])
            pts.append(parse_fio(os.path.join(run_dir, name), qd))
    return sorted(pts, key=lambda p: p["qd"])

# ---- modes called by the shell ---------------------------------------------------------------

def cmd_iocap_qds(path):
    print(" ".join(str(s["qd"]) for s in parse_iocap(path)["steps"]))

def cmd_fio_next(run_dir, r, iocap_qds, min_gain, max_qd):
    """The next qd for fio in round r, or 0: every iocap qd, one doubling beyond iocap's last,
    then doublings while fio's own curve has not stopped."""
    qds = [int(q) for q in iocap_qds.split()]
    pts = fio_points(run_dir, r)
    done = {p["qd"] for p in pts}
    for q in qds:
        if q not in done:
            print(q); return
    beyond = qds[-1] * 2
    if beyond <= max_qd and beyond not in done:
        print(beyond); return
    if knee(pts, "p99", min_gain, max_qd)[1] == "not stopped":
        nxt = pts[-1]["qd"] * 2
        if nxt <= max_qd:
            print(nxt); return
    print(0)

def cmd_summary_iocap(path, min_gain, max_qd):
    x = parse_iocap(path)
    mine = knee(x["steps"], "p99", min_gain, max_qd)[0]
    curve = ", ".join(f"qd{s['qd']} {s['iops']:,.0f}" for s in x["steps"])
    print(f"{curve}; knee qd {x['knee_qd']} ({x['stop_reason']}); the script's rule: {mine}")

def cmd_summary_fio(path, qd):
    p = parse_fio(path, qd)
    print(f"{p['iops']:,.0f} IOPS, p50 {p['p50']:.1f} µs, p99 {p['p99']:.1f} µs (lat)")

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def knee_med(ks, max_qd):
    """Median of per-round knees; no knee counts as beyond the largest qd (2 × MAX_QD)."""
    vals = [k if k is not None else 2 * max_qd for k in ks]
    m = statistics.median_low(sorted(vals))
    return None if m == 2 * max_qd else m

def doublings(a, b):
    if a is None or b is None:
        return None
    return abs(math.log2(b / a))

def qd_s(k):
    return "none" if k is None else f"qd {k}"

def num(v, nd=0):
    if v is None:
        return "–"
    return f"{v:,.{nd}f}"

def report(run_dir, out_path):
    info = {}
    for line in open(os.path.join(run_dir, "info.tsv")):
        k, _, v = line.rstrip("\n").partition("\t")
        info[k] = v
    rounds = int(info["rounds"])
    min_gain = float(info["min_gain"])
    max_qd = int(info["max_qd"])
    R = []
    for r in range(1, rounds + 1):
        ic = parse_iocap(os.path.join(run_dir, f"r{r}.iocap.json"))
        fp = fio_points(run_dir, r)
        R.append({
            "iocap": ic, "fio": fp,
            "iocap_rule": knee(ic["steps"], "p99", min_gain, max_qd),
            "fio_knee": knee(fp, "p99", min_gain, max_qd),
            "fio_knee_clat": knee(fp, "clat_p99", min_gain, max_qd),
            "fio_knee_p50": knee(fp, "p50", min_gain, max_qd),
            "iocap_knee_p50": knee(ic["steps"], "p50", min_gain, max_qd),
        })
    all_qds = sorted({s["qd"] for x in R for s in x["iocap"]["steps"]} | {p["qd"] for x in R for p in x["fio"]})

    def at(x, tool, qd):
        seq = x["iocap"]["steps"] if tool == "iocap" else x["fio"]
        return next((s for s in seq if s["qd"] == qd), None)

    M = {}
    for qd in all_qds:
        row = {}
        for tool in ("iocap", "fio"):
            pts = [at(x, tool, qd) for x in R]
            pts = [p for p in pts if p]
            row[tool] = {k: med([p.get(k) for p in pts]) for k in ("iops", "p50", "p99", "clat_p99", "cpu", "qd_mean")}
            row[tool]["n"] = len(pts)
        # ratio of the medians (only from rounds in which both measured this qd)
        both = [(at(x, "iocap", qd), at(x, "fio", qd)) for x in R]
        both = [(a, b) for a, b in both if a and b and b["iops"]]
        row["ratio"] = med([a["iops"] / b["iops"] for a, b in both])
        M[qd] = row

    ik = [x["iocap"]["knee_qd"] for x in R]
    fk = [x["fio_knee"][0] for x in R]
    ik_med, fk_med = knee_med(ik, max_qd), knee_med(fk, max_qd)
    dist = doublings(ik_med, fk_med)
    confirmed = dist is not None and dist <= 1.0 + 1e-9
    # the knee of the median curves, as a second view (qds measured in every round only)
    def median_curve(tool):
        pts = []
        for qd in all_qds:
            if M[qd][tool]["n"] == rounds:
                pts.append({"qd": qd, "iops": M[qd][tool]["iops"], "p99": M[qd][tool]["p99"]})
            else:
                break
        return pts
    mk_i = knee(median_curve("iocap"), "p99", min_gain, max_qd)
    mk_f = knee(median_curve("fio"), "p99", min_gain, max_qd)
    rule_agrees = all(x["iocap_rule"][0] == x["iocap"]["knee_qd"] for x in R)

    L = []
    w = L.append
    w("## Saturation knee: iocap saturate against fio")
    w("")
    w(f"Written by `bench/saturate-vs-fio.sh` on {info['date']}; rerun it to refresh this section "
      "(the rest of the file is not touched; a `### Notes` subsection at its end is kept). How to "
      "run it: [bench/README.md](../bench/README.md).")
    w("")
    w("Requirement: `iocap saturate` on this VM shows a knee that fio, run by hand at the same queue "
      "depths, confirms.")
    w("")
    verdict = "CONFIRMED" if confirmed else "NOT CONFIRMED"
    w(f"**Verdict: {verdict}.** Median knee over {rounds} round{'s' if rounds != 1 else ''}: iocap {qd_s(ik_med)}, "
      f"fio {qd_s(fk_med)}"
      + (f" ({dist:.0f} doubling{'s' if dist != 1 else ''} apart)." if dist is not None else ".")
      + " Criterion: the median of fio's per-round knees (by iocap's rule, applied by this script "
      "to fio's curve) is at the median of iocap's per-round knees or one doubling away (half or "
      "twice that qd); a round without a knee counts as beyond the largest queue depth.")
    w("")
    w("| | |")
    w("|---|---|")
    w(f"| Date | {info['date']} |")
    w(f"| Host | {info['cpus']} CPUs ({info['cpu_model']}), {info['mem']} RAM |")
    w(f"| Kernel | `{info['kernel']}` |")
    w(f"| Storage | test file on `{info['device']}` ({info['fstype']}); {info['disk']} |")
    w(f"| fio | {info['fio_version']} |")
    w(f"| iocap | {info['iocap_version']}, commit `{info['commit']}`, release build; engine "
      f"`{R[0]['iocap']['engine']}` with " + (", ".join(f"`{f}`" for f in R[0]['iocap']['features']) or "no extra features") + " |")
    w(f"| Test file | `{info['file']}`, {info['size']} ({info['size_bytes']} bytes), created and filled "
      "by iocap (the file `bench/vs-fio.sh` uses with the same `BENCH_DIR`); both tools read all of it |")
    w(f"| Workload | {info['bs']} random read, O_DIRECT, io_uring, 1 thread / 1 job, queue depth 1, 2, 4, … |")
    w(f"| Timing | {info['step']} s measured after a {info['warmup']} s warm-up per step, both tools "
      "(iocap `--step-duration`/`--warmup`, fio `--runtime`/`--ramp_time`, `--time_based`) |")
    w(f"| Rounds | {rounds}; each round runs `iocap saturate`, then fio at each of its queue depths |")
    w(f"| Knee rule | flat: < {min_gain:g} % more IOPS than the best earlier step while p99 rose over "
      f"the previous step; two flat steps in a row; the knee is the last qd that still gained; "
      f"largest qd {max_qd}, no latency ceiling |")
    w("")
    w("Commands (one round):")
    w("")
    w("```sh")
    w(info["iocap_cmd"])
    w(info["fio_cmd"])
    w("```")
    w("")
    w("Method:")
    w("")
    w("- fio runs at every queue depth iocap measured in that round, one doubling beyond iocap's "
      "last step, and further doublings while fio's own curve has not stopped by the rule (up to "
      f"{max_qd}). fio uses its io_uring defaults (no `hipri`, `sqthread_poll`, `fixedbufs` or "
      "`registerfiles`).")
    w("- Latency is submission to completion for both tools: iocap's latency, and fio's total "
      "latency `lat_ns` (fio runs with `--lat_percentiles=1`). fio's `clat_ns` (from submission "
      "by the kernel to completion) is recorded too and used below only as a check.")
    w(f"- The script's own implementation of the rule, applied to iocap's steps, gives iocap's "
      f"`knee_qd` in {'every round' if rule_agrees else 'NOT every round (see the knee table)'}.")
    w("- IOPS ratio is iocap / fio, the median of the per-round ratios at that qd (rounds in which "
      "both tools measured it). Medians of IOPS and p99 are over the rounds that measured the qd.")
    w("- The load average (1 min, of a machine with "
      f"{info['cpus']} CPUs) is recorded per round: above the CPU count means other work (builds, "
      "tests) competed with the benchmark for the CPUs.")
    if any(x["iocap"]["warnings"] for x in R):
        w("- iocap printed these warnings: " + "; ".join(sorted({v for x in R for v in x["iocap"]["warnings"]})))
    w("")
    w("### Medians per queue depth")
    w("")
    w("| qd | iocap IOPS | fio IOPS | ratio | iocap p99 µs | fio p99 µs | fio clat p99 µs | rounds (iocap/fio) |")
    w("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for qd in all_qds:
        m = M[qd]
        mark = []
        if qd == ik_med:
            mark.append("iocap knee")
        if qd == fk_med:
            mark.append("fio knee")
        q = f"**{qd}** ({', '.join(mark)})" if mark else f"{qd}"
        rt = f"{m['ratio']:.2f}×" if m["ratio"] is not None else "–"
        w(f"| {q} | {num(m['iocap']['iops'])} | {num(m['fio']['iops'])} | "
          f"{rt} | "
          f"{num(m['iocap']['p99'], 1)} | {num(m['fio']['p99'], 1)} | {num(m['fio']['clat_p99'], 1)} | "
          f"{m['iocap']['n']}/{m['fio']['n']} |")
    w("")
    w(f"Knee of the median curves (qds measured in every round): iocap {qd_s(mk_i[0])} "
      f"({mk_i[1]}), fio {qd_s(mk_f[0])} ({mk_f[1]}).")
    w("")
    w("### Knee per round")
    w("")
    w("| Round | iocap knee (`knee_qd`) | iocap stopped | fio knee (same rule, `lat` p99) | fio stopped at | doublings apart | fio knee by `clat` p99 | knees by p50 instead (iocap / fio) | load average (start, after iocap, end) |")
    w("|---:|---:|---|---:|---:|---:|---:|---:|---|")
    for r, x in enumerate(R, 1):
        ic, fkn = x["iocap"], x["fio_knee"]
        d = doublings(ic["knee_qd"], fkn[0])
        reason = ic["stop_reason"]
        w(f"| {r} | {qd_s(ic['knee_qd'])} | at qd {ic['steps'][-1]['qd']}: {reason} | {qd_s(fkn[0])} | "
          f"qd {fkn[2]} ({fkn[1]}) | {'–' if d is None else f'{d:.0f}'} | {qd_s(x['fio_knee_clat'][0])} | "
          f"{qd_s(x['iocap_knee_p50'][0])} / {qd_s(x['fio_knee_p50'][0])} | {info.get(f'load.{r}', '?')} |")
    w(f"| **median** | **{qd_s(ik_med)}** | | **{qd_s(fk_med)}** | | "
      f"**{'–' if dist is None else f'{dist:.0f}'}** | | | |")
    w("")
    w("### Every round")
    for r, x in enumerate(R, 1):
        w("")
        w(f"Round {r}:")
        w("")
        w("| qd | iocap IOPS | iocap p50 µs | iocap p99 µs | iocap qd_mean | fio IOPS | fio p50 µs | fio p99 µs | fio clat p99 µs | ratio |")
        w("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        qds = sorted({s["qd"] for s in x["iocap"]["steps"]} | {p["qd"] for p in x["fio"]})
        for qd in qds:
            a, b = at(x, "iocap", qd), at(x, "fio", qd)
            rt = f"{a['iops'] / b['iops']:.2f}×" if a and b and b["iops"] else "–"
            w(f"| {qd} | {num(a and a['iops'])} | {num(a and a['p50'], 1)} | {num(a and a['p99'], 1)} | "
              f"{num(a and a['qd_mean'], 1)} | {num(b and b['iops'])} | {num(b and b['p50'], 1)} | "
              f"{num(b and b['p99'], 1)} | {num(b and b['clat_p99'], 1)} | {rt} |")
    w("")
    w(f"Raw JSON of every run: `{info['run_dir']}`.")
    w("")
    knobs = [f"{k}={info[v]}" for k, v, d in (("ROUNDS", "rounds", "3"), ("STEP", "step", "10"),
             ("WARMUP", "warmup", "2"), ("BS", "bs", "8K"), ("BENCH_SIZE", "size", "4G"),
             ("MAX_QD", "max_qd", "256"), ("MIN_GAIN", "min_gain", "5")) if info[v] != d]
    w(f"Rerun: `{' '.join(knobs + ['bench/saturate-vs-fio.sh'])}`"
      + (" (all defaults" if not knobs else " (other knobs at their defaults")
      + "; with the defaults it takes 10–15 min on this VM; see [bench/README.md](../bench/README.md)).")
    section = "\n".join(L) + "\n"

    heading = "## Saturation knee: iocap saturate against fio"
    old = open(out_path).read() if os.path.exists(out_path) else ""
    lines = old.splitlines(keepends=True)
    start = next((i for i, l in enumerate(lines) if l.rstrip() == heading), None)
    notes = ""
    if start is None:
        text = old.rstrip("\n") + ("\n\n" if old.strip() else "") + section
    else:
        end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("## ")), len(lines))
        n0 = next((j for j in range(start + 1, end) if lines[j].rstrip() == "### Notes"), None)
        if n0 is not None:
            notes = "".join(lines[n0:end]).rstrip("\n") + "\n"
        rest = "".join(lines[end:])
        text = "".join(lines[:start]) + section + ("\n" + notes if notes else "") + ("\n" + rest if rest else "")
    tmp = out_path + ".tmp"
    open(tmp, "w").write(text)
    os.replace(tmp, out_path)
    print(f"knee per round: iocap {ik}, fio {fk}; medians iocap {ik_med}, fio {fk_med}: {verdict}")
    for qd in all_qds:
        m = M[qd]
        print(f"  qd {qd:>3}: iocap {num(m['iocap']['iops']):>9} fio {num(m['fio']['iops']):>9} "
              f"ratio {m['ratio'] if m['ratio'] is None else round(m['ratio'], 2)} "
              f"p99 {num(m['iocap']['p99'], 1)} / {num(m['fio']['p99'], 1)} µs")

if __name__ == "__main__":
    mode, a = sys.argv[1], sys.argv[2:]
    if mode == "iocap-qds":
        cmd_iocap_qds(a[0])
    elif mode == "fio-next":
        cmd_fio_next(a[0], int(a[1]), a[2], float(a[3]), int(a[4]))
    elif mode == "summary-iocap":
        cmd_summary_iocap(a[0], float(a[1]), int(a[2]))
    elif mode == "summary-fio":
        cmd_summary_fio(a[0], int(a[1]))
    elif mode == "report":
        report(a[0], a[1])
    else:
        raise SystemExit(f"unknown mode {mode}")
PYEOF
py() { python3 -c "$PY" "$@"; }

# ---------------------------------------------------------------------------------------------
# Test file, run directory

mkdir -p "$BENCH_DIR"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
FILE=$BENCH_DIR/bench.dat
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RUN=$BENCH_DIR/results/sat-$STAMP
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
else
    say "using the existing $FILE ($(numfmt --to=iec "$have"))"
fi
# Creates (or completes) the file at BENCH_SIZE and fills it; a no-op 1 s read if it is complete.
"$IOCAP" run --rw read --bs 1M --qd 4 --duration 1s --warmup 0s --size "$BENCH_SIZE" \
    --output json "$FILE" >"$RUN/create.json" 2>"$RUN/create.err" ||
    { cat "$RUN/create.err" >&2; die "iocap could not create $FILE"; }
have=$(stat -c %s "$FILE")
((have == SIZE_BYTES)) || die "$FILE holds $have bytes, not BENCH_SIZE $BENCH_SIZE ($SIZE_BYTES); both tools must read the same range: remove it or pick another BENCH_DIR"

ICMD=("$IOCAP" saturate "$FILE" --rw randread --bs "$BS" --size "$BENCH_SIZE"
    --step-duration "${STEP}s" --warmup "${WARMUP}s" --max-qd "$MAX_QD" --min-gain "$MIN_GAIN"
    --latency-target 10ms --engine io_uring --no-throttled --no-save --output json)
fcmd() { # qd: fills FCMD
    FCMD=(fio "--name=sat-qd$1" "--filename=$FILE" "--size=$BENCH_SIZE" --rw=randread "--bs=${BS,,}"
        "--iodepth=$1" --numjobs=1 --direct=1 --ioengine=io_uring "--runtime=$STEP"
        "--ramp_time=$WARMUP" --time_based --group_reporting --lat_percentiles=1 --output-format=json)
}

# ---------------------------------------------------------------------------------------------
# The rounds

say "$ROUNDS rounds; each about 2 × (number of steps) × $((STEP + WARMUP)) s"
for ((r = 1; r <= ROUNDS; r++)); do
    say "[round $r/$ROUNDS] iocap saturate (load average $(cut -d' ' -f1 /proc/loadavg))"
    load_start=$(cut -d' ' -f1 /proc/loadavg)
    out=$RUN/r$r.iocap
    if ! "${ICMD[@]}" >"$out.json" 2>"$out.err"; then
        # exit status 1 may only mean a verdict; the JSON must be there and free of errors
        grep -q '"saturation"' "$out.json" 2>/dev/null || { tail -n 20 "$out.err" >&2; die "iocap saturate failed in round $r"; }
    fi
    say "[round $r/$ROUNDS] iocap: $(py summary-iocap "$out.json" "$MIN_GAIN" "$MAX_QD")"
    load_mid=$(cut -d' ' -f1 /proc/loadavg)
    qds=$(py iocap-qds "$out.json")
    [[ -n $qds ]] || die "iocap saturate measured no steps in round $r"
    while :; do
        qd=$(py fio-next "$RUN" "$r" "$qds" "$MIN_GAIN" "$MAX_QD")
        ((qd > 0)) || break
        fcmd "$qd"
        out=$RUN/r$r.fio.qd$qd
        if ! "${FCMD[@]}" >"$out.json" 2>"$out.err"; then
            tail -n 20 "$out.err" >&2
            rm -f "$out.json"
            die "fio failed in round $r at qd $qd: ${FCMD[*]}"
        fi
        say "[round $r/$ROUNDS] fio qd $(printf '%-3s' "$qd") $(py summary-fio "$out.json" "$qd")"
    done
    printf 'load.%s\t%s, %s, %s\n' "$r" "$load_start" "$load_mid" "$(cut -d' ' -f1 /proc/loadavg)" >>"$RUN/load.tsv"
done

# ---------------------------------------------------------------------------------------------
# The report

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ $commit != unknown ]] &&
    [[ -n $(git status --porcelain --untracked-files=no -- src crates Cargo.toml Cargo.lock 2>/dev/null) ]]; then
    commit="$commit (with uncommitted changes in the working tree)"
fi
cpu_model=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)
[[ -n $cpu_model ]] || cpu_model=$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ {print $2; exit}')
device=$(df --output=source "$FILE" | tail -1)
fstype=$(df --output=fstype "$FILE" | tail -1)
# the whole disk behind the file system, for its queue settings
disk=${device#/dev/}
parent=$(lsblk -no pkname "$device" 2>/dev/null | head -1 || true)
[[ -n $parent ]] && disk=$parent
disk_facts="no queue facts in /sys/block/$disk"
if [[ -d /sys/block/$disk/queue ]]; then
    q=/sys/block/$disk/queue
    sched=$(sed -E 's/.*\[([^]]+)\].*/\1/' "$q/scheduler" 2>/dev/null || echo '?')
    hwq=$(ls -d /sys/block/"$disk"/mq/* 2>/dev/null | wc -l)
    tags=$(cat /sys/block/"$disk"/mq/0/nr_tags 2>/dev/null || echo '?')
    drv=$(basename "$(readlink -f /sys/block/"$disk"/device/driver 2>/dev/null)" 2>/dev/null || echo '?')
    disk_facts="\`$disk\` (driver ${drv:-?}, rotational $(cat "$q/rotational"), scheduler $sched, nr_requests $(cat "$q/nr_requests"), $hwq hardware queue(s) of $tags tags)"
fi

{
    printf 'date\t%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf 'cpus\t%s\n' "$(nproc)"
    printf 'cpu_model\t%s\n' "$cpu_model"
    printf 'mem\t%s\n' "$(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
    printf 'kernel\t%s\n' "$(uname -r)"
    printf 'device\t%s\n' "$device"
    printf 'fstype\t%s\n' "$fstype"
    printf 'disk\t%s\n' "$disk_facts"
    printf 'fio_version\t%s\n' "$(fio --version)"
    printf 'iocap_version\t%s\n' "$("$IOCAP" --version)"
    printf 'commit\t%s\n' "$commit"
    printf 'file\t%s\n' "$FILE"
    printf 'size\t%s\n' "$BENCH_SIZE"
    printf 'size_bytes\t%s\n' "$SIZE_BYTES"
    printf 'bs\t%s\n' "$BS"
    printf 'step\t%s\n' "$STEP"
    printf 'warmup\t%s\n' "$WARMUP"
    printf 'rounds\t%s\n' "$ROUNDS"
    printf 'min_gain\t%s\n' "$MIN_GAIN"
    printf 'max_qd\t%s\n' "$MAX_QD"
    printf 'run_dir\t%s\n' "$RUN"
    printf 'iocap_cmd\t%s\n' "$(printf '%q ' "${ICMD[@]}" | sed 's/ $//')"
    fcmd QD
    printf 'fio_cmd\t%s\n' "$(printf '%q ' "${FCMD[@]}" | sed 's/ $//; s/QD/$QD/g')"
    cat "$RUN/load.tsv"
} >"$RUN/info.tsv"

say "writing $OUT"
py report "$RUN" "$OUT"
say "done"
