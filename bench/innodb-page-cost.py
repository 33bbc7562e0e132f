#!/usr/bin/env python3
"""bench/innodb-page-cost.py: what a disk read costs InnoDB in CPU (issue 34, item 4; the method
of seed 000, as bench/pg-page-cost.py does for PostgreSQL).

The same statements run with their pages in the buffer pool (warm) and from disk (cold: the
server restarted, its buffer pool empty; innodb_flush_method O_DIRECT, so no page cache serves
a read), one client session a batch. The CPU is the mariadbd process's, all its threads
together (/proc/PID/stat utime and stime, which cover the process's threads, the connection's,
the read-ahead's and io_uring's workers), read before and after the batch, less what the idle
server spends in the same time (its background threads, measured before each round's cold
lookups); the pages read are the change in Innodb_pages_read (Innodb_buffer_pool_read_ahead of them
read ahead). CPU µs per page read =
(cold - warm) / pages read, user (the server's work) and system (the OS's) apart. Three rows:

- point lookups `SELECT c FROM sbtest1 WHERE id=?` by primary key over random ids, into a
  buffer pool just started (free pages: each read takes a frame never used);
- the same lookups with the buffer pool full of another table's pages (a full scan of
  sbtest2 first): each read evicts a clean page, the steady state;
- a range scan, `SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND SCAN_ROWS` (the clustered
  index in key order: InnoDB's linear read-ahead reads the next extents ahead of it).

The warm run is the same batch again in the same server (the pages now in the pool; the
scan three times). Beside each round, the OS's part measured by iocap on a file of its own on
the same file system, O_DIRECT: `--engine psync --rw randread --bs 16K --qd 1` beside the
lookups (InnoDB reads a missing page with one pread and waits), `--engine io_uring --rw read
--bs 16K --qd 32` beside the scan (read-ahead submits an extent's pages at once).

The server (bench/mariadb_rig.py) has its data directory on an ext4 file system on a loop
device of its own over a file in DIR (direct I/O to that file: the host's page cache is not in
the way either); never a system service.

Usage: python3 bench/innodb-page-cost.py DIR     (as root; about 6 minutes at the defaults)
Knobs: ROUNDS (5), ROWS (1000000: sbtest1, ~240 MB), FILL_ROWS (300000: sbtest2, ~70 MB),
LOOKUPS (10000 per batch), LOOKUP_BP (256M: holds every page the lookups read, for the warm
run), EVICT_BP (48M: sbtest2's scan fills it; innodb_lru_scan_depth 128 in that run, so that the
page cleaner keeps few pages free), SCAN_ROWS (400000, ~90 MB), SCAN_BP (256M),
IOCAP (target/release/iocap), OUT (docs/cost.md), KEEP=1 (keep the file system), REPORT (a
run's raw JSON from target/bench/results: writes the section from it, runs nothing).
Writes its section between <!-- innodb-page-cost:begin --> and <!-- innodb-page-cost:end -->.
"""

import datetime
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time

from mariadb_rig import LoopFs, Server, check_start, positive_int, sh, size_arg, tools
from perfdoc import quartiles, write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- innodb-page-cost:begin -->", "<!-- innodb-page-cost:end -->"
TICK = os.sysconf("SC_CLK_TCK")
COUNTERS = ("Innodb_pages_read", "Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_ahead",
            "Innodb_data_reads", "Innodb_data_read", "Innodb_buffer_pool_pages_free")


def knobs():
    k = {"rounds": positive_int("ROUNDS", 5), "rows": positive_int("ROWS", 1000000),
         "fill_rows": positive_int("FILL_ROWS", 300000),
         "lookups": positive_int("LOOKUPS", 10000),
         "scan_rows": positive_int("SCAN_ROWS", 400000),
         "lookup_bp": size_arg("LOOKUP_BP", "256M"), "evict_bp": size_arg("EVICT_BP", "48M"),
         "scan_bp": size_arg("SCAN_BP", "256M"),
         "iocap": os.environ.get("IOCAP", os.path.join(REPO, "target/release/iocap"))}
    if k["scan_rows"] > k["rows"]:
        print(f"SCAN_ROWS={k['scan_rows']} is more than ROWS={k['rows']}", file=sys.stderr)
        sys.exit(2)
    return k


OPTIONS = ["--innodb-buffer-pool-load-at-startup=OFF", "--innodb-buffer-pool-dump-at-shutdown=OFF",
           "--innodb-flush-method=O_DIRECT", "--innodb-adaptive-hash-index=OFF",
           "--query-cache-type=0", "--query-cache-size=0", "--innodb-log-file-size=256M",
           "--performance-schema=OFF"]


def proc(pid):
    """(utime, stime, minflt, majflt) of the whole process: ticks, and faults."""
    f = open(f"/proc/{pid}/stat").read()
    f = f[f.rindex(")") + 2:].split()  # state is f[0]: field 3 of proc(5)
    return int(f[11]), int(f[12]), int(f[7]), int(f[9])


def disk_reads(fs):
    d = fs.diskstats()
    return d[0], d[1]


def measured(db, fs, sql_path):
    """Runs the statements of `sql_path` in one session, between two readings of the server's
    CPU, InnoDB's counters and the device's."""
    s0, p0, d0, t0 = db.status(), proc(db.pid), disk_reads(fs), time.monotonic()
    with open(sql_path) as f:
        out = subprocess.run(db.client_argv(), stdin=f, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    t1, p1, d1, s1 = time.monotonic(), proc(db.pid), disk_reads(fs), db.status()
    if out.returncode != 0:
        raise RuntimeError(f"mariadb < {sql_path} failed: {out.stderr[-2000:]}")
    r = {c: s1.get(c, 0) - s0.get(c, 0) for c in COUNTERS}
    r["free_after"] = s1.get("Innodb_buffer_pool_pages_free", 0)
    r.update(user=(p1[0] - p0[0]) / TICK, sys=(p1[1] - p0[1]) / TICK, minflt=p1[2] - p0[2],
             majflt=p1[3] - p0[3], wall=t1 - t0, dev_reads=d1[0] - d0[0],
             dev_bytes=(d1[1] - d0[1]) * 512)
    return r


def idle(db, seconds=3.0):
    """The idle server's CPU seconds per second, user and system."""
    p0 = proc(db.pid)
    time.sleep(seconds)
    p1 = proc(db.pid)
    return (p1[0] - p0[0]) / TICK / seconds, (p1[1] - p0[1]) / TICK / seconds


def write_sql(path, statements):
    with open(path, "w") as f:
        f.write("".join(statements))


def restart(db, bp, extra=()):
    db.stop()
    db.start([f"--innodb-buffer-pool-size={bp}"] + list(extra))
    # the tables opened (their statistics read) and the path to id 1 read before the window
    db.query("SELECT c FROM sbtest1 WHERE id=1; SELECT c FROM sbtest2 WHERE id=1")


def iocap_os(k, d, engine, rw, qd):
    """iocap's process CPU µs per read on the same path: O_DIRECT 16K reads of its own 1G file
    on the same file system."""
    cmd = [k["iocap"], "run", "--engine", engine, "--rw", rw, "--bs", "16K", "--qd", str(qd),
           "--size", "1G", "--duration", "2s", "--no-save", "--output", "json", d]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    t = json.loads(out.stdout)["tests"][0]
    return {"us_per_io": t["cpu"]["us_per_io"], "iops": t["read"]["iops"]}


def one_round(k, db, fs, work, seed, iodir):
    rng = random.Random(seed)
    keys = rng.sample(range(2, k["rows"] + 1), k["lookups"])
    lookups = os.path.join(work, "lookups.sql")
    write_sql(lookups, [f"SELECT c FROM sbtest1 WHERE id={i};\n" for i in keys])
    scan = os.path.join(work, "scan.sql")
    q = f"SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND {k['scan_rows']};\n"
    write_sql(scan, [q])
    write_sql(os.path.join(work, "scan3.sql"), [q] * 3)
    out = {}
    restart(db, k["lookup_bp"])
    out["idle"] = idle(db)
    out["cold"] = measured(db, fs, lookups)
    out["warm"] = measured(db, fs, lookups)
    # the page cleaner keeps innodb_lru_scan_depth pages free (1536 by default, most of a
    # small pool): at its least, so that the pool stays full and the lookups' reads evict
    restart(db, k["evict_bp"], ["--innodb-lru-scan-depth=128"])
    db.query("SELECT SUM(LENGTH(pad)) FROM sbtest2")
    out["evict"] = measured(db, fs, lookups)
    restart(db, k["scan_bp"])
    out["scan_cold"] = measured(db, fs, scan)
    out["scan_warm"] = measured(db, fs, os.path.join(work, "scan3.sql"))
    out["os_random"] = iocap_os(k, iodir, "psync", "randread", 1)
    out["os_seq"] = iocap_os(k, iodir, "io_uring", "read", 32)
    return out


def per_page(cold, warm, n_cold, n_warm, idle_rate):
    """(user, system) CPU µs per page read: cold less warm (per statement, scaled to the cold
    batch's statements), each less the idle server's CPU over its own wall time."""
    res = []
    for i, key in enumerate(("user", "sys")):
        c = cold[key] - idle_rate[i] * cold["wall"]
        w = (warm[key] - idle_rate[i] * warm["wall"]) * n_cold / n_warm
        res.append((c - w) * 1e6 / max(cold["Innodb_pages_read"], 1))
    return res


def med_iqr(xs, fmt="{:.1f}"):
    q1, m, q3 = quartiles(xs)
    return fmt.format(m) + " (" + fmt.format(q1) + "–" + fmt.format(q3) + ")"


def report(k, rounds, env):
    n = k["lookups"]
    rows = [
        ("point lookup by primary key, buffer pool full: each read evicts a page", n,
         [(r["evict"], r["warm"], n, r["idle"], r["os_random"]["us_per_io"]) for r in rounds]),
        ("point lookup by primary key, just after a restart: free pages", n,
         [(r["cold"], r["warm"], n, r["idle"], r["os_random"]["us_per_io"]) for r in rounds]),
        (f"range scan, SUM(k) over {k['scan_rows']:,} rows in key order", 1,
         [(r["scan_cold"], r["scan_warm"], 3, r["idle"], r["os_seq"]["us_per_io"])
          for r in rounds]),
    ]
    lines = [BEGIN, "", f"Measured {env['date']} on {env['host']}; MariaDB {env['version']}; "
             f"{k['rounds']} rounds; load average {env['load0']} before, {env['load1']} after; "
             f"the CPUs idle {env.get('idle_pct', float('nan')):.0f} % and stolen "
             f"{env.get('steal_pct', float('nan')):.1f} % of the run"
             + (f" ({env['cpu_note']})" if env.get("cpu_note") else "") + ". "
             f"sysbench's sbtest1 {k['rows']:,} rows ({env['t1_mb']:.0f} MB), sbtest2 "
             f"{k['fill_rows']:,} rows ({env['t2_mb']:.0f} MB); {n:,} lookups a batch with "
             f"innodb_buffer_pool_size {k['lookup_bp']} ({k['evict_bp']} for the full pool), the "
             f"scan with {k['scan_bp']}; O_DIRECT, adaptive hash index and query cache off; ext4 "
             "on a loop device of its own (direct I/O to its backing file on the VM's virtio "
             "disk). Medians over the rounds, interquartile range in brackets; the idle server's "
             f"CPU ({env['idle_us']:.0f} µs user, {env['idle_sys']:.0f} µs system a second, "
             "median) taken out of each batch over its wall time.", "",
             "| query | pages read per statement (cold) | CPU per statement, warm | CPU per "
             "statement, cold | CPU µs per page read | of it user (the server) | of it system "
             "(the kernel) | the OS's part: iocap, same path, µs | the system share |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    checks = ["| query | pages read warm (whole batch) | of the cold pages, read ahead | free "
              "pages after the cold batch | device reads per page read (avg KiB) | Innodb_data_reads per page | "
              "minor page faults per page read | read wait per page (cold wall − warm wall) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, stmts, rs in rows:
        unit, div = ("µs", 1e-6) if stmts > 1 else ("ms", 1e-3)
        pp = [per_page(c, w, stmts, nw, idl) for c, w, nw, idl, _ in rs]
        tot = [u + s for u, s in pp]
        users = [u for u, _ in pp]
        syss = [s for _, s in pp]
        osp = [o for *_, o in rs]
        share = [s / t * 100 if t else 0 for s, t in zip(syss, tot)]
        pages = statistics.median([c["Innodb_pages_read"] / stmts for c, *_ in rs])
        warm_cpu = statistics.median([(w["user"] + w["sys"]) / nw / div for _, w, nw, _, _ in rs])
        cold_cpu = statistics.median([(c["user"] + c["sys"]) / stmts / div for c, *_ in rs])
        lines.append(f"| {name} | {pages:,.{2 if stmts > 1 else 0}f} | {warm_cpu:,.1f} {unit} | "
                     f"{cold_cpu:,.1f} {unit} | {med_iqr(tot)} | {med_iqr(users)} | "
                     f"{med_iqr(syss)} | {med_iqr(osp)} | {med_iqr(share, '{:.0f}')} % |")
        med = lambda f: statistics.median([f(c, w, nw) for c, w, nw, _, _ in rs])
        checks.append(
            f"| {name} | {med(lambda c, w, nw: w['Innodb_pages_read']):,.0f} | "
            f"{med(lambda c, w, nw: c['Innodb_buffer_pool_read_ahead']):,.0f} | "
            f"{med(lambda c, w, nw: c['free_after']):,.0f} | "
            f"{med(lambda c, w, nw: c['dev_reads'] / max(c['Innodb_pages_read'], 1)):.3f} "
            f"({med(lambda c, w, nw: c['dev_bytes'] / 1024 / max(c['dev_reads'], 1)):,.0f}) | "
            f"{med(lambda c, w, nw: c['Innodb_data_reads'] / max(c['Innodb_pages_read'], 1)):.3f} | "
            f"{med(lambda c, w, nw: c['minflt'] / max(c['Innodb_pages_read'], 1)):.2f} | "
            f"{med(lambda c, w, nw: (c['wall'] - w['wall'] * stmts / nw) * 1e6 / max(c['Innodb_pages_read'], 1)):,.0f} µs |")
    lines += ["", "The OS's part is iocap's process CPU per read, O_DIRECT 16K on a 1G file of its "
              "own on the same file system, in each round: beside the lookups `--engine psync "
              "--rw randread --qd 1` (one pread at a time, as a lookup's miss), beside the scan "
              "`--engine io_uring --rw read --qd 32` (as read-ahead submits an extent's pages).",
              "", "The checks:", ""] + checks + ["", END]
    return lines


def cpu_times():
    """(all, idle, steal) clock ticks of every CPU, from /proc/stat."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return sum(f[:8]), f[3] + f[4], f[7]


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def main():
    if os.environ.get("REPORT"):  # the section again from a run's raw figures
        raw = json.load(open(os.environ["REPORT"]))
        lines = report(raw["knobs"], raw["rounds"], raw["env"])
        os.environ.setdefault("OUT", os.path.join(REPO, "docs/cost.md"))
        write_section(BEGIN, END, lines)
        print("\n".join(lines))
        return
    k = knobs()
    check_start("innodb-page-cost.py", __doc__, "a loop device, mount", k["iocap"])
    found = tools()
    env = {"date": datetime.date.today().isoformat(), "load0": loadavg(),
           "host": f"{platform.node()}, {os.cpu_count()} CPUs, kernel {platform.release()}"}
    c0 = cpu_times()
    keep = os.environ.get("KEEP") == "1"
    size = (k["rows"] + k["fill_rows"]) * 600 + (2 << 30)
    fs = LoopFs(sys.argv[1], size, "iocap-innodb-cost-")
    db = work = None
    t0 = time.time()
    try:
        work = tempfile.mkdtemp(prefix="iocap-innodb-cost-", dir=sys.argv[1])
        iodir = os.path.join(fs.mnt, "iocap")
        os.mkdir(iodir)
        db = Server(found, os.path.join(fs.mnt, "mysql"), OPTIONS)
        db.start(["--innodb-buffer-pool-size=512M"])
        db.query("CREATE DATABASE sbtest")
        db.database = "sbtest"
        for table, rows in ((1, k["rows"]), (2, k["fill_rows"])):
            sh([db.sysbench_bin, "oltp_read_only", "--db-driver=mysql", "--mysql-user=root",
                "--mysql-db=sbtest", f"--mysql-socket={db.socket}", "--tables=1",
                f"--table-size={rows}", "prepare"])
            if table == 1:
                db.query("RENAME TABLE sbtest1 TO sbtest_a")
        db.query("RENAME TABLE sbtest1 TO sbtest2; RENAME TABLE sbtest_a TO sbtest1; "
                 "ANALYZE TABLE sbtest1, sbtest2")
        plan = db.query(f"EXPLAIN SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND "
                        f"{k['scan_rows']}")
        if "PRIMARY" not in " ".join(plan[0]):
            raise RuntimeError(f"the range scan does not use the primary key: {plan}")
        sizes = db.query("SELECT data_length + index_length FROM information_schema.tables "
                         "WHERE table_schema = 'sbtest' ORDER BY table_name")
        env["t1_mb"], env["t2_mb"] = int(sizes[0][0]) / 1e6, int(sizes[1][0]) / 1e6
        env["version"] = db.query("SELECT VERSION()")[0][0]
        print(f"prepared in {time.time() - t0:.0f} s", file=sys.stderr)
        iocap_os(k, iodir, "psync", "randread", 1)  # lays out iocap's file
        rounds = []
        for i in range(k["rounds"]):
            rounds.append(one_round(k, db, fs, work, i, iodir))
            print(f"round {i + 1}: {json.dumps(rounds[-1])}", file=sys.stderr)
        db.stop()
    finally:
        if db:
            try:
                db.close()
            except RuntimeError as e:
                print(e, file=sys.stderr)
        fs.close(keep)
        if work:
            import shutil
            shutil.rmtree(work, ignore_errors=True)
    env["load1"] = loadavg()
    c1 = cpu_times()
    span = max(c1[0] - c0[0], 1)
    env["idle_pct"], env["steal_pct"] = (100 * (c1[1] - c0[1]) / span,
                                         100 * (c1[2] - c0[2]) / span)
    env["idle_us"] = statistics.median([r["idle"][0] for r in rounds]) * 1e6
    env["idle_sys"] = statistics.median([r["idle"][1] for r in rounds]) * 1e6
    raw = os.path.join(REPO, "target/bench/results")
    os.makedirs(raw, exist_ok=True)
    json.dump({"env": env, "knobs": k, "rounds": rounds}, open(os.path.join(
        raw, datetime.datetime.now().strftime("innodb-page-cost-%Y%m%dT%H%M%S.json")), "w"))
    lines = report(k, rounds, env)
    os.environ.setdefault("OUT", os.path.join(REPO, "docs/cost.md"))
    write_section(BEGIN, END, lines)
    print("\n".join(lines))
    print(f"took {time.time() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
