#!/usr/bin/env python3
"""bench/throttle-vs-fio.py: is the latency at a given rate the device's, or the throttle's?
(issue 23, point 2)

iocap `run --rate-iops R --qd Q` against fio `--rate_iops=R --iodepth=Q` (its default linear
rate process), 4K random reads with O_DIRECT on io_uring, for R at 10, 50 and 90 % of the
unthrottled rate and Q of 1, 16 and 64, in paired rounds (each tool once per round, taking
turns going first). Reported per cell: the achieved IOPS, p50 and p99 of each tool (medians over
the rounds), and the median of the per-round p99 ratios iocap/fio with their IQR.

Bursts: in one extra round, every 4 KiB read the disk is given (tracepoint
block:block_rq_issue, through bpftrace, as root) is timed, and the largest number of requests
issued within any 100 us is reported against what the rate gives in 100 us. Without bpftrace
that column says so (`apt-get install bpftrace`; debugfs is mounted if it is not).

Usage: python3 bench/throttle-vs-fio.py [DIR]     (DIR default target/bench)
Knobs: ROUNDS (3), DURATION (4 s), RAMP (1 s), SIZE (4G), IOCAP (target/release/iocap),
FIO (../shared/peers/fio), LOADS ("10 50 90"), DEPTHS ("1 16 64"), OUT (docs/PERFORMANCE.md). Writes its section between the
throttle markers. Run on a quiet machine.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from perfdoc import quartiles, write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- throttle:begin -->", "<!-- throttle:end -->"
ROUNDS = int(os.environ.get("ROUNDS", "3"))
DURATION = int(os.environ.get("DURATION", "4"))
RAMP = int(os.environ.get("RAMP", "1"))
SIZE = os.environ.get("SIZE", "4G")
IOCAP = os.environ.get("IOCAP", os.path.join(REPO, "target/release/iocap"))
FIO = os.environ.get("FIO", os.path.join(REPO, "../shared/peers/fio"))
LOADS = tuple(int(x) for x in os.environ.get("LOADS", "10 50 90").split())
DEPTHS = tuple(int(x) for x in os.environ.get("DEPTHS", "1 16 64").split())


def iocap(path, qd, rate):
    cmd = [IOCAP, "run", "--rw", "randread", "--bs", "4K", "--qd", str(qd), "--size", SIZE,
           "--duration", f"{DURATION}s", "--warmup", f"{RAMP}s", "--engine", "io_uring",
           "--no-save", "--output", "json", path]
    if rate:
        cmd += ["--rate-iops", str(int(rate))]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    t = json.loads(out.stdout)["tests"][0]["read"]
    return t["iops"], t["lat_us"]["p50"], t["lat_us"]["p99"]


def fio(path, qd, rate):
    cmd = [FIO, "--name=t", f"--filename={path}", "--rw=randread", "--bs=4k", "--direct=1",
           "--ioengine=io_uring", f"--iodepth={qd}", "--time_based", f"--runtime={DURATION}",
           f"--ramp_time={RAMP}", "--lat_percentiles=1", "--output-format=json",
           "--randrepeat=0", "--norandommap"]
    if rate:
        cmd.append(f"--rate_iops={int(rate)}")
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    r = json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]["read"]
    pct = r["lat_ns"]["percentile"]
    return r["iops"], pct["50.000000"] / 1e3, pct["99.000000"] / 1e3


def traced(tool, path, qd, rate):
    """Runs one test under bpftrace; the largest number of requests issued in 100 us."""
    if not shutil.which("bpftrace") or os.geteuid() != 0:
        return None
    if not os.path.isdir("/sys/kernel/debug/tracing/events"):
        # the block tracepoints are found through tracefs, under debugfs
        subprocess.run(["mount", "-t", "debugfs", "none", "/sys/kernel/debug"],
                       capture_output=True)
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as f:
        # the tests' 4 KiB reads only: no write-back (bpftrace's own output) or journal I/O
        prog = ('tracepoint:block:block_rq_issue '
                '/args->bytes == 4096 && strncmp(args->rwbs, "R", 1) == 0/ '
                '{ printf("%llu\\n", nsecs); }')
        bt = subprocess.Popen(["bpftrace", "-o", f.name, "-e", prog],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(3)  # bpftrace attaches
        tool(path, qd, rate)
        bt.terminate()
        bt.wait()
        times = sorted(int(x) for x in f.read().split() if x.isdigit())
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while t - times[lo] >= 100_000:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


def med_iqr(xs):
    q1, med, q3 = quartiles(xs)
    return med, q1, q3


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target/bench")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "throttle.dat")
    iocap(path, 32, None)  # creates and fills the file
    # the unthrottled rate at qd 32, both tools, the mean
    top = statistics.mean([iocap(path, 32, None)[0], fio(path, 32, None)[0]])
    print(f"unthrottled 4K random read qd 32: {top:,.0f} IOPS", file=sys.stderr)
    rows = []
    for pct in LOADS:
        rate = top * pct / 100
        for qd in DEPTHS:
            got = {"iocap": [], "fio": []}
            for k in range(ROUNDS):
                order = [("iocap", iocap), ("fio", fio)]
                if k % 2:
                    order.reverse()
                for name, tool in order:
                    got[name].append(tool(path, qd, rate))
            ratio = med_iqr([i[2] / f[2] for i, f in zip(got["iocap"], got["fio"])])
            bursts = {n: traced(t, path, qd, rate) for n, t in (("iocap", iocap), ("fio", fio))}
            cells = {n: [statistics.median(x[j] for x in v) for j in range(3)]
                     for n, v in got.items()}
            rows.append((pct, rate, qd, cells, ratio, bursts))
            print(f"{pct}% qd {qd}: {cells} p99 ratio {ratio[0]:.2f} bursts {bursts}",
                  file=sys.stderr)
    write(rows, top)


def write(rows, top):
    lines = [BEGIN, "## The throttle against fio's (issue 23)", "",
             f"`bench/throttle-vs-fio.py`, {time.strftime('%Y-%m-%d')}: 4K random reads, "
             f"O_DIRECT, io_uring, {ROUNDS} paired rounds of {DURATION} s after {RAMP} s, "
             f"one {SIZE} file. Unthrottled (qd 32, both tools' mean): {top:,.0f} IOPS. "
             "Achieved IOPS, p50 and p99 in µs: medians over the rounds; p99 ratio "
             "iocap/fio: median (IQR) of the per-round ratios. Burst: the most block "
             "requests issued within 100 µs (one traced round), against the rate's 100 µs "
             "worth.", "",
             "| load | qd | iocap IOPS | fio IOPS | iocap p50 | fio p50 | iocap p99 | "
             "fio p99 | p99 iocap/fio | burst iocap / fio (rate) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for pct, rate, qd, c, r, b in rows:
        burst = "no bpftrace" if b["iocap"] is None else \
            f"{b['iocap']} / {b['fio']} ({rate / 1e4:.1f})"
        lines.append(f"| {pct} % | {qd} | {c['iocap'][0]:,.0f} | {c['fio'][0]:,.0f} | "
                     f"{c['iocap'][1]:.0f} | {c['fio'][1]:.0f} | {c['iocap'][2]:.0f} | "
                     f"{c['fio'][2]:.0f} | {r[0]:.2f} ({r[1]:.2f}–{r[2]:.2f}) | {burst} |")
    lines.append(END)
    write_section(BEGIN, END, lines)


if __name__ == "__main__":
    main()
