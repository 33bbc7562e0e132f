#!/usr/bin/env python3
"""bench/write-data.py: where iocap's write gap to fio goes (issue 36, point 1). Is it the
data (whitened, unique per write) or iocap's path?

Paired rounds on one file, O_DIRECT, io_uring, every variant once per round, the variants taking
turns going first:
  iocap          iocap's default data: every write whitened, then stamped
  iocap-stamped  the same binary with IOCAP_BENCH_STAMP_ONLY: stamped, not whitened, so a slot's
                 bytes nearly repeat from write to write, as fio's default data does
  fio            fio's default data (one buffer, a few bytes scrambled per write)
  fio-refill     fio --refill_buffers: fresh random bytes every write
Per round the ratios iocap/fio, iocap-stamped/fio, iocap/fio-refill and iocap/iocap-stamped, of
IOPS and of CPU per I/O (the children's user and system time around each call, over every I/O,
warm-up included at the measured rate); the report gives their median and IQR. If
iocap-stamped matches fio while iocap falls short, the data costs the gap, not iocap's path.

Usage: IOCAP=target/release/iocap python3 bench/write-data.py [DIR]
Knobs: ROUNDS (5), DURATION (4 s), RAMP (1 s), SIZE (4G), WORKLOADS ("64k 8k"), SECTION
(write-data), OUT. Writes its section of docs/PERFORMANCE.md. Run on a quiet machine.
"""

import json
import os
import subprocess
import sys
import time

from perfdoc import quartiles, write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTION = os.environ.get("SECTION", "write-data")
BEGIN, END = f"<!-- {SECTION}:begin -->", f"<!-- {SECTION}:end -->"
ALL = {"64k": ("64K random write qd 4", "64K", 4), "8k": ("8K random write qd 32", "8K", 32)}
VARIANTS = ["iocap", "iocap-stamped", "fio", "fio-refill"]
PAIRS = [("iocap", "fio"), ("iocap-stamped", "fio"), ("iocap", "fio-refill"),
         ("iocap", "iocap-stamped")]


def timed(cmd, env=None):
    t0 = os.times()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    t1 = os.times()
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-800:]}")
    cpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    return p.stdout, cpu


def run(variant, bs, qd, path, size, duration, ramp):
    """(IOPS, CPU µs per I/O) of one run."""
    if variant.startswith("iocap"):
        env = dict(os.environ)
        env.pop("IOCAP_BENCH_STAMP_ONLY", None)
        if variant == "iocap-stamped":
            env["IOCAP_BENCH_STAMP_ONLY"] = "1"
        cmd = [os.environ.get("IOCAP", os.path.join(REPO, "target/release/iocap")), "run",
               "--rw", "randwrite", "--bs", bs, "--qd", str(qd), "--size", size,
               "--duration", f"{duration}s", "--warmup", f"{ramp}s", "--no-save",
               "--output", "json", path]
        out, cpu = timed(cmd, env)
        t = json.loads(out)["tests"][0]
        if t.get("error"):
            sys.exit(f"iocap: {t['error']}")
        iops = t["total"]["iops"]
    else:
        cmd = ["fio", "--name=w", f"--filename={path}", "--ioengine=io_uring", "--direct=1",
               "--rw=randwrite", f"--bs={bs}", f"--iodepth={qd}", f"--size={size}",
               "--time_based", f"--runtime={duration}", f"--ramp_time={ramp}",
               "--output-format=json"]
        if variant == "fio-refill":
            cmd.append("--refill_buffers")
        out, cpu = timed(cmd)
        iops = json.loads(out[out.index("{"):])["jobs"][0]["write"]["iops"]
    ios = iops * (duration + ramp)
    return iops, (cpu * 1e6 / ios if ios else float("nan"))


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target/bench")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "write-data.dat")
    rounds = int(os.environ.get("ROUNDS", "5"))
    duration = int(os.environ.get("DURATION", "4"))
    ramp = int(os.environ.get("RAMP", "1"))
    size = os.environ.get("SIZE", "4G")
    picks = [w for w in os.environ.get("WORKLOADS", "64k 8k").split() if w in ALL]
    # iocap makes and marks the file; fio then writes over iocap's own file
    run("iocap", "4K", 1, path, size, 1, 0)
    got = {w: {v: [] for v in VARIANTS} for w in picks}
    started = time.strftime("%Y-%m-%d %H:%M")
    for k in range(rounds):
        for w in picks:
            _, bs, qd = ALL[w]
            order = VARIANTS[k % 4:] + VARIANTS[:k % 4]
            for v in order:
                got[w][v].append(run(v, bs, qd, path, size, duration, ramp))
            print(f"round {k + 1} {w}: " + ", ".join(
                f"{v} {got[w][v][-1][0]:,.0f} IOPS {got[w][v][-1][1]:.1f} µs" for v in VARIANTS),
                file=sys.stderr)
    lines = [BEGIN, "## Where the write gap to fio goes (issue 36)", "",
             f"`bench/write-data.py`, {started}: {rounds} paired rounds of {duration} s after "
             f"{ramp} s, one {size} file, O_DIRECT, io_uring; the four variants take turns going "
             "first. Ratios per round; median (IQR). CPU is the children's user and system "
             "time per I/O, counted alike for both tools.", "",
             "| workload | ratio | IOPS | CPU per I/O |", "|---|---|---:|---:|"]
    for w in picks:
        for a, b in PAIRS:
            ri = [x[0] / y[0] for x, y in zip(got[w][a], got[w][b])]
            rc = [x[1] / y[1] for x, y in zip(got[w][a], got[w][b])]
            qi, qc = quartiles(ri), quartiles(rc)
            lines.append(f"| {ALL[w][0]} | {a} / {b} | {qi[1]:.3f} ({qi[0]:.3f}–{qi[2]:.3f}) "
                         f"| {qc[1]:.3f} ({qc[0]:.3f}–{qc[2]:.3f}) |")
        med = {v: sorted(x[0] for x in got[w][v])[len(got[w][v]) // 2] for v in VARIANTS}
        lines.append(f"| {ALL[w][0]} | median IOPS | " + ", ".join(
            f"{v} {med[v]:,.0f}" for v in VARIANTS) + " | |")
    lines.append(END)
    write_section(BEGIN, END, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
