#!/usr/bin/env python3
"""bench/diskspd-streams.py: `iocap diskspd` against DiskSpd for Linux on the command lines
whose sequential streams iocap used to lay out its own way (issue 27 §1): the wiki's interleave
(-F8 -T1b -s8b), an interlocked stream (-si) and plain sequential threads (-t2, all from 0).
Same command line, same file, O_DIRECT reads; paired rounds, the tools taking turns going first;
per round the ratio of iocap's IOPS to DiskSpd's ("total:" row); median and IQR.

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
LINES = {
    "interleave -b4K -F8 -T1b -s8b -o4": ["-b4K", "-F8", "-T1b", "-s8b", "-o4"],
    "interlocked -b64K -t4 -si -o2": ["-b64K", "-t4", "-si", "-o2"],
    "two threads -b64K -t2 -o2 (both from 0)": ["-b64K", "-t2", "-o2"],
}
BEGIN, END = "<!-- diskspd-streams:begin -->", "<!-- diskspd-streams:end -->"


def total_iops(out):
    """The I/O per s of the first `total:` row (Total IO), as both tools print it."""
    for line in out.splitlines():
        if line.startswith("total:"):
            return float(line.split("|")[3].strip())
    raise SystemExit("no total: row in\n" + out)


def run(tool, flags, path):
    args = [tool] + (["diskspd"] if tool == IOCAP else []) + flags
    args += ["-d" + DURATION, "-W1", "-Sd", "-w0", path]
    if tool == DISKSPD:
        args.insert(-1, "-xk")
    return total_iops(subprocess.run(args, capture_output=True, text=True, check=True).stdout)


def main():
    path = os.path.join(sys.argv[1], "streams.dat")
    if not os.path.exists(path):
        subprocess.run([IOCAP, "diskspd", "-c1G", "-d1", "-W0", "-w0", path],
                       capture_output=True, check=True)
    rows = []
    for name, flags in LINES.items():
        ratios = []
        for r in range(ROUNDS):
            tools = [IOCAP, DISKSPD] if r % 2 == 0 else [DISKSPD, IOCAP]
            got = {t: run(t, flags, path) for t in tools}
            ratios.append(got[IOCAP] / got[DISKSPD])
            print(f"round {r + 1} {name}: iocap {got[IOCAP]:,.0f} DiskSpd {got[DISKSPD]:,.0f} "
                  f"({ratios[-1]:.3f})", flush=True)
        q1, med, q3 = quartiles(ratios)
        rows.append(f"| {name} | {med:.3f} ({q1:.3f}–{q3:.3f}) |")
    write_section(BEGIN, END, [
        BEGIN,
        "## DiskSpd's sequential streams: iocap diskspd against DiskSpd for Linux",
        "",
        f"`bench/diskspd-streams.py`, {ROUNDS} paired rounds, {DURATION} s after 1 s of warm-up, "
        "O_DIRECT reads of one 1 GiB file (DiskSpd with libaio, `-xk`); iocap's IOPS over "
        "DiskSpd's per round, median (IQR).",
        "",
        "| command line | IOPS iocap / DiskSpd |",
        "|---|---:|",
        *rows,
        END,
    ])


if __name__ == "__main__":
    main()
