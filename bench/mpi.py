#!/usr/bin/env python3
"""Many hosts, one test, measured on this one machine (issue 16): how closely the ranks start,
what the merge costs, and the aggregate of N ranks together against the sum of the same N
ranks run one after another.

For N in 2 and 4, ROUNDS paired rounds (default 5) of:
  together: `mpirun --oversubscribe -np N iocap run ... t{rank}.dat` (one merged result);
  alone:    the same test on t0.dat ... t(N-1).dat, one at a time, without mpirun; their IOPS
            summed.
The order flips every round; per round the ratio together / sum-of-alone; across rounds the
median and IQR of the ratios. The start spread and the merge time come from the together runs.
Caveat: one virtio disk and 2 cores shared by all ranks: the ratio says how far this disk is
from saturation, not how an array scales across hosts.

Writes its own section of docs/PERFORMANCE.md (between mpi markers), nothing else.
Run it on a quiet machine (no builds), with a binary built with --features mpi:
  cargo build --release --features mpi && python3 bench/mpi.py DIR
Environment: IOCAP (binary; default target/release/iocap), ROUNDS, OUT.
"""

import json
import os
import statistics
import subprocess
import sys

from perfdoc import quartiles, write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- mpi:begin -->", "<!-- mpi:end -->"
EXE = os.environ.get("IOCAP", os.path.join(REPO, "target/release/iocap"))
TEST = ["run", "--rw", "randread", "--bs", "8K", "--qd", "16", "--size", "512M",
        "--duration", "5s", "--warmup", "1s", "--no-save", "--output", "json"]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def run(cmd, cwd):
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=ENV)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    return json.loads(out.stdout)


def together(n, d):
    r = run(["mpirun", "--oversubscribe", "-np", str(n), EXE] + TEST + ["t{rank}.dat"], d)
    t = r["tests"][0]
    return t["total"]["iops"], t["ranks"]["start_spread_us"], t["ranks"]["merge_us"]


def alone(n, d):
    return sum(run([EXE] + TEST + [f"t{r}.dat"], d)["tests"][0]["total"]["iops"]
               for r in range(n))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    rounds = int(os.environ.get("ROUNDS", "5"))
    rows = []
    for n in (2, 4):
        ratios, spreads, merges, agg, summed = [], [], [], [], []
        together(n, d)  # creates the files; not counted
        for k in range(rounds):
            if k % 2 == 0:
                t, spread, merge = together(n, d)
                s = alone(n, d)
            else:
                s = alone(n, d)
                t, spread, merge = together(n, d)
            ratios.append(t / s)
            spreads.append(spread)
            merges.append(merge / n)
            agg.append(t)
            summed.append(s)
            print(f"N={n} round {k + 1}: together {t:,.0f} IOPS, alone summed {s:,.0f}, "
                  f"ratio {t / s:.2f}, spread {spread:.0f} us, merge {merge / n:.0f} us/rank",
                  file=sys.stderr)
        rows.append((n, quartiles(ratios), quartiles(spreads), quartiles(merges),
                     statistics.median(agg), statistics.median(summed)))
    write(rows, rounds)


def write(rows, rounds):
    lines = [BEGIN, "## Many hosts, one test: MPI ranks on one machine", "",
             f"`bench/mpi.py`, {rounds} paired rounds per rank count, 8K random read qd 16 per "
             "rank, 5 s after 1 s of warm-up, each rank on its own 512 MiB file on vda; "
             "`together` is one `mpirun -np N` run, `alone` the same N tests one after another. "
             "Medians with the IQR in brackets.", "",
             "| ranks | together IOPS | alone, summed | together / sum | start spread µs "
             "| merge µs per rank |", "|---:|---:|---:|---:|---:|---:|"]
    for n, ratio, spread, merge, agg, summed in rows:
        lines.append(
            f"| {n} | {agg:,.0f} | {summed:,.0f} | {ratio[1]:.2f} ({ratio[0]:.2f}–{ratio[2]:.2f}) "
            f"| {spread[1]:.0f} ({spread[0]:.0f}–{spread[2]:.0f}) "
            f"| {merge[1]:.0f} ({merge[0]:.0f}–{merge[2]:.0f}) |")
    lines += ["", "Caveat: every rank shares this VM's one virtio disk and its 2 cores, so "
              "`together / sum` below 1 is the disk (and the CPUs) saturating, not a cost of "
              "MPI; on separate hosts with their own paths it is the figure that shows a "
              "shared bottleneck. The start spread is read from each rank's real-time clock "
              "when it leaves the barrier (one host here, so no clock offset is in it); the "
              "merge is rank 0 decoding every rank's result and adding them up, once all have "
              "arrived.", END]
    write_section(BEGIN, END, lines)


if __name__ == "__main__":
    main()
