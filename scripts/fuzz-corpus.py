#!/usr/bin/env python3
"""Writes a seed corpus for the fuzz targets from the example fleets.

Each example fleet under examples/ becomes one input in the format
datum_core::fuzz reads: files separated by a NUL byte, each a path, a
newline, then its contents. Usage: scripts/fuzz-corpus.py [OUT_DIR]
(default fuzz/corpus); it fills OUT_DIR/load and OUT_DIR/load_resolve.
"""
import os
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "fuzz", "corpus")
examples = os.path.join(root, "examples")

def fleets():
    for dirpath, dirnames, filenames in os.walk(examples):
        dirnames.sort()
        if "datum.yaml" in filenames:
            yield dirpath

for fleet in fleets():
    parts = []
    for dirpath, dirnames, filenames in os.walk(fleet):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, fleet)
            with open(full, "rb") as f:
                body = f.read().replace(b"\0", b"")
            parts.append(rel.encode() + b"\n" + body)
    data = b"\0".join(parts)
    name = os.path.relpath(fleet, examples).replace(os.sep, "-")
    for target in ("load", "load_resolve"):
        os.makedirs(os.path.join(out, target), exist_ok=True)
        with open(os.path.join(out, target, name), "wb") as f:
            f.write(data)
    print(f"{name}: {len(parts)} files, {len(data)} bytes")
