#!/usr/bin/env python3
"""The hostile shapes of issue 25 (item 4), each run once under
/usr/bin/time -v with a time limit: elapsed seconds, peak memory, exit
status and the first line of what it said.

    scripts/hostile.py [--datum BIN] [--bench BIN] [--limit 30] [--work DIR] [SHAPE ...]

The shapes come from `datum-bench hostile --shape NAME` (generated, never
committed). Prints a Markdown table (the one in docs/performance.md).
A run past the limit is killed and shown as such.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# shape -> the datum command run on it ({dir} is the generated fleet).
COMMANDS = {
    "alt-render": ["render", "h1"],
    "alt-suggest": ["check"],
    "alt-overlap": ["check"],
    "exec-env": ["check"],
    "tpl-format": ["render", "h0"],
    "tpl-join": ["render", "h0"],
    "tpl-replace": ["render", "h0"],
    "tpl-parallel": ["check"],
    "age-stanzas": ["secret", "rekey", "--identity", "{dir}/admin.key"],
}


def run(datum, shape, fleet, limit):
    args = [a.replace("{dir}", fleet) for a in COMMANDS[shape]]
    cmd = ["timeout", "-s", "KILL", str(limit), "/usr/bin/time", "-v", datum, *args, "--fleet", fleet]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=fleet)
    err = p.stderr
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", err)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    status = re.search(r"Exit status: (\d+)", err)
    said = next((l for l in err.splitlines() if l.startswith(("error", "warning"))), "")
    if not said:
        said = next((l for l in p.stdout.splitlines() if l.strip()), "")
    if p.returncode == -9 or wall is None:
        return f"killed at {limit} s", "-", "-", ""
    m, s = wall.group(1).split(":")[-2:]
    seconds = float(m) * 60 + float(s)
    return f"{seconds:.2f} s", f"{int(rss.group(1)) // 1024} MiB", status.group(1), said[:110]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datum", default=os.path.join(ROOT, "target", "release", "datum"))
    ap.add_argument("--bench", default=os.path.join(ROOT, "target", "release", "datum-bench"))
    ap.add_argument("--limit", type=int, default=30)
    ap.add_argument("--work", default="/tmp/datum-hostile")
    ap.add_argument("shapes", nargs="*", default=list(COMMANDS))
    a = ap.parse_args()
    print("| shape | command | elapsed | peak RSS | exit | said |")
    print("|---|---|---|---|---|---|")
    for shape in a.shapes:
        fleet = os.path.join(a.work, shape)
        if not os.path.isdir(fleet):
            subprocess.run([a.bench, "hostile", "--out", a.work, "--shape", shape], check=True, capture_output=True)
        elapsed, rss, code, said = run(a.datum, shape, fleet, a.limit)
        command = "datum " + " ".join(COMMANDS[shape]).replace("{dir}/", "")
        print(f"| {shape} | `{command}` | {elapsed} | {rss} | {code} | {said.replace('|', '/')} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
