#!/usr/bin/env bash
# bench/fuzz.sh: run every property test of iocap's parsers for longer and write the figures to
# docs/PERFORMANCE.md.
#
# The property tests (proptest) check that no input a user can type or hand over (sizes,
# durations, rates, block-size mixes, bursts, SQLIO command lines, parameter and batch files,
# suite and profile TOML) panics a parser. In `cargo test` each runs a few thousand cases, a few
# seconds in all; this script runs CASES cases per property, per crate, in the test profile
# (debug overflow checks on, so an arithmetic overflow is a failure, not a wrap-around).
#
# Knobs (environment):
#   CASES   cases per property                      (default 200000)
#   OUT     the report to update                    (default docs/PERFORMANCE.md)
#
# Every property test reads PROPTEST_CASES (`fn cases(default)` in each fuzz module). The script
# writes only the section "## Fuzzing" of OUT (replaced, or appended if missing) and the raw logs
# under target/fuzz/<UTC time>/. A failing property prints its minimal input in the log, and
# proptest stores it under the crate's proptest-regressions/; keep that input as a unit test.
# See bench/README.md.
set -euo pipefail

die() { echo "fuzz.sh: error: $*" >&2; exit 2; }
say() { echo "fuzz.sh: $*" >&2; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

CASES=${CASES:-200000}
OUT=${OUT:-$REPO/docs/PERFORMANCE.md}
[[ $CASES =~ ^[1-9][0-9]*$ ]] || die "CASES must be a positive whole number (got '$CASES')"
command -v cargo >/dev/null || die "cargo is required"
command -v python3 >/dev/null || die "python3 is required to write the report"

TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
LOGS=$TARGET_DIR/fuzz/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$LOGS"

# name | cargo test target | test name filter | the source file holding its proptest! block
TARGETS=(
    "sizes, durations, rates, block-size mixes, latencies, bursts (iocap-model)|-p iocap-model --test fuzz||crates/iocap-model/tests/fuzz.rs"
    "fsync sizes and methods (iocap-fsync)|-p iocap-fsync --test fuzz||crates/iocap-fsync/tests/fuzz.rs"
    "SQLIO flags, parameter files, batch files (iocap-sqlio)|-p iocap-sqlio --lib|fuzz::|crates/iocap-sqlio/src/fuzz.rs"
    "suite and profile TOML (iocap-plan)|-p iocap-plan --test plan|fuzz::|crates/iocap-plan/tests/plan/fuzz.rs"
    "the verify journal format (iocap-verify)|-p iocap-verify --lib|journal::|crates/iocap-verify/src/journal.rs"
    "confidence intervals, Welch's test, quartiles (iocap-stats)|-p iocap-stats --lib|no_panic_no_nan|crates/iocap-stats/src/tests.rs"
)

say "building the test binaries (test profile, overflow checks on)"
for t in "${TARGETS[@]}"; do
    IFS='|' read -r _ args _ _ <<<"$t"
    # shellcheck disable=SC2086 # $args is a list of cargo arguments
    cargo test --quiet $args --no-run 2>>"$LOGS/build.log" ||
        die "the build failed, see $LOGS/build.log"
done

RAW=$LOGS/figures.tsv
: >"$RAW"
status=0
for t in "${TARGETS[@]}"; do
    IFS='|' read -r name args filter src <<<"$t"
    log=$LOGS/$(echo "$name" | tr -c 'a-zA-Z0-9\n' '_' | cut -c1-40).log
    say "$name: $CASES cases per property"
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    if PROPTEST_CASES=$CASES cargo test --quiet $args $filter >"$log" 2>&1; then rc=0; else rc=$?; status=1; fi
    end=$(date +%s.%N)
    passed=$(grep -o '[0-9]* passed' "$log" | awk '{s += $1} END {print s + 0}')
    failed=$(grep -o '[0-9]* failed' "$log" | awk '{s += $1} END {print s + 0}')
    props=$(python3 - "$src" <<'PYEOF'
import re, sys
text = open(sys.argv[1]).read()
n = 0
for m in re.finditer(r"proptest!\s*\{", text):
    depth, i = 1, m.end()
    while depth and i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    n += text[m.end():i].count("#[test]")
print(n)
PYEOF
)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$props" "$passed" "$failed" "$rc" \
        "$(awk "BEGIN {print $end - $start}")" "$log" >>"$RAW"
done

say "writing $OUT"
export CASES OUT RAW LOGS
export DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
export CPUS=$(nproc)
export CPU_MODEL=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
export KERNEL=$(uname -r)
export RUSTC=$(rustc --version)
COMMIT=$(git log -1 --format=%h 2>/dev/null || echo unknown)
if ! git diff --quiet HEAD 2>/dev/null; then COMMIT="$COMMIT (with uncommitted changes)"; fi
export COMMIT
python3 - <<'PYEOF'
import os

E = os.environ
HEADING = "## Fuzzing"
cases = int(E["CASES"])
rows = [l.rstrip("\n").split("\t") for l in open(E["RAW"]) if l.strip()]

L = []
w = L.append
w(HEADING)
w("")
w(f"Written by `bench/fuzz.sh` on {E['DATE']}; rerun it to refresh this section (the rest of the "
  "file is not touched). How to run it: [bench/README.md](../bench/README.md).")
w("")
w("Requirement: no input a user can type or hand over panics a parser (a panic would lose the "
  "results of every test before the bad input). The property tests generate inputs (arbitrary "
  "Unicode strings and strings shaped like the real syntax) and check that each parser returns "
  "a value or an error; some also check round trips (`format_bytes` then `parse_size` gives the "
  "same byte count) and that huge numbers are errors, not overflows. Test profile: debug "
  "overflow checks on.")
w("")
w("| | |")
w("|---|---|")
w(f"| Date | {E['DATE']} |")
w(f"| Host | {E['CPUS']} CPUs ({E['CPU_MODEL']}) |")
w(f"| Kernel | `{E['KERNEL']}` |")
w(f"| Compiler | `{E['RUSTC']}` |")
w(f"| iocap | commit `{E['COMMIT']}` |")
w(f"| Cases | {cases:,} per property (`PROPTEST_CASES={cases}`) |")
w("")
w("| Target | Properties | Cases | Tests passed | Failed | Time |")
w("|---|---:|---:|---:|---:|---:|")
total_cases = total_time = total_failed = 0
for name, props, passed, failed, rc, secs, log in rows:
    props, passed, failed, secs = int(props), int(passed), int(failed), float(secs)
    if rc != "0" and failed == 0:
        failed = 1  # a crash or a build failure, not a counted test
    total_cases += props * cases
    total_time += secs
    total_failed += failed
    w(f"| {name} | {props} | {props * cases:,} | {passed} | "
      f"{'**' + str(failed) + '**' if failed else 0} | {secs:,.0f} s |")
w(f"| **all** | | **{total_cases:,}** | | **{total_failed}** | **{total_time:,.0f} s** |")
w("")
if total_failed:
    w(f"**{total_failed} failure(s)**: see the logs ({E['LOGS']}) for the minimal failing "
      "inputs; fix the parser and keep each input as a unit test.")
else:
    w("No failures: every generated input gave a value or an error.")
w("")
w("`cargo test` runs the same properties with a few thousand cases each (a few seconds in all). "
  f"Rerun: `CASES={cases} bench/fuzz.sh`; the default is 200,000 cases per property.")
section = "\n".join(L) + "\n"

path = E["OUT"]
old = open(path).read() if os.path.exists(path) else ""
lines = old.splitlines(keepends=True)
start = next((i for i, l in enumerate(lines) if l.rstrip() == HEADING), None)
if start is None:
    text = old.rstrip("\n") + ("\n\n" if old.strip() else "") + section
else:
    end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("## ")), len(lines))
    rest = "".join(lines[end:])
    text = "".join(lines[:start]) + section + ("\n" + rest if rest else "")
tmp = path + ".tmp"
open(tmp, "w").write(text)
os.replace(tmp, path)
for l in L:
    if l.startswith("|"):
        print(l)
PYEOF
say "done (logs: $LOGS)"
exit $status
