#!/usr/bin/env bash
# What CI runs on a change to a fleet: install datum if it is not on PATH,
# check the fleet, diff every host from the base revision to the change,
# and write a pull-request comment.
#
#   datum-review.sh BASE [HEAD]
#
# Run it at the root of the fleet's git repository (or set DATUM_FLEET to
# the fleet directory inside it). BASE and HEAD are anything git names a
# commit with; HEAD defaults to HEAD. The history must reach BASE (a
# shallow clone must fetch it).
#
# Environment:
#   DATUM_SOURCE      where to install datum from when it is not on PATH:
#                     a Datum source checkout, or a git URL to clone one
#   DATUM_REF         with a git URL: the branch or tag to clone
#   DATUM_FLEET       the fleet directory, if not the current directory
#   DATUM_REVIEW_OUT  where the results go (default: datum-review)
#
# Writes into DATUM_REVIEW_OUT:
#   check.txt    what `datum check --deny-warnings` printed
#   diff.txt     what `datum diff BASE HEAD` printed (the report, then errors)
#   diff.json    the same diff as JSON, for bots
#   comment.md   a Markdown comment: a headline, check's result, the diff
#
# Exit status: 0 when the change checks clean and resolves (whether or not
# hosts change), 1 when check finds errors or warnings or the new side does
# not resolve, anything else when datum could not run (bad revision, no
# fleet, install failed).
set -uo pipefail

usage() {
    echo "usage: datum-review.sh BASE [HEAD]" >&2
    exit 64
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
base=$1
head=${2:-HEAD}
out=${DATUM_REVIEW_OUT:-datum-review}
mkdir -p "$out" || exit 1

# 1. datum itself.
if ! command -v datum >/dev/null 2>&1; then
    source=${DATUM_SOURCE:-}
    if [ -z "$source" ]; then
        echo "datum is not on PATH; set DATUM_SOURCE to a Datum checkout or git URL" >&2
        exit 69
    fi
    if [ ! -d "$source" ]; then
        clone=$(mktemp -d)
        git clone --quiet --depth 1 ${DATUM_REF:+--branch "$DATUM_REF"} "$source" "$clone" || exit 69
        source=$clone
    fi
    echo "installing datum from $source" >&2
    cargo install --locked --quiet --path "$source/crates/datum-cli" || exit 69
    export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
fi
datum --version >&2 || exit 69

# 2. check: every error and warning of the change.
datum check --deny-warnings --color never >"$out/check.txt" 2>&1
check=$?
check_line=$(tail -n 1 "$out/check.txt")

# 3. diff: what the change does to every host.
datum diff "$base" "$head" --exit-code --color never >"$out/diff.txt" 2>"$out/diff.err"
diff=$?
cat "$out/diff.err" >>"$out/diff.txt"
rm -f "$out/diff.err"
datum diff "$base" "$head" --format json >"$out/diff.json" 2>/dev/null

case "$diff" in
    0) headline="no host changes" ;;
    3) headline=$(head -n 3 "$out/diff.txt" | tail -n 1) ;;
    1) headline="the change does not resolve" ;;
    *) headline="datum diff could not run (status $diff)" ;;
esac
if [ "$check" -ne 0 ] && [ "$diff" -ne 1 ]; then
    headline="$headline; datum check fails"
fi

# 4. The comment. The fence is longer than any run of backticks in the
# text, and the diff is cut to stay under the comment size forges take.
fence() {
    local longest
    longest=$(grep -o '`*' "$1" | awk '{ if (length > n) n = length } END { print n + 0 }')
    [ "$longest" -lt 3 ] && longest=2
    printf '%*s' $((longest + 1)) '' | tr ' ' '`'
}
limit=60000
{
    echo "### Datum: $headline"
    echo
    echo "\`datum check\`: $check_line"
    echo
    echo "<details$([ "$diff" -ne 0 ] && echo ' open')><summary>datum diff $base $head</summary>"
    echo
    f=$(fence "$out/diff.txt")
    echo "${f}text"
    if [ "$(wc -c <"$out/diff.txt")" -gt "$limit" ]; then
        head -c "$limit" "$out/diff.txt"
        echo
        echo "... (cut: the whole diff is in the job's datum-review/diff.txt)"
    else
        cat "$out/diff.txt"
    fi
    echo "$f"
    echo
    echo "</details>"
    if [ "$check" -ne 0 ]; then
        echo
        echo "<details open><summary>datum check</summary>"
        echo
        f=$(fence "$out/check.txt")
        echo "${f}text"
        head -c "$limit" "$out/check.txt"
        echo "$f"
        echo
        echo "</details>"
    fi
} >"$out/comment.md"

cat "$out/diff.txt"
echo "datum-review: $headline" >&2

# 5. The status: usage and install problems first, then failures.
case "$diff" in
    0 | 3) ;;
    1) exit 1 ;;
    *) exit "$diff" ;;
esac
[ "$check" -eq 0 ] || exit 1
exit 0
