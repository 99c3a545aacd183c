#!/usr/bin/env python3
"""CLI benchmarks of the release `datum` binary on generated fleets.

Every figure is the median of several runs, measured with /usr/bin/time -v
(wall time and peak memory). Each size is measured in one sitting beside its
parse floor, so the ratios compare like with like on a shared machine.

    scripts/bench.py [--sizes 1000,10000,100000] [--runs 5] [--work DIR]

Prints a Markdown table (the one in docs/performance.md).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATUM = os.path.join(ROOT, "target", "release", "datum")
BENCH = os.path.join(ROOT, "target", "release", "datum-bench")


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def timed(args, cwd=None, ok=(0,)):
    """Wall seconds and peak RSS (KiB) of one run. /usr/bin/time -v gives the
    peak memory; its wall clock has only centiseconds, so the wall time is
    taken around it (the wrapper adds well under a millisecond)."""
    start = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-v", *args], cwd=cwd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if p.returncode not in ok:
        sys.exit(f"{' '.join(args)} exited {p.returncode}:\n{p.stderr[-2000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    return seconds, rss


def median_of(runs, args, **kw):
    results = [timed(args, **kw) for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results)


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.net",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.net",
               GIT_CONFIG_NOSYSTEM="1", HOME=repo)
    sh("git", "-c", "init.defaultBranch=main", "-c", "gc.auto=0", *args, cwd=repo, env=env)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--work", default=os.path.join(ROOT, "target", "bench-fleets"))
    a = ap.parse_args()
    sh("cargo", "build", "--release", "--locked", "-p", "datum-cli", "-p", "datum-bench", cwd=ROOT)
    has_diff = re.search(r"^\s+diff\s", sh(DATUM, "--help").stdout, re.M) is not None

    rows = []
    for n in [int(s) for s in a.sizes.split(",")]:
        fleet = os.path.join(a.work, f"fleet-{n}")
        shutil.rmtree(fleet, ignore_errors=True)
        sh(BENCH, "gen", "--hosts", str(n), "--seed", "1", "--out", fleet)
        # Two revisions for diff: the second changes one role's mode.
        git(fleet, "init", "-q")
        git(fleet, "add", "-A")
        git(fleet, "commit", "-qm", "generated")
        layer = os.path.join(fleet, "roles", "web", "layer.yaml")
        text = open(layer).read().replace('mode: "0640"', 'mode: "0644"', 1)
        open(layer, "w").write(text)
        git(fleet, "commit", "-qam", "web config mode")
        git(fleet, "gc", "-q")  # packed, as in a clone

        floor = float(sh(BENCH, "floor", fleet, "--repeat", str(a.runs)).stdout.split()[0])
        floor_serial = float(sh(BENCH, "floor", fleet, "--serial", "--repeat", str(a.runs)).stdout.split()[0])
        check, check_rss = median_of(a.runs, [DATUM, "check", "--fleet", fleet])
        out = os.path.join(a.work, f"out-{n}")
        render_all, render_rss = median_of(max(3, a.runs // 2), [DATUM, "render", "--all", "--out", out, "--fleet", fleet])
        host = sorted(os.listdir(out))[len(os.listdir(out)) // 2].rsplit(".", 1)[0]
        render_one, _ = median_of(a.runs, [DATUM, "render", host, "--fleet", fleet])
        explain_one, _ = median_of(a.runs, [DATUM, "explain", "--host", host, "--fleet", fleet])
        row = dict(n=n, floor=floor, floor_serial=floor_serial, check=check, check_rss=check_rss,
                   render_all=render_all, render_rss=render_rss, render_one=render_one, explain_one=explain_one)
        if has_diff:
            row["diff"], row["diff_rss"] = median_of(max(3, a.runs // 2),
                                                     [DATUM, "diff", "HEAD~1", "HEAD", "--fleet", fleet], cwd=fleet, ok=(0, 3))
        rows.append(row)
        print(f"measured {n} hosts", file=sys.stderr)

    print("| hosts | parse floor (parallel / 1 thread) | check | check ÷ floor | check peak RSS | render --all | render one host | explain one host |" + (" diff two revisions |" if has_diff else ""))
    print("|---|---|---|---|---|---|---|---|" + ("---|" if has_diff else ""))
    for r in rows:
        line = (f"| {r['n']:,} | {r['floor']*1000:.0f} ms / {r['floor_serial']*1000:.0f} ms | {r['check']*1000:.0f} ms | "
                f"{r['check']/r['floor']:.2f}× | {r['check_rss']/1024:.0f} MiB | {r['render_all']*1000:.0f} ms | "
                f"{r['render_one']*1000:.0f} ms | {r['explain_one']*1000:.0f} ms |")
        if has_diff:
            line += f" {r['diff']*1000:.0f} ms |"
        print(line)
    if len(rows) > 1:
        by = {r["n"]: r for r in rows}
        for small, big in zip(sorted(by), sorted(by)[1:]):
            print(f"\ncheck at {big:,} hosts is {by[big]['check']/by[small]['check']:.1f}× check at {small:,}.")


if __name__ == "__main__":
    main()
