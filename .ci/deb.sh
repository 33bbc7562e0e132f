#!/usr/bin/env bash
# CI, as root on Debian, after the tests: build the .deb (packaging/deb.sh), install it, check
# that the binary, a man page and the bash completion are where users look, then remove it.
# Installs cargo-deb from crates.io when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/sbin:$HOME/.cargo/bin"

# 3.8: the version whose `--profile dev` this was checked with (it warns that a later one may refuse it)
command -v cargo-deb >/dev/null || cargo install cargo-deb --version 3.8.0 --locked
if dpkg -s iocap >/dev/null 2>&1; then
  echo "deb.sh: a package iocap is already installed; not touching it" >&2
  exit 1
fi
# the dev profile: the binary the tests built (the package's layout is checked, not the
# optimiser, and a release build of its own is a second, optimised build of everything)
deb=$(IOCAP_DEB_PROFILE=dev bash packaging/deb.sh | tail -n 1)
echo "built $deb"
dpkg -i "$deb"
trap 'dpkg -r iocap >/dev/null' EXIT

fail() {
  echo "deb.sh: $*" >&2
  exit 1
}
want=$(grep -m1 '^version = ' Cargo.toml | cut -d'"' -f2)
version=$(/usr/bin/iocap --version) || fail "/usr/bin/iocap --version failed"
echo "$version"
[[ $version == "iocap $want ("* ]] || fail "expected iocap $want (...), got: $version"
for f in /usr/share/man/man1/iocap.1.gz /usr/share/man/man1/iocap-run.1.gz \
  /usr/share/bash-completion/completions/iocap \
  /usr/share/zsh/vendor-completions/_iocap \
  /usr/share/fish/vendor_completions.d/iocap.fish; do
  [ -s "$f" ] || fail "$f is missing or empty"
done
bash -n /usr/share/bash-completion/completions/iocap || fail "bash rejects the completion"
if command -v man >/dev/null; then
  man -w iocap || fail "man -w iocap finds no page"
  page=$(MANPAGER=cat man iocap-run 2>&1) || fail "man iocap-run: $page"
  grep -q -- "--write-through" <<<"$page" || fail "man iocap-run lacks --write-through"
fi
dpkg -r iocap >/dev/null
trap - EXIT
[ ! -e /usr/bin/iocap ] || fail "dpkg -r left /usr/bin/iocap"
echo "deb.sh: $deb installs and removes cleanly"
