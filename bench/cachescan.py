#!/usr/bin/env python3
"""What `iocap cachescan` finds under this machine's disk, and whether a quick preflight whose
files are sized by its scan is steadier than one with fixed 1 GiB files.

1. One `iocap cachescan` of a SCAN_MAX file (default 16G) in DIR: its steps and levels.
2. ROUNDS paired rounds (default 4) of two quick preflights, each on its own directory:
   `fixed` (--size 1G, no scan) and `scanned` (no --size: the short scan sizes the files).
   The order flips every round. Per round, the ratio scanned/fixed of each headline figure;
   across rounds, each variant's spread (IQR over median) of each figure.

Writes its own section of docs/PERFORMANCE.md (between cachescan markers), nothing else.
Run it on a quiet machine (no builds): python3 bench/cachescan.py DIR
Environment: IOCAP (binary; default target/release/iocap), ROUNDS, SCAN_MAX, OUT.
"""

import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- cachescan:begin -->", "<!-- cachescan:end -->"
# capacity-table rows to compare: (short name, words the metric starts with)
FIGURES = [
    ("8K read IOPS", "8K random read IOPS"),
    ("8K write IOPS", "8K random write IOPS"),
    ("log p99 µs", "log write p99"),
    ("scan MB/s", "scan read MB/s"),
    ("backup MB/s", "backup MB/s"),
]


def iocap(args):
    exe = os.environ.get("IOCAP", os.path.join(REPO, "target/release/iocap"))
    t0 = time.time()
    out = subprocess.run([exe] + args, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"iocap {' '.join(args)} failed ({out.returncode}):\n{out.stderr}")
    return json.loads(out.stdout), time.time() - t0


def quartiles(xs):
    xs = sorted(xs)
    if len(xs) < 2:
        return (xs[0], xs[0], xs[0]) if xs else (float("nan"),) * 3
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], statistics.median(xs), q[2]


def figures(run):
    rows = run["preflight"]["rows"]
    out = {}
    for name, words in FIGURES:
        for r in rows:
            if r["metric"].lower().startswith(words.lower()) and r["value"] is not None:
                out.setdefault(name, r["value"])
    return out


def fmt(v):
    return "-" if v != v else (f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = os.path.abspath(sys.argv[1])
    rounds = int(os.environ.get("ROUNDS", "4"))
    scan_max = os.environ.get("SCAN_MAX", "16G")
    for sub in ("scan", "fixed", "scanned"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    lines = []
    w = lines.append
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    scan, secs = iocap(["cachescan", os.path.join(d, "scan", "scan.dat"), "--size", scan_max,
                        "--no-save", "--output", "json"])
    s = scan["cachescan"]
    w(BEGIN)
    w("## Caches below the OS: cachescan, and preflight sized by it")
    w("")
    w(f"Run {started} by `bench/cachescan.py` (scan to {scan_max}, {rounds} paired rounds of "
      "quick preflights). Regenerate on a quiet machine with `python3 bench/cachescan.py DIR`.")
    w("")
    w(f"### The sweep under this VM's disk ({secs:.0f} s)")
    w("")
    w("| working set | mean of fastest 98 % (µs) | p50 (µs) | p99 (µs) | qd 32 IOPS | warm (s) |")
    w("|---:|---:|---:|---:|---:|---:|")
    for p in s["steps"]:
        w(f"| {p['working_set_bytes'] >> 20} MiB | {fmt(p['lat_us_trim_mean'])} | "
          f"{fmt(p['lat_us_p50'])} | {fmt(p['lat_us_p99'])} | {fmt(p['iops_qd32'])} | "
          f"{p['warm_s']:.2f} |")
    w("")
    if s["levels"]:
        for i, l in enumerate(s["levels"]):
            w(f"- level {i + 1}: between {l['fits_bytes'] >> 20} and {l['exceeds_bytes'] >> 20} MiB "
              f"(about {l['estimated_bytes'] >> 20} MiB), hits {fmt(l['hit_lat_us'])} µs, "
              f"misses {fmt(l['miss_lat_us'])} µs")
    for n in s["notes"]:
        w(f"- {n}")
    w("")
    per = {"fixed": [], "scanned": []}
    took = {"fixed": [], "scanned": []}
    sized = []
    for r in range(rounds):
        order = ["fixed", "scanned"] if r % 2 == 0 else ["scanned", "fixed"]
        for v in order:
            args = ["preflight", "--quick", "--data", os.path.join(d, v), "--no-save",
                    "--output", "json"]
            if v == "fixed":
                args += ["--size", "1G"]
            run, t = iocap(args)
            per[v].append(figures(run))
            took[v].append(t)
            if v == "scanned":
                sized.append(run["preflight"].get("file_bytes", 0) >> 20)
        print(f"round {r + 1}: {per['fixed'][-1]} | {per['scanned'][-1]}", file=sys.stderr)
    w(f"### Quick preflight, fixed 1 GiB files against files sized by the scan ({rounds} rounds)")
    w("")
    w(f"Files sized by the scan: {', '.join(f'{m} MiB' for m in sized)}. Wall time per "
      f"preflight: fixed {statistics.median(took['fixed']):.0f} s, scanned "
      f"{statistics.median(took['scanned']):.0f} s (medians).")
    w("")
    w("| figure | fixed: median | fixed: IQR/median | scanned: median | scanned: IQR/median | "
      "scanned/fixed per round: median [IQR] |")
    w("|---|---:|---:|---:|---:|---:|")
    for name, _ in FIGURES:
        a = [x[name] for x in per["fixed"] if name in x]
        b = [x[name] for x in per["scanned"] if name in x]
        if not a or not b:
            continue
        qa, qb = quartiles(a), quartiles(b)
        ratios = [y[name] / x[name] for x, y in zip(per["fixed"], per["scanned"])
                  if name in x and name in y and x[name]]
        qr = quartiles(ratios)
        w(f"| {name} | {fmt(qa[1])} | {100 * (qa[2] - qa[0]) / qa[1]:.1f} % | {fmt(qb[1])} | "
          f"{100 * (qb[2] - qb[0]) / qb[1]:.1f} % | {qr[1]:.2f}x [{qr[0]:.2f}-{qr[2]:.2f}] |")
    w("")
    w(END)
    out = os.environ.get("OUT", os.path.join(REPO, "docs/PERFORMANCE.md"))
    old = open(out).read()
    section = "\n".join(lines) + "\n"
    if BEGIN in old and END in old:
        new = old[:old.index(BEGIN)] + section.rstrip("\n") + old[old.index(END) + len(END):]
    else:
        new = old.rstrip("\n") + "\n\n" + section
    open(out, "w").write(new)
    print(section)


if __name__ == "__main__":
    main()
