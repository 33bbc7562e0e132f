#!/usr/bin/env python3
"""bench/limit-rigs.py: how well `iocap saturate` names a limit and measures a burst bucket on
the rigs of issue 37, over ROUNDS runs each, written to docs/PERFORMANCE.md (section
limit-rigs). Not a speed benchmark: each figure is held against the limit the rig sets.

- IOPS cap: blk-throttle (cgroup v1 blkio.throttle.read_iops_device) at 2,000 IOPS on a loop
  device, iocap's process in a cgroup of its own: the kind named, the rate against 2,000.
- Throughput cap: blkio.throttle.read_bps_device at 32 MiB/s: the kind, the rate.
- No cap: the same loop device alone, and a file on the root file system (vda): the kind.
- Burst bucket: the FUSE layer's token bucket (3,200 credits, peak 1,000, fill 200 per second),
  through the integration test `burst::saturate_bucket...`, which prints its figures.

Run as root from the repository: `sudo python3 bench/limit-rigs.py`. Knobs: ROUNDS (3),
IOCAP (target/release/iocap), VDA_FILE (/var/tmp/iocap-limit-rigs.dat, removed after), NOTE
(a sentence on the conditions, put under the heading).
"""

import json
import os
import re
import subprocess
import sys
import tempfile

from perfdoc import REPO, write_section

ROUNDS = int(os.environ.get("ROUNDS", "3"))
IOCAP = os.environ.get("IOCAP", os.path.join(REPO, "target/release/iocap"))
VDA_FILE = os.environ.get("VDA_FILE", "/var/tmp/iocap-limit-rigs.dat")
BLKIO = "/sys/fs/cgroup/blkio"
SATURATE = ("saturate --step-duration 3s --warmup 0.5s --no-throttled --max-qd 32 "
            "--sizes 4K,16K,64K --no-save --format json").split()
MIB = 1 << 20


def sh(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()


def saturate(target, cgroup=None):
    """saturate on `target` (in `cgroup`'s blkio group when given): the limit object."""
    cmd = [IOCAP] + SATURATE + [target]
    if cgroup:
        procs = os.path.join(cgroup, "cgroup.procs")
        cmd = ["sh", "-c", f"echo $$ > '{procs}' && exec \"$@\"", "sh"] + cmd
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["saturation"].get("limit") or {}


def capped(dev, knob, rate):
    """The limit saturate names on `dev` under blk-throttle's `knob` at `rate`."""
    majmin = sh("lsblk", "-dno", "MAJ:MIN", dev).replace(" ", "")
    cg = os.path.join(BLKIO, f"iocap-limit-rigs-{os.getpid()}")
    os.makedirs(cg, exist_ok=True)
    rule = os.path.join(cg, f"blkio.throttle.{knob}")
    try:
        open(rule, "w").write(f"{majmin} {rate}")
        return saturate(dev, cg)
    finally:
        open(rule, "w").write(f"{majmin} 0")
        os.rmdir(cg)


def bucket_figures():
    """The FUSE token bucket's figures, from the integration test's own line."""
    out = subprocess.run(
        ["cargo", "test", "-q", "--test", "integration",
         "burst::saturate_bucket_measures", "--", "--nocapture"],
        cwd=REPO, capture_output=True, text=True)
    m = re.search(r"bucket figures: credit_ios (\S+) baseline_iops (\S+) "
                  r"refill_ios_per_s (\S+)", out.stderr + out.stdout)
    if not m:
        sys.exit(f"the bucket test printed no figures:\n{out.stderr[-2000:]}")
    return [float(x) for x in m.groups()]


def pct(x):
    """A share as the table shows it; `-` where saturate could not time the device."""
    return "-" if x is None else f"{x:.0f} %"


def one_round(dev):
    iops = capped(dev, "read_iops_device", 2000)
    bps = capped(dev, "read_bps_device", 32 * MIB)
    alone = saturate(dev)
    vda = saturate(VDA_FILE)
    credit, base, refill = bucket_figures()
    return {
        # the share of iocap's latency spent above the driver (issue 37 §1's device time)
        "above": [x.get("above_driver_pct") for x in (iops, bps, alone)],
        "iops": (iops.get("kind"), iops.get("rate", 0) / 2000),
        "bps": (bps.get("kind"), bps.get("rate", 0) / (32 * MIB)),
        "alone": alone.get("kind"),
        "vda": vda.get("kind"),
        "bucket": (credit / 3200, base / 200, refill / 200),
    }


def main():
    if os.geteuid() != 0:
        sys.exit("limit-rigs.py: run as root (loop devices, cgroups, FUSE)")
    with tempfile.TemporaryDirectory() as tmp:
        img = os.path.join(tmp, "disk.img")
        with open(img, "wb") as f:
            f.truncate(256 * MIB)
        dev = sh("losetup", "-f", "--show", "--direct-io=on", img)
        try:
            rows = []
            for r in range(ROUNDS):
                print(f"limit-rigs: round {r + 1} of {ROUNDS}", file=sys.stderr)
                rows.append(one_round(dev))
        finally:
            sh("losetup", "-d", dev)
            if os.path.exists(VDA_FILE):
                os.remove(VDA_FILE)
    lines = ["<!-- begin limit-rigs -->", "## Caps and burst buckets named on rigs "
             "(`bench/limit-rigs.py`)", "",
             f"{ROUNDS} rounds on this VM (2 vCPUs; a loop device over a file on vda). "
             "Each figure is iocap's over the rig's own setting." +
             (" " + os.environ["NOTE"] if os.environ.get("NOTE") else ""), "",
             "| round | 2,000-IOPS cap: kind, rate | 32 MiB/s cap: kind, rate | loop alone "
             "| vda file | bucket: credits, baseline, refill | above the driver: IOPS cap, "
             "MiB/s cap, alone |", "|---|---|---|---|---|---|---|"]
    for i, r in enumerate(rows, 1):
        b = r["bucket"]
        lines.append(
            f"| {i} | {r['iops'][0]}, {r['iops'][1]:.3f} | {r['bps'][0]}, {r['bps'][1]:.3f} "
            f"| {r['alone']} | {r['vda']} | {b[0]:.3f}, {b[1]:.3f}, {b[2]:.3f} "
            f"| {', '.join(pct(a) for a in r['above'])} |")
    lines += ["", "Bounds (issue 37): the cap's kind named and its rate within 5 %; the "
              "bucket's credits within 15 %, baseline within 10 %, refill within 20 %; no "
              "cap named where there is none. Above the driver: the share of iocap's mean "
              "latency not spent in the device (block tracepoints, `saturation.limit."
              "above_driver_pct`); 80 % or more adds \"held above the driver\" to a cap's "
              "verdict.", "<!-- end limit-rigs -->"]
    write_section(lines[0], lines[-1], lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
