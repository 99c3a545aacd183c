#!/usr/bin/env python3
"""The hostile shapes of issue 25 (item 4), each run once under
/usr/bin/time -v with a time limit: elapsed seconds, peak memory, exit
status and the first line of what it said.

    scripts/hostile.py [--datum BIN] [--bench BIN] [--limit 30] [--work DIR] [SHAPE ...]

The shapes come from `datum-bench hostile --shape NAME` (generated, never
committed). Prints a Markdown table (the one in docs/performance.md).
A run past the limit is killed and shown as such. A shape that asks for a
passphrase runs on a pseudo-terminal, where the script types it.
"""
import argparse
import os
import pty
import re
import subprocess
import sys
import tempfile

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
    "age-scrypt": ["secret", "edit", "secrets/s.age", "--identity", "{dir}/admin.age", "--color", "never"],
    "age-scrypt-4g": ["secret", "edit", "secrets/s.age", "--identity", "{dir}/admin.age", "--color", "never"],
}

# The editor `secret edit` opens: `true` saves nothing, so the secret is
# decrypted (the identity opened) on every run and never written.
ENV = {"EDITOR": "true", "VISUAL": "true"}


# Shapes that ask for a passphrase on the terminal: what is typed there.
# They run on a pseudo-terminal of their own (the pty module), so no one
# needs to sit at one.
PASSPHRASE = {"age-scrypt": "hostile", "age-scrypt-4g": "hostile"}

# Shapes run on another shape's fleet, under a limit: `age-scrypt-4g` is
# `age-scrypt` with 4 GiB of address space (`prlimit --as`), as a smaller
# machine would have.
FLEET = {"age-scrypt-4g": "age-scrypt"}
PREFIX = {"age-scrypt-4g": ["prlimit", f"--as={4 << 30}", "--"]}


def on_terminal(cmd, cwd, passphrase):
    """Runs cmd with a new pseudo-terminal as its controlling terminal (and
    stdin, stdout, stderr), types passphrase once it asks, and gives all it
    wrote there."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            os.environ.update(ENV)
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    out = b""
    typed = False
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: the child has gone, and the terminal with it
            break
        if not data:
            break
        out += data
        if not typed and b"passphrase for" in out:
            os.write(fd, passphrase.encode() + b"\n")
            typed = True
    os.waitpid(pid, 0)
    os.close(fd)
    return out.decode(errors="replace")


def run(datum, shape, fleet, limit):
    args = [a.replace("{dir}", fleet) for a in COMMANDS[shape]]
    with tempfile.NamedTemporaryFile("r", prefix="hostile-time-") as report:
        cmd = ["timeout", "-s", "KILL", str(limit), "/usr/bin/time", "-v", "-o", report.name,
               *PREFIX.get(shape, []), datum, *args, "--fleet", fleet]
        if shape in PASSPHRASE:
            said_text = on_terminal(cmd, fleet, PASSPHRASE[shape])
            stdout = ""
        else:
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=fleet, env={**os.environ, **ENV})
            said_text, stdout = p.stderr, p.stdout
        timed = report.read()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", timed)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", timed)
    status = re.search(r"Exit status: (\d+)", timed)
    lines = [l.strip() for l in said_text.splitlines()]
    said = next((l for l in lines if l.startswith(("error", "warning"))), "")
    if not said:
        said = next((l for l in stdout.splitlines() + lines if l.strip() and "passphrase for" not in l), "")
    if wall is None or status is None:
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
    # The commands run in the fleet's directory.
    a.datum, a.bench = os.path.abspath(a.datum), os.path.abspath(a.bench)
    print("| shape | command | elapsed | peak RSS | exit | said |")
    print("|---|---|---|---|---|---|")
    for shape in a.shapes:
        made = FLEET.get(shape, shape)
        fleet = os.path.join(a.work, made)
        if not os.path.isdir(fleet):
            subprocess.run([a.bench, "hostile", "--out", a.work, "--shape", made], check=True, capture_output=True)
        elapsed, rss, code, said = run(a.datum, shape, fleet, a.limit)
        command = "datum " + " ".join(COMMANDS[shape]).replace("{dir}/", "").replace(" --color never", "")
        print(f"| {shape} | `{command}` | {elapsed} | {rss} | {code} | {said.replace('|', '/')} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
