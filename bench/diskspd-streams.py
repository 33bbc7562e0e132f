#!/usr/bin/env python3
"""bench/diskspd-streams.py: `iocap diskspd` against DiskSpd for Linux on the command lines
issue 27 found answered differently: the sequential streams iocap used to lay out its own way
(§1: the wiki's interleave -F8 -T1b -s8b, an interlocked stream -si, plain sequential threads
-t2 all from 0, a thread stride -T), several threads (§2: -t4, and -F2 over two files) and a
mixed test sampled every 500 ms (§4). Same command line, same files, O_DIRECT; paired rounds,
the tools taking turns going first; per round the ratio of iocap's IOPS to DiskSpd's ("total:"
row), and each tool's system-wide CPU usage (the "avg" row of the CPU table, §3); median and
IQR.

Usage: python3 bench/diskspd-streams.py DIR   (IOCAP=target/release/iocap,
DISKSPD=../shared/peers/diskspd, ROUNDS=4, DURATION=5). Writes the section diskspd-streams of
docs/PERFORMANCE.md (OUT names another file). Reads only: the file is made once by iocap.
"""

import os
import subprocess
import sys

from perfdoc import quartiles, write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOCAP = os.environ.get("IOCAP", os.path.join(REPO, "target/release/iocap"))
DISKSPD = os.environ.get("DISKSPD", os.path.join(REPO, "../shared/peers/diskspd"))
ROUNDS = int(os.environ.get("ROUNDS", "4"))
DURATION = os.environ.get("DURATION", "5")
# name: (flags, files); reads unless the flags say -w
LINES = {
    "interleave -b4K -F8 -T1b -s8b -o4": (["-b4K", "-F8", "-T1b", "-s8b", "-o4"], 1),
    "interlocked -b64K -t4 -si -o2": (["-b64K", "-t4", "-si", "-o2"], 1),
    "two threads -b64K -t2 -o2 (both from 0)": (["-b64K", "-t2", "-o2"], 1),
    "thread stride -b64K -t2 -T512M -o2": (["-b64K", "-t2", "-T512M", "-o2"], 1),
    "random -b8K -r8K -t4 -o8": (["-b8K", "-r8K", "-t4", "-o8"], 1),
    "two files -b8K -r8K -F2 -o8": (["-b8K", "-r8K", "-F2", "-o8"], 2),
    "mixed -b8K -r8K -t2 -o8 -w30 -D500": (["-b8K", "-r8K", "-t2", "-o8", "-w30", "-D500"], 1),
}
BEGIN, END = "<!-- diskspd-streams:begin -->", "<!-- diskspd-streams:end -->"


def total_iops(out):
    """The I/O per s of the first `total:` row (Total IO), as both tools print it."""
    for line in out.splitlines():
        if line.startswith("total:"):
            return float(line.split("|")[3].strip())
    raise SystemExit("no total: row in\n" + out)


def avg_cpu(out):
    """The Usage column of the CPU table's average row ("avg." or DiskSpd for Linux's "avg:")."""
    for line in out.splitlines():
        if line.strip().startswith(("avg.", "avg:")):
            # iocap: "avg.|  57.12%|..."; DiskSpd for Linux: " avg:\t 57.12% | ..."
            cells = [c.strip() for c in line.split("|")]
            first = cells[0].split()[-1]
            usage = cells[1] if first.startswith("avg") else first
            return float(usage.rstrip("%"))
    raise SystemExit("no avg. row in\n" + out)


def run(tool, flags, paths):
    args = [tool] + (["diskspd"] if tool == IOCAP else []) + flags
    if not any(f.startswith("-w") for f in flags):
        args.append("-w0")
    args += ["-d" + DURATION, "-W1", "-Sd"] + (["-xk"] if tool == DISKSPD else []) + paths
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return total_iops(out), avg_cpu(out)


def main():
    paths = [os.path.join(sys.argv[1], f"streams{i}.dat") for i in range(2)]
    for path in paths:
        if not os.path.exists(path):
            subprocess.run([IOCAP, "diskspd", "-c1G", "-d1", "-W0", "-w0", path],
                           capture_output=True, check=True)
    rows = []
    for name, (flags, files) in LINES.items():
        ratios, cpu = [], {IOCAP: [], DISKSPD: []}
        for r in range(ROUNDS):
            tools = [IOCAP, DISKSPD] if r % 2 == 0 else [DISKSPD, IOCAP]
            got = {t: run(t, flags, paths[:files]) for t in tools}
            ratios.append(got[IOCAP][0] / got[DISKSPD][0])
            for t in tools:
                cpu[t].append(got[t][1])
            print(f"round {r + 1} {name}: iocap {got[IOCAP][0]:,.0f} DiskSpd "
                  f"{got[DISKSPD][0]:,.0f} ({ratios[-1]:.3f}); CPU {got[IOCAP][1]:.1f} % / "
                  f"{got[DISKSPD][1]:.1f} %", flush=True)
        q1, med, q3 = quartiles(ratios)
        mine, theirs = quartiles(cpu[IOCAP])[1], quartiles(cpu[DISKSPD])[1]
        rows.append(f"| {name} | {med:.3f} ({q1:.3f}–{q3:.3f}) | {mine:.1f} | {theirs:.1f} |")
    write_section(BEGIN, END, [
        BEGIN,
        "## DiskSpd's command lines: iocap diskspd against DiskSpd for Linux",
        "",
        f"`bench/diskspd-streams.py`, {ROUNDS} paired rounds, {DURATION} s after 1 s of warm-up, "
        "O_DIRECT I/O on 1 GiB files (DiskSpd with libaio, `-xk`); iocap's IOPS over "
        "DiskSpd's per round, median (IQR); each tool's system-wide CPU usage as its own CPU "
        "table's average row states it, median in percent.",
        "",
        "| command line | IOPS iocap / DiskSpd | CPU % iocap | CPU % DiskSpd |",
        "|---|---:|---:|---:|",
        *rows,
        END,
    ])


if __name__ == "__main__":
    main()
