#!/usr/bin/env python3
"""bench/innodb-capture.py: InnoDB in the loop, setting by setting (issue 34, item 3). A MariaDB
server of its own (bench/mariadb_rig.py: mariadb-install-db, mariadbd with a socket only, never
a system service) with its data directory on an ext4 file system on a loop device of its own,
so that the device sees only the server's I/O and the file system's; sysbench oltp_read_only
and oltp_read_write captured by `iocap capture MNT --files DATADIR`, under one setting after
another, each changing one factor from a base:

- base: innodb_buffer_pool_size 16M (a quarter of the tables), flush_log_at_trx_commit 1,
  flush_method O_DIRECT (the CI test's settings, devices::innodb);
- innodb_buffer_pool_size LARGE_BP (256M: larger than the tables);
- innodb_flush_log_at_trx_commit 2;
- innodb_flush_method fsync (the data files through the page cache);
- and flush_log_at_trx_commit 2 with the large pool, where no page writes hide the commits'
  own flushing.

Each run starts after a server restart and drop_caches (a cold buffer pool and page cache).
For each: transactions per second; the captured streams (characterise's workload.streams[]:
data, log, fs, writeback); and, over the same seconds, the capture held against the device's
counters (/sys/block/NAME/stat) and InnoDB's (SHOW GLOBAL STATUS before and after), where each
request fell read from the files' extents (filefrag), as the CI test does. The redo log's write
calls are counted as the device saw them: one request, or several back to back (each beginning
where the last ended and issued before it completed), since ext4 splits a log write where it
crosses from written into fallocated blocks.

Usage: python3 bench/innodb-capture.py DIR   (as root; DIR holds the loop device's backing file)
Knobs: DURATION (30 s of oltp_read_write per setting), RO_DURATION (15 s of oltp_read_only; 0
leaves it out), TABLES (2), ROWS (100000 a table: ~60 MB with the indexes), THREADS (4),
BASE_BP (16M), LARGE_BP (256M), IOCAP (target/release/iocap), OUT (docs/PERFORMANCE.md),
KEEP=1 (keep the file system and the traces), NOTE (a sentence for the set-up line),
REPORT (a run's raw JSON from target/bench/results: writes the section from it, runs nothing).
Before the runs the redo log's file is rewritten in place (the server stopped), so that ext4
holds none of its blocks as unwritten: the log of a server that has run a while.
Writes its section between <!-- innodb-capture:begin --> and <!-- innodb-capture:end -->.
About 5 minutes at the defaults on 2 cores.
"""

import csv
import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from mariadb_rig import (LoopFs, Server, check_start, drop_os_cache, positive_int, sh, size_arg,
                         tools)
from perfdoc import write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- innodb-capture:begin -->", "<!-- innodb-capture:end -->"
PAGE = 16384
# the doublewrite buffer: pages 64 to 191 of the system tablespace; the redo log's head (file
# header and checkpoint blocks), 12 KiB
DBLWR = (64 * PAGE, 192 * PAGE)
LOG_HEADER = 12 * 1024
EXTENT = re.compile(r"^\s*\d+:\s*(\d+)\.\.\s*(\d+):\s*(\d+)\.\.\s*\d+:")


def knobs():
    k = {"duration": positive_int("DURATION", 30), "tables": positive_int("TABLES", 2),
         "rows": positive_int("ROWS", 100000), "threads": positive_int("THREADS", 4),
         "base_bp": size_arg("BASE_BP", "16M"), "large_bp": size_arg("LARGE_BP", "256M"),
         "iocap": os.environ.get("IOCAP", os.path.join(REPO, "target/release/iocap"))}
    ro = os.environ.get("RO_DURATION", "15")
    k["ro_duration"] = 0 if ro == "0" else positive_int("RO_DURATION", 15)
    return k


def settings(k):
    """(name, options) for each run, one factor changed from the base."""
    return [
        ("base", []),
        (f"buffer pool {k['large_bp']}", [f"--innodb-buffer-pool-size={k['large_bp']}"]),
        ("flush_log_at_trx_commit 2", ["--innodb-flush-log-at-trx-commit=2"]),
        ("flush_method fsync", ["--innodb-flush-method=fsync"]),
        # flush_log_at_trx_commit 2 again where no page is written: the commits' own flushing
        (f"buffer pool {k['large_bp']}, flush_log_at_trx_commit 2",
         [f"--innodb-buffer-pool-size={k['large_bp']}", "--innodb-flush-log-at-trx-commit=2"]),
    ]


def base_options(k):
    return [f"--innodb-buffer-pool-size={k['base_bp']}",
            "--innodb-buffer-pool-load-at-startup=OFF",
            "--innodb-buffer-pool-dump-at-shutdown=OFF",
            "--innodb-flush-method=O_DIRECT", "--innodb-flush-log-at-trx-commit=1",
            "--innodb-doublewrite=ON", "--innodb-io-capacity=200",
            "--innodb-log-file-size=96M"]


class Calls:
    """Write calls as the device saw them: a request that begins where the last one ended and
    is issued before that one completed continues the same call."""

    def __init__(self):
        self.count, self.last = 0, None

    def add(self, sector, nbytes, issue, complete):
        if not (self.last and self.last[0] == sector and issue < self.last[1]):
            self.count += 1
        self.last = (sector + nbytes // 512, complete)


def places(datadir):
    """[(start, end, place)] sectors of the device, sorted; place is 'ts' (a tablespace),
    'dblwr', 'log', 'loghead' or 'other'."""
    out = []
    for d, _, files in os.walk(datadir):
        for name in files:
            path = os.path.join(d, name)
            ts = name.endswith(".ibd") or name.startswith(("ibdata", "ibtmp", "undo"))
            if name == "ib_logfile0":
                cuts = [(0, "loghead"), (LOG_HEADER // 512, "log")]
            elif name == "ibdata1":
                cuts = [(0, "ts"), (DBLWR[0] // 512, "dblwr"), (DBLWR[1] // 512, "ts")]
            else:
                cuts = [(0, "ts" if ts else "other")]
            try:
                text = sh(["filefrag", "-v", "-b512", path])
            except RuntimeError:
                continue
            for line in text.splitlines():
                m = EXTENT.match(line)
                if not m:
                    continue
                l0, l1, p0 = int(m[1]), int(m[2]) + 1, int(m[3])
                for i, (frm, place) in enumerate(cuts):
                    to = cuts[i + 1][0] if i + 1 < len(cuts) else 1 << 62
                    a, b = max(l0, frm), min(l1, to)
                    if a < b:
                        out.append((p0 + a - l0, p0 + b - l0, place))
    out.sort()
    return out


def counts(csv_path, pl):
    import bisect
    starts = [p[0] for p in pl]

    def place(sector):
        i = bisect.bisect_right(starts, sector) - 1
        return pl[i][2] if i >= 0 and sector < pl[i][1] else None

    c = {k: 0 for k in ("reads", "read_bytes", "writes", "write_bytes", "flushes", "inno_reads",
                        "inno_read_bytes", "page_writes", "page_write_bytes", "dblwr_writes",
                        "dblwr_bytes", "log_writes", "log_bytes", "checkpoint_writes",
                        "journal_writes")}
    log_calls, dblwr_calls = Calls(), Calls()
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            op, sector, n = row["op"], int(row["sector"]), int(row["bytes"])
            p = place(sector)
            if op == "read":
                c["reads"] += 1
                c["read_bytes"] += n
                if p in ("ts", "dblwr"):
                    c["inno_reads"] += 1
                    c["inno_read_bytes"] += n
            elif op == "write":
                c["writes"] += 1
                c["write_bytes"] += n
                issue = int(row["issue_ns"])
                done = int(row["complete_ns"] or issue)
                if p == "ts":
                    c["page_writes"] += 1
                    c["page_write_bytes"] += n
                elif p == "dblwr":
                    dblwr_calls.add(sector, n, issue, done)
                    c["dblwr_writes"] += 1
                    c["dblwr_bytes"] += n
                elif p == "log":
                    log_calls.add(sector, n, issue, done)
                    c["log_writes"] += 1
                    c["log_bytes"] += n
                elif p == "loghead":
                    c["checkpoint_writes"] += 1
                elif row["comm"].startswith("jbd2"):
                    c["journal_writes"] += 1
            elif op == "flush":
                c["flushes"] += 1
    c["log_calls"], c["dblwr_calls"] = log_calls.count, dblwr_calls.count
    return c


def run(k, fs, db, work, setting, opts, test, seconds):
    db.stop()
    drop_os_cache()
    db.start(opts)
    tag = re.sub(r"[^a-z0-9]+", "-", f"{setting}-{test}".lower())
    trace = os.path.join(work, f"{tag}.iotrace")
    cap = subprocess.Popen([k["iocap"], "capture", fs.mnt, "--files", db.datadir, "-o", trace,
                            "--no-save", "--format", "json"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not os.path.exists(trace):  # the trace file appears once the capture is attached
        if cap.poll() is not None or time.time() > deadline:
            cap.kill()
            raise RuntimeError(f"iocap capture did not start:\n{cap.communicate()[1]}")
        time.sleep(0.05)
    variables = dict(db.query(
        "SELECT variable_name, variable_value FROM information_schema.global_variables WHERE "
        "variable_name IN ('INNODB_LOG_FILE_BUFFERING', 'INNODB_FLUSH_METHOD', "
        "'INNODB_FLUSH_LOG_AT_TRX_COMMIT', 'INNODB_BUFFER_POOL_SIZE', "
        "'INNODB_DATA_FILE_BUFFERING')"))
    d0, s0 = fs.diskstats(), db.status()
    out = db.sysbench(test, [f"--tables={k['tables']}", f"--table-size={k['rows']}",
                             f"--threads={k['threads']}", f"--time={seconds}"], "run")
    s1, d1 = db.status(), fs.diskstats()
    cap.send_signal(signal.SIGINT)
    cout, cerr = cap.communicate()
    if cap.returncode != 0:
        raise RuntimeError(f"iocap capture failed:\n{cerr}")
    workload = json.loads(cout)["workload"]
    csv_path = trace[:-len(".iotrace")] + ".csv"
    sh([k["iocap"], "convert", trace, "--to", "csv", "-o", csv_path])
    m = re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", out)
    zero = re.search(r"([\d,]+) zero-byte completions left out", cerr)
    return {"setting": setting, "test": test, "tps": float(m[1]) if m else 0.0,
            "seconds": seconds, "variables": variables,
            "inno": {key: s1[key] - s0.get(key, 0) for key in s1 if key.startswith("Innodb_")},
            "disk": [b - a for a, b in zip(d0, d1)],
            "lost": workload.get("lost_ring_full", 0) + workload.get("lost_other", 0),
            "zero_byte": int(zero[1].replace(",", "")) if zero else 0,
            "cap": counts(csv_path, places(db.datadir)),
            "streams": {s["role"]: s for s in workload.get("streams", [])}}


ROLES = ("data", "log", "fs", "writeback")


def human(b):
    return f"{b // 1024} KiB" if b and b % 1024 == 0 else f"{b} B"


def stream_rows(runs):
    rows = ["| setting | stream | reads | writes | flushes | IOPS (busy s) | commonest size | "
            "depth, mean | durable MB/s |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        first = True
        for role in ROLES:
            s = r["streams"].get(role)
            if not s:
                continue
            label = f"{r['setting']} ({r['tps']:,.0f} tps)" if first else ""
            first = False
            depth = s.get("depth_mean")
            rows.append(
                f"| {label} | {role} | {s['reads']:,} | {s['writes']:,} | {s['flushes']:,} | "
                f"{s['iops']:,.0f} ({s['busy_s']:.0f}) | {human(s['size_mode_bytes'])} | "
                f"{'–' if depth is None else f'{depth:.2f}'} | "
                f"{s['durable_bytes_per_s'] / 1e6:.2f} |")
    return rows


def ratio(a, b):
    return f"{a:,} / {b:,}" + (f" ({a / b:.3f})" if b else "")


CHECKS = [
    ("device reads: captured / diskstats", lambda r: (r["cap"]["reads"], r["disk"][0])),
    ("device bytes written: captured / diskstats",
     lambda r: (r["cap"]["write_bytes"], r["disk"][3] * 512)),
    ("device flushes: captured / diskstats", lambda r: (r["cap"]["flushes"], r["disk"][4])),
    ("tablespace reads: captured / Innodb_data_reads",
     lambda r: (r["cap"]["inno_reads"], r["inno"].get("Innodb_data_reads", 0))),
    ("tablespace bytes read: captured / Innodb_data_read",
     lambda r: (r["cap"]["inno_read_bytes"], r["inno"].get("Innodb_data_read", 0))),
    ("page writes: captured / (Innodb_data_writes − Innodb_dblwr_writes)",
     lambda r: (r["cap"]["page_writes"], r["inno"].get("Innodb_data_writes", 0)
                - r["inno"].get("Innodb_dblwr_writes", 0))),
    ("doublewrite calls: captured / Innodb_dblwr_writes",
     lambda r: (r["cap"]["dblwr_calls"], r["inno"].get("Innodb_dblwr_writes", 0))),
    ("doublewrite bytes: captured / Innodb_dblwr_pages_written × 16 KiB",
     lambda r: (r["cap"]["dblwr_bytes"], r["inno"].get("Innodb_dblwr_pages_written", 0) * PAGE)),
    ("log write calls: captured / Innodb_log_writes",
     lambda r: (r["cap"]["log_calls"], r["inno"].get("Innodb_log_writes", 0))),
    ("log requests: captured / Innodb_log_writes",
     lambda r: (r["cap"]["log_writes"], r["inno"].get("Innodb_log_writes", 0))),
    ("log bytes: captured / Innodb_os_log_written",
     lambda r: (r["cap"]["log_bytes"], r["inno"].get("Innodb_os_log_written", 0))),
    ("flushes: captured / Innodb_data_fsyncs",
     lambda r: (r["cap"]["flushes"], r["inno"].get("Innodb_data_fsyncs", 0))),
]


def check_rows(runs):
    rows = ["| figure | " + " | ".join(r["setting"] for r in runs) + " |",
            "|---|" + "---:|" * len(runs)]
    for name, f in CHECKS:
        rows.append(f"| {name} | " + " | ".join(ratio(*f(r)) for r in runs) + " |")
    rows.append("| requests the capture lost; zero-byte completions left out | "
                + " | ".join(f"{r['lost']:,}; {r['zero_byte']:,}" for r in runs) + " |")
    rows.append("| ext4 journal writes; redo checkpoint writes (ib_logfile0's head) | "
                + " | ".join(f"{r['cap']['journal_writes']:,}; {r['cap']['checkpoint_writes']:,}"
                             for r in runs) + " |")
    return rows


def s(r, role, key, default=0):
    return r["streams"].get(role, {}).get(key, default) or default


def findings(rw, ro):
    """A sentence per finding, each figure from this run. rw/ro: setting name -> run."""
    names = list(rw)
    base, big, trx2, fsync = (rw[n] for n in names[:4])
    big_trx2 = rw[names[4]] if len(names) > 4 else None
    out = []

    def per_s(r, key):
        return r["inno"].get(key, 0) / r["seconds"]

    def per_tx(r, key):
        return r["inno"].get(key, 0) / max(1.0, r["tps"] * r["seconds"])

    def pages(r):
        return r["inno"].get("Innodb_data_writes", 0) - r["inno"].get("Innodb_dblwr_writes", 0)

    out.append(
        f"- **Buffer pool {names[1].split()[-1]} against {int(base['variables'].get('INNODB_BUFFER_POOL_SIZE', 0)) >> 20}M.** "
        f"The tables fit, so a page once read stays: oltp_read_write's data reads fell from "
        f"{per_s(base, 'Innodb_data_reads'):,.0f} to {per_s(big, 'Innodb_data_reads'):,.0f} a "
        f"second (Innodb_data_reads; {per_tx(base, 'Innodb_data_reads'):.1f} against "
        f"{per_tx(big, 'Innodb_data_reads'):.2f} a transaction), and the page writes from "
        f"{pages(base) / base['seconds']:,.0f} a second ({base['inno'].get('Innodb_dblwr_writes', 0):,} "
        f"doublewrite batches) to {pages(big) / big['seconds']:,.0f}: with 16M the page "
        f"cleaner writes dirty pages out to make room; with the large pool the dirty pages "
        f"stayed in it, and the device's writes were mostly the redo log's and ext4's "
        f"journal. Transactions: "
        f"{base['tps']:,.0f} against {big['tps']:,.0f} a second.")
    out.append(
        f"- **flush_log_at_trx_commit 2.** MariaDB then opens the redo log buffered "
        f"(innodb_log_file_buffering {trx2['variables'].get('INNODB_LOG_FILE_BUFFERING', '?')}, "
        f"{base['variables'].get('INNODB_LOG_FILE_BUFFERING', '?')} at 1): a commit's write goes "
        f"to the page cache, so the device saw {trx2['cap']['log_calls']:,} log write calls for "
        f"{trx2['inno'].get('Innodb_log_writes', 0):,} Innodb_log_writes, and the log stream has "
        f"reads ({s(trx2, 'log', 'reads'):,} here"
        + (f", {s(big_trx2, 'log', 'reads'):,} with the {names[1].split()[-1]} pool"
           if big_trx2 else "")
        + ") that InnoDB does not ask for: the page cache's, of the partial pages it "
        "writes into after drop_caches. "
        f"The fsyncs a transaction fell from {per_tx(base, 'Innodb_data_fsyncs'):.2f} to "
        f"{per_tx(trx2, 'Innodb_data_fsyncs'):.2f} (Innodb_data_fsyncs {base['inno'].get('Innodb_data_fsyncs', 0):,} "
        f"against {trx2['inno'].get('Innodb_data_fsyncs', 0):,} in {base['seconds']} s), not to "
        f"one a second: with the 16M pool the page cleaner's batches "
        f"({trx2['inno'].get('Innodb_dblwr_writes', 0):,} doublewrite batches) each make the log "
        f"durable up to their pages and fsync the data files. Transactions {base['tps']:,.0f} "
        f"against {trx2['tps']:,.0f} a second.")
    if big_trx2:
        out.append(
            f"  With the {names[1].split()[-1]} pool, where no page is written, the commits' "
            f"own flushing shows: Innodb_data_fsyncs {per_s(big, 'Innodb_data_fsyncs'):,.1f} a "
            f"second at 1 and {per_s(big_trx2, 'Innodb_data_fsyncs'):,.1f} at 2 "
            f"({per_tx(big, 'Innodb_data_fsyncs'):.2f} against "
            f"{per_tx(big_trx2, 'Innodb_data_fsyncs'):.3f} a transaction), the device's "
            f"flushes {big['cap']['flushes'] / big['seconds']:,.1f} against "
            f"{big_trx2['cap']['flushes'] / big_trx2['seconds']:,.1f} a second, and "
            f"transactions {big['tps']:,.0f} against {big_trx2['tps']:,.0f} a second.")
    out.append(
        f"- **flush_method fsync.** The data files go through the page cache: InnoDB asked for "
        f"{fsync['inno'].get('Innodb_data_reads', 0):,} reads, the device saw "
        f"{fsync['cap']['inno_reads']:,} requests to the tablespaces "
        f"({fsync['cap']['inno_read_bytes'] / max(1, fsync['inno'].get('Innodb_data_read', 0)):.3f} "
        f"of the bytes), against {base['cap']['inno_reads']:,} of "
        f"{base['inno'].get('Innodb_data_reads', 0):,} with O_DIRECT: the page cache (the "
        f"tables fit in it) serves the pages the 16M pool evicts. Of "
        f"{pages(fsync):,} page writes InnoDB counted, {fsync['cap']['page_writes']:,} "
        f"reached the device while it ran as InnoDB's own requests and "
        f"{s(fsync, 'writeback', 'writes'):,} requests came from the kernel's flusher (the "
        f"writeback stream); transactions {fsync['tps']:,.0f} against {base['tps']:,.0f} a "
        f"second.")
    if ro:
        rb = ro[names[0]]
        rt = ro[names[2]]
        out.append(
            f"- **Transactions per second are not a stable measure here:** oltp_read_only, "
            f"which flush_log_at_trx_commit does not touch, ran {rb['tps']:,.0f} tps at base "
            f"and {rt['tps']:,.0f} with flush_log_at_trx_commit 2, but the machine's load (in "
            "the set-up line) moves the rates from run to run; compare the counts a "
            "transaction between settings, not the rates.")
    return out


def report(runs, setup):
    rw = {r["setting"]: r for r in runs if r["test"] == "oltp_read_write"}
    ro = {r["setting"]: r for r in runs if r["test"] == "oltp_read_only"}
    lines = [BEGIN, "## InnoDB in the loop: sysbench captured, setting by setting (issue 34)", "",
             f"`bench/innodb-capture.py` on {setup}. Each run starts after a server restart and "
             "drop_caches, under `iocap capture MNT --files DATADIR`; InnoDB's counters "
             "(SHOW GLOBAL STATUS) and the device's (/sys/block/NAME/stat) are read around "
             "sysbench while the capture runs. One factor changes from the base at a time.", ""]
    for test, group in (("oltp_read_write", rw), ("oltp_read_only", ro)):
        if not group:
            continue
        lines += [f"### {test}: the captured streams", ""] + stream_rows(list(group.values())) \
            + ["", f"### {test}: the capture against the device's and InnoDB's counters", ""] \
            + check_rows(list(group.values())) + [""]
    lines += ["### What changed between settings", ""] + findings(rw, ro) + [""]
    lines += [
        "How the capture is held against the counters (as in the CI test devices::innodb): "
        "where each request fell is read from the files' extents (filefrag), the doublewrite "
        "buffer by its place (ibdata1's pages 64 to 191). Innodb_data_writes counts each page "
        "written in place and each doublewrite batch (one call of up to 128 pages, which the "
        "block layer splits at the device's largest request), so the page writes are "
        "Innodb_data_writes − Innodb_dblwr_writes. A redo log write call is one request or "
        "several back to back (ext4 splits a write where it crosses from written into "
        "fallocated blocks), so calls are counted by grouping, and the requests are a bound "
        "from below. Before these runs the redo log's file was rewritten in place, the server "
        "stopped (every block written, as in a log that has wrapped), so ext4 split none of "
        "its writes here. Since MariaDB 10.8 Innodb_data_fsyncs counts the redo log's fdatasyncs "
        "too; the device's flushes are more where ext4 commits its journal (a flush before "
        "the commit block and one after on a device without FUA). With flush_method fsync "
        "InnoDB's reads and writes go through the page cache, so the device sees fewer reads "
        "than InnoDB asks for and the page writes arrive later, from InnoDB's fsyncs or "
        "the kernel's flusher.", END]
    write_section(BEGIN, END, lines)
    return lines


def main():
    if os.environ.get("REPORT"):  # the section again from a run's raw figures
        raw = json.load(open(os.environ["REPORT"]))
        for line in report(raw["runs"], raw["setup"]):
            print(line)
        return
    k = knobs()
    check_start("innodb-capture.py", __doc__,
                "loop devices, mount, drop_caches, the capture's tracing", k["iocap"])
    found = tools()
    t0 = time.time()
    load0 = open("/proc/loadavg").read().split()[0]
    keep = os.environ.get("KEEP") == "1"
    fs = LoopFs(sys.argv[1], max(1 << 30, k["tables"] * k["rows"] * 600 + (512 << 20)),
                "iocap-innodb-capture-")
    db = work = None
    try:
        work = tempfile.mkdtemp(prefix="iocap-innodb-capture-", dir=sys.argv[1])
        db = Server(found, os.path.join(fs.mnt, "mysql"), base_options(k))
        db.start()
        db.query("CREATE DATABASE sbtest")
        db.sysbench("oltp_read_write", [f"--tables={k['tables']}", f"--table-size={k['rows']}",
                                        f"--threads={k['threads']}"], "prepare")
        version = db.query("SELECT VERSION()")[0][0]
        # The redo log as a server that has run a while has it: ib_logfile0 is made with
        # fallocate, and until a write has reached each block ext4 holds it as unwritten, so
        # that each fdatasync of the log also commits ext4's journal (the extent made written)
        # and a write that crosses into unwritten blocks is split. Rewriting the file's own
        # bytes in place, the server stopped, makes every block written, as a log that has
        # wrapped once is; every setting then sees the same file.
        db.stop()
        with open(os.path.join(db.datadir, "ib_logfile0"), "r+b") as f:
            while True:
                pos, chunk = f.tell(), f.read(1 << 20)
                if not chunk:
                    break
                f.seek(pos)
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        print(f"prepared in {time.time() - t0:.0f} s", file=sys.stderr)
        runs = []
        for name, opts in settings(k):
            tests = ([("oltp_read_only", k["ro_duration"])] if k["ro_duration"] else []) \
                + [("oltp_read_write", k["duration"])]
            for test, seconds in tests:
                r = run(k, fs, db, work, name, opts, test, seconds)
                runs.append(r)
                print(json.dumps({x: r[x] for x in ("setting", "test", "tps", "variables", "disk",
                                                     "cap")}),
                      file=sys.stderr)
        db.stop()
        iocap_version = sh([k["iocap"], "--version"]).strip()
        setup = (f"{datetime.date.today()}, {platform.node()} ({os.cpu_count()} CPUs), "
                 f"{iocap_version}: "
                 f"MariaDB {version}, sysbench {k['tables']} tables of {k['rows']:,} rows, "
                 f"{k['threads']} threads, oltp_read_write {k['duration']} s"
                 + (f" and oltp_read_only {k['ro_duration']} s" if k["ro_duration"] else "")
                 + f" per setting; base: innodb_buffer_pool_size {k['base_bp']}, "
                 "flush_log_at_trx_commit 1, flush_method O_DIRECT, doublewrite on, "
                 "innodb_io_capacity 200, innodb_log_file_size 96M; ext4 on a loop device "
                 "(direct I/O to its backing file); load average "
                 f"{load0} before, {open('/proc/loadavg').read().split()[0]} after"
                 + (f". {os.environ['NOTE']}" if os.environ.get("NOTE") else ""))
        raw = os.path.join(REPO, "target/bench/results")
        os.makedirs(raw, exist_ok=True)
        json.dump({"setup": setup, "runs": runs}, open(os.path.join(
            raw, datetime.datetime.now().strftime("innodb-capture-%Y%m%dT%H%M%S.json")), "w"))
        for line in report(runs, setup):
            print(line)
        print(f"took {time.time() - t0:.0f} s", file=sys.stderr)
    finally:
        if db:
            try:
                db.close()
            except RuntimeError as e:
                print(e, file=sys.stderr)
        fs.close(keep)
        if work and not keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
