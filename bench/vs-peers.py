#!/usr/bin/env python3
"""bench/vs-peers.py: iocap against fio, t/io_uring and DiskSpd, in paired rounds.

A benchmark, not a test. This VM's disk drifts by +-30 % within minutes, so tools measured
minutes apart cannot be compared. In each round every tool runs each workload once, back to
back, the tools taking turns going first (the order rotates each round); the ratio iocap/peer is
taken per round, and the report gives the median and the interquartile range of those per-round
ratios. Peers run only where present; an absent one is named in the report.

CPU per I/O is counted the same way for every tool: the user + system time of the tool's process
and everything it waited for (os.times() of the children, which includes io_uring's worker
threads and fio's helper threads), divided by the I/Os it completed in the whole run, warm-up
included (each tool's warm-up I/Os are estimated at its measured rate). The tools' own figures
are kept beside it: iocap's cpu.us_per_io (whole process, measured window), fio's usr/sys (its
job threads only).

Knobs (environment): ROUNDS (5), DURATION seconds (4), RAMP seconds of warm-up (2), BENCH_DIR
(target/bench), BENCH_SIZE (4G), WORKLOADS (all: a b c d e f g h), SUBMIT (iocap's --submit;
default: iocap's own default), IOCAP (a built binary; default: cargo build --release),
T_IO_URING and DISKSPD (peer binaries; default ../shared/peers/), OUT (docs/PERFORMANCE.md; the
script replaces only its own section there).
"""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- vs-peers:begin -->", "<!-- vs-peers:end -->"

# name: (title, rw, bs, qd, threads, write_pct, target: (metric, at least))
WORKLOADS = {
    "a": ("4K random read, qd32", "randread", "4K", 32, 1, 0, ("iops", 1.2)),
    "b": ("8K random write, qd32", "randwrite", "8K", 32, 1, 100, ("iops", 1.05)),
    "c": ("8K random read, qd8 x 4 threads", "randread", "8K", 8, 4, 0, ("iops", 1.1)),
    "d": ("64K random read, qd16", "randread", "64K", 16, 1, 0, ("iops", 1.0)),
    "e": ("1M sequential read, qd8", "read", "1M", 8, 1, 0, ("mbs", 1.0)),
    "f": ("8K random 70/30 read/write, qd16", "randrw", "8K", 16, 1, 30, ("iops", 1.0)),
    "g": ("8K random 50/50 read/write, qd32", "randrw", "8K", 32, 1, 50, ("iops", 1.0)),
    "h": ("8K random 70/30 read/write, qd8", "randrw", "8K", 8, 1, 30, ("iops", 1.0)),
}
CPU_TARGET = 0.75  # iocap's CPU per I/O at most this share of fio's, on every row
T_IO_URING_FLOOR = 0.97  # row a: iocap's IOPS at least this share of t/io_uring -s1 -c1


def die(msg):
    print(f"vs-peers: error: {msg}", file=sys.stderr)
    sys.exit(2)


def say(msg):
    print(f"vs-peers: {msg}", file=sys.stderr, flush=True)


def env_int(name, default):
    v = os.environ.get(name, str(default))
    if not re.fullmatch(r"[1-9][0-9]*", v):
        die(f"{name} must be a positive whole number (got '{v}')")
    return int(v)


def to_bytes(size):
    m = re.fullmatch(r"([1-9][0-9]*)([KMGT]?)", size)
    if not m:
        die(f"BENCH_SIZE must look like 4G or 512M (got '{size}')")
    return int(m.group(1)) * 1024 ** " KMGT".index(m.group(2) or " ")


def timed(cmd):
    """Runs cmd; returns (stdout, children's CPU seconds, wall seconds)."""
    t0, w0 = os.times(), time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t1, w1 = os.times(), time.monotonic()
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    cpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    return p.stdout, cpu, w1 - w0


class Bench:
    def __init__(self):
        self.rounds = env_int("ROUNDS", 5)
        self.duration = env_int("DURATION", 4)
        self.ramp = env_int("RAMP", 2)
        self.size = os.environ.get("BENCH_SIZE", "4G")
        self.size_bytes = to_bytes(self.size)
        self.dir = os.path.abspath(os.environ.get("BENCH_DIR", os.path.join(REPO, "target/bench")))
        self.file = os.path.join(self.dir, "bench.dat")
        self.workloads = os.environ.get("WORKLOADS", " ".join(WORKLOADS)).split()
        for w in self.workloads:
            if w not in WORKLOADS:
                die(f"unknown workload '{w}' in WORKLOADS (use {' '.join(WORKLOADS)})")
        self.submit = os.environ.get("SUBMIT", "")
        if self.submit not in ("", "auto", "batch", "each"):
            die(f"SUBMIT must be auto, batch or each (got '{self.submit}')")
        self.out = os.environ.get("OUT", os.path.join(REPO, "docs/PERFORMANCE.md"))
        peers = os.path.join(os.path.dirname(REPO), "shared", "peers")
        self.t_io_uring = os.environ.get("T_IO_URING", os.path.join(peers, "t-io_uring"))
        self.diskspd = os.environ.get("DISKSPD", os.path.join(peers, "diskspd"))
        self.iocap = os.environ.get("IOCAP")
        self.absent = {}

    def check(self):
        if not shutil.which("fio"):
            die("fio is not installed (apt-get install fio)")
        if not self.iocap:
            say("building iocap (cargo build --release)")
            subprocess.run(["cargo", "build", "--release", "-q"], cwd=REPO, check=True)
            self.iocap = os.path.join(REPO, "target/release/iocap")
        if not os.access(self.iocap, os.X_OK):
            die(f"IOCAP={self.iocap} is not an executable")
        if not os.access(self.t_io_uring, os.X_OK):
            self.absent["t/io_uring"] = self.t_io_uring
        if not os.access(self.diskspd, os.X_OK):
            self.absent["diskspd"] = self.diskspd
        elif subprocess.run([self.diskspd, "-?"], capture_output=True).returncode == 127:
            self.absent["diskspd"] = f"{self.diskspd} (needs libaio1: apt-get install libaio1)"
        os.makedirs(self.dir, exist_ok=True)

    def prepare(self):
        """The test file, made and marked by iocap so it may write to it."""
        say(f"preparing {self.file} ({self.size})")
        subprocess.run([self.iocap, "run", "--rw", "read", "--size", self.size, "--duration", "1s",
                        "--warmup", "0s", "--no-save", "--output", "json", self.file],
                       check=True, stdout=subprocess.DEVNULL)

    def tools(self, w):
        t = ["iocap", "fio"]
        rw, threads = WORKLOADS[w][1], WORKLOADS[w][4]
        if "t/io_uring" not in self.absent and rw == "randread" and threads == 1:
            t.append("t/io_uring")
        if "diskspd" not in self.absent:
            t.append("diskspd")
        return t

    # one run of one tool: {"iops", "mbs", "cpu" (children, per I/O), "own_cpu"}
    def run(self, tool, w):
        _, rw, bs, qd, threads, wpct, _ = WORKLOADS[w]
        total = self.duration + self.ramp
        if tool == "iocap":
            cmd = [self.iocap, "run", "--rw", rw, "--bs", bs, "--qd", str(qd), "--threads",
                   str(threads), "--duration", f"{self.duration}s", "--warmup", f"{self.ramp}s",
                   "--no-save", "--output", "json", self.file]
            if rw == "randrw":
                cmd[4:4] = ["--write-pct", str(wpct)]
            if self.submit:
                cmd[2:2] = ["--submit", self.submit]
            out, cpu, _ = timed(cmd)
            t = json.loads(out)["tests"][0]
            if t.get("error"):
                raise RuntimeError(f"iocap: {t['error']}")
            ios, iops = t["total"]["ios"], t["total"]["iops"]
            mbs, own = t["total"]["mb_s"], t["cpu"]["us_per_io"]
            extra = (t.get("submit") or {}).get("chosen", "")
        elif tool == "fio":
            cmd = ["fio", "--name=bench", f"--filename={self.file}", "--ioengine=io_uring",
                   "--direct=1", f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}",
                   f"--numjobs={threads}", "--group_reporting", f"--size={self.size_bytes}",
                   "--time_based", f"--runtime={self.duration}", f"--ramp_time={self.ramp}",
                   "--output-format=json"]
            if rw == "randrw":
                cmd.append(f"--rwmixwrite={wpct}")
            out, cpu, _ = timed(cmd)
            j = json.loads(out[out.index("{"):])["jobs"][0]
            ios = j["read"]["total_ios"] + j["write"]["total_ios"]
            iops = j["read"]["iops"] + j["write"]["iops"]
            mbs = (j["read"]["bw_bytes"] + j["write"]["bw_bytes"]) / 1e6
            runtime_s = (j.get("job_runtime") or j["read"]["runtime"]) / 1000.0
            own = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * runtime_s * 1e6 / ios if ios else 0.0
            extra = ""
        elif tool == "t/io_uring":
            cmd = [self.t_io_uring, "-p0", f"-d{qd}", "-s1", "-c1", f"-b{to_bytes(bs)}",
                   f"-n{threads}", f"-r{total + 1}", self.file]
            out, cpu, _ = timed(cmd)
            per_s = [int(m) for m in re.findall(r"^IOPS=(\d+)", out, re.M)]
            kept = per_s[self.ramp:] or per_s
            iops = statistics.mean(kept) if kept else 0.0
            ios = iops * self.duration
            mbs, own, extra = iops * to_bytes(bs) / 1e6, None, ""
        else:  # diskspd
            cmd = [self.diskspd, f"-b{bs}", f"-o{qd}", f"-t{threads}", f"-d{self.duration}",
                   f"-W{self.ramp}", "-Sd", "-L", "-xk"]
            if rw.startswith("rand"):
                cmd.append("-r")  # sequential is DiskSpd's default
            if wpct:
                cmd.append(f"-w{wpct}")
            cmd.append(self.file)
            out, cpu, _ = timed(cmd)
            m = re.search(r"^Total IO.*?^total:\s+(\d+)\s+\|\s+(\d+)\s+\|\s+([\d.]+)\s+\|\s+([\d.]+)",
                          out, re.M | re.S)
            if not m:
                raise RuntimeError("diskspd printed no Total IO line")
            ios, iops = int(m.group(2)), float(m.group(4))
            mbs, own, extra = int(m.group(1)) / self.duration / 1e6, None, ""
        # the whole process's CPU over every I/O it did, warm-up included at the measured rate
        all_ios = iops * total if iops else 0
        return {"iops": iops, "mbs": mbs, "ios": ios, "own_cpu": own, "extra": extra,
                "cpu": cpu * 1e6 / all_ios if all_ios else None}

    def measure(self):
        self.results = {w: {t: [] for t in self.tools(w)} for w in self.workloads}
        for r in range(self.rounds):
            for w in self.workloads:
                tools = self.tools(w)
                k = r % len(tools)
                order = tools[k:] + tools[:k]
                for tool in order:
                    x = self.run(tool, w)
                    self.results[w][tool].append(x)
                    say(f"round {r + 1}/{self.rounds} {w} {tool}: {x['iops']:,.0f} IOPS, "
                        f"{x['mbs']:.1f} MB/s, CPU {x['cpu'] or 0:.2f} us/IO {x['extra']}")


def quartiles(xs):
    xs = sorted(xs)
    if not xs:
        return None
    def q(p):
        h = p * (len(xs) - 1)
        lo = int(h)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (h - lo) * (xs[hi] - xs[lo])
    return q(0.25), q(0.5), q(0.75)


def ratios(b, w, peer, key):
    out = []
    for mine, theirs in zip(b.results[w]["iocap"], b.results[w].get(peer, [])):
        if mine.get(key) and theirs.get(key):
            out.append(mine[key] / theirs[key])
    return out


def fmt_q(q):
    return "–" if q is None else f"{q[1]:.2f}× [{q[0]:.2f}–{q[2]:.2f}]"


def report(b):
    L = []
    w_ = L.append
    host = os.uname()
    fio_v = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    w_(BEGIN)
    w_("## iocap against its peers, in paired rounds")
    w_("")
    w_(f"Written by `bench/vs-peers.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
       f"iocap commit `{commit}`, {fio_v}, kernel `{host.release}`, {os.cpu_count()} CPUs; test "
       f"file {b.size} on the disk under `{b.dir}`. Rerun it to refresh this section.")
    w_("")
    w_(f"Method: {b.rounds} rounds; in each, every tool runs each workload once, back to back, "
       "the order rotating each round so each tool goes first in turn. Each run measures "
       f"{b.duration} s after a {b.ramp} s warm-up, O_DIRECT, one file. The ratio iocap/peer is "
       "taken per round; the tables give the median of the per-round ratios and their "
       "interquartile range [25th–75th percentile]. IOPS ratios above 1 favour iocap; CPU "
       "ratios below 1 do. iocap runs with its default submission"
       + (f" (`--submit {b.submit}`)" if b.submit else " (`--submit auto`)") +
       ", fio with its io_uring defaults, t/io_uring with one I/O per submit (`-s1 -c1`), "
       "DiskSpd with libaio (`-xk -Sd`).")
    w_("")
    w_("CPU per I/O is the user + system time of the tool's whole process (children's times "
       "around the call, so io_uring's workers and every helper thread count) over every I/O of "
       "the run, the warm-up's estimated at the measured rate.")
    for name, path in b.absent.items():
        w_("")
        w_(f"{name}: not present ({path}); its columns are empty.")
    w_("")
    w_("### Targets")
    w_("")
    w_("| workload | target | iocap/fio | CPU/IO iocap/fio | result |")
    w_("|---|---|---:|---:|---|")
    for w in b.workloads:
        title, key, at_least = WORKLOADS[w][0], WORKLOADS[w][6][0], WORKLOADS[w][6][1]
        q = quartiles(ratios(b, w, "fio", key))
        c = quartiles(ratios(b, w, "fio", "cpu"))
        ok = q is not None and q[1] >= at_least and c is not None and c[1] <= CPU_TARGET
        label = "MB/s" if key == "mbs" else "IOPS"
        w_(f"| {w}. {title} | {label} ≥ {at_least}×, CPU ≤ {CPU_TARGET}× | {fmt_q(q)} | "
           f"{fmt_q(c)} | {'**MET**' if ok else '**MISSED**'} |")
    if "a" in b.workloads and "t/io_uring" not in b.absent:
        q = quartiles(ratios(b, "a", "t/io_uring", "iops"))
        ok = q is not None and q[1] >= T_IO_URING_FLOOR
        w_(f"| a. against t/io_uring `-s1 -c1` | IOPS ≥ {T_IO_URING_FLOOR}× | {fmt_q(q)} | – | "
           f"{'**MET**' if ok else '**MISSED**'} |")
    w_("")
    w_("### Every peer")
    w_("")
    w_("| workload | iocap/fio IOPS | iocap/t-io_uring IOPS | iocap/DiskSpd IOPS | "
       "iocap/DiskSpd CPU | iocap kept |")
    w_("|---|---:|---:|---:|---:|---|")
    for w in b.workloads:
        kept = sorted({x["extra"] for x in b.results[w]["iocap"] if x["extra"]})
        w_(f"| {w}. {WORKLOADS[w][0]} | {fmt_q(quartiles(ratios(b, w, 'fio', 'iops')))} | "
           f"{fmt_q(quartiles(ratios(b, w, 't/io_uring', 'iops')))} | "
           f"{fmt_q(quartiles(ratios(b, w, 'diskspd', 'iops')))} | "
           f"{fmt_q(quartiles(ratios(b, w, 'diskspd', 'cpu')))} | {', '.join(kept) or '–'} |")
    w_("")
    w_("### Per round")
    w_("")
    w_("IOPS and CPU µs per I/O of each run (MB/s for e); the tools' own CPU figures in brackets "
       "(iocap: its measured window; fio: its job threads).")
    for w in b.workloads:
        w_("")
        w_(f"**{w}. {WORKLOADS[w][0]}**")
        w_("")
        tools = list(b.results[w])
        w_("| round | " + " | ".join(tools) + " |")
        w_("|---|" + "---:|" * len(tools))
        for r in range(b.rounds):
            cells = []
            for t in tools:
                x = b.results[w][t][r]
                v = f"{x['mbs']:,.0f} MB/s" if WORKLOADS[w][6][0] == "mbs" else f"{x['iops']:,.0f}"
                cpu = f"{x['cpu']:.2f}" if x["cpu"] else "–"
                own = f" ({x['own_cpu']:.2f})" if x.get("own_cpu") else ""
                cells.append(f"{v}, {cpu}{own} µs")
            w_(f"| {r + 1} | " + " | ".join(cells) + " |")
    w_("")
    w_(END)
    return "\n".join(L) + "\n"


def write(b, section):
    old = open(b.out).read() if os.path.exists(b.out) else "# Performance\n"
    if BEGIN in old and END in old:
        new = old[:old.index(BEGIN)] + section.rstrip("\n") + old[old.index(END) + len(END):]
    else:
        # first run: at the end, after the Notes, which bench/vs-fio.sh keeps when it rewrites
        # the top of the file
        new = old.rstrip("\n") + "\n\n" + section
    with open(b.out, "w") as f:
        f.write(new)
    say(f"wrote {b.out}")


def main():
    b = Bench()
    b.check()
    b.prepare()
    b.measure()
    raw = os.path.join(b.dir, "results", time.strftime("%Y%m%dT%H%M%S", time.gmtime()))
    os.makedirs(raw, exist_ok=True)
    with open(os.path.join(raw, "vs-peers.json"), "w") as f:
        json.dump(b.results, f, indent=1)
    write(b, report(b))


if __name__ == "__main__":
    main()
