#!/usr/bin/env python3
"""Source files and functions over the size limits of ARCHITECTURE.md.

Lists non-test `.rs` files under `crates/*/src` longer than --file-limit lines
and functions longer than --fn-limit lines. Test code does not count: files
named `tests.rs`, anything under a `tests/` or `benches/` directory, and an
inline `#[cfg(test)] mod tests { ... }` block (whose lines are left out of the
file's count too). A function is counted from its `fn` line to the line of
its closing brace.

    scripts/sizes.py                 # what is over the limits; exit 1 if any
    scripts/sizes.py --all crates/datum-core/src/fleet.rs ...
                                     # every function of those files, largest first

Brace matching skips comments, strings (raw ones too) and char literals, so
`"{"` does not open a block; it is a line counter, not a Rust parser.
"""

import argparse
import pathlib
import re
import sys

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)")
TEST_MOD = re.compile(r"^\s*#\[cfg\(test\)\]\s*$")
MOD_TESTS = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+tests\s*\{")


def code_only(text):
    """The text with comments, strings and char literals blanked out, newlines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        m = re.match(r'b?r(#*)"', text[i:i + 300])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1]))
            i = j + 1
            continue
        if c == "'":
            # A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            m = re.match(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", text[i:i + 12])
            if m:
                out.append(" " * m.end())
                i += m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def block_end(lines, start):
    """Index of the line closing the first block opened at or after `start`."""
    depth, opened = 0, False
    for k in range(start, len(lines)):
        for ch in lines[k]:
            if ch == "{":
                depth, opened = depth + 1, True
            elif ch == "}":
                depth -= 1
                if opened and depth == 0:
                    return k
            elif ch == ";" and not opened and depth == 0:
                return None  # a declaration without a body
    return None


def measure(path):
    """(counted lines, [(fn name, first line, length)]) for one file."""
    text = path.read_text()
    lines = code_only(text).split("\n")
    raw = text.split("\n")
    if raw and raw[-1] == "":
        raw, lines = raw[:-1], lines[:len(raw) - 1]
    test_lines = set()
    for k, line in enumerate(raw):
        if TEST_MOD.match(line) and k + 1 < len(raw) and MOD_TESTS.match(raw[k + 1]):
            end = block_end(lines, k + 1)
            if end is not None:
                test_lines.update(range(k, end + 1))
    fns = []
    for k, line in enumerate(lines):
        if k in test_lines:
            continue
        m = FN.match(line)
        if not m:
            continue
        end = block_end(lines, k)
        if end is not None:
            fns.append((m.group(1), k + 1, end - k + 1))
    return len(raw) - len(test_lines), fns


def is_test_file(path):
    parts = path.parts
    return path.name == "tests.rs" or "tests" in parts or "benches" in parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", type=pathlib.Path)
    ap.add_argument("--file-limit", type=int, default=600)
    ap.add_argument("--fn-limit", type=int, default=80)
    ap.add_argument("--all", action="store_true", help="every file and function given, not only those over")
    args = ap.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    paths = args.paths or sorted(root.glob("crates/*/src/**/*.rs"))
    over = False
    for path in paths:
        if is_test_file(path):
            continue
        count, fns = measure(path)
        shown = path.resolve().relative_to(root) if path.resolve().is_relative_to(root) else path
        big = count > args.file_limit
        long_fns = sorted((f for f in fns if args.all or f[2] > args.fn_limit), key=lambda f: -f[2])
        over |= big or any(f[2] > args.fn_limit for f in fns)
        if args.all or big or long_fns:
            print(f"{count:5}  {shown}{'  (over)' if big else ''}")
        for name, line, length in long_fns:
            flag = "  (over)" if length > args.fn_limit else ""
            print(f"       {length:4}  fn {name} (line {line}){flag}")
    sys.exit(1 if over else 0)


if __name__ == "__main__":
    main()
