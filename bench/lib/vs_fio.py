#!/usr/bin/env python3
"""bench/lib/vs_fio.py: the measuring loop and the report of bench/vs-fio.sh.

Not meant to be run by hand: bench/vs-fio.sh checks the knobs, builds iocap, prepares the test
file and then calls

    vs_fio.py measure RUN_DIR     paired rounds; every run's raw output and RUN_DIR/runs.json
    vs_fio.py report RUN_DIR OUT  the section of OUT between the vs-fio markers, from RUN_DIR

The settings come from the environment (exported by the shell script): IOCAP, FIO, T_IO_URING,
DISKSPD (empty when absent), T_IO_URING_PATH, DISKSPD_PATH, T_IO_URING_WHY, DISKSPD_WHY, FILE,
SIZE_BYTES, DURATION, RAMP, ROUNDS, WORKLOADS, SUBMIT.

Paired rounds: in each round every tool runs each workload once, the runs of one workload back
to back, and the tools take turns going first (the order rotates by one each round). The ratio
iocap/peer is taken per round; the report gives the median and the interquartile range
(25th-75th percentile) of those per-round ratios.

CPU per I/O:
  iocap       its JSON's tests[0].cpu.us_per_io (getrusage(RUSAGE_SELF) over the measured window:
              every thread of the process, io_uring's workers included)
  fio         the children's user + system time around the call (os.times()), so fio's helper
              threads and io_uring's workers count, over its I/Os; fio's total_ios covers the
              measured window only, so the warm-up's I/Os are added at the measured rate
  t/io_uring  the children's time over the I/Os of every second it printed (plus the last,
              unprinted, second at the measured rate)
  diskspd     the children's time over its I/Os, the warm-up's added at the measured rate
Each tool's other figure is kept beside it (iocap: the children's time over the whole run, so
iocap can also be compared process with process; fio: its own usr_cpu + sys_cpu, job threads
only).
"""

import json
import os
import re
import statistics
import subprocess
import sys
import time

BEGIN, END = "<!-- vs-fio:begin -->", "<!-- vs-fio:end -->"
HEADING = "## iocap against fio, in paired rounds"
# the headings of the old, unmarked bench/vs-fio.sh output (before paired rounds): on the first
# run of this version, the top of the file up to the first other "## " heading is replaced
OLD_TITLE = "# Performance: iocap against fio"
OLD_HEADINGS = {"## Set-up", "## Summary", "## Targets", "## Workloads"}

# name: title, rw, bs, qd, threads, write %, target (metric, kind, value)
#   kind "min": the median ratio iocap/fio at least value; "band": |median ratio - 1| <= value
WORKLOADS = {
    "a": ("4K random read, qd32, 1 thread", "randread", "4K", 32, 1, 0, ("iops", "min", 1.2)),
    "b": ("8K random write, qd32, 1 thread", "randwrite", "8K", 32, 1, 100, ("iops", "min", 1.05)),
    "c": ("8K random read, qd8 × 4 threads", "randread", "8K", 8, 4, 0, ("iops", "min", 1.1)),
    "d": ("64K random read, qd16, 1 thread", "randread", "64K", 16, 1, 0, ("iops", "min", 1.0)),
    "e": ("1M sequential read, qd8, 1 thread", "read", "1M", 8, 1, 0, ("mbs", "min", 1.0)),
    "f": ("8K random read/write 70/30, qd16, 1 thread", "randrw", "8K", 16, 1, 30, ("iops", "min", 1.0)),
    "g": ("8K random read/write 50/50, qd32, 1 thread", "randrw", "8K", 32, 1, 50, ("iops", "min", 1.0)),
    "h": ("8K random read/write 70/30, qd8, 1 thread", "randrw", "8K", 8, 1, 30, ("iops", "min", 1.0)),
    "q": ("4K random read, qd1, 1 thread (latency)", "randread", "4K", 1, 1, 0, ("p50", "band", 0.05)),
}
CPU_TARGET = 0.75        # rows a-h: iocap's CPU µs per I/O at most this share of fio's
T_IO_URING_FLOOR = 0.97  # row a: iocap's IOPS at least this share of t/io_uring -s1 -c1
PEERS = ("fio", "t/io_uring", "diskspd")
LABEL = {"iops": "IOPS", "mbs": "MB/s", "p50": "p50 latency", "cpu": "CPU µs/IO"}


def say(msg):
    print(f"vs-fio.sh: {msg}", file=sys.stderr, flush=True)


def to_bytes(size):
    m = re.fullmatch(r"([1-9][0-9]*)([KMGT]?)", size)
    return int(m.group(1)) * 1024 ** " KMGT".index(m.group(2) or " ")


def env(name, default=""):
    return os.environ.get(name, default)


# ---------------------------------------------------------------------------------------------
# Running the tools

def tools_for(w):
    """The tools that run workload w, in the order of round 1."""
    _, rw, bs, qd, threads, _, (metric, _, _) = WORKLOADS[w]
    tools = ["iocap", "fio"]
    if metric == "p50":
        return tools  # the latency row is a comparison with fio only
    if env("T_IO_URING") and rw == "randread" and threads == 1:
        tools.append("t/io_uring")
    if env("DISKSPD"):
        tools.append("diskspd")
    return tools


def command(tool, w):
    _, rw, bs, qd, threads, wpct, _ = WORKLOADS[w]
    f, dur, ramp, size = env("FILE"), int(env("DURATION")), int(env("RAMP")), env("SIZE_BYTES")
    if tool == "iocap":
        cmd = [env("IOCAP"), "run", "--rw", rw]
        if rw == "randrw":
            cmd += ["--write-pct", str(wpct)]
        cmd += ["--bs", bs, "--qd", str(qd), "--threads", str(threads), "--size", size,
                "--engine", "io_uring"]
        if env("SUBMIT"):
            cmd += ["--submit", env("SUBMIT")]
        cmd += ["--duration", f"{dur}s", "--warmup", f"{ramp}s", "--output", "json", "--no-save", f]
    elif tool == "fio":
        cmd = [env("FIO", "fio"), f"--name={w}", f"--filename={f}", f"--size={size}", f"--rw={rw}"]
        if rw == "randrw":
            cmd.append(f"--rwmixwrite={wpct}")
        cmd += [f"--bs={bs.lower()}", f"--iodepth={qd}", f"--numjobs={threads}", "--direct=1",
                "--ioengine=io_uring", f"--runtime={dur}", f"--ramp_time={ramp}", "--time_based",
                "--group_reporting", "--lat_percentiles=1", "--output-format=json"]
    elif tool == "t/io_uring":
        # -r one second more than needed: it prints IOPS at the end of each whole second
        # and not for the last one
        cmd = [env("T_IO_URING"), "-p0", f"-d{qd}", "-s1", "-c1", f"-b{to_bytes(bs)}", "-O1",
               "-B1", "-F1", "-R1", f"-n{threads}", f"-r{ramp + dur + 1}", f]
    else:  # diskspd
        cmd = [env("DISKSPD"), f"-b{bs}", f"-o{qd}", f"-t{threads}"]
        if rw.startswith("rand"):
            cmd.append("-r")  # sequential is DiskSpd's default
        if wpct:
            cmd.append(f"-w{wpct}")
        cmd += [f"-d{dur}", f"-W{ramp}", "-Sd", "-L", "-xk", f]
    return cmd


def timed(cmd):
    """Runs cmd: (stdout, stderr, exit status, children's user + system CPU seconds, wall s)."""
    t0, w0 = os.times(), time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t1, w1 = os.times(), time.monotonic()
    cpu = (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)
    return p.stdout, p.stderr, p.returncode, cpu, w1 - w0


class RunError(Exception):
    pass


def first_json(text, what):
    i = text.find("{")
    if i < 0:
        raise RunError(f"{what} printed no JSON")
    return json.loads(text[i:])


def parse(tool, w, out, child_cpu):
    """{iops, mbs, ios, cpu (the figure compared), alt_cpu (the other one), p50, note}."""
    dur, ramp = int(env("DURATION")), int(env("RAMP"))
    bs = to_bytes(WORKLOADS[w][2])
    r = {"p50": None, "alt_cpu": None, "note": ""}
    if tool == "iocap":
        t = first_json(out, "iocap")["tests"][0]
        if t.get("error"):
            raise RunError(f"iocap reported an error: {t['error']}")
        tot = t["total"]
        r.update(iops=tot["iops"], mbs=tot["mb_s"], ios=tot["ios"], cpu=t["cpu"]["us_per_io"],
                 p50=tot["lat_us"]["p50"])
        if tot["iops"]:
            r["alt_cpu"] = child_cpu * 1e6 / (tot["iops"] * (dur + ramp))
        sub = t.get("submit")
        if isinstance(sub, dict):
            r["note"] = sub.get("chosen") or sub.get("mode") or ""
        elif isinstance(sub, str):
            r["note"] = sub
    elif tool == "fio":
        j = first_json(out, "fio")["jobs"][0]
        if j.get("error"):
            raise RunError(f"fio reported error {j['error']}")
        rd, wr = j["read"], j["write"]
        ios = rd["total_ios"] + wr["total_ios"]
        if not ios:
            raise RunError("fio did no I/O")
        iops = rd["iops"] + wr["iops"]
        runtime_ms = j.get("job_runtime") or max(rd["runtime"], wr["runtime"])
        # the whole process over every I/O: the measured window's plus the warm-up's, at the
        # measured rate (fio counts no I/O during --ramp_time)
        r.update(iops=iops, mbs=(rd["bw_bytes"] + wr["bw_bytes"]) / 1e6, ios=ios,
                 cpu=child_cpu * 1e6 / (ios * (dur + ramp) / dur),
                 alt_cpu=(j["usr_cpu"] + j["sys_cpu"]) / 100.0 * runtime_ms * 1000.0 / ios)
        d = wr if wr["total_ios"] and not rd["total_ios"] else rd
        pct = d["lat_ns"].get("percentile") or {}
        if "50.000000" in pct:
            r["p50"] = pct["50.000000"] / 1000.0
    elif tool == "t/io_uring":
        per_s = [int(m) for m in re.findall(r"^IOPS=(\d+)", out, re.M)]
        if not per_s:
            raise RunError("t/io_uring printed no IOPS line")
        kept = per_s[ramp:] or per_s[-1:]
        iops = statistics.mean(kept)
        secs = ramp + dur + 1  # its -r
        all_ios = sum(per_s) + iops * max(0, secs - len(per_s))
        r.update(iops=iops, mbs=iops * bs / 1e6, ios=sum(kept), cpu=child_cpu * 1e6 / all_ios,
                 note=f"{len(per_s)} s printed, first {len(per_s) - len(kept)} dropped")
    else:  # diskspd
        m = re.search(r"^Total IO\b.*?^total:\s+(\d+)\s+\|\s+(\d+)\s+\|\s+([\d.]+)\s+\|\s+([\d.]+)",
                      out, re.M | re.S)
        if not m:
            raise RunError("diskspd printed no 'Total IO' table")
        nbytes, ios, iops = int(m.group(1)), int(m.group(2)), float(m.group(4))
        if not ios:
            raise RunError("diskspd did no I/O")
        # DiskSpd's MB/s column is MiB/s: MB/s here is 10^6 bytes/s, as for the others
        r.update(iops=iops, mbs=nbytes / dur / 1e6, ios=ios,
                 cpu=child_cpu * 1e6 / (ios * (dur + ramp) / dur))
        pm = re.search(r"^\s+50th \|.*\|\s+([\d.]+)\s*$", out, re.M)
        if pm:
            r["p50"] = float(pm.group(1)) * 1000.0
    return r


def measure(run_dir):
    rounds = int(env("ROUNDS"))
    wls = env("WORKLOADS").split()
    runs_path = os.path.join(run_dir, "runs.json")
    data = {"workloads": wls, "rounds": rounds, "tools": {w: tools_for(w) for w in wls},
            "commands": {}, "runs": []}
    for w in wls:
        for tool in tools_for(w):
            cmd = command(tool, w)
            data["commands"][f"{w} {tool}"] = " ".join(_quote(c) for c in cmd)
    for r in range(rounds):
        for w in wls:
            tools = tools_for(w)
            k = r % len(tools)
            order = tools[k:] + tools[:k]
            for pos, tool in enumerate(order):
                cmd = command(tool, w)
                base = os.path.join(run_dir, f"{w}.{tool.replace('/', '_')}.{r + 1}")
                out, err, rc, cpu, wall = timed(cmd)
                with open(base + ".out", "w") as fh:
                    fh.write(out)
                if err:
                    with open(base + ".err", "w") as fh:
                        fh.write(err)
                try:
                    if rc != 0:
                        raise RunError(f"exit status {rc}: {(err or out).strip()[-500:]}")
                    x = parse(tool, w, out, cpu)
                except (RunError, ValueError, KeyError, IndexError) as e:
                    say(f"round {r + 1} {w} {tool} failed: {e}")
                    say(f"its command: {' '.join(_quote(c) for c in cmd)}; output in {base}.out")
                    sys.exit(1)
                x.update(round=r + 1, workload=w, tool=tool, position=pos + 1,
                         child_cpu_s=cpu, wall_s=wall)
                data["runs"].append(x)
                with open(runs_path, "w") as fh:
                    json.dump(data, fh, indent=1)
                main = f"{x['mbs']:,.1f} MB/s" if WORKLOADS[w][6][0] == "mbs" else f"{x['iops']:,.0f} IOPS"
                extra = f", p50 {x['p50']:.1f} µs" if WORKLOADS[w][6][0] == "p50" and x["p50"] else ""
                say(f"round {r + 1}/{rounds} {w} {tool:<10} {main}, CPU {x['cpu']:.2f} µs/IO{extra}"
                    + (f" ({x['note']})" if x["note"] and tool == "iocap" else ""))


def _quote(s):
    return s if re.fullmatch(r"[A-Za-z0-9_./=:,+%@-]+", s) else "'" + s.replace("'", "'\\''") + "'"


# ---------------------------------------------------------------------------------------------
# The report

def quartiles(xs):
    """(25th, 50th, 75th percentile), linear interpolation; None for no data."""
    xs = sorted(xs)
    if not xs:
        return None

    def q(p):
        h = p * (len(xs) - 1)
        lo = int(h)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (h - lo) * (xs[hi] - xs[lo])
    return q(0.25), q(0.5), q(0.75)


def fmt_q(q, digits=2):
    return "–" if q is None else f"{q[1]:.{digits}f}× [{q[0]:.{digits}f}–{q[2]:.{digits}f}]"


def fmt_v(key, v):
    if v is None:
        return "–"
    if key == "iops":
        return f"{v:,.0f}"
    if key in ("cpu", "alt_cpu"):
        return f"{v:.2f}"
    return f"{v:,.1f}"


def load_info(run_dir):
    info = {}
    for line in open(os.path.join(run_dir, "info.tsv")):
        k, _, v = line.rstrip("\n").partition("\t")
        info[k] = v
    return info


class Results:
    def __init__(self, run_dir):
        self.data = json.load(open(os.path.join(run_dir, "runs.json")))
        self.wls = self.data["workloads"]
        self.rounds = self.data["rounds"]
        self.by = {}
        for x in self.data["runs"]:
            self.by[x["workload"], x["tool"], x["round"]] = x

    def tools(self, w):
        return self.data["tools"][w]

    def ratios(self, w, peer, key):
        out = []
        for r in range(1, self.rounds + 1):
            a, b = self.by.get((w, "iocap", r)), self.by.get((w, peer, r))
            if a and b and a.get(key) and b.get(key):
                out.append(a[key] / b[key])
        return out

    def verdict(self, w):
        """(target text, metric ratio quartiles, cpu ratio quartiles, met)"""
        metric, kind, value = WORKLOADS[w][6]
        q = quartiles(self.ratios(w, "fio", metric))
        c = quartiles(self.ratios(w, "fio", "cpu"))
        if kind == "band":
            text = f"{LABEL[metric]} within ±{value * 100:.0f} % of fio's"
            ok = q is not None and abs(q[1] - 1) <= value
        else:
            text = f"{LABEL[metric]} ≥ {value}×, CPU µs/IO ≤ {CPU_TARGET}×"
            ok = q is not None and q[1] >= value and c is not None and c[1] <= CPU_TARGET
        return text, q, c, ok


def report(run_dir, out_path):
    info = load_info(run_dir)
    res = Results(run_dir)
    wls, rounds = res.wls, res.rounds
    L = []
    w_ = L.append

    w_(BEGIN)
    w_(HEADING)
    w_("")
    w_(f"Written by `bench/vs-fio.sh` on {info['date']}; rerun it to refresh this section (only "
       "the text between the `vs-fio` markers is replaced; the rest of the file is kept). How to "
       "run it: [bench/README.md](../bench/README.md).")
    w_("")
    w_("| | |")
    w_("|---|---|")
    w_(f"| Date | {info['date']} |")
    w_(f"| Host | `{info['host']}`: {info['cpus']} CPUs ({info['cpu_model']}), {info['mem']} RAM |")
    w_(f"| Kernel | `{info['kernel']}` |")
    w_(f"| Storage | test file on `{info['device']}` ({info['fstype']}) |")
    w_(f"| Test file | `{info['file']}`, {info['size_bytes_h']} ({info['size_bytes']} bytes), made "
       "and filled with incompressible data by iocap; every tool uses the same file, whole |")
    w_(f"| iocap | {info['iocap_version']}, `{info['iocap']}`, commit {info['commit']}; "
       f"submission: {('`--submit ' + info['submit'] + '`') if info['submit'] else 'its default'} |")
    w_(f"| fio | {info['fio_version']}, io_uring engine with its default options, `--direct=1 "
       "--lat_percentiles=1` |")
    for name, key in (("t/io_uring", "t_io_uring"), ("diskspd", "diskspd")):
        if info.get(key):
            w_(f"| {name} | `{info[key]}` |")
        else:
            w_(f"| {name} | not present: `{info[key + '_path']}`"
               + (f" ({info[key + '_why']})" if info.get(key + "_why") else "") + " |")
    w_(f"| Timing | {info['duration']} s measured after a {info['ramp']} s warm-up, per run "
       "(iocap `--warmup`, fio `--ramp_time`, DiskSpd `-W`; t/io_uring's first seconds dropped) |")
    w_(f"| Rounds | {rounds} |")
    w_("")
    w_("Method:")
    w_("")
    w_(f"- **Paired rounds.** In each of the {rounds} rounds every tool runs each workload once, "
       "and the runs of one workload follow each other back to back; the tools take turns going "
       "first (the order rotates by one tool each round). The ratio iocap/peer is taken per "
       "round, and the tables give the **median of the per-round ratios and their interquartile "
       "range** [25th–75th percentile]. Single runs on this disk swing by ±30 % within minutes, "
       "so only runs made seconds apart are compared.")
    w_("- All tools use O_DIRECT on the same file. fio runs its io_uring engine with its defaults "
       "(no `fixedbufs`, `registerfiles`, `sqthread_poll` or `hipri`); t/io_uring runs as "
       "`-p0 -s1 -c1` (no polling, one I/O per submit, its fixed buffers and registered files), "
       "the rows it can do being 1-thread random reads; DiskSpd runs with libaio (`-xk -Sd -L`). "
       "Four threads (row c) are iocap `--threads 4`, fio `--numjobs=4 --group_reporting`, "
       "DiskSpd `-t4`.")
    w_("- IOPS is reads + writes; MB/s is 10^6 bytes/s (DiskSpd's own MB/s column is MiB/s and "
       "is not used). t/io_uring prints IOPS once a second: the first "
       f"{info['ramp']} s are dropped as warm-up and the rest averaged.")
    w_("- **CPU µs/IO counts the io_uring workers for every tool.** iocap: its "
       "`cpu.us_per_io` (getrusage(RUSAGE_SELF) over the measured window, every thread of the "
       "process). fio's `usr_cpu`/`sys_cpu` cover its job threads only, so fio's figure here is "
       "the children's user + system time around the call (`os.times()`), over its I/Os; fio "
       "counts no I/O during `--ramp_time`, so the warm-up's I/Os are added at the measured rate. "
       "t/io_uring and DiskSpd: the children's time the same way. In the per-round tables the "
       "figure in brackets is the other way of counting: for iocap its children's time over the "
       "whole run (as fio's is counted; it includes start-up), for fio its own `usr_cpu + "
       "sys_cpu` (job threads only). The targets use the first figure; the column *CPU, whole "
       "process both* compares iocap's bracketed figure with fio's.")
    w_("- Ratios are iocap / peer: above 1 favours iocap for IOPS and MB/s, below 1 for CPU and "
       "latency.")
    if "q" in wls:
        w_("- Row q compares latency: iocap's p50 and fio's total-latency p50 (`lat`, submission "
           "to completion, from `--lat_percentiles=1`); the target is agreement either way.")
    w_("")
    w_("### Targets")
    w_("")
    w_("Median of the per-round ratios iocap/fio [interquartile range]:")
    w_("")
    w_("| Row | Target (iocap/fio) | Measured | CPU µs/IO | CPU, whole process both | Result |")
    w_("|---|---|---:|---:|---:|---|")
    met = 0
    for w in wls:
        text, q, c, ok = res.verdict(w)
        met += ok
        cw = quartiles(_whole_process_cpu_ratios(res, w))
        w_(f"| {w}. {WORKLOADS[w][0]} | {text} | {fmt_q(q, 3 if WORKLOADS[w][6][1] == 'band' else 2)} "
           f"| {fmt_q(c)} | {fmt_q(cw)} | {'**MET**' if ok else '**MISSED**'} |")
    w_("")
    w_(f"{met} of {len(wls)} rows met.")
    w_("")
    # the peers' lines
    if "a" in wls or "d" in wls:
        if info.get("t_io_uring"):
            parts = []
            for w in ("a", "d"):
                if w in wls and "t/io_uring" in res.tools(w):
                    q = quartiles(res.ratios(w, "t/io_uring", "iops"))
                    s = f"{w}. IOPS {fmt_q(q)}, CPU {fmt_q(quartiles(res.ratios(w, 't/io_uring', 'cpu')))}"
                    if w == "a":
                        ok = q is not None and q[1] >= T_IO_URING_FLOOR
                        s += f" (target ≥ {T_IO_URING_FLOOR}×: **{'MET' if ok else 'MISSED'}**)"
                    parts.append(s)
            w_("- **t/io_uring** `-s1 -c1`, iocap/t/io_uring: " + "; ".join(parts) + ".")
        else:
            w_(f"- **t/io_uring**: not present: `{info['t_io_uring_path']}`.")
    if any(w != "q" for w in wls):
        if info.get("diskspd"):
            parts = [f"{w}. {LABEL[WORKLOADS[w][6][0]]} "
                     f"{fmt_q(quartiles(res.ratios(w, 'diskspd', WORKLOADS[w][6][0])))}, "
                     f"CPU {fmt_q(quartiles(res.ratios(w, 'diskspd', 'cpu')))}"
                     for w in wls if "diskspd" in res.tools(w)]
            w_("- **DiskSpd** (libaio), iocap/DiskSpd: " + "; ".join(parts) + ".")
        else:
            why = info.get("diskspd_why")
            w_(f"- **DiskSpd**: not present: `{info['diskspd_path']}`" + (f" ({why})" if why else "") + ".")
    w_("")
    w_("### Every row, every round")
    w_("")
    w_("Each cell: IOPS (MB/s for e, p50 µs for q), CPU µs/IO (the other way of counting, in "
       "brackets; see Method). *First* is the tool that ran first in that round.")
    for w in wls:
        metric = WORKLOADS[w][6][0]
        tools = res.tools(w)
        w_("")
        w_(f"#### {w}. {WORKLOADS[w][0]}")
        w_("")
        w_("```sh")
        for t in tools:
            w_(res.data["commands"][f"{w} {t}"])
        w_("```")
        w_("")
        peers = [t for t in tools if t != "iocap"]
        w_("| Round | First | " + " | ".join(tools) + " | "
           + " | ".join(f"iocap/{p}" for p in peers) + " | CPU iocap/fio |")
        w_("|---:|---|" + "---:|" * (len(tools) + len(peers) + 1))
        for r in range(1, rounds + 1):
            cells, first = [], ""
            for t in tools:
                x = res.by.get((w, t, r))
                if not x:
                    cells.append("–")
                    continue
                if x["position"] == 1:
                    first = t
                v = fmt_v(metric, x[metric]) + (" MB/s" if metric == "mbs" else "")
                if metric == "p50":
                    v += f" µs ({fmt_v('iops', x['iops'])} IOPS)"
                alt = f" ({x['alt_cpu']:.2f})" if x.get("alt_cpu") else ""
                cells.append(f"{v}, {x['cpu']:.2f}{alt} µs")
            rat = []
            for p in peers:
                a, b = res.by.get((w, "iocap", r)), res.by.get((w, p, r))
                rat.append(f"{a[metric] / b[metric]:.2f}×" if a and b and a.get(metric) and b.get(metric) else "–")
            a, b = res.by.get((w, "iocap", r)), res.by.get((w, "fio", r))
            rat.append(f"{a['cpu'] / b['cpu']:.2f}×" if a and b and b.get("cpu") else "–")
            w_(f"| {r} | {first} | " + " | ".join(cells) + " | " + " | ".join(rat) + " |")
        meds = [fmt_q(quartiles(res.ratios(w, p, metric))) for p in peers]
        w_(f"| **median [IQR]** | | " + " | ".join("" for _ in tools) + " | "
           + " | ".join(f"**{m}**" for m in meds) + f" | **{fmt_q(quartiles(res.ratios(w, 'fio', 'cpu')))}** |")
        notes = sorted({x["note"] for (ww, t, _), x in res.by.items() if ww == w and t == "iocap" and x["note"]})
        if notes:
            w_("")
            w_("iocap's submission mode in these runs: " + ", ".join(f"`{n}`" for n in notes) + ".")
    w_("")
    w_(f"Raw output of every run: `{info['run_dir']}`.")
    w_("")
    w_(END)
    section = "\n".join(L) + "\n"
    write_section(out_path, section)

    for w in wls:
        text, q, c, ok = res.verdict(w)
        print(f"  {w}. {WORKLOADS[w][0]:<44} {LABEL[WORKLOADS[w][6][0]]} {fmt_q(q)}, "
              f"CPU {fmt_q(c)}  {'MET' if ok else 'MISSED'}  ({text})")


def _whole_process_cpu_ratios(res, w):
    out = []
    for r in range(1, res.rounds + 1):
        a, b = res.by.get((w, "iocap", r)), res.by.get((w, "fio", r))
        if a and b and a.get("alt_cpu") and b.get("cpu"):
            out.append(a["alt_cpu"] / b["cpu"])
    return out


def write_section(out_path, section):
    """Replaces this script's section of out_path, keeping everything else."""
    text = open(out_path).read() if os.path.exists(out_path) else ""
    lines = text.splitlines(keepends=True)
    b = text.find(BEGIN)
    e = text.find(END)
    if b < 0 and e >= 0:
        # the begin marker lost (another script's section swallowed it), the heading kept
        m = re.search("^" + re.escape(HEADING) + r"\s*$", text, re.M)
        b = m.start() if m and m.start() < e else -1
    if b >= 0 and e > b:
        new = text[:b] + section.rstrip("\n") + text[e + len(END):]
    elif lines and lines[0].rstrip() == OLD_TITLE:
        # the old, unmarked output of bench/vs-fio.sh: from the top of the file to the first
        # "## " heading that is not one of its own (the hand-written "## Notes", then the other
        # scripts' sections), outside code blocks
        cut, fence = len(lines), False
        for i, line in enumerate(lines[1:], 1):
            if line.startswith("```"):
                fence = not fence
            elif not fence and line.startswith("## ") and line.rstrip() not in OLD_HEADINGS:
                cut = i
                break
        rest = "".join(lines[cut:])
        new = "# Performance\n\n" + section + ("\n" + rest if rest else "")
    elif not text.strip():
        new = "# Performance\n\n" + section
    elif lines[0].startswith("# "):
        # after the title, before everything else
        rest = "".join(lines[1:]).lstrip("\n")
        new = lines[0].rstrip("\n") + "\n\n" + section + ("\n" + rest if rest else "")
    else:
        new = section + "\n" + text
    if not new.endswith("\n"):
        new += "\n"
    tmp = out_path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(new)
    os.replace(tmp, out_path)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "measure":
        measure(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit("usage: vs_fio.py measure RUN_DIR | report RUN_DIR OUT")


if __name__ == "__main__":
    main()
