#!/usr/bin/env bash
# Builds the Debian package of the datum command with dpkg's own tools: the
# release binary of datum-cli alone (not the whole workspace), the man pages
# and shell completions that binary makes, and the assets listed in
# [package.metadata.deb] of crates/datum-cli/Cargo.toml, packed by
# `dpkg-deb --build`; the dependencies come from `dpkg-shlibdeps`. Prints
# the package's path, then its contents.
#
#   contrib/deb/build.sh                 # target/debian/datum_<version>-1_<arch>.deb
#   DATUM_DEB_BIN=PATH contrib/deb/build.sh
#                                        # packs that binary, builds nothing
#   DATUM_DEB_COMPRESSION=none contrib/deb/build.sh
#                                        # dpkg-deb -Z: xz (the default), gzip, zstd, none
#
# Nothing is installed from crates.io for this (cargo-deb took CI longer to
# install than the package took to build): dpkg-deb and dpkg-shlibdeps
# (dpkg, dpkg-dev) and python3 (it reads Cargo.toml) are all it needs.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
target=${CARGO_TARGET_DIR:-target}
case $target in /*) ;; *) target=$root/$target ;; esac

if [ -n "${DATUM_DEB_BIN:-}" ]; then
    bin=$DATUM_DEB_BIN
else
    # No debug info, symbols stripped: the build is faster and the binary a
    # fraction of the size.
    export CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=symbols
    cargo build --release --locked -p datum-cli
    bin=$target/release/datum
fi
# The asset paths of the metadata say `target/release/`: the directory the
# made assets go to, wherever the target directory is.
made=$target/release
mkdir -p "$made"
contrib/deb/assets.sh "$bin" "$made/deb-assets"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg=$stage/pkg

# The package's fields and assets, from the crate's manifest and the
# workspace's (version, license), as NAME=VALUE lines and TAB-separated
# asset lines.
meta=$(python3 - "$root" <<'PY'
import sys, tomllib
root = sys.argv[1]
crate = tomllib.load(open(f"{root}/crates/datum-cli/Cargo.toml", "rb"))
ws = tomllib.load(open(f"{root}/Cargo.toml", "rb"))["workspace"]["package"]
deb = crate["package"]["metadata"]["deb"]
for key in ("name", "maintainer", "section", "priority", "copyright"):
    print(f"field\t{key}\t{deb[key]}")
print(f"field\tversion\t{ws['version']}")
print(f"field\tlicense\t{ws['license']}")
print(f"field\tsummary\t{crate['package']['description']}")
print("field\textended\t" + " ".join(deb["extended-description"].split()))
for source, dest, mode in deb["assets"]:
    print(f"asset\t{source}\t{dest}\t{mode}")
PY
)
field() { awk -F'\t' -v k="$1" '$1 == "field" && $2 == k { print $3 }' <<<"$meta"; }

while IFS=$'\t' read -r kind source dest mode; do
    [ "$kind" = asset ] || continue
    case $source in
        target/release/*) from=$made/${source#target/release/} ;;
        *) from=$root/crates/datum-cli/$source ;;
    esac
    [ "$source" = target/release/datum ] && from=$bin
    # A `*` in the last component is a glob; it must match something.
    files=()
    for f in $from; do
        [ -f "$f" ] || { echo "build.sh: asset $source: no file $f" >&2; exit 1; }
        files+=("$f")
    done
    for f in "${files[@]}"; do
        case $dest in
            */) to=$pkg/$dest$(basename "$f") ;;
            *) to=$pkg/$dest ;;
        esac
        [ "$source" = target/release/datum ] && to=$pkg/${dest}datum
        install -D -m "$mode" "$f" "$to"
    done
done <<<"$meta"

name=$(field name)
version=$(field version)-1
arch=$(dpkg --print-architecture)
install -d "$pkg/usr/share/doc/$name"
printf 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: %s\nFiles: *\nCopyright: %s\nLicense: %s\n' \
    "$name" "$(field copyright)" "$(field license)" >"$pkg/usr/share/doc/$name/copyright"

# dpkg-shlibdeps reads a debian/control of its own; give it a minimal one.
mkdir -p "$stage/src/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$name" "$name" >"$stage/src/debian/control"
depends=$(cd "$stage/src" && dpkg-shlibdeps -O "$pkg/usr/bin/datum" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "build.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

(cd "$pkg" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) >"$stage/md5sums"
install -d "$pkg/DEBIAN"
install -m 644 "$stage/md5sums" "$pkg/DEBIAN/md5sums"
{
    echo "Package: $name"
    echo "Version: $version"
    echo "Architecture: $arch"
    echo "Maintainer: $(field maintainer)"
    echo "Installed-Size: $(du -sk --exclude=DEBIAN "$pkg" | cut -f1)"
    echo "Depends: $depends"
    echo "Section: $(field section)"
    echo "Priority: $(field priority)"
    echo "Description: $(field summary)"
    field extended | fold -s -w 78 | sed 's/ *$//; s/^/ /'
} >"$pkg/DEBIAN/control"

mkdir -p "$target/debian"
rm -f "$target"/debian/"${name}"_*.deb
deb=$target/debian/${name}_${version}_${arch}.deb
dpkg-deb --root-owner-group -Z"${DATUM_DEB_COMPRESSION:-xz}" --build "$pkg" "$deb" >/dev/null
echo "$deb"
dpkg-deb -c "$deb"
