#!/usr/bin/env python3
"""bench/roundtrip.py: the workload round trip (issue 33, section 4). A profile made from a
capture must run what was captured, stream by stream.

For each workload: PostgreSQL (a cluster of its own, as the `postgres` user, on an ext4 file
system on a loop device over a new file in DIR, so that the device sees only the database's
I/O) is restarted with its files out of the page cache; pgbench runs under
`iocap capture MNT --files PGDATA --comm postgres`; `iocap characterise --as-profile` writes the
profile; the server is stopped; `iocap suite run profile:FILE --data MNT/rt-data --log
MNT/rt-log` runs it on the same file system (its test files made by a first, short run, so that
their creation is not recorded) under `iocap capture MNT --files MNT/rt-data MNT/rt-log` (the
whole device: the server is stopped); both traces are characterised and, per stream present in both, five figures are set
side by side: IOPS over the stream's busy seconds, read share, commonest size, mean depth
(requests in flight over its busy seconds) and durable bytes per second. Each should be within
±15 % of the recording. The CI test of the same loop is
`devices::roundtrip::pgbench_round_trip_gives_back_each_stream_within_15_percent` (10 s,
TPC-B only).

Workloads: `pgbench -S` (lookups by primary key), TPC-B (pgbench's default), and MariaDB's
(issue 34), which is a placeholder: `mariadb_round()` says it is not there yet and the table
says so, until InnoDB in the loop exists.

Usage: python3 bench/roundtrip.py DIR     (as root; DIR holds the loop device's backing file)

Knobs: DURATION (30 s per recording and per profile run), SCALE (20, ~320 MB), SB
(shared_buffers, 16MB: twenty times less than the tables, so the lookups keep reading),
CLIENTS (4), WORKLOADS ("select-only tpcb"; "mariadb" asks for the placeholder), TESTFILE_SIZE
(512M, each of the profile's test files), PGBIN (/usr/lib/postgresql/15/bin), IOCAP (by default
`cargo build --release` and target/release/iocap), OUT (docs/PERFORMANCE.md), KEEP=1 (keep the
file system, traces and profiles; the raw figures go to
target/bench/results/roundtrip-TIME.json either way), NOTE (a sentence for the set-up line).
Writes its section between <!-- roundtrip:begin --> and <!-- roundtrip:end -->; a `### Notes`
subsection inside it (the why of each miss, written by people) is kept from one run to the
next.
"""

import datetime
import importlib.util
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from perfdoc import write_section

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- roundtrip:begin -->", "<!-- roundtrip:end -->"
NOTES = "### Notes"
DURATION = int(os.environ.get("DURATION", "30"))
SCALE = int(os.environ.get("SCALE", "20"))
SB = os.environ.get("SB", "16MB")
CLIENTS = int(os.environ.get("CLIENTS", "4"))
WORKLOADS = os.environ.get("WORKLOADS", "select-only tpcb").split()
TESTFILE_SIZE = os.environ.get("TESTFILE_SIZE", "512M")
PGBIN = os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin")
IOCAP = os.environ.get("IOCAP")
TOLERANCE = 0.15
# not pgloop's (54331), pgcost's (54329), pg-capture.py's (54333) nor the CI round trip's (54335)
PORT = "54336"

# The loop file system and the cluster are bench/pg-capture.py's (its name has a dash, so it is
# loaded by path); its knobs are its module's globals, set here to this script's.
_spec = importlib.util.spec_from_file_location(
    "pg_capture", os.path.join(os.path.dirname(os.path.abspath(__file__)), "pg-capture.py"))
pgc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pgc)
pgc.PORT, pgc.SB, pgc.PGBIN = PORT, SB, PGBIN
sh = pgc.sh

# the five figures: (label, the stream's JSON field, how a cell is written)
FIGURES = [
    ("IOPS (busy s)", "iops", lambda v: f"{v:,.0f}"),
    ("read share", "read_pct", lambda v: f"{v:.1f} %"),
    ("commonest size", "size_mode_bytes", lambda v: human(v)),
    ("mean depth", "depth_mean", lambda v: f"{v:.2f}"),
    ("durable bytes/s", "durable_bytes_per_s", lambda v: f"{v / 1e6:.3f} MB/s"),
]


def human(b):
    b = int(b)
    return f"{b // 1024} KiB" if b and b % 1024 == 0 else f"{b} B"


def iocap_binary():
    if IOCAP:
        return IOCAP
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
    return os.path.join(target, "release/iocap")


def drop_from_page_cache(top):
    """Writes back and drops every file under `top` from the page cache (the server stopped):
    the database's files only, not everyone's cache as drop_caches would."""
    n = 0
    for d, _, files in os.walk(top):
        for name in files:
            path = os.path.join(d, name)
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                n += 1
            finally:
                os.close(fd)
    return n


class Capture:
    """`iocap capture MNT --files DIRS --comm COMM -o TRACE` in the background, returned once
    it records: the trace file appears only after the kernel side is attached."""

    def __init__(self, iocap, mnt, dirs, comm, trace):
        self.trace = trace
        self.err = open(trace + ".stderr", "w+")
        self.out = open(trace + ".json", "w+")
        comm_args = ["--comm", comm] if comm else []
        self.p = subprocess.Popen([iocap, "capture", mnt, "--files", *dirs, *comm_args,
                                   "-o", trace, "--no-save", "--format", "json"],
                                  stdout=self.out, stderr=self.err)
        deadline = time.time() + 60
        while not os.path.exists(trace):
            if self.p.poll() is not None or time.time() > deadline:
                self.p.kill()
                self.err.seek(0)
                sys.exit(f"iocap capture did not start recording:\n{self.err.read()}")
            time.sleep(0.02)

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        if self.p.wait() != 0:
            self.err.seek(0)
            sys.exit(f"iocap capture failed:\n{self.err.read()}")
        self.err.close()
        self.out.close()


def characterise(iocap, trace, profile=None):
    argv = [iocap, "characterise", trace, "--format", "json", "--no-save"]
    if profile:
        argv += ["--as-profile", profile, "--force"]
    return json.loads(sh(argv))["workload"]


def streams(w):
    return {s["role"]: s for s in w.get("streams", [])}


def pg_round(iocap, fs, pg, name, args, work):
    """pgbench recorded, the profile written, the profile run recorded: both workloads."""
    pg.stop()
    drop_from_page_cache(pg.data)
    pg.start(SB)  # pg-capture.py's default is its own SB
    trace = os.path.join(work, f"{name}.iotrace")
    cap = Capture(iocap, fs.mnt, [pg.data], "postgres", trace)
    bench = pg.pg(["pgbench", "-n", "-c", str(CLIENTS), "-j", str(CLIENTS), "-T", str(DURATION)]
                  + args)
    cap.stop()
    pg.stop()  # nothing of the server's beside the profile run
    tps = float(next(l.split()[2] for l in bench.splitlines() if l.startswith("tps = ")))
    profile = os.path.join(work, f"{name}.toml")
    recorded = characterise(iocap, trace, profile)
    replayed, run = profile_round(iocap, fs, name, profile, work)
    return {"name": name, "tps": tps, "recorded": recorded, "replayed": replayed,
            "profile": open(profile).read(), "run": run}


def mariadb_round(iocap, fs, work):
    """MariaDB's round trip: InnoDB in the loop is issue 34, not there yet. Returns None until
    it is; then a round as pg_round's (the server's files under --files with --comm mariadbd,
    the redo log as the log stream, the doublewrite buffer as its own)."""
    return None


def profile_round(iocap, fs, name, profile, work):
    data, log = os.path.join(fs.mnt, "rt-data"), os.path.join(fs.mnt, "rt-log")
    os.makedirs(data, exist_ok=True)
    os.makedirs(log, exist_ok=True)

    def suite(duration):
        return json.loads(sh([iocap, "suite", "run", f"profile:{profile}", "--data", data,
                              "--log", log, "--size", TESTFILE_SIZE, "--duration", duration,
                              "--pause", "0s", "--no-save", "--output", "json"]))

    # the test files are made by a first short run (their creation's writes are not the
    # profile's), reused by the recorded one
    suite("1s")
    trace = os.path.join(work, f"{name}-profile.iotrace")
    # the whole device (the server is stopped): iocap's io_uring sends some of its writes and
    # syncs from io-wq threads (iou-wrk-N), which --comm iocap would leave out
    cap = Capture(iocap, fs.mnt, [data, log], None, trace)
    run = suite(f"{DURATION}s")
    cap.stop()
    return characterise(iocap, trace), run


def miss(role, key, a, b):
    """Why the profile run's figure misses the recording's by more than the tolerance, or None.
    The rules of the CI test: the read share within 15 % of the smaller of the read and write
    shares (at least 2 points); a data stream's durable bytes, next to none when recorded (no
    checkpoint during the run), must stay under 1 % of its bytes per second; the commonest size
    may be another that was within 15 % as common when recorded."""
    x, y = a.get(key), b.get(key)
    if x is None and y is None:
        return None
    if x is None or y is None:
        return f"recorded {x}, profile run {y}"
    if key == "read_pct":
        bound = max(TOLERANCE * min(x, 100 - x), 2.0)
        return None if abs(y - x) <= bound else f"{abs(y - x):.1f} points off (at most {bound:.1f})"
    if key == "durable_bytes_per_s" and role == "log" and not a["flushes"] + a["fua_writes"]:
        # a database's log is durable: a recording without a flush of it lost them
        return "the recording has no flush of the log, so nothing to compare"
    if key == "durable_bytes_per_s" and role == "data" and x < 0.01 * a["mb_s"] * 1e6:
        most = max(0.01 * b["mb_s"] * 1e6, x)
        return None if y <= most else f"{y:,.0f} B/s, recorded next to none ({x:,.0f})"
    if key == "size_mode_bytes" and abs(y - x) > TOLERANCE * x:
        # two sizes about as common when recorded (the WAL's 8 and 24 KiB): which tops the
        # profile run is a coin toss; the recording's commonest must keep its share there
        rec, rival, rep = size_share(a, x), size_share(a, y), size_share(b, x)
        if rival >= (1 - TOLERANCE) * rec and abs(rep - rec) <= TOLERANCE * rec:
            return None
        return (f"{human(y)} on top; {human(x)} was {rec:.1} % recorded ({human(y)} {rival:.1} %), "
                f"{rep:.1} % in the profile run")
    if abs(y - x) <= TOLERANCE * abs(x):
        return None
    return f"{y / x:.2f}x" if x else f"recorded 0, profile run {y}"


def size_share(s, size):
    """The share (%) of a stream's reads and writes that are of `size` bytes."""
    rows = s.get("sizes", [])
    total = sum(r["count"] for r in rows) or 1
    return 100 * sum(r["count"] for r in rows if r["size_bytes"] == size) / total


def ratio(x, y):
    if x is None or y is None or not x:
        return "–"
    return f"{y / x:.2f}"


def report(rounds, setup):
    lines = [BEGIN, "## The workload round trip", "",
             f"Issue 33, section 4. `bench/roundtrip.py` on {setup}. Each workload is "
             "recorded with `iocap capture MNT --files PGDATA --comm postgres` from a cold page "
             "cache, its profile written by "
             "`characterise --as-profile` and run by `suite run profile:FILE` on the same file "
             "system (test files made by a first short run) under `iocap capture MNT --files "
             "DATADIR LOGDIR --comm iocap`; both traces characterised. Per stream present in "
             "both: the recording, the profile run, their ratio, and whether the profile run is "
             "within ±15 % (the read share: within 15 % of the smaller of the read and write "
             "shares, at least 2 points; a data stream's durable bytes, next to none when "
             "recorded: under 1 % of its bytes; the commonest size, where two sizes were about "
             "as common when recorded: either, the recorded one keeping its share within 15 "
             "%).", "",
             "| workload | stream | figure | recorded | profile run | ratio | ±15 % |",
             "|---|---|---|---:|---:|---:|---|"]
    misses = []
    for r in rounds:
        if r.get("missing"):
            lines.append(f"| {r['name']} | – | – | – | – | – | {r['missing']} |")
            continue
        rec, rep = streams(r["recorded"]), streams(r["replayed"])
        label = f"{r['name']} ({r['tps']:,.0f} tps)"
        for role, a in rec.items():
            b = rep.get(role)
            if b is None:
                lines.append(f"| {label} | {role} | requests | {a['reads'] + a['writes']:,} | "
                             "none | – | not in the profile run |")
                continue
            few = role not in ("data", "log") and a["reads"] + a["writes"] < 1000
            if few:
                lines.append(f"| {label} | {role} | requests | {a['reads'] + a['writes']:,} | "
                             f"{b['reads'] + b['writes']:,} | – | too few to compare |")
                continue
            for fig, key, cell in FIGURES:
                why = miss(role, key, a, b)
                if why:
                    misses.append(f"{r['name']}, {role}, {fig}: {why}")
                show = lambda v: "–" if v is None else cell(v)
                lines.append(f"| {label} | {role} | {fig} | {show(a.get(key))} | "
                             f"{show(b.get(key))} | {ratio(a.get(key), b.get(key))} | "
                             f"{'yes' if not why else '**no**: ' + why} |")
            # not judged: what the depth is made of (mean depth = IOPS × mean latency)
            lat = lambda s: (s.get("latency") or {}).get("mean_us")
            show = lambda v: "–" if v is None else f"{v:,.0f} µs"
            lines.append(f"| {label} | {role} | device latency, mean | {show(lat(a))} | "
                         f"{show(lat(b))} | {ratio(lat(a), lat(b))} | (not judged) |")
        for role, b in rep.items():
            if role not in rec:
                lines.append(f"| {label} | {role} | requests | none | "
                             f"{b['reads'] + b['writes']:,} | – | only in the profile run |")
    lines += ["", "Streams other than the data files' and the log (the file system's own "
              "requests, `other`) are small, and the profile runs every stream but the log's "
              "and temp's on the data test file, where the profile run's capture counts them "
              "as data.", ""]
    lines.append("Misses: " + ("; ".join(misses) + "." if misses else "none."))
    lines += ["", "<details><summary>The profiles written from the recordings</summary>", ""]
    for r in rounds:
        if not r.get("missing"):
            lines += [f"`{r['name']}`:", "", "```toml", r["profile"].rstrip(), "```", ""]
    lines += ["</details>", ""]
    lines += kept_notes()
    lines.append(END)
    write_section(BEGIN, END, lines)
    return lines, misses


def kept_notes():
    """The `### Notes` subsection of the section as it stands, kept (people write the why)."""
    out = os.environ.get("OUT", os.path.join(REPO, "docs/PERFORMANCE.md"))
    text = open(out).read() if os.path.exists(out) else ""
    if BEGIN not in text or END not in text:
        return []
    section = text[text.index(BEGIN):text.index(END)]
    if NOTES not in section:
        return []
    return section[section.index(NOTES):].rstrip("\n").split("\n") + [""]


def main():
    if len(sys.argv) != 2 or os.geteuid() != 0:
        sys.exit(__doc__)
    iocap = iocap_binary()
    fs = pgc.LoopFs(sys.argv[1], 4 << 30)
    pg = None
    work = tempfile.mkdtemp(prefix="iocap-roundtrip-", dir=sys.argv[1])
    try:
        rounds = []
        if any(w in WORKLOADS for w in ("select-only", "tpcb")):
            pg = pgc.Cluster(os.path.join(fs.mnt, "pg"))
            # no checkpoint during a run: its writes and fsyncs are a stream of their own that
            # a 30 s run would catch only in part
            with open(os.path.join(pg.data, "postgresql.conf"), "a") as f:
                f.write("checkpoint_timeout = 1h\n")
            pg.start(SB)
            t0 = time.time()
            pg.pg(["pgbench", "-i", "-q", "-s", str(SCALE)])
            print(f"pgbench -i -s {SCALE}: {time.time() - t0:.0f} s", file=sys.stderr)
            pg.sql("CHECKPOINT")
            version = pg.sql("SHOW server_version")[0]
            for name, args in (("select-only", ["-S"]), ("tpcb", [])):
                if name in WORKLOADS:
                    t0 = time.time()
                    rounds.append(pg_round(iocap, fs, pg, name, args, work))
                    print(f"{name}: {time.time() - t0:.0f} s", file=sys.stderr)
        if "mariadb" in WORKLOADS:
            r = mariadb_round(iocap, fs, work)
            rounds.append(r or {"name": "MariaDB", "missing": "not yet: InnoDB in the loop is "
                                "issue 34"})
        results = os.path.join(REPO, "target/bench/results")
        os.makedirs(results, exist_ok=True)
        raw = os.path.join(results, "roundtrip-"
                           + datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S")
                           + ".json")
        with open(raw, "w") as f:
            json.dump(rounds, f, indent=1)
        setup = (f"{datetime.date.today()}, {platform.node()} ({os.cpu_count()} CPUs): "
                 f"PostgreSQL {version if pg else '–'}, scale {SCALE}, shared_buffers {SB}, "
                 f"{CLIENTS} clients, {DURATION} s recorded and {DURATION} s of profile run per "
                 f"workload, test files of {TESTFILE_SIZE}, ext4 on a loop device (direct I/O to "
                 "its backing file)" + (f". {os.environ['NOTE']}" if os.environ.get("NOTE")
                                        else ""))
        lines, misses = report(rounds, setup)
        print("\n".join(lines))
        print(f"raw figures: {raw}", file=sys.stderr)
        if misses:
            print(f"{len(misses)} figures miss ±15 %", file=sys.stderr)
    finally:
        if pg:
            try:
                pg.stop()
            except RuntimeError as e:
                print(e, file=sys.stderr)
        fs.close()
        if os.environ.get("KEEP") != "1":
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
