#!/usr/bin/env python3
"""Writes a directory of run reports for every host of a fleet, to measure
`datum rollout status` and `gate` on a collector's directory of a large
fleet (docs/rollouts.md).

Each host gets RUNS reports in DIR/<host>/<run-id>.json, one an hour up to
11:00 on 2026-12-06, each carrying an apply report of 25 unchanged
resources (about 6 KB). The last run of about half the hosts (chosen by a
seeded random draw) applied the fleet's HEAD, every other run HEAD~1.

    datum-bench gen --hosts 10000 --seed 1 --out fleet
    (cd fleet && printf 'rollout:\\n  - {name: canary, percent: 1}\\n  - {name: rest, after: 1h}\\n' >> datum.yaml \\
       && git init -q && git add -A && git commit -qm one && git commit -qm two --allow-empty)
    scripts/rollout-reports.py fleet reports --datum target/release/datum
    /usr/bin/time -v target/release/datum --fleet fleet rollout status \\
        --reports reports --at 2026-12-06T12:00:00Z
"""

import argparse
import json
import pathlib
import random
import subprocess


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fleet", type=pathlib.Path)
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--datum", default="datum")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    def git(*a):
        return subprocess.check_output(["git", "-C", str(args.fleet), *a], text=True).strip()

    new, old = git("rev-parse", "HEAD"), git("rev-parse", "HEAD~1")
    listed = subprocess.check_output(
        [args.datum, "--fleet", str(args.fleet), "hosts", "--format", "json"], text=True
    )
    hosts = [h["host"] for h in json.loads(listed)["hosts"]]
    rng = random.Random(args.seed)
    resources = {
        "datum": "v1alpha1",
        "type": "ApplyReport",
        "resources": {f"File[f{i}]": {"status": "unchanged", "changes": []} for i in range(25)},
    }
    for host in hosts:
        d = args.out / host
        d.mkdir(parents=True, exist_ok=True)
        for k in range(args.runs):
            hour = 11 - (args.runs - 1 - k)
            last = k == args.runs - 1
            commit = new if last and rng.random() < 0.5 else old
            run_id = f"20261206T{hour:02}0000Z-0000"
            report = {
                "datum": "v1alpha1", "type": "RunReport", "run_id": run_id, "host": host,
                "started": f"2026-12-06T{hour:02}:00:00.000Z",
                "finished": f"2026-12-06T{hour:02}:00:04.000Z",
                "mode": "git", "source": "https://git.example.com/fleet.git", "commit": commit,
                "cached_input": False, "fetch_failures_total": 0, "notes": [],
                "summary": {"changed": 0, "would_change": 0, "failed": 0, "skipped": 0,
                            "unchanged": 25},
                "resources": resources, "exit_status": 0,
                "facts": {"os_id": "debian", "arch": "x86_64"}, "label_mismatches": [],
                "insecure_allow_unsigned": False, "input_expires": None,
                "input_refusals_total": {}, "pending": None, "rolled_back": None,
            }
            (d / f"{run_id}.json").write_text(json.dumps(report, indent=1))
    print(f"{len(hosts)} hosts, {len(hosts) * args.runs} reports in {args.out}")


if __name__ == "__main__":
    main()
