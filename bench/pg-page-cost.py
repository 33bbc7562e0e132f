#!/usr/bin/env python3
"""bench/pg-page-cost.py: what a disk read costs PostgreSQL in CPU (issue 25, point 4; the
method of seeds 000 and 001, which measured SQL Server).

The same statements run with their pages in shared_buffers (warm) and from disk (cold: the
server restarted and the OS cache dropped), in one backend; the CPU the backend spent in each
is read from its own /proc/self/schedstat (run time in ns; /proc/self/stat's utime + stime in
clock ticks as a check) before and after the batch, and the pages it read from
pg_statio_user_tables. CPU µs per page read = (cold - warm) / pages read. Three rows:

- index lookups by primary key, random keys, into free buffers (just after the restart);
- the same lookups with the buffer pool full of another table's pages (every read evicts);
- a sequential scan, count(*), no parallel workers (through the 256 KiB bulk-read ring).

Beside them, the OS's part, paired per round: `iocap run` with psync (one pread at a time, as
a backend reads), buffered, 8K, queue depth 1, on a file of iocap's own dropped from the page
cache just before; random reads beside the lookups, sequential ones (through the kernel's
read-ahead) beside the scan. What is left is the database's own work. Under the table, one
`iocap cost --qd 1` run's model points (8K and 1M buffered hit and miss). Writes its section of
docs/cost.md between the pg-page-cost markers.

Its own cluster: initdb (as the `postgres` user when run as root) in a new directory under
PGCOST_DIR, Unix socket only, never the system's. Cold means drop_caches as root, else
posix_fadvise(DONTNEED) on the relations' files; the report says which.

Usage: python3 bench/pg-page-cost.py            (as root; about 12 minutes)
Knobs: ROUNDS (7), SCALE (27: ~400 MB of pgbench_accounts), LOOKUPS (8000 per batch),
LOOKUP_SB (128MB), SCAN_SB (512MB), PGBIN (/usr/lib/postgresql/15/bin), PGCOST_DIR (/var/tmp),
IOCAP (target/release/iocap), COST_SIZE (4G: iocap's file), COST_JSON (a saved
`iocap cost --qd 1 --output json`, instead of running it; the paired runs still need IOCAP),
OUT (docs/cost.md), KEEP=1 (keep the cluster). Run on a quiet machine.
"""

import ctypes
import datetime
import json
import mmap
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

from perfdoc import quartiles, write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- pg-page-cost:begin -->", "<!-- pg-page-cost:end -->"
ROUNDS = int(os.environ.get("ROUNDS", "7"))
SCALE = int(os.environ.get("SCALE", "27"))
LOOKUPS = int(os.environ.get("LOOKUPS", "8000"))
LOOKUP_SB = os.environ.get("LOOKUP_SB", "128MB")
SCAN_SB = os.environ.get("SCAN_SB", "512MB")
PGBIN = os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin")
IOCAP = os.environ.get("IOCAP", os.path.join(REPO, "target/release/iocap"))
COST_SIZE = os.environ.get("COST_SIZE", "4G")
PAGE = 8192
# the backend's own counters, newlines flattened so that one result row is one line
PROC = ("pg_backend_pid(), " + ", ".join(
    f"replace(pg_read_file('/proc/{f}'), E'\\n', ' ')"
    for f in ("self/schedstat", "self/stat", "self/io", "diskstats")))
STATIO = ("(SELECT sum(heap_blks_read + coalesce(idx_blks_read, 0)) FROM pg_statio_user_tables),"
          " (SELECT blk_read_time FROM pg_stat_database WHERE datname = current_database())")


class Cluster:
    """A PostgreSQL cluster of our own in a new directory: Unix socket only, stopped and removed
    by close()."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="iocap-pgcost-",
                                     dir=os.environ.get("PGCOST_DIR", "/var/tmp"))
        self.as_pg = os.geteuid() == 0
        if self.as_pg:
            import pwd
            pw = pwd.getpwnam("postgres")
            self.ids = (pw.pw_uid, pw.pw_gid)
            os.chown(self.root, *self.ids)
        self.data = os.path.join(self.root, "data")
        self.running = False
        self.pg(["initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync"])
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"listen_addresses = ''\nunix_socket_directories = '{self.root}'\n"
                    "port = 54329\ntrack_io_timing = on\nautovacuum = off\n"
                    "synchronize_seqscans = off\nmax_parallel_workers_per_gather = 0\n"
                    # count(*) would otherwise read the smaller primary key, not the table
                    "enable_indexonlyscan = off\nenable_bitmapscan = off\n"
                    "max_wal_size = 2GB\n")

    def _drop_privileges(self):
        os.setgid(self.ids[1])
        os.setuid(self.ids[0])

    def pg(self, argv, stdin=None):
        """Runs a PostgreSQL program (as `postgres` when we are root); its stdout."""
        out = subprocess.run([os.path.join(PGBIN, argv[0])] + argv[1:], input=stdin,
                             capture_output=True, text=True, cwd=self.root,
                             preexec_fn=self._drop_privileges if self.as_pg else None)
        if out.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:3])} failed:\n{out.stderr[-2000:]}")
        return out.stdout

    def sql(self, script):
        """Runs `script` in one session; the rows printed, fields split on '|'."""
        out = self.pg(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", self.root,
                       "-p", "54329", "-U", "postgres", "-d", "postgres"], stdin=script)
        return [line.split("|") for line in out.splitlines() if line]

    def start(self, shared_buffers):
        self.pg(["pg_ctl", "-D", self.data, "-l", os.path.join(self.root, "log"), "-w",
                 "-o", f"-c shared_buffers={shared_buffers}", "start"])
        self.running = True

    def stop(self):
        if self.running:
            self.pg(["pg_ctl", "-D", self.data, "-w", "-m", "fast", "stop"])
            self.running = False

    def close(self):
        try:
            self.stop()
        finally:
            if os.environ.get("KEEP") != "1":
                shutil.rmtree(self.root, ignore_errors=True)


def drop_os_cache(files):
    """Empties the OS cache of `files` (the server stopped): drop_caches, which needs root; else
    posix_fadvise(DONTNEED) on each file. Returns which was used."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return "drop_caches"
    except OSError:
        for p in files:
            fd = os.open(p, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
        return "posix_fadvise(DONTNEED)"


def resident_pages(files):
    """Pages of `files` in the page cache (mincore), and their total."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    res = total = 0
    for p in files:
        size = os.path.getsize(p)
        if size == 0:
            continue
        n = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
        fd = os.open(p, os.O_RDONLY)
        try:
            addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
            if addr in (None, ctypes.c_void_p(-1).value):
                raise OSError(ctypes.get_errno(), f"mmap {p}")
            vec = ctypes.create_string_buffer(n)
            rc = libc.mincore(addr, size, vec)
            libc.munmap(addr, size)
            if rc != 0:
                raise OSError(ctypes.get_errno(), f"mincore {p}")
        finally:
            os.close(fd)
        res += sum(b & 1 for b in vec.raw)
        total += n
    return res, total


def device_of(path):
    """(major, minor) of the block device holding `path`."""
    dev = os.stat(path).st_dev
    return os.major(dev), os.minor(dev)


def device_reads(diskstats, device):
    """(reads completed, sectors read) of `device` in a flattened /proc/diskstats."""
    f = diskstats.split()
    for i in range(len(f) - 5):
        if f[i:i + 2] == [str(device[0]), str(device[1])] and not f[i + 2].isdigit():
            return int(f[i + 3]), int(f[i + 5])
    return 0, 0


def proc_counters(row, device):
    """(cpu_ns, cpu_ticks, device_read_bytes, minor faults, major faults, the device's reads,
    its sectors read) of one PROC row."""
    _, _, sched, stat, io, disk = row
    # stat's fields after the command's closing bracket: state is 0, utime 11, stime 12
    stat = stat[stat.rindex(")") + 1:].split()
    io = dict(zip(io.split()[::2], io.split()[1::2]))
    return (int(sched.split()[0]), int(stat[11]) + int(stat[12]), int(io["read_bytes:"]),
            int(stat[7]), int(stat[9])) + device_reads(disk, device)


def measured(cl, prime, batch):
    """Runs `prime`, then `batch` between two readings of the backend's counters, in one
    session. Returns CPU ns and ticks, pages read, read wait ms and device bytes of the batch."""
    rows = cl.sql("\n".join([
        prime, "SELECT pg_stat_force_next_flush();", f"SELECT 'IO', {STATIO};",
        f"SELECT 'CPU', {PROC};", "\\o /dev/null", batch, "\\o", f"SELECT 'CPU', {PROC};",
        "SELECT pg_stat_force_next_flush();", f"SELECT 'IO', {STATIO};", ""]))
    cpu = [proc_counters(r, device_of(cl.data)) for r in rows if r[0] == "CPU"]
    io = [(int(r[1]), float(r[2])) for r in rows if r[0] == "IO"]
    return {"cpu_ns": cpu[1][0] - cpu[0][0], "ticks": cpu[1][1] - cpu[0][1],
            "pages": io[1][0] - io[0][0], "wait_ms": io[1][1] - io[0][1],
            "device_bytes": cpu[1][2] - cpu[0][2], "minflt": cpu[1][3] - cpu[0][3],
            "majflt": cpu[1][4] - cpu[0][4],
            "disk": (cpu[1][5] - cpu[0][5], cpu[1][6] - cpu[0][6])}


def filler_rows(shared_buffers):
    """Rows of 800 bytes (9 to a page) for 1.5 times `shared_buffers` ("128MB", "1GB")."""
    m = re.fullmatch(r"(\d+)\s*([kMG]B)", shared_buffers)
    if not m:
        sys.exit(f"LOOKUP_SB={shared_buffers}: give a size in kB, MB or GB, as 128MB")
    size = int(m[1]) * {"kB": 2**10, "MB": 2**20, "GB": 2**30}[m[2]]
    return int(size * 1.5 / PAGE * 9)


def load(cl):
    cl.start(LOOKUP_SB)
    cl.pg(["pgbench", "-i", "-q", "-I", "dtGvp", "-s", str(SCALE), "-h", cl.root, "-p", "54329",
           "-U", "postgres", "postgres"])
    # the filler fills the buffer pool before the evicting lookups: larger than LOOKUP_SB
    cl.sql("CREATE EXTENSION pg_prewarm;\n"
           "CREATE TABLE filler AS SELECT g AS id, repeat('x', 800) AS pad "
           f"FROM generate_series(1, {filler_rows(LOOKUP_SB)}) g;\n"
           "VACUUM (FREEZE, ANALYZE);\nCHECKPOINT;\n")
    rows = cl.sql("SELECT pg_relation_filepath(c), pg_relation_size(c) FROM unnest(ARRAY["
                  "'pgbench_accounts', 'pgbench_accounts_pkey', 'filler']::regclass[]) c;")
    files = []
    for rel, size in rows:
        base = os.path.join(cl.data, rel)
        files += [base] + [f"{base}.{i}" for i in range(1, int(size) // 2**30 + 1)]
    check_plans(cl)
    return files, int(cl.sql("SELECT max(aid) FROM pgbench_accounts;")[0][0])


def cold_measured(cl, sb, files, rel_files, prime, batch):
    """[measured] after a restart with the OS cache dropped, with what was resident of
    `rel_files` before it."""
    cl.stop()
    how = drop_os_cache(files)
    cl.start(sb)
    res = resident_pages(rel_files)
    out = measured(cl, prime, batch)
    out.update(how=how, resident=res)
    return out


def check_plans(cl):
    """The lookups are index scans, the count a sequential scan: said, or the run stops."""
    plans = {"EXPLAIN SELECT abalance FROM pgbench_accounts WHERE aid = 42;":
             "Index Scan using pgbench_accounts_pkey",
             "EXPLAIN SELECT count(*) FROM pgbench_accounts;": "Seq Scan on pgbench_accounts"}
    for q, want in plans.items():
        plan = " ".join(" ".join(r) for r in cl.sql(q))
        if want not in plan:
            sys.exit(f"{q} plans {plan!r}, not a {want}")


def lookup_round(cl, files, rows, seed):
    """Cold into free buffers, warm, cold into a full pool (every read evicts)."""
    rng = random.Random(seed)
    keys = rng.sample(range(2, rows + 1), LOOKUPS)
    prime = ("PREPARE q(int) AS SELECT abalance FROM pgbench_accounts WHERE aid = $1;\n"
             + "EXECUTE q(1);\n" * 6)
    batch = "".join(f"EXECUTE q({k});\n" for k in keys)
    out = {"cold": cold_measured(cl, LOOKUP_SB, files, files[:2], prime, batch)}
    out["warm"] = measured(cl, prime + batch, batch)
    # the filler fills the pool in this session, so the batch takes no first-touch page faults
    out["evict"] = cold_measured(cl, LOOKUP_SB, files, files[:2],
                                 "SELECT pg_prewarm('filler');\n" + prime, batch)
    out["os"] = iocap_read("randread")
    return out


def scan_round(cl, files):
    prime = "EXPLAIN SELECT count(*) FROM pgbench_accounts;"
    scan = "SELECT count(*) FROM pgbench_accounts;"
    out = {"cold": cold_measured(cl, SCAN_SB, files, files[:1], prime, scan)}
    # warm: the whole table in shared_buffers (pg_prewarm, not through the scan's ring)
    out["warm"] = measured(cl, "SELECT pg_prewarm('pgbench_accounts');\n" + prime, scan * 3)
    out["warm"]["statements"] = 3
    # the scan's preads find their pages read ahead: a hit; a cold stream is shown beside it
    out["os"] = iocap_read("read", hit=True)
    out["os_stream"] = iocap_read("read")
    return out


OS_DIR = None


def iocap_read(rw, hit=False):
    """The OS's part, paired with each round: `iocap run`, psync (one pread at a time, as a
    backend reads), buffered, 8K, queue depth 1, process CPU µs per read. A miss: iocap's own
    COST_SIZE file, its pages dropped just before (fsync, posix_fadvise DONTNEED). A hit: a
    256M file of iocap's own, read into the page cache in a 0.5 s warm-up."""
    global OS_DIR
    if OS_DIR is None:
        OS_DIR = tempfile.mkdtemp(prefix="iocap-os-", dir=os.environ.get("PGCOST_DIR", "/var/tmp"))
    d = os.path.join(OS_DIR, "hit" if hit else "miss")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "iocap.testfile")
    if os.path.exists(path) and not hit:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    cmd = [IOCAP, "run", "--engine", "psync", "--buffered", "--rw", rw, "--bs", "8K", "--qd", "1",
           "--size", "256M" if hit else COST_SIZE, "--duration", "2s",
           "--warmup", "0.5s" if hit else "0s", "--no-save", "--output", "json", d]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    t = json.loads(out.stdout)["tests"][0]
    return {"us_per_io": t["cpu"]["us_per_io"], "iops": t["read"]["iops"]}


def iocap_cost():
    """`iocap cost`'s JSON at queue depth 1 (psync is one pread at a time, like a backend)."""
    if os.environ.get("COST_JSON"):
        return json.load(open(os.environ["COST_JSON"])), os.environ["COST_JSON"]
    d = tempfile.mkdtemp(prefix="iocap-cost-", dir=os.environ.get("PGCOST_DIR", "/var/tmp"))
    try:
        # 4G: the 8K miss point stays a miss (a few % of the file read in its 2 s)
        cmd = [IOCAP, "cost", "--qd", "1", "--size", COST_SIZE,
               "--no-save", "--output", "json", d]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
        version = subprocess.run([IOCAP, "--version"], capture_output=True, text=True)
        return json.loads(out.stdout), f"{version.stdout.strip()}: " + " ".join(cmd[1:-1])
    finally:
        shutil.rmtree(d, ignore_errors=True)


def cost_point(run, cache, bs):
    for p in run["cost"]["points"]:
        if (p["engine"], p["cache"], p["bs_bytes"], p["qd"]) == ("psync", cache, bs, 1) \
                and "read" in p["rw"]:
            return p["process"]["us_per_io"], p.get("resident_after_pct")
    sys.exit(f"iocap cost has no psync {cache} {bs}-byte read at qd 1")


def med_iqr(xs, fmt="{:.1f}"):
    q1, m, q3 = quartiles(xs)
    return fmt.format(m) + " (" + fmt.format(q1) + "–" + fmt.format(q3) + ")"


def per_page(cold, warm_ns_per_stmt, stmts):
    return (cold["cpu_ns"] - warm_ns_per_stmt * stmts) / 1e3 / max(cold["pages"], 1)


def rows_of(look, scans):
    """Per query: (name, statements per batch, per round (cold, warm ns per statement, warm,
    the OS's µs per read))."""
    return [
        ("index lookup by primary key, buffer pool full: each read evicts a page", LOOKUPS,
         [(r["evict"], r["warm"]["cpu_ns"] / LOOKUPS, r["warm"], r["os"]["us_per_io"])
          for r in look]),
        ("index lookup by primary key, just after a restart: free buffers", LOOKUPS,
         [(r["cold"], r["warm"]["cpu_ns"] / LOOKUPS, r["warm"], r["os"]["us_per_io"])
          for r in look]),
        ("sequential scan, count(*) of pgbench_accounts", 1,
         [(r["cold"], r["warm"]["cpu_ns"] / 3, r["warm"], r["os"]["us_per_io"])
          for r in scans]),
    ]


def median(xs):
    return statistics.median(xs)


def check_row(name, rounds):
    """A row of the checks table: where the cold pages came from, and the same figure from
    utime + stime."""
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    n = LOOKUPS if "lookup" in name else 1
    cold = [c for c, _, _, _ in rounds]
    ticks = [(c["ticks"] - w * n / 1e9 * os.sysconf("SC_CLK_TCK")) * tick_us / max(c["pages"], 1)
             for c, w, _, _ in rounds]
    res = max(c["resident"][0] / max(c["resident"][1], 1) for c in cold)
    return (f"| {name} | {median([wr['pages'] for _, _, wr, _ in rounds]):,.0f} | "
            f"{median([c['wait_ms'] * 1e3 / max(c['pages'], 1) for c in cold]):.0f} µs | "
            f"{median([c['device_bytes'] / max(c['pages'], 1) for c in cold]):,.0f} | "
            f"{res:.2%} | {median([c['disk'][0] / max(c['pages'], 1) for c in cold]):.3f} "
            f"({median([c['disk'][1] * 512 / 1024 / max(c['disk'][0], 1) for c in cold]):,.0f}) | "
            f"{median([c['minflt'] / max(c['pages'], 1) for c in cold]):.2f} "
            f"({median([c['majflt'] / max(c['pages'], 1) for c in cold]):.3f}) | "
            f"{med_iqr(ticks, '{:.0f}')} |")


def report(look, scans, cost, cost_how, env):
    miss8, res8 = cost_point(cost, "miss", 8192)
    hit8, _ = cost_point(cost, "hit", 8192)
    miss1m, _ = cost_point(cost, "miss", 1 << 20)
    hit1m, _ = cost_point(cost, "hit", 1 << 20)
    lines = [BEGIN, "", f"Measured {env['date']} on {env['host']}, a virtio disk; {ROUNDS} "
             f"rounds; load average {env['load0']} before, {env['load1']} after; steal "
             f"{env['steal']:.1%}. pgbench scale {SCALE} (pgbench_accounts "
             f"{env['table_mb']:.0f} MB, its key {env['index_mb']:.0f} MB); {LOOKUPS:,} lookups "
             f"per batch with shared_buffers {LOOKUP_SB}, the scan with {SCAN_SB}. Cold: "
             f"{env['how']}. Medians over the rounds, interquartile range in brackets; the OS's "
             "part and the database's own are per round, paired.", "",
             "| query | pages read per statement (cold) | CPU per statement, warm | "
             "CPU per statement, cold | CPU µs per page read | the OS's part: iocap, same "
             "path, µs | the database's own, µs | the OS's share |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    checks = ["| query | pages read warm (whole batch) | read wait per page | bytes from the "
              "device per page read | resident before cold | device reads per page read "
              "(avg KiB) | page faults per page read (major) | CPU µs per page read from "
              "utime+stime |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, n, rounds in rows_of(look, scans):
        unit, div = ("µs", 1e3) if n > 1 else ("ms", 1e6)
        pp = [per_page(c, w, n) for c, w, _, _ in rounds]
        os_us = [o for _, _, _, o in rounds]
        own = [p - o for p, o in zip(pp, os_us)]
        share = [o / p * 100 for p, o in zip(pp, os_us)]
        pages = median([c["pages"] / n for c, _, _, _ in rounds])
        lines.append(
            f"| {name} | {pages:,.{2 if n > 1 else 0}f} | "
            f"{median([w / div for _, w, _, _ in rounds]):,.1f} {unit} | "
            f"{median([c['cpu_ns'] / n / div for c, _, _, _ in rounds]):,.1f} {unit} | "
            f"{med_iqr(pp)} | {med_iqr(os_us)} | {med_iqr(own)} | {med_iqr(share, '{:.0f}')} % |")
        checks.append(check_row(name, rounds))
    stream = [r["os_stream"]["us_per_io"] for r in scans]
    lines += ["", "The OS's part is `iocap run --engine psync --buffered --bs 8K --qd 1`, in each "
              "round: beside the lookups `--rw randread` on a "
              f"{COST_SIZE} file of iocap's own whose pages were dropped just before (a read that "
              "misses the page cache); beside the scan `--rw read` on a 256M file in the page "
              "cache (a sequential read whose page the kernel's read-ahead brought in). The same "
              f"sequential read on the dropped {COST_SIZE} file, where iocap's loop catches up "
              f"with the read-ahead: {med_iqr(stream)} µs.", "",
              "The checks:", ""] + checks + [
        "", f"`iocap cost`'s model points ({cost_how}), psync, buffered, queue depth 1, "
        f"process CPU: 8K miss {miss8:.1f} µs per read (resident after the point "
        f"{res8 or 0:.0f} %), 8K hit {hit8:.1f} µs, 1M miss {miss1m:.1f} µs, 1M hit "
        f"{hit1m:.1f} µs. Its estimate of a scan's page, the 8K hit plus 1/128 of a 1M miss "
        f"beyond a 1M hit: {hit8 + (miss1m - hit1m) / 128:.1f} µs.", "", END]
    return lines


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def cpu_times():
    """(all, steal) clock ticks of every CPU, from /proc/stat."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return sum(f[:8]), f[7]


def main():
    if not os.path.exists(os.path.join(PGBIN, "postgres")):
        sys.exit(f"no PostgreSQL in {PGBIN} (Debian: apt-get install postgresql-15; or PGBIN=)")
    if not os.access(IOCAP, os.X_OK):
        sys.exit(f"no iocap at {IOCAP}: cargo build --release, or IOCAP=")
    env = {"date": datetime.date.today().isoformat(), "load0": loadavg(),
           "host": f"{platform.node()}, {os.cpu_count()} CPUs, kernel {platform.release()}"}
    t0 = cpu_times()
    cl = Cluster()
    try:
        files, rows = load(cl)
        sizes = cl.sql("SELECT pg_relation_size('pgbench_accounts'), "
                       "pg_relation_size('pgbench_accounts_pkey');")[0]
        env["table_mb"], env["index_mb"] = int(sizes[0]) / 1e6, int(sizes[1]) / 1e6
        iocap_read("randread")  # creates iocap's file: its first reads would be cache hits
        look, scans = [], []
        for r in range(ROUNDS):
            look.append(lookup_round(cl, files, rows, seed=r))
            print(f"lookups, round {r + 1}: {json.dumps(look[-1])}", file=sys.stderr)
        for r in range(ROUNDS):
            scans.append(scan_round(cl, files))
            print(f"scan, round {r + 1}: {json.dumps(scans[-1])}", file=sys.stderr)
    finally:
        cl.close()
        if OS_DIR:
            shutil.rmtree(OS_DIR, ignore_errors=True)
    t1 = cpu_times()
    env["steal"] = (t1[1] - t0[1]) / max(t1[0] - t0[0], 1)
    env["load1"], env["how"] = loadavg(), look[0]["cold"]["how"]
    cost, cost_how = iocap_cost()
    raw = os.path.join(REPO, "target/bench/results")
    os.makedirs(raw, exist_ok=True)
    name = datetime.datetime.now(datetime.timezone.utc).strftime("pg-page-cost-%Y%m%dT%H%M%S.json")
    json.dump({"env": env, "lookups": look, "scans": scans, "cost": cost},
              open(os.path.join(raw, name), "w"))
    lines = report(look, scans, cost, cost_how, env)
    os.environ.setdefault("OUT", os.path.join(REPO, "docs/cost.md"))
    write_section(BEGIN, END, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
