#!/usr/bin/env bash
# Builds target/debian/iocap_<version>-1_<arch>.deb with cargo-deb (`cargo install cargo-deb`):
# a release build, then the man pages and shell completions that the binary itself generates,
# then `cargo deb --no-build`, which packages them as [package.metadata.deb] in Cargo.toml lists.
# Extra arguments go to cargo deb (e.g. --output DIR). Prints the path of the .deb.
# IOCAP_DEB_PROFILE names another cargo profile (CI's package check uses `dev`, the binary its
# tests already built, not a release build of its own).
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${IOCAP_DEB_PROFILE:-release}
cargo build --profile "$profile" --bin iocap
target_dir=$(cargo metadata --no-deps --format-version 1 |
  grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)
# cargo's directory for the dev profile is `debug`
profile_dir=$profile
[ "$profile" != dev ] || profile_dir=debug
bin="$target_dir/$profile_dir/iocap"
# target/assets in this directory, whatever CARGO_TARGET_DIR is: cargo-deb takes files under
# target/release/ for build products and would neither look for them here nor gzip man pages
assets=target/assets
rm -rf "$assets"
"$bin" man --dir "$assets/man" >/dev/null
mkdir -p "$assets/completions"
"$bin" completions bash >"$assets/completions/iocap"
"$bin" completions zsh >"$assets/completions/_iocap"
"$bin" completions fish >"$assets/completions/iocap.fish"
# --strip: the release profile keeps line tables (debug = 1) for profiling; a package does not.
# cargo-deb reads the asset `target/release/iocap` as the chosen profile's binary.
cargo deb --no-build --profile "$profile" --strip "$@"
