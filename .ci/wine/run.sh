#!/usr/bin/env bash
# cargo's runner for x86_64-pc-windows-gnu (set by .ci/windows.sh): runs a Windows test binary
# under wine64 with the ProcessPrng shim next to it.
set -euo pipefail
exe=$1
shift
[ -e "$(dirname "$exe")/bcryptprimitives.dll" ] || cp "$IOCAP_WINE_SHIM" "$(dirname "$exe")/"
WINEDEBUG=-all WINEDLLOVERRIDES="bcryptprimitives=n,b" exec wine64 "$exe" "$@"
