#!/usr/bin/env bash
# bench/fsync-vs-pg.sh: `iocap fsync` against PostgreSQL's pg_test_fsync on the same file system,
# and the section "## fsync methods against pg_test_fsync" of docs/PERFORMANCE.md.
#
# A benchmark, not a test. This VM's disk drifts by 20 to 40 % over tens of seconds, so the two
# tools are interleaved finely: a round is pg_test_fsync's first section ("one 8kB write", four
# methods; the script stops pg_test_fsync with SIGTERM once that section is printed, and
# pg_test_fsync removes its file) and one `iocap fsync --methods` run of the same four methods in
# the same order, the two tools taking turns at going first. Per method the verdict is the median
# over the rounds of iocap / pg_test_fsync. The methods that make the same system calls:
#   pg open_datasync (O_DSYNC|O_DIRECT, pwrite at offset 0) <-> iocap o_direct_o_dsync
#   pg fdatasync     (pwrite at 0, fdatasync)               <-> iocap fdatasync
#   pg fsync         (pwrite at 0, fsync)                   <-> iocap fsync
#   pg open_sync     (O_SYNC|O_DIRECT, pwrite at 0)         <-> iocap o_direct_o_sync
# The target: iocap's ops/s within 10 % of pg_test_fsync's.
#
# Usage: bench/fsync-vs-pg.sh [DIR]     DIR: where both tools write (default target/fsync-bench)
# Knobs (environment):
#   ROUNDS   rounds, each one run of both tools        (default 15)
#   SECS     seconds per method and tool                (default 2)
#   IOCAP    the iocap binary (default: cargo build --release, target dir $CARGO_TARGET_DIR or
#            target/)
#   PG_TEST_FSYNC  the pg_test_fsync binary (default: the newest /usr/lib/postgresql/*/bin one)
#   OUT      the report to update (default docs/PERFORMANCE.md)
#
# It writes only DIR (pg_test_fsync.out, removed by pg_test_fsync itself; iocap-fsync.testfile,
# kept like every iocap test file; results/<stamp>/ with every raw output) and OUT, where it
# replaces its own section (or appends it); a "### Notes" subsection at the end of that section,
# written by hand, is kept.
set -euo pipefail

die() { echo "fsync-vs-pg.sh: error: $*" >&2; exit 2; }
say() { echo "fsync-vs-pg.sh: $*" >&2; }

CALLER_PWD=$PWD
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

ROUNDS=${ROUNDS:-15}
SECS=${SECS:-2}
DIR=${1:-$REPO/target/fsync-bench}
case $DIR in /*) ;; *) DIR=$CALLER_PWD/$DIR ;; esac
OUT=${OUT:-$REPO/docs/PERFORMANCE.md}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive whole number (got '$ROUNDS')"
[[ $SECS =~ ^[1-9][0-9]*$ ]] || die "SECS must be a whole number of seconds (got '$SECS')"
command -v python3 >/dev/null || die "python3 is required to read the results"

PG=${PG_TEST_FSYNC:-$(ls /usr/lib/postgresql/*/bin/pg_test_fsync 2>/dev/null | sort -V | tail -1 || true)}
[[ -n $PG && -x $PG ]] || die "pg_test_fsync not found (apt-get install postgresql, or set PG_TEST_FSYNC)"

if [[ -z ${IOCAP:-} ]]; then
    say "building iocap (release)"
    cargo build --release --bin iocap >&2
    IOCAP=${CARGO_TARGET_DIR:-$REPO/target}/release/iocap
fi
[[ -x $IOCAP ]] || die "iocap binary $IOCAP is not executable"

mkdir -p "$DIR"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RES=$DIR/results/$STAMP
mkdir -p "$RES"
say "raw results in $RES"

IOCAP_METHODS=o_direct_o_dsync,fdatasync,fsync,o_direct_o_sync
run_pg() {
    say "round $1/$ROUNDS: pg_test_fsync -s $SECS (its first section)"
    # pg_test_fsync prints a result when the next label is flushed: once the second section's
    # header shows, the first section is complete and it is stopped (its SIGTERM handler
    # removes its file)
    # (a blocking read of its output: nothing polls while it measures)
    python3 - "$PG" "$SECS" "$DIR/pg_test_fsync.out" "$RES/pg-$1.txt" <<'PYEOF'
import signal, subprocess, sys
pg, secs, path, out = sys.argv[1:]
p = subprocess.Popen([pg, "-s", secs, "-f", path], stdout=subprocess.PIPE,
                     stderr=subprocess.STDOUT, text=True)
with open(out, "w") as o:
    for line in p.stdout:
        o.write(line)
        if "using two" in line:
            p.send_signal(signal.SIGTERM)
            break
p.wait()
PYEOF
    grep -q "using two" "$RES/pg-$1.txt" || die "pg_test_fsync failed: $(tail -3 "$RES/pg-$1.txt")"
}
run_iocap() {
    say "round $1/$ROUNDS: iocap fsync --sizes 8K --duration ${SECS}s --methods $IOCAP_METHODS"
    "$IOCAP" fsync "$DIR" --sizes 8K --duration "${SECS}s" --methods "$IOCAP_METHODS" --output json --no-save \
        >"$RES/iocap-$1.json" 2>"$RES/iocap-$1.err" || die "iocap fsync failed: $(tail -3 "$RES/iocap-$1.err")"
}
# odd rounds start with pg_test_fsync, even rounds with iocap: neither tool always runs first
for r in $(seq 1 "$ROUNDS"); do
    cat /proc/loadavg >"$RES/load-$r-start.txt"
    if ((r % 2)); then run_pg "$r"; run_iocap "$r"; else run_iocap "$r"; run_pg "$r"; fi
    cat /proc/loadavg >"$RES/load-$r-end.txt"
done

export RES ROUNDS SECS DIR OUT PG IOCAP IOCAP_METHODS
python3 - <<'PYEOF'
import json, os, re, statistics, subprocess, datetime

res, rounds, secs = os.environ["RES"], int(os.environ["ROUNDS"]), int(os.environ["SECS"])
out_path, pg_bin, iocap_bin, d = os.environ["OUT"], os.environ["PG"], os.environ["IOCAP"], os.environ["DIR"]
PAIRS = [("open_datasync", "o_direct_o_dsync", "`O_DSYNC\\|O_DIRECT`, pwrite at 0"),
         ("fdatasync", "fdatasync", "pwrite at 0 + fdatasync"),
         ("fsync", "fsync", "pwrite at 0 + fsync"),
         ("open_sync", "o_direct_o_sync", "`O_SYNC\\|O_DIRECT`, pwrite at 0")]

def pg_one_write(text):
    """ops/s of the 'one 8kB write' section."""
    sec = text.split("using one 8kB write", 1)[1].split("Compare", 1)[0]
    got = {}
    for line in sec.splitlines():
        m = re.match(r"\s+(\w+)\s+([\d.]+) ops/sec", line)
        if m:
            got[m.group(1)] = float(m.group(2))
    return got

pg, io, load, extra = [], [], [], []
for r in range(1, rounds + 1):
    pg.append(pg_one_write(open(f"{res}/pg-{r}.txt").read()))
    j = json.load(open(f"{res}/iocap-{r}.json"))
    f = j["fsync"]
    io.append({p["method"]: p for p in f["points"] if p["size_bytes"] == 8192})
    load += [float(open(f"{res}/load-{r}-{e}.txt").read().split()[0]) for e in ("start", "end")]
    dev = (f.get("device"), f.get("fs_type"), f.get("rotational"), f.get("write_cache"), f.get("fua"))

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

rows, verdicts = [], []
for pgm, iom, what in PAIRS:
    pv = med([p.get(pgm) for p in pg])
    iv = med([i[iom]["ops_per_s"] if i.get(iom, {}).get("available") else None for i in io])
    ratios = [i[iom]["ops_per_s"] / p[pgm] for p, i in zip(pg, io)
              if p.get(pgm) and i.get(iom, {}).get("available")]
    ratio = med(ratios)
    ok = ratio is not None and abs(ratio - 1) <= 0.10
    verdicts.append(ok)
    q = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else [ratio, ratio, ratio]
    # the noise floor: how much pg_test_fsync's own figure moves from one round to the next
    pgs = [p.get(pgm) for p in pg]
    steps = [abs(b / a - 1) for a, b in zip(pgs, pgs[1:]) if a and b]
    rows.append((pgm, iom, what, pv, iv, ratio, (q[0], q[2]), ok,
                 (min(x for x in pgs if x), max(x for x in pgs if x)), med(steps)))

p50 = {m: med([i[m]["lat_us"]["p50"] for i in io if i.get(m, {}).get("available")])
       for _, m, _ in PAIRS}

def fmt(v):
    return "n/a" if v is None else f"{v:,.0f}"

try:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
except Exception:
    commit = "?"
pgver = subprocess.run([pg_bin, "--version"], capture_output=True, text=True).stdout.strip()
when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
met = sum(verdicts)
L = []
w = L.append
w("## fsync methods against pg_test_fsync")
w("")
w(f"Written by `bench/fsync-vs-pg.sh` on {when}; rerun it to refresh this section (the rest of the "
  "file is not touched; a `### Notes` subsection at its end is kept). What the methods do: "
  "[docs/fsync.md](fsync.md).")
w("")
w("Requirement (issue 7): `iocap fsync`'s ops/s within 10 % of pg_test_fsync's on the same file "
  "system, per matching method.")
w("")
w(f"**Verdict: {met} of {len(PAIRS)} methods within 10 %** (median of the per-round ratios iocap / pg_test_fsync).")
w("")
w("| | |")
w("|---|---|")
w(f"| Date | {when} |")
w(f"| Storage | directory `{d}`: {dev[1] or '?'} on `{dev[0] or '?'}` (rotational {dev[2]}, write cache {dev[3]}, fua {dev[4]}) |")
w(f"| pg_test_fsync | `{pg_bin}` ({pgver}), `-s {secs} -f {d}/pg_test_fsync.out`; its \"one 8kB write\" section |")
w(f"| iocap | `{iocap_bin}` at commit `{commit}`, `iocap fsync {d} --sizes 8K --duration {secs}s --methods {os.environ['IOCAP_METHODS']} --output json --no-save` (pg_test_fsync's order) |")
w(f"| Rounds | {rounds}; a round is pg_test_fsync's first section (stopped once it is printed) and one iocap run; odd rounds pg_test_fsync first, even rounds iocap first |")
w(f"| Load average (1 min) at the rounds' starts and ends | {min(load):.2f} to {max(load):.2f} (2 CPUs) |")
w("")
w("| pg_test_fsync method | iocap method | system calls (both) | pg ops/s | iocap ops/s | ratio | ratio IQR | within 10 % | pg's own range | pg's round-to-round change | iocap p50 µs |")
w("|---|---|---|---:|---:|---:|---|---|---|---:|---:|")
for pgm, iom, what, pv, iv, ratio, iqr, ok, rng, step in rows:
    w(f"| {pgm} | {iom} | {what} | {fmt(pv)} | {fmt(iv)} | "
      f"{'n/a' if ratio is None else f'{ratio:.2f}×'} | {iqr[0]:.2f}–{iqr[1]:.2f} | {'yes' if ok else 'NO'} | "
      f"{fmt(rng[0])}–{fmt(rng[1])} | {'n/a' if step is None else f'{step * 100:.0f} %'} | {fmt(p50[iom])} |")
w("")
w("pg ops/s and iocap ops/s are medians over the rounds; ratio is the median of the per-round "
  "ratios iocap / pg_test_fsync, and IQR their interquartile range. pg's own range and its "
  "median round-to-round change (|pg(r+1) / pg(r) - 1|) show how far the disk moves the same "
  "tool between rounds: the noise floor the 10 % bar is measured against.")
w("")
w("Per round, ops/s as pg_test_fsync / iocap:")
w("")
w("| round | first | " + " | ".join(p for p, _, _ in PAIRS) + " |")
w("|---:|---|" + "---|" * len(PAIRS))
for r in range(rounds):
    cells = []
    for pgm, iom, _ in PAIRS:
        pv, iv = pg[r].get(pgm), io[r].get(iom, {}).get("ops_per_s")
        cells.append(f"{fmt(pv)} / {fmt(iv)}")
    w(f"| {r + 1} | {'pg' if r % 2 == 0 else 'iocap'} | " + " | ".join(cells) + " |")
section = "\n".join(L) + "\n"

text = open(out_path).read() if os.path.exists(out_path) else "# Performance\n"
head = "## fsync methods against pg_test_fsync"
if head in text:
    before, rest = text.split(head, 1)
    nxt = re.search(r"^## ", rest, re.M)
    body, after = (rest[:nxt.start()], rest[nxt.start():]) if nxt else (rest, "")
    # the subsection is a line of its own: the section's first line mentions "### Notes" too
    notes = re.split(r"^### Notes$", body, maxsplit=1, flags=re.M)
    keep = ("\n### Notes" + notes[1].rstrip("\n") + "\n") if len(notes) > 1 else ""
    text = before + section + keep + ("\n" + after if after else "")
else:
    text = text.rstrip("\n") + "\n\n" + section
open(out_path, "w").write(text)
print(section)
PYEOF
