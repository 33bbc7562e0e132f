#!/usr/bin/env python3
"""bench/ab.py: two builds of iocap against each other, in paired rounds, to show that a change
(a refactor) moved no figure beyond noise.

Each round runs every workload once with each build, back to back, the builds taking turns
going first; per round and workload the ratio B/A of IOPS and of CPU per I/O; the report gives
the median and the IQR of those ratios. Workloads (one 4G file, O_DIRECT, io_uring):
  a. 4K random read qd 32   e. 1M sequential read qd 8   f. 70/30 8K qd 16

  b. 8K random write qd 32 (only when WORKLOADS names it: the write path, issue 23)
  t. 4K random read qd 8 on THREADS threads (default 2; only when WORKLOADS names it)
Usage: A=old/iocap B=new/iocap python3 bench/ab.py DIR [LABEL]
Writes its own section of docs/PERFORMANCE.md (between SECTION's markers, default ab). Knobs:
ROUNDS (6), DURATION (5 s), THREADS (2), WORKLOADS (letters, default "a e f"), SECTION, OUT. Run on a quiet
machine.
"""

import json
import os
import subprocess
import sys

from perfdoc import quartiles, write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTION = os.environ.get("SECTION", "ab")
BEGIN, END = f"<!-- {SECTION}:begin -->", f"<!-- {SECTION}:end -->"
ALL_WORKLOADS = {
    "a. 4K random read qd 32": ["--rw", "randread", "--bs", "4K", "--qd", "32"],
    "b. 8K random write qd 32": ["--rw", "randwrite", "--bs", "8K", "--qd", "32"],
    "e. 1M sequential read qd 8": ["--rw", "read", "--bs", "1M", "--qd", "8"],
    "f. 70/30 8K qd 16": ["--rw", "randrw", "--write-pct", "30", "--bs", "8K", "--qd", "16"],
    # workers side by side (their live counters, issue 26): THREADS of them at qd 8 each
    "t. 4K random read qd 8 per thread": ["--rw", "randread", "--bs", "4K", "--qd", "8",
                                          "--threads", os.environ.get("THREADS", "2")],
}
PICK = os.environ.get("WORKLOADS", "a e f").split()
WORKLOADS = {w: a for w, a in ALL_WORKLOADS.items() if w[0] in PICK}


def run(exe, args, path, duration):
    cmd = [exe, "run", "--size", "4G", "--duration", f"{duration}s", "--warmup", "1s",
           "--no-save", "--output", "json"] + args + [path]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    t = json.loads(out.stdout)["tests"][0]
    return t["total"]["iops"], t["cpu"]["us_per_io"]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    a, b = os.environ["A"], os.environ["B"]
    path = os.path.join(sys.argv[1], "ab.dat")
    label = sys.argv[2] if len(sys.argv) > 2 else "B against A"
    rounds = int(os.environ.get("ROUNDS", "6"))
    duration = int(os.environ.get("DURATION", "5"))
    run(a, ALL_WORKLOADS["a. 4K random read qd 32"], path, 1)  # creates the file
    ratios = {w: ([], []) for w in WORKLOADS}
    for k in range(rounds):
        for w, args in WORKLOADS.items():
            first, second = (a, b) if k % 2 == 0 else (b, a)
            r1 = run(first, args, path, duration)
            r2 = run(second, args, path, duration)
            ra, rb = (r1, r2) if first == a else (r2, r1)
            ratios[w][0].append(rb[0] / ra[0])
            ratios[w][1].append(rb[1] / ra[1])
            print(f"round {k + 1} {w}: IOPS A {ra[0]:,.0f} B {rb[0]:,.0f} "
                  f"({rb[0] / ra[0]:.3f}); CPU/IO A {ra[1]:.2f} B {rb[1]:.2f} µs",
                  file=sys.stderr)
    lines = [BEGIN, f"## A/B: {label}", "",
             f"`bench/ab.py`, {rounds} paired rounds, {duration} s after 1 s of warm-up, one 4G "
             "file; the builds take turns going first. B/A per round; median (IQR).", "",
             "| workload | IOPS B/A | CPU µs per I/O B/A |", "|---|---:|---:|"]
    for w, (iops, cpu) in ratios.items():
        qi, qc = quartiles(iops), quartiles(cpu)
        lines.append(f"| {w} | {qi[1]:.3f} ({qi[0]:.3f}–{qi[2]:.3f}) "
                     f"| {qc[1]:.3f} ({qc[0]:.3f}–{qc[2]:.3f}) |")
    lines.append(END)
    write_section(BEGIN, END, lines)


if __name__ == "__main__":
    main()
