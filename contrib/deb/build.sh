#!/usr/bin/env bash
# Builds the Debian package of the datum command: the release binary of
# datum-cli alone (not the whole workspace), the man pages and shell
# completions that binary makes, packed by cargo-deb (pinned below; it is
# installed when missing). Prints the package's path, then its contents.
#
#   contrib/deb/build.sh            # target/debian/datum_<version>-1_<arch>.deb
set -euo pipefail
cd "$(dirname "$0")/../.."

# cargo-deb 3.8.0 needs Rust 1.85; Datum's toolchain is 1.95.
CARGO_DEB_VERSION=3.8.0
if [ "$(cargo deb --version 2>/dev/null)" != "cargo-deb $CARGO_DEB_VERSION" ]; then
    cargo install cargo-deb --locked --version "$CARGO_DEB_VERSION"
fi

# No debug info in the package: the build is faster and the binary a
# fraction of the size (cargo-deb strips what is left).
export CARGO_PROFILE_RELEASE_DEBUG=false
cargo build --release --locked -p datum-cli
target=${CARGO_TARGET_DIR:-target}
bin=$target/release/datum
# cargo-deb reads `target/release/` in the asset paths as the real target
# directory, wherever that is.
contrib/deb/assets.sh "$bin" "$target/release/deb-assets"

rm -f "$target"/debian/datum_*.deb
cargo deb -p datum-cli --no-build --strip
deb=$(ls "$target"/debian/datum_*.deb)
echo "$deb"
dpkg-deb -c "$deb"
