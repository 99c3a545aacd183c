#!/usr/bin/env python3
"""Import cycles between the top-level modules of every crate.

A crate's modules are found as rustc finds them: from `src/lib.rs`,
`src/main.rs` and `src/bin/*.rs`, following `mod NAME;` declarations
(`#[path = "..."]` honoured). A module declared `#[cfg(test)]` is test-only
and left out, and so is every `#[cfg(test)]` item inside a file (a
`mod tests { ... }` block, a test helper, a `use`).

An edge `a -> b` is any path from top-level module `a` that names top-level
module `b`: `use crate::b::...`, grouped and nested `use crate::{b, c::{d}}`,
`crate::b::f()` written in code, `super::` chains that climb to the crate
root, `$crate::b` in a macro, and intra-doc links in `///` and `//!`
comments (rustdoc resolves them, so they break when `b` moves). Strings and
plain `//` comments do not count.

A cycle is a strongly connected component of two or more modules. Each is
printed with the edges that close it and where each is written:

    scripts/cycles.py              # every cycle; exit 1 if any
    scripts/cycles.py --edges      # every crate's modules and edges, for reading

It is a reader of Rust text, not a Rust parser: it blanks comments and
strings, then matches brace pairs.
"""

import argparse
import collections
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from sizes import code_only  # noqa: E402  (the one comment and string blanker)

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
MOD_DECL = re.compile(
    r"((?:#\s*\[[^\]]*\]\s*)*)(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*([;{])"
)
CFG_TEST = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")
PATH_ATTR = re.compile(r'#\s*\[\s*path\s*=\s*"([^"]*)"\s*\]')
# A path that starts at the crate root or climbs to it.
PATH = re.compile(r"(?<![A-Za-z0-9_])(\$?crate|(?:super\s*::\s*)+|self)\s*::\s*")


def with_docs(text, code):
    """`code` (`text` blanked by `code_only`) with the lines of `///` and
    `//!` comments put back, so their intra-doc links are read."""
    out = []
    for line, blanked in zip(text.split("\n"), code.split("\n")):
        doc = re.match(r"\s*//[/!](?!/)", line)
        out.append(line if doc else blanked)
    return "\n".join(out)


def item_end(code, start):
    """Offset just past the item starting at `start`: its `;` or closing `}`."""
    depth = 0
    for k in range(start, len(code)):
        ch = code[k]
        if ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
            if depth == 0 and ch == "}":
                return k + 1
        elif ch == ";" and depth == 0:
            return k + 1
    return len(code)


def without_tests(code):
    """`code` with every `#[cfg(test)]` item blanked, offsets kept."""
    out = list(code)
    for m in CFG_TEST.finditer(code):
        if out[m.start()] == " ":
            continue  # inside an item already blanked
        end = item_end(code, m.end())
        for k in range(m.start(), end):
            if out[k] != "\n":
                out[k] = " "
    return "".join(out)


class Crate:
    def __init__(self, name, src):
        self.name = name
        self.src = src
        self.modules = set()  # top-level module names
        # (from, to) -> [(file, line)]
        self.edges = collections.defaultdict(list)


def child_file(parent_file, parent_is_dir_owner, name, attr_path):
    """Where `mod name;` declared in `parent_file` lives."""
    base = parent_file.parent
    if not parent_is_dir_owner:
        base = base / parent_file.stem
    if attr_path:
        # `#[path]` is relative to the declaring file's directory.
        return parent_file.parent / attr_path
    for candidate in (base / f"{name}.rs", base / name / "mod.rs"):
        if candidate.is_file():
            return candidate
    return None


def owns_dir(path):
    return path.name in ("mod.rs", "lib.rs", "main.rs") or path.parent.name == "bin"


def inline_mods(code):
    """[(open offset, close offset, name)] of inline `mod name { ... }` blocks."""
    found = []
    for m in MOD_DECL.finditer(code):
        if m.group(3) == "{":
            open_at = m.end() - 1
            found.append((open_at, item_end(code, open_at), m.group(2)))
    return found


def resolve(prefix, module, inner):
    """The absolute module path a path starting with `prefix` names, from
    inside `module` (a list of names, crate root = [])."""
    prefix = re.sub(r"\s+", "", prefix)
    if prefix in ("crate", "$crate"):
        return []
    if prefix == "self":
        return module + inner
    ups = prefix.count("super")
    here = module + inner
    if ups > len(here):
        return None
    return here[: len(here) - ups]


def first_segments(code, at):
    """The first name of each path after `...::` at offset `at`: one name, or
    the first name of every element of a `{...}` group, nested groups
    included (`{a, b::{c}}` gives a and b)."""
    rest = code[at:]
    m = re.match(IDENT, rest)
    if m:
        return [m.group(0)]
    if not rest.startswith("{"):
        return []
    end = item_end(rest, 0)
    group = rest[1:end - 1]
    names, depth, element = [], 0, ""
    for ch in group + ",":
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            m = re.match(r"\s*(" + IDENT + ")", element)
            if m and m.group(1) != "self":
                names.append(m.group(1))
            element = ""
        else:
            element += ch
    return names


def read_file(crate, path, module):
    """Record the edges written in `path`, the file of `module`, and read the
    files of the modules it declares."""
    text = path.read_text()
    blanked = code_only(text)
    code = without_tests(blanked)
    docs = without_tests(with_docs(text, blanked))
    top = module[0] if module else None
    inlines = inline_mods(code)
    for m in PATH.finditer(docs):
        inner = [name for (a, b, name) in inlines if a < m.start() < b]
        target = resolve(m.group(1), module, inner)
        if target is None:
            continue
        for name in first_segments(docs, m.end()) if not target else [target[0]]:
            to = name if not target else target[0]
            if top and to != top:
                line = text.count("\n", 0, m.start()) + 1
                crate.edges[(top, to)].append((path.relative_to(crate.src.parent), line))
    for m in MOD_DECL.finditer(code):
        if m.group(3) != ";":
            continue
        attrs = text[m.start(1):m.end(1)]
        if CFG_TEST.search(attrs):
            continue
        p = PATH_ATTR.search(attrs)
        child = child_file(path, owns_dir(path), m.group(2), p.group(1) if p else None)
        if child is None:
            continue
        inner = [name for (a, b, name) in inlines if a < m.start() < b]
        sub = module + inner + [m.group(2)]
        if len(sub) == 1:
            crate.modules.add(sub[0])
        read_file(crate, child, sub)


def sccs(nodes, edges):
    """Strongly connected components of two or more nodes, each sorted."""
    succ = collections.defaultdict(set)
    for a, b in edges:
        if a in nodes and b in nodes:
            succ[a].add(b)
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sorted(found)


def crates(root):
    for dir in sorted((root / "crates").iterdir()):
        src = dir / "src"
        if not src.is_dir():
            continue
        roots = [src / "lib.rs", src / "main.rs"] + sorted((src / "bin").glob("*.rs"))
        for entry in roots:
            if entry.is_file():
                # lib.rs and main.rs are two crates sharing a directory.
                name = dir.name if entry.name == "lib.rs" else f"{dir.name} ({entry.stem})"
                crate = Crate(name, src)
                read_file(crate, entry, [])
                yield crate


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent)
    ap.add_argument("--edges", action="store_true", help="print every edge")
    args = ap.parse_args()
    total = 0
    for crate in crates(args.root):
        if args.edges:
            print(f"{crate.name}: modules: {' '.join(sorted(crate.modules))}")
            for (a, b), places in sorted(crate.edges.items()):
                if b in crate.modules:
                    file, line = places[0]
                    print(f"{crate.name}: {a} -> {b}  ({file}:{line})")
        for comp in sccs(crate.modules, crate.edges):
            total += 1
            print(f"{crate.name}: cycle of {len(comp)}: {' '.join(comp)}")
            for (a, b), places in sorted(crate.edges.items()):
                if a in comp and b in comp:
                    file, line = places[0]
                    more = f" and {len(places) - 1} more" if len(places) > 1 else ""
                    print(f"    {a} -> {b}  ({file}:{line}{more})")
    print(f"cycles: {total}")
    sys.exit(1 if total else 0)


if __name__ == "__main__":
    main()
