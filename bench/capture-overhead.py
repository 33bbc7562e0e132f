#!/usr/bin/env python3
"""bench/capture-overhead.py: what `iocap capture` takes from the workload it records, on a
loop device, where the device's own work (the loop's kernel threads) competes with the capture
for the CPUs (issue 36: the bound is 0.97 of fio's IOPS).

Set-up: a file in DIR (SIZE, default 2G) behind a loop device with direct I/O, filled once.
fio reads it without a break (4K random reads at qd 16, io_uring, O_DIRECT) while the script
takes turns: WINDOW seconds with no capture, WINDOW seconds with `iocap capture` of the loop
device running as it runs by default (typed raw tracepoints and the tag table, as on a kernel
with BTF, the capture yielding the CPUs), none again, then the same capture not yielding
(IOCAP_CAPTURE_NO_YIELD=1), the capture on plain raw tracepoints (IOCAP_CAPTURE_UNTYPED=1, as
on a kernel that refuses typed ones), the capture forced onto the formatted tracepoints
(IOCAP_CAPTURE_FORMATTED=1, as on a kernel without BTF), then the floor: the capture with
programs that return at once and record nothing (IOCAP_CAPTURE_EMPTY=1: what attaching any
program to the block tracepoints costs, and the capture process idle), then the control: a
process that only sleeps, started and stopped as a capture is (the method's own bias, which
should read 1). The arms take turns going first. The IOPS of a window are the loop device's completed reads
(/sys/block/NAME/stat) over its time, counted from the capture's trace file existing (its
programs attached) to its stop; the capture's start and its end (the trace described) fall
outside every window. This VM's disk drifts by 30 % within minutes, so each captured window is
held against the mean of the two windows without a capture on either side of it, seconds
apart. Per captured window: that ratio, and the capture's CPU per recorded request (its own
user + system time from wait4, start and description included, over the requests it wrote).
Median and IQR over the windows.

Usage: python3 bench/capture-overhead.py DIR     (as root; DIR on the disk to measure)
Knobs: ROUNDS (10), WINDOW (4), SIZE (2G), IOCAP (target/release/iocap), FIO (fio), BEFORE
(another iocap binary, a third arm: the capture as an earlier commit built it),
OUT (docs/PERFORMANCE.md). Writes its section between <!-- capture-overhead:begin --> and
<!-- capture-overhead:end -->.
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
BEGIN, END = "<!-- capture-overhead:begin -->", "<!-- capture-overhead:end -->"
WINDOW = float(os.environ.get("WINDOW", "4"))
BEFORE = os.environ.get("BEFORE")
ARMS = ["typed", "noyield", "untyped", "formatted", "floor", "control"] + (
    ["before"] if BEFORE else [])
# each arm's environment over the default's
ENV = {"noyield": {"IOCAP_CAPTURE_NO_YIELD": "1"}, "untyped": {"IOCAP_CAPTURE_UNTYPED": "1"},
       "formatted": {"IOCAP_CAPTURE_FORMATTED": "1"}, "floor": {"IOCAP_CAPTURE_EMPTY": "1"}}


def reads(name):
    """The loop device's completed reads, and the time."""
    with open(f"/sys/block/{name}/stat") as f:
        return int(f.read().split()[0]), time.monotonic()


def quiet(name):
    """IOPS over a window with no capture."""
    n0, t0 = reads(name)
    time.sleep(WINDOW)
    n1, t1 = reads(name)
    return (n1 - n0) / (t1 - t0)


def captured(dev, trace, arm):
    """IOPS over a window with the capture running, the capture's CPU seconds, requests and
    lost; `arm`: one of ARMS (ENV says how each differs from the default, typed), or before
    (the BEFORE binary)."""
    if arm == "control":
        return control(dev)
    binary = BEFORE if arm == "before" else IOCAP
    cmd = [binary, "capture", dev, "-o", trace, "--force", "--format", "json", "--no-save"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOCAP_CAPTURE_")}
    env.update(ENV.get(arm, {}))
    if os.path.exists(trace):
        os.unlink(trace)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    # the trace file is made once the programs are attached
    while not os.path.exists(trace):
        if p.poll() is not None:
            sys.exit(f"the capture ended before recording:\n{p.stderr.read()}")
        time.sleep(0.02)
    iops = quiet(os.path.basename(dev))
    p.send_signal(2)
    # the capture's own times, not fio's (both are children): wait4 on its pid
    out, err = p.stdout.read(), p.stderr.read()
    _, status, use = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    cpu = use.ru_utime + use.ru_stime
    if p.returncode != 0:
        sys.exit(f"the capture failed:\n{err}")
    w = json.loads(out)["workload"]
    records = w["records"]
    lost = w["lost_ring_full"] + w["lost_other"]
    return iops, cpu, records, lost


def control(dev):
    """A window beside a process that only sleeps, started, waited for and stopped as a
    capture is: what the method itself takes from fio."""
    p = subprocess.Popen(["sleep", "3600"])
    time.sleep(0.02)
    iops = quiet(os.path.basename(dev))
    p.send_signal(2)
    _, _, use = os.wait4(p.pid, 0)
    return iops, use.ru_utime + use.ru_stime, 0, 0


def rounds_on(dev, tmp, rounds):
    ratios = {a: [] for a in ARMS}
    per_req = {a: [] for a in ARMS}
    lost = {a: [] for a in ARMS}
    name = os.path.basename(dev)
    trace = os.path.join(tmp, "t.iotrace")
    before = quiet(name)
    for r in range(rounds):
        k = r % len(ARMS)
        for arm in ARMS[k:] + ARMS[:k]:
            iops, cpu, n, gone = captured(dev, trace, arm)
            lost[arm].append(gone / max(n + gone, 1) * 1e6)
            after = quiet(name)
            ratios[arm].append(iops / ((before + after) / 2))
            per_req[arm].append(cpu / n * 1e6 if n else float("nan"))
            print(f"round {r + 1}, {arm}: {before:.0f} IOPS, then {iops:.0f} captured "
                  f"({ratios[arm][-1]:.3f}), then {after:.0f}; capture CPU "
                  f"{per_req[arm][-1]:.2f} µs per request, {gone} of {n + gone} lost",
                  file=sys.stderr)
            before = after
    return ratios, per_req, lost


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rounds = int(os.environ.get("ROUNDS", "10"))
    size = os.environ.get("SIZE", "2G")
    with tempfile.TemporaryDirectory(dir=sys.argv[1]) as tmp:
        img = os.path.join(tmp, "loop.img")
        subprocess.run(["fallocate", "-l", size, img], check=True)
        dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", img], check=True,
                             capture_output=True, text=True).stdout.strip()
        fio = None
        try:
            subprocess.run(["dd", "if=/dev/urandom", f"of={dev}", "bs=1M", "oflag=direct",
                            "status=none"], check=False, stderr=subprocess.DEVNULL)
            fio = subprocess.Popen(
                [FIO, "--name=r", f"--filename={dev}", "--rw=randread", "--bs=4k",
                 "--iodepth=16", "--ioengine=io_uring", "--direct=1", "--runtime=3600",
                 "--time_based", "--output-format=terse"], stdout=subprocess.DEVNULL)
            time.sleep(2)
            ratios, per_req, lost = rounds_on(dev, tmp, rounds)
        finally:
            if fio:
                fio.send_signal(2)
                fio.wait()
            subprocess.run(["losetup", "-d", dev], check=False)
    lines = [
        BEGIN,
        "## Capture overhead on a loop device (issue 36)",
        "",
        f"`bench/capture-overhead.py`, {time.strftime('%Y-%m-%d')}: fio's 4K random reads at qd "
        "16 (io_uring, direct) on a loop device over a file on this VM's disk, without a break; "
        f"{WINDOW:.0f} s windows with `iocap capture` of the loop device running, each held "
        "against the windows without a capture on either side of it. The arms: the capture as "
        "it runs by default (typed raw tracepoints and the tag table, a kernel with BTF; "
        "yielding the CPUs), the same not yielding (`IOCAP_CAPTURE_NO_YIELD=1`), plain raw "
        "tracepoints (`IOCAP_CAPTURE_UNTYPED=1`, a kernel that refuses typed ones), the "
        "formatted tracepoints (`IOCAP_CAPTURE_FORMATTED=1`, a kernel without BTF), the "
        "floor (`IOCAP_CAPTURE_EMPTY=1`: programs that return at once, the capture process "
        "idle) and the control (a process that only sleeps, started and stopped the same way)"
        + (", and the capture as it was before (BEFORE)" if BEFORE else "")
        + f" take turns, {rounds} windows each. CPU is the capture process's own user + system time "
        "(its start and its description of the trace included) over the requests it wrote.",
        "",
        "| capture | fio's IOPS captured / not, median (IQR) | capture CPU per request | lost "
        "per million |",
        "|---|---:|---:|---:|",
    ]
    labels = {"typed": "the default: typed, tag table, yielding",
              "noyield": "typed, tag table, not yielding",
              "untyped": "plain raw tracepoints", "formatted": "formatted tracepoints",
              "floor": "floor: empty programs", "control": "control: a sleeping process",
              "before": f"before (`{os.path.basename(BEFORE or '')}`)"}
    for arm in ARMS:
        label = labels[arm]
        q = quartiles(ratios[arm])
        if arm in ("floor", "control"):
            lines.append(f"| {label} | {q[1]:.3f} ({q[0]:.3f}–{q[2]:.3f}) | — | — |")
            continue
        c, g = quartiles(per_req[arm]), quartiles(lost[arm])
        lines.append(f"| {label} | {q[1]:.3f} ({q[0]:.3f}–{q[2]:.3f}) | {c[1]:.2f} µs "
                     f"({c[0]:.2f}–{c[2]:.2f}) | {g[1]:.0f} ({g[0]:.0f}–{g[2]:.0f}) |")
    lines.append(END)
    write_section(BEGIN, END, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
