#!/usr/bin/env python3
"""bench/pg-capture.py: PostgreSQL in the loop (issue 25, point 3). pgbench on a cluster of its
own, on an ext4 file system on a loop device of its own (so the device sees only PostgreSQL's
I/O), captured by `iocap capture`; the capture checked against PostgreSQL's own counters, and
the built-in `postgres` profile checked against the capture.

Two runs, each after a restart of the server and a drop of the OS cache (drop_caches), so that
reads reach the device: `pgbench -S` (read-only lookups by primary key) and the default
TPC-B-like mix. For each, over the same seconds (the capture is started before the counters are
read and stopped by Ctrl-C after they are read again):

- data blocks read: pg_stat_database.blks_read (all databases) against the captured reads;
- WAL syncs: pg_stat_wal.wal_sync (wal_sync_method = fdatasync) against the captured flushes;
- WAL bytes: pg_current_wal_lsn()'s advance against the bytes written to the sectors of
  pg_wal's files (their extents read with filefrag every second, so segments recycled or
  removed by a checkpoint are still known);
- the shape the profile claims: request sizes, queue depths (time-weighted, per class), read
  share, WAL write sizes and flush rate, read-ahead, and the checkpoint's write bursts.

Usage: python3 bench/pg-capture.py DIR     (as root; DIR holds the loop device's backing file)
A third run, TPC-B again with shared_buffers CKPT_SB (big enough for the tables), shows the
checkpoints' writes alone (with small shared_buffers the background writer writes too).

Knobs: DURATION (60 s per run), SCALE (100, ~1.5 GB), SB (shared_buffers, 128MB), CKPT_SB (2GB),
CLIENTS (8),
PGBIN (/usr/lib/postgresql/15/bin), IOCAP (target/release/iocap), OUT (docs/PERFORMANCE.md),
PROFILES_OUT (docs/profiles-and-suites.md), KEEP=1 (keep the file system and the traces),
NOTE (a sentence added to the set-up line).
Writes its sections between <!-- pg-capture:begin --> and <!-- pg-capture:end --> of both files.
"""

import bisect
import csv
import datetime
import json
import os
import platform
import pwd
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from perfdoc import write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- pg-capture:begin -->", "<!-- pg-capture:end -->"
DURATION = int(os.environ.get("DURATION", "60"))
SCALE = int(os.environ.get("SCALE", "100"))
SB = os.environ.get("SB", "128MB")
CKPT_SB = os.environ.get("CKPT_SB", "2GB")
CLIENTS = int(os.environ.get("CLIENTS", "8"))
PGBIN = os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin")
IOCAP = os.environ.get("IOCAP", os.path.join(REPO, "target/release/iocap"))
PROFILES_OUT = os.environ.get("PROFILES_OUT", os.path.join(REPO, "docs/profiles-and-suites.md"))
PORT = "54333"
PAGE = 8192
EXTENT = re.compile(r"^\s*\d+:\s*\d+\.\.\s*\d+:\s*(\d+)\.\.\s*(\d+):")


def sh(argv, **kw):
    out = subprocess.run(argv, capture_output=True, text=True, **kw)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{out.stderr[-2000:]}")
    return out.stdout


class LoopFs:
    """An ext4 file system on a loop device over a new file in `parent`; undone by close()."""

    def __init__(self, parent, size):
        self.dir = tempfile.mkdtemp(prefix="iocap-pgcapture-", dir=parent)
        os.chmod(self.dir, 0o755)
        self.file = os.path.join(self.dir, "disk")
        with open(self.file, "wb") as f:
            os.posix_fallocate(f.fileno(), 0, size)
        self.dev = sh(["losetup", "--find", "--show", "--direct-io=on", self.file]).strip()
        self.mnt = os.path.join(self.dir, "mnt")
        os.mkdir(self.mnt)
        sh(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", self.dev])
        sh(["mount", self.dev, self.mnt])

    def close(self):
        subprocess.run(["umount", self.mnt])
        subprocess.run(["losetup", "-d", self.dev])
        if os.environ.get("KEEP") != "1":
            shutil.rmtree(self.dir, ignore_errors=True)


class Cluster:
    """A PostgreSQL cluster in `root` (made and given to `postgres`), Unix socket only."""

    def __init__(self, root):
        self.root = root
        os.mkdir(root)
        pw = pwd.getpwnam("postgres")
        self.ids = (pw.pw_uid, pw.pw_gid)
        os.chown(root, *self.ids)
        self.data = os.path.join(root, "data")
        self.running = False
        self.pg(["initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync"])
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"listen_addresses = ''\nunix_socket_directories = '{root}'\nport = {PORT}\n"
                    f"shared_buffers = {SB}\nwal_sync_method = fdatasync\nautovacuum = off\n"
                    # pgbench -i's COPY skips the WAL; checkpoints every 30 s, so that a run
                    # shows their bursts
                    "wal_level = minimal\nmax_wal_senders = 0\ncheckpoint_timeout = 30s\n"
                    "max_wal_size = 4GB\ntrack_io_timing = on\n")

    def pg(self, argv, **kw):
        def drop():
            os.setgid(self.ids[1])
            os.setuid(self.ids[0])
        return sh([os.path.join(PGBIN, argv[0])] + argv[1:], cwd=self.root, preexec_fn=drop,
                  env=dict(os.environ, PGHOST=self.root, PGPORT=PORT, PGUSER="postgres",
                           PGDATABASE="postgres"), **kw)

    def sql(self, query):
        out = self.pg(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", query])
        return out.strip().split("|")

    def start(self, sb=SB):
        self.pg(["pg_ctl", "-D", self.data, "-l", os.path.join(self.root, "log"), "-w",
                 "-o", f"-c shared_buffers={sb}", "start"])
        self.running = True

    def stop(self):
        if self.running:
            self.pg(["pg_ctl", "-D", self.data, "-w", "-m", "fast", "stop"])
            self.running = False


COUNTERS = ("SELECT (SELECT sum(blks_read) FROM pg_stat_database), "
            "(SELECT sum(blks_hit) FROM pg_stat_database), wal_sync, wal_write, wal_bytes, "
            "pg_current_wal_lsn() - '0/0'::pg_lsn, "
            "(SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter), "
            "(SELECT buffers_checkpoint + buffers_clean + buffers_backend FROM pg_stat_bgwriter) "
            "FROM pg_stat_wal")
NAMES = ("blks_read", "blks_hit", "wal_sync", "wal_write", "wal_bytes", "lsn", "checkpoints",
         "buffers_written")


def counters(pg):
    return dict(zip(NAMES, (float(x) for x in pg.sql(COUNTERS))))


def wal_extents(pg, into, inodes):
    """Adds the sector ranges [start, end) of pg_wal's segment files to the set `into`, and
    their inode numbers to `inodes` (a recycled segment is renamed and keeps its inode; a new
    one is a new inode, first filled with 16 MiB of zeros)."""
    wal = os.path.join(pg.data, "pg_wal")
    for name in os.listdir(wal):
        if len(name) != 24:
            continue
        try:
            inodes.add(os.stat(os.path.join(wal, name)).st_ino)
            out = sh(["filefrag", "-v", "-b512", os.path.join(wal, name)])
        except (OSError, RuntimeError):
            continue  # removed between listdir and filefrag
        for line in out.splitlines():
            m = EXTENT.match(line)
            if m:
                into.add((int(m.group(1)), int(m.group(2)) + 1))


def cached_bytes(data):
    """Bytes of the files under `data`, but the WAL's, in the page cache (util-linux's
    fincore)."""
    files = [os.path.join(d, f) for d, _, fs in os.walk(data) for f in fs
             if "pg_wal" not in os.path.relpath(d, data)]
    total = 0
    for i in range(0, len(files), 200):
        out = subprocess.run(["fincore", "--bytes", "--noheadings", "--raw", "--output", "RES"]
                             + files[i:i + 200], capture_output=True, text=True).stdout
        total += sum(int(x) for x in out.split())
    return total


def drop_os_cache():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def run_mode(fs, pg, name, args, work, sb=SB):
    pg.stop()
    drop_os_cache()
    pg.start(sb)
    trace = os.path.join(work, f"{name}.iotrace")
    cap = subprocess.Popen([IOCAP, "capture", fs.mnt, "-o", trace, "--format", "json",
                            "--no-save"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    time.sleep(2.0)  # attached before the counters are read
    extents, inodes0 = set(), set()
    wal_extents(pg, extents, inodes0)
    inodes = set(inodes0)
    cached0 = cached_bytes(pg.data)
    c0 = counters(pg)
    bench = subprocess.Popen(
        [os.path.join(PGBIN, "pgbench"), "-n", "-c", str(CLIENTS), "-j", str(CLIENTS),
         "-T", str(DURATION)] + args, cwd=pg.root, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=lambda: (os.setgid(pg.ids[1]),
                                                               os.setuid(pg.ids[0])),
        env=dict(os.environ, PGHOST=pg.root, PGPORT=PORT, PGUSER="postgres",
                 PGDATABASE="postgres"))
    while bench.poll() is None:
        wal_extents(pg, extents, inodes)
        time.sleep(1.0)
    out, err = bench.communicate()
    if bench.returncode != 0:
        sys.exit(f"pgbench {name} failed:\n{err}")
    time.sleep(1.5)  # the walwriter and the backends report their statistics
    c1 = counters(pg)
    cache_gain = cached_bytes(pg.data) - cached0
    wal_extents(pg, extents, inodes)
    cap.send_signal(2)
    cout, cerr = cap.communicate()
    if cap.returncode != 0:
        sys.exit(f"iocap capture failed:\n{cerr}")
    tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
    csv_path = os.path.join(work, f"{name}.csv")
    sh([IOCAP, "convert", trace, "--to", "csv", "-o", csv_path])
    delta = {k: c1[k] - c0[k] for k in NAMES}
    return {"name": name, "tps": tps, "pg": delta, "workload": json.loads(cout)["workload"],
            "new_segments": len(inodes - inodes0), "cache_gain": cache_gain,
            **analyse(csv_path, sorted(extents))}


def depth(intervals):
    """Time-weighted queue depth of (issue, complete) intervals while at least one is in
    flight: (mean, 99th-percentile depth, max); and the mean depth seen at issue."""
    ev = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    time_at, d, last, seen = {}, 0, None, []
    for t, step in ev:
        if last is not None and d > 0:
            time_at[d] = time_at.get(d, 0) + t - last
        d += step
        last = t
        if step == 1:
            seen.append(d)
    busy = sum(time_at.values())
    if not busy:
        return 0.0, 0, 0, 0.0
    mean = sum(k * v for k, v in time_at.items()) / busy
    acc, p99 = 0, 0
    for k in sorted(time_at):
        acc += time_at[k]
        if acc >= 0.99 * busy:
            p99 = k
            break
    return mean, p99, max(time_at), statistics.mean(seen)


def sizes(reqs, top=4):
    """The commonest sizes as 'SIZE PCT' text."""
    n = {}
    for r in reqs:
        n[r["bytes"]] = n.get(r["bytes"], 0) + 1
    total = len(reqs) or 1
    return ", ".join(f"{human(b)} {100 * c / total:.0f} %"
                     for b, c in sorted(n.items(), key=lambda x: -x[1])[:top])


def human(b):
    return f"{b // 1024} KiB" if b % 1024 == 0 else f"{b} B"


def bursts(writes, seconds):
    """Per-second data writes; the seconds above twice the median of the busy seconds are 'on':
    (on runs, median on length, median off length, share of the writes in 'on' seconds,
    median writes per second, the most in one second)."""
    per = [0] * (seconds + 1)
    for r in writes:
        per[min(seconds, r["issue_ns"] // 10**9)] += 1
    busy = [x for x in per if x] or [0]
    cut = 2 * statistics.median(busy)
    runs, cur, on = [], None, [x > cut for x in per]
    for flag in on:
        if cur and cur[0] == flag:
            cur[1] += 1
        else:
            cur = [flag, 1]
            runs.append(cur)
    ons = [n for f, n in runs if f]
    offs = [n for f, n in runs[1:-1] if not f]
    share = sum(x for x, f in zip(per, on) if f) / (sum(per) or 1)
    return (len(ons), statistics.median(ons) if ons else 0,
            statistics.median(offs) if offs else 0, share, round(statistics.median(per)), max(per))


def analyse(csv_path, extents):
    starts = [a for a, _ in extents]

    def in_wal(sector):
        i = bisect.bisect_right(starts, sector) - 1
        return i >= 0 and sector < extents[i][1]

    reads, data_w, wal_w, other_w, flushes = [], [], [], [], 0
    comms = {}
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            r = {"issue_ns": int(row["issue_ns"]), "bytes": int(row["bytes"]),
                 "complete_ns": int(row["complete_ns"] or row["issue_ns"]),
                 "flags": row["flags"], "sector": int(row["sector"])}
            comms[row["comm"]] = comms.get(row["comm"], 0) + 1
            op = row["op"]
            if op == "read":
                reads.append(r)
            elif op == "flush":
                flushes += 1
            elif op == "write":
                if in_wal(r["sector"]):
                    wal_w.append(r)
                elif row["comm"].startswith("jbd2"):
                    other_w.append(r)
                else:
                    data_w.append(r)
    span = lambda rs: [(r["issue_ns"], r["complete_ns"]) for r in rs]
    seconds = max([r["issue_ns"] for r in reads + data_w + wal_w] or [0]) // 10**9
    big = [r for r in reads if r["bytes"] > PAGE]
    return {
        "reads": len(reads), "read_bytes": sum(r["bytes"] for r in reads),
        "read_sizes": sizes(reads), "read_qd": depth(span(reads)),
        "read_8k_pct": 100 * sum(r["bytes"] == PAGE for r in reads) / (len(reads) or 1),
        "readahead": len(big), "readahead_bytes": sum(r["bytes"] for r in big),
        "readahead_sizes": sizes(big),
        "data_writes": len(data_w), "data_write_bytes": sum(r["bytes"] for r in data_w),
        "data_write_sizes": sizes(data_w), "data_write_qd": depth(span(data_w)),
        "data_qd": depth(span(reads + data_w)),
        "bursts": bursts(data_w, seconds),
        "wal_writes": len(wal_w), "wal_write_bytes": sum(r["bytes"] for r in wal_w),
        "wal_sizes": sizes(wal_w), "wal_qd": depth(span(wal_w)),
        "journal_writes": len(other_w), "flushes": flushes,
        "comms": ", ".join(f"{k} {v:,}"
                           for k, v in sorted(comms.items(), key=lambda x: -x[1])[:3]),
    }


def report(runs, setup):
    ro, rw, ck = runs
    lines = [BEGIN, "## PostgreSQL in the loop: pgbench captured (issue 25)", "",
             f"`bench/pg-capture.py` on {setup}. Each run starts after a server restart and "
             "drop_caches; the counters are PostgreSQL's own, read around pgbench while "
             "the capture runs.", "",
             f"| | pgbench -S | TPC-B-like | TPC-B, shared_buffers {CKPT_SB} |",
             "|---|---:|---:|---:|"]

    def row(label, f):
        lines.append(f"| {label} | {f(ro)} | {f(rw)} | {f(ck)} |")

    row("transactions/s", lambda r: f"{r['tps']:,.0f}")
    row("blks_read (8 KiB pages into shared_buffers)", lambda r: f"{r['pg']['blks_read']:,.0f}")
    row("captured reads (requests)", lambda r: f"{r['reads']:,}")
    row("captured read bytes / (blks_read × 8 KiB)",
        lambda r: f"{r['read_bytes'] / max(1, r['pg']['blks_read'] * PAGE):.3f}")
    row("captured read bytes / the page cache's gain",
        lambda r: f"{r['read_bytes'] / max(1, r['cache_gain']):.3f}")
    row("reads of exactly 8 KiB", lambda r: f"{r['read_8k_pct']:.1f} %")
    row("reads over 8 KiB (read-ahead): count, bytes share",
        lambda r: f"{r['readahead']:,}, "
                  f"{100 * r['readahead_bytes'] / max(1, r['read_bytes']):.1f} %")
    row("pg_stat_wal.wal_sync", lambda r: f"{r['pg']['wal_sync']:,.0f}")
    row("captured flushes", lambda r: f"{r['flushes']:,}")
    row("WAL bytes (LSN advance)", lambda r: f"{r['pg']['lsn']:,.0f}")
    row("new WAL segments (16 MiB of zeros each)", lambda r: f"{r['new_segments']}")
    row("bytes written to pg_wal's sectors", lambda r: f"{r['wal_write_bytes']:,}")
    row("… less the zeros, per byte of LSN advance",
        lambda r: f"{wal_ratio(r):.2f}" if r["pg"]["lsn"] > 2**20 else "–")
    row("… the rest, per WAL write call",
        lambda r: f"{wal_extra(r) / 1024:.1f} KiB" if r["pg"]["wal_write"] > 100 else "–")
    row("pg_stat_wal.wal_write / captured WAL writes",
        lambda r: f"{r['pg']['wal_write']:,.0f} / {r['wal_writes']:,}")
    row("data-file writes (requests, MiB)",
        lambda r: f"{r['data_writes']:,}, {r['data_write_bytes'] / 2**20:.0f}")
    row("checkpoints during the run", lambda r: f"{r['pg']['checkpoints']:.0f}")
    row("requests by process name, the top 3", lambda r: r["comms"])
    lines += ["", "Read against blks_read: PostgreSQL counts a page as read when it is not in "
              "shared_buffers, whether the kernel finds it in its page cache or the device "
              "reads it. Right after drop_caches most misses reach the device; as the run goes "
              "on the page cache holds more of the tables and the ratio falls below 1. Reads of "
              "more than 8 KiB are the kernel's read-ahead (or merged neighbours), which make "
              "the bytes ratio rise. What the device read is what the page cache gained (the "
              "database's files but the WAL's, measured with fincore before and after): the "
              "cache was empty of them, and nothing is evicted on this machine; TPC-B also adds "
              "pages it writes without reading them (the history table), so its ratio is under "
              "1. The kernel marks every read that misses its page cache as "
              "read-ahead (`A`), so the size is the measure of read-ahead here.", "",
              "WAL: each fdatasync is one flush at the device (ext4 sends a cache flush, or "
              "commits its journal with a preflush); the journal's own commits and the fsync of "
              "each new segment add a few. The WAL's files take more bytes than the LSN "
              "advanced by: each write call rewrites the partial 8 KiB page it starts in, and "
              "a new segment is first filled with zeros (wal_init_zero). Every PostgreSQL "
              "process is named `postgres` (the process title is not the kernel's name), so "
              "the WAL's writes are told from the data files' by the sectors of pg_wal's files "
              "(filefrag, every second), not by process.", END]
    write_section(BEGIN, END, lines)
    return profile_table(ro, rw, ck, setup)


def wal_ratio(r):
    return (r["wal_write_bytes"] - r["new_segments"] * 16 * 2**20) / r["pg"]["lsn"]


def wal_extra(r):
    zeros = r["new_segments"] * 16 * 2**20
    return (r["wal_write_bytes"] - zeros - r["pg"]["lsn"]) / r["pg"]["wal_write"]


def profile_table(ro, rw, ck, setup):
    qd = lambda d: f"mean {d[0]:.1f}, p99 {d[1]}, max {d[2]}"
    b, rb = ck["bursts"], rw["bursts"]
    wal_per_flush = rw["wal_writes"] / max(1, rw["flushes"])
    writes_pct = 100 * rw["data_writes"] / max(1, rw["data_writes"] + rw["reads"])
    lines = [BEGIN, "### The `postgres` profile against a captured pgbench", "",
             f"`bench/pg-capture.py` on {setup}.", "",
             "| profile workload | the profile | captured |", "|---|---|---|",
             f"| data-random-read | 8 KiB random reads, qd 8 (32 before this capture) | "
             "pgbench -S: "
             f"{ro['read_sizes']}; read queue depth {qd(ro['read_qd'])} ({CLIENTS} clients) |",
             "| data-checkpoint-write | 8 KiB random writes, qd 32, 27 s on / 3 s off (10 s on "
             "/ 20 s off before this capture) | TPC-B with the tables in shared_buffers "
             f"({CKPT_SB}), so that the data writes are the checkpoints': "
             f"{ck['data_write_sizes']}; queue depth "
             f"{qd(ck['data_write_qd'])}; checkpoints begun {ck['pg']['checkpoints']:.0f}; "
             "per second "
             f"median {b[4]}, most {b[5]}; {b[0]} bursts (seconds over twice the median), "
             f"median {b[1]} s on, {b[2]} s off, {100 * b[3]:.0f} % of the writes in them. "
             f"With shared_buffers {SB} (TPC-B): the kernel's write-back of pages evicted into "
             f"its cache, {rb[0]} bursts, median {rb[1]} s on, {rb[2]} s off, "
             f"{100 * rb[3]:.0f} % of the writes in them, most {rb[5]:,} in a second |",
             f"| oltp-mix | 70/30 read/write, qd 16 | TPC-B data requests: {writes_pct:.0f} % "
             f"writes; queue depth {qd(rw['data_qd'])} |",
             f"| log-write | 8 KiB, qd 1, every write durable | WAL writes {rw['wal_sizes']}; "
             f"queue depth {qd(rw['wal_qd'])}; {rw['flushes'] / DURATION:,.0f} flushes/s, "
             f"{wal_per_flush:.2f} WAL writes per flush |",
             f"| read-ahead-64k … 1m | 64 KiB to 1 MiB sequential reads | pgbench -S: "
             f"{ro['readahead']:,} reads over 8 KiB ({ro['readahead_sizes'] or 'none'}); "
             f"TPC-B: {rw['readahead']:,} ({rw['readahead_sizes'] or 'none'}); lookups do not "
             "read ahead, only scans do (docs/cost.md, the scan row) |",
             "",
             "Corrected: `data-checkpoint-write`'s bursts, 10 s on and 20 s off before. A "
             "checkpoint spreads its writes over checkpoint_completion_target (0.9 since "
             "PostgreSQL 14) of its interval and asks for write-back every 256 kB "
             "(checkpoint_flush_after), so there is no writeback storm at its fsync: the "
             "writes are on for 90 % of the time (27 s on, 3 s off for a 30 s interval). The "
             "bursts that remain come with a small shared_buffers: pages the backends and the "
             "background writer evict go to the kernel's cache, and its flusher writes them "
             "back in bulk when they expire (dirty_expire_centisecs, 30 s): not a checkpoint's "
             "pattern, and one a well-sized shared_buffers avoids. "
             "`data-random-read`'s queue depth, 32 before. A backend reads one page "
             "at a time and waits for it, so the depth is about the number of backends missing "
             "the page cache at once. The deeper moments are the kernel's read-ahead, issued in "
             "the backend's name without a wait: a window over pages partly in the cache goes "
             "out as many small requests at once (one backend had 87 in flight, in a 4-client "
             "run). The "
             "profile's 8 stands for 8 active backends. Confirmed: 8 KiB reads; data writes "
             "mostly 8 KiB (a "
             "checkpoint sorts its writes, so neighbours merge into 16 to 32 KiB requests); "
             "the checkpoint writes' qd 32 (the checkpointer asks for write-back every 256 kB, "
             "checkpoint_flush_after, 32 pages; the background writer every 512 kB); the WAL's "
             "queue depth 1 with a flush per write. Not settled by pgbench: `oltp-mix`'s 30 % "
             "writes (TPC-B's share of the data requests moves with shared_buffers and the "
             "kernel's write-back: 20 to 57 % in our runs); the read-ahead workloads "
             "(lookups read ahead only the kernel's 16-40 KiB folios; scans are measured in "
             "docs/cost.md); the WAL's 8 KiB, which is one "
             "client's size (group commit makes 8 to 40 KiB writes with several).",
             END]
    out = os.environ.get("OUT")
    os.environ["OUT"] = PROFILES_OUT
    try:
        write_section(BEGIN, END, lines)
    finally:
        if out is None:
            del os.environ["OUT"]
        else:
            os.environ["OUT"] = out
    return lines


def main():
    if len(sys.argv) != 2 or os.geteuid() != 0:
        sys.exit(__doc__)
    # the tables take about 15 MiB per scale unit; room for them, their WAL and the indexes
    size = max(4 << 30, SCALE * 48 * 2**20)
    fs = LoopFs(sys.argv[1], size)
    pg = None
    try:
        pg = Cluster(os.path.join(fs.mnt, "pg"))
        pg.start()
        t0 = time.time()
        pg.pg(["pgbench", "-i", "-q", "-s", str(SCALE)])
        print(f"pgbench -i -s {SCALE}: {time.time() - t0:.0f} s", file=sys.stderr)
        pg.sql("CHECKPOINT")
        work = tempfile.mkdtemp(prefix="iocap-pgcapture-", dir=sys.argv[1])
        runs = [run_mode(fs, pg, "select-only", ["-S"], work),
                run_mode(fs, pg, "tpcb", [], work),
                run_mode(fs, pg, "tpcb-in-memory", [], work, CKPT_SB)]
        for r in runs:
            print(json.dumps({k: v for k, v in r.items() if k != "workload"}, default=str),
                  file=sys.stderr)
        setup = (f"{datetime.date.today()}, {platform.node()}: PostgreSQL "
                 f"{pg.sql('SHOW server_version')[0]}, scale {SCALE}, shared_buffers {SB}, "
                 f"{CLIENTS} clients, {DURATION} s per run, ext4 on a loop device (direct I/O "
                 "to its backing file)" + (f". {os.environ['NOTE']}" if os.environ.get("NOTE")
                                           else ""))
        for line in report(runs, setup):
            print(line)
        if os.environ.get("KEEP") != "1":
            shutil.rmtree(work, ignore_errors=True)
    finally:
        if pg:
            try:
                pg.stop()
            except RuntimeError as e:
                print(e, file=sys.stderr)
        fs.close()


if __name__ == "__main__":
    main()
