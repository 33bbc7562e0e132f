#!/usr/bin/env bash
# Windows (issue 17): cross-build iocap.exe for x86_64-pc-windows-gnu and run the Windows test set
# under Wine 8 (Debian 12's wine64): the engine's own unit tests, then tests/wine.rs against the
# binary. Wine is the harness, not the product (docs/windows.md says what it cannot test).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

# Debian puts the wine64 loader in /usr/lib/wine
export PATH="$PATH:/usr/lib/wine:/usr/sbin:/sbin"
need=()
command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(gcc-mingw-w64-x86-64)
command -v wine64 >/dev/null || need+=(wine64)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
rustup target list --installed | grep -qx x86_64-pc-windows-gnu || rustup target add x86_64-pc-windows-gnu

target_dir=${CARGO_TARGET_DIR:-target}
out="$target_dir/x86_64-pc-windows-gnu/debug"
cargo build --target x86_64-pc-windows-gnu -p iocap
# the code only Windows compiles (its cfg'd modules) gets the lints Linux's code gets
cargo clippy --target x86_64-pc-windows-gnu -p iocap -p iocap-platform -p iocap-engine \
  -p iocap-verify -p iocap-fsync -p iocap-monitor -p iocap-cost --all-targets -- -D warnings
# the audit's library (its fixture tests read Linux's /sys layout and are Linux's)
cargo clippy --target x86_64-pc-windows-gnu -p iocap-audit -- -D warnings

# Wine 8 lacks ProcessPrng, which Rust's std imports: a shim DLL beside the exe
mkdir -p "$target_dir/wine"
shim="$(cd "$target_dir/wine" && pwd)/bcryptprimitives.dll"
x86_64-w64-mingw32-gcc -shared -O2 -o "$shim" .ci/wine/processprng.c -ladvapi32
cp "$shim" "$out/"

# a prefix of our own, made once (wineboot takes a few seconds the first time)
export WINEPREFIX=${WINEPREFIX:-$HOME/.wine-iocap}
export WINEDEBUG=-all
[ -d "$WINEPREFIX/drive_c" ] || wine64 wineboot --init >/dev/null 2>&1 || true
# one wineserver for the whole set: by default it exits 3 s after its last client, and a client
# starting just then fails ("wine client error: recvmsg: Connection reset by peer")
wineserver -p 2>/dev/null || true  # already running: fine
trap 'wineserver -k >/dev/null 2>&1 || true' EXIT
# Wine's own services (services.exe, winedevice.exe) start with the first program and outlive it
# under a persistent server, holding the file descriptors they inherited: started by a test, they
# would hold its stdout and stderr pipes open and its wait for them would never end. Started here,
# they hold /dev/null, and no test races another to start them.
wine64 wineboot </dev/null >/dev/null 2>&1 || true

# the platform's and the engine's own tests as Windows programs: the decoders, the clock, the
# host and the devices (iocap-platform), the IOCP and sync backends, and tests/engine.rs and
# workloads.rs on real files (byte counts, offsets, throttling, fsync, queue depth) with both
# Windows engines; verify's unit tests (its runs on both engines,
# the journal and the check)
IOCAP_WINE_SHIM="$shim" CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$PWD/.ci/wine/run.sh" \
  cargo test --target x86_64-pc-windows-gnu -p iocap-platform -p iocap-engine -p iocap-verify \
  -p iocap-fsync --lib --tests \
  -- --test-threads=1

# the binary under Wine: run (iocp, sync), engine names, refusals, marker, sqlio, diskspd,
# verify, store, history, report
IOCAP_WINE_TESTS=1 IOCAP_WINE_EXE="$(cd "$out" && pwd)/iocap.exe" \
  cargo test --test wine -- --test-threads=2

echo "windows.sh: $(( $(date +%s) - start )) s"
