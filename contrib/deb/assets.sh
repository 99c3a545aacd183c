#!/usr/bin/env bash
# Makes what the package ships besides the binary, with that binary:
#
#   contrib/deb/assets.sh DATUM DIR
#
# DIR/man/*.1.gz (one page per command, compressed as Debian policy asks;
# -n keeps the bytes the same on every build) and DIR/completions/ for
# bash, zsh and fish. The paths are the ones [package.metadata.deb] in
# crates/datum-cli/Cargo.toml lists.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: assets.sh DATUM DIR" >&2; exit 64; }
bin=$1
dir=$2
rm -rf "$dir"
mkdir -p "$dir/completions"
"$bin" man --quiet --out "$dir/man"
gzip -9n "$dir"/man/*.1
"$bin" completions bash >"$dir/completions/datum.bash"
"$bin" completions fish >"$dir/completions/datum.fish"
{
    "$bin" completions zsh
    # zsh loads this file from its fpath as the body of `_datum` on the
    # first Tab: complete that Tab too, not only the ones after it.
    echo '_clap_dynamic_completer_datum "$@"'
} >"$dir/completions/_datum"
