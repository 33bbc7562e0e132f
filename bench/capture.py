#!/usr/bin/env python3
"""bench/capture.py: what `iocap capture` costs and how much it keeps (issue 24).

1. Overhead, in paired rounds: a 4K random read run at qd 32 (iocap run, 5 s after 1 s of
   warm-up, one 4G file) alone, with `iocap capture` of its device running, and with a
   bpftrace biosnoop-style one-liner running (the peer: per-request issue/complete in the
   kernel, one printf per completion to a file). The three take turns going first. Per round:
   IOPS captured / alone, and each recorder's CPU per recorded I/O (the children's user +
   system time around its wait); median and IQR over the rounds.
2. Size and memory: one capture at full speed for LONG seconds (default 60): bytes of trace
   per I/O, and the capture's peak RSS (VmHWM) against its RSS after 5 s.
3. Correctness: 8K random reads at qd 4 for 5 s on a loop device over a file in DIR, captured:
   the count against /proc/diskstats and against iocap's own count, the sizes, the read share,
   the sequential share and the queue-depth peak, from `iocap characterise`.

Usage: python3 bench/capture.py DIR      (as root; DIR on the disk to measure)
Knobs: ROUNDS (6), LONG (60), IOCAP (target/release/iocap), OUT (docs/PERFORMANCE.md).
Writes its section of docs/PERFORMANCE.md between <!-- capture:begin --> and <!-- capture:end -->.
"""

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from perfdoc import quartiles, write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOCAP = os.environ.get("IOCAP", os.path.join(REPO, "target/release/iocap"))
BEGIN, END = "<!-- capture:begin -->", "<!-- capture:end -->"
BPF = ("tracepoint:block:block_rq_issue { @s[args->dev, args->sector] = nsecs; } "
       "tracepoint:block:block_rq_complete /@s[args->dev, args->sector]/ { "
       "printf(\"%llu %u %llu %u %s %llu\\n\", nsecs, args->dev, args->sector, "
       "args->nr_sector, args->rwbs, nsecs - @s[args->dev, args->sector]); "
       "delete(@s[args->dev, args->sector]); }")


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_test(path, args, duration=5, warmup=1):
    cmd = [IOCAP, "run", "--size", "4G", "--duration", f"{duration}s", "--warmup", f"{warmup}s",
           "--no-save", "--output", "json"] + args + [path]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    return json.loads(out.stdout)["tests"][0]


def start_recorder(kind, target, seconds, trace):
    if kind == "iocap":
        cmd = [IOCAP, "capture", target, "--duration", f"{seconds}s", "-o", trace, "--force",
               "--format", "json", "--no-save"]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    else:
        p = subprocess.Popen(["bpftrace", "-o", trace, "-e", BPF], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    time.sleep(2.0)  # attached before the test starts
    return p


def stop_recorder(kind, p, trace):
    """Waits for the recorder; its CPU and the I/Os it recorded."""
    before = children_cpu()
    if kind == "bpftrace":
        p.send_signal(2)
    out, err = p.communicate()
    cpu = children_cpu() - before
    if kind == "iocap":
        if p.returncode != 0:
            sys.exit(f"iocap capture failed:\n{err}")
        records = json.loads(out)["workload"]["records"]
    else:
        records = sum(1 for _ in open(trace))
    return cpu, records


def overhead(dirpath, rounds):
    path = os.path.join(dirpath, "capture-bench.dat")
    args = ["--rw", "randread", "--bs", "4K", "--qd", "32"]
    run_test(path, args, 1)  # makes the file
    kinds = ["alone", "iocap", "bpftrace"]
    ratios = {"iocap": [], "bpftrace": []}
    cpu = {"iocap": [], "bpftrace": []}
    raw = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(rounds):
            order = kinds[k % 3:] + kinds[:k % 3]
            iops = {}
            for kind in order:
                trace = os.path.join(tmp, f"t-{kind}")
                if kind == "alone":
                    t = run_test(path, args)
                    iops[kind] = t["total"]["iops"]
                    continue
                p = start_recorder(kind, dirpath, 10, trace)
                t = run_test(path, args)
                c, n = stop_recorder(kind, p, trace)
                iops[kind] = t["total"]["iops"]
                cpu[kind].append(c * 1e6 / max(n, 1))
            for kind in ("iocap", "bpftrace"):
                ratios[kind].append(iops[kind] / iops["alone"])
            raw.append(iops)
            print(f"round {k + 1}: {iops}; CPU/IO iocap {cpu['iocap'][-1]:.2f} µs, "
                  f"bpftrace {cpu['bpftrace'][-1]:.2f} µs", file=sys.stderr)
    return ratios, cpu, raw


def long_capture(dirpath, seconds):
    path = os.path.join(dirpath, "capture-bench.dat")
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "long.iotrace")
        cmd = [IOCAP, "capture", dirpath, "--duration", f"{seconds + 4}s", "-o", trace,
               "--format", "json", "--no-save"]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(2)
        rss5 = None
        runner = subprocess.Popen([IOCAP, "run", "--size", "4G", "--duration", f"{seconds}s",
                                   "--warmup", "0s", "--no-save", "--output", "json", "--rw",
                                   "randread", "--bs", "4K", "--qd", "32", path],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(5)
        rss5 = status_kb(p.pid, "VmRSS")
        time.sleep(seconds / 2 - 5)
        rss_half = status_kb(p.pid, "VmRSS")
        runner.communicate()
        rss_end = status_kb(p.pid, "VmRSS")
        hwm = status_kb(p.pid, "VmHWM")
        out, err = p.communicate()
        if p.returncode != 0:
            sys.exit(f"iocap capture failed:\n{err}")
        records = json.loads(out)["workload"]["records"]
        size = os.path.getsize(trace)
    return {"records": records, "bytes": size, "rss5_kb": rss5, "hwm_kb": hwm,
            "rss_half_kb": rss_half, "rss_end_kb": rss_end,
            "seconds": seconds}


def correctness(dirpath):
    """8K random reads at qd 4 for 5 s on a loop device over a file in DIR, captured."""
    backing = os.path.join(dirpath, "capture-loop.img")
    with open(backing, "wb") as f:
        f.truncate(256 << 20)
    dev = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", backing],
                         capture_output=True, text=True, check=True).stdout.strip()
    try:
        subprocess.run(["udevadm", "settle"], check=False)
        with tempfile.TemporaryDirectory() as tmp:
            trace = os.path.join(tmp, "c.iotrace")
            p = subprocess.Popen([IOCAP, "capture", dev, "--duration", "8s", "-o", trace,
                                  "--format", "json", "--no-save"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            time.sleep(1.5)
            name = os.path.basename(dev)
            reads = lambda: int(open(f"/sys/block/{name}/stat").read().split()[0])
            before = reads()
            t = run_test(dev, ["--rw", "randread", "--bs", "8K", "--qd", "4"], 5, 0)
            after = reads()
            out, err = p.communicate()
            if p.returncode != 0:
                sys.exit(f"iocap capture failed:\n{err}")
            w = json.loads(out)["workload"]
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
        os.unlink(backing)
    qd = w["queue_depth"]
    return {"captured": w["records"], "device": after - before, "own": t["total"]["ios"],
            "read_pct": w["mix"][0]["count_pct"], "size": w["sizes"][0]["size_bytes"],
            "size_pct": w["sizes"][0]["pct"], "seq_pct": w["randomness"]["sequential_pct"],
            "qd_typical": qd["typical"], "qd_max": qd["max"],
            "qd4_time_pct": next((d["time_pct"] for d in qd["depths"] if d["depth"] == 4), 0)}


def status_kb(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return None


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    dirpath = sys.argv[1]
    rounds = int(os.environ.get("ROUNDS", "6"))
    if os.environ.get("PARTS", "oc") == "c":  # the correctness check alone, its own section
        c = correctness(dirpath)
        write_section("<!-- capture-check:begin -->", "<!-- capture-check:end -->", [
            "<!-- capture-check:begin -->", "### Capture: correctness", "",
            f"`PARTS=c bench/capture.py` on {time.strftime('%Y-%m-%d')}: `iocap run` of 8K random "
            "reads at qd 4 for 5 s (no warm-up) on a loop device over a file (direct I/O), "
            "captured.", "",
            f"- requests captured {c['captured']:,}; completed by the device (/sys/block stat) "
            f"{c['device']:,} ({c['captured'] / c['device']:.4f}x); counted by iocap "
            f"{c['own']:,} ({c['captured'] / c['own']:.4f}x)",
            f"- reads {c['read_pct']:.1f} %; size {c['size']} B for {c['size_pct']:.2f} %; "
            f"sequential {c['seq_pct']:.2f} %; queue depth mostly {c['qd_typical']} "
            f"({c['qd4_time_pct']:.1f} % of the time at 4), max {c['qd_max']}",
            "<!-- capture-check:end -->"])
        return
    ratios, cpu, raw = overhead(dirpath, rounds)
    big = long_capture(dirpath, int(os.environ.get("LONG", "60")))
    qi = quartiles(ratios["iocap"])
    qb = quartiles(ratios["bpftrace"])
    ci, cb = quartiles(cpu["iocap"]), quartiles(cpu["bpftrace"])
    per_round = [c / b for c, b in zip(cpu["iocap"], cpu["bpftrace"])]
    cr = quartiles(per_round)
    lines = [BEGIN, "## Capture: overhead, size and memory (issue 24)", "",
             f"`bench/capture.py`, {rounds} paired rounds on {time.strftime('%Y-%m-%d')}: "
             "4K random reads at qd 32 for 5 s (after 1 s of warm-up) on one 4G file, alone, "
             "under `iocap capture` of its disk, and under a bpftrace biosnoop-style one-liner "
             "(the peer), taking turns going first. Median (IQR) of the per-round figures.", "",
             "| | IOPS against alone | recorder's CPU µs per recorded I/O |", "|---|---:|---:|",
             f"| iocap capture | {qi[1]:.3f} ({qi[0]:.3f}–{qi[2]:.3f}) "
             f"| {ci[1]:.2f} ({ci[0]:.2f}–{ci[2]:.2f}) |",
             f"| bpftrace one-liner | {qb[1]:.3f} ({qb[0]:.3f}–{qb[2]:.3f}) "
             f"| {cb[1]:.2f} ({cb[0]:.2f}–{cb[2]:.2f}) |", "",
             f"iocap's CPU per I/O against bpftrace's, per round: {cr[1]:.3f} "
             f"({cr[0]:.3f}–{cr[2]:.3f}). The recorders' CPU is their own process's (user + "
             "system); the BPF programs run in the kernel on the I/O's own CPU and show in the "
             "test's figures, which is what the IOPS ratio measures.", "",
             f"A {big['seconds']} s capture at full speed: {big['records']:,} requests in "
             f"{big['bytes']:,} bytes ({big['bytes'] / max(big['records'], 1):.2f} bytes per "
             f"request); the capture's RSS {big['rss5_kb'] / 1024:.1f} MiB after 5 s, "
             f"{big['rss_half_kb'] / 1024:.1f} MiB at {big['seconds'] // 2} s, "
             f"{big['rss_end_kb'] / 1024:.1f} MiB at the end, peak (VmHWM) "
             f"{big['hwm_kb'] / 1024:.1f} MiB (the 16 MiB ring buffer, mapped twice, counts).",
             END]
    write_section(BEGIN, END, lines)


if __name__ == "__main__":
    main()
