#!/usr/bin/env python3
"""Datum against ansible-inventory on the same generated fleet.

The generated fleet is written as an Ansible inventory: every layer becomes
a group holding the hosts its matcher selects, with `ansible_group_priority`
set to the layer's precedence, and every field becomes a group variable
(`r_<type>_<title>_<field>`). Before timing anything, the script checks that
both tools give the same values for a sample of hosts. Then it times
`ansible-inventory --list` and `datum check` in the same run.

    scripts/ansible-compare.py [--hosts 10000] [--runs 3] [--sample 25]

ansible-core comes from PyPI into target/ansible-venv the first time.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "target", "ansible-venv")
DATUM = os.path.join(ROOT, "target", "release", "datum")
BENCH = os.path.join(ROOT, "target", "release", "datum-bench")


def ensure_venv():
    """Re-run this script inside a venv that has ansible-core (and PyYAML)."""
    py = os.path.join(VENV, "bin", "python")
    if sys.prefix == os.path.abspath(VENV):
        return
    if not os.path.exists(os.path.join(VENV, "bin", "ansible-inventory")):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "ansible-core"], check=True)
    os.execv(py, [py, *sys.argv])


def var(rid, field):
    kind, title = re.match(r"^(\w+)\[(.*)\]$", rid).groups()
    return re.sub(r"[^A-Za-z0-9_]", "_", f"r_{kind}_{title}_{field}").lower()


def load_fleet(root):
    import yaml
    hosts, layers = {}, []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "files")
        for f in sorted(files):
            if not f.endswith((".yaml", ".yml")):
                continue
            path = os.path.join(dirpath, f)
            for doc in yaml.safe_load_all(open(path)):
                if not doc:
                    continue
                if doc["type"] == "Host":
                    labels = {k: str(v) for k, v in (doc.get("labels") or {}).items()}
                    labels["datum/host"] = doc["name"]
                    hosts[doc["name"]] = labels
                elif doc["type"] == "Layer":
                    rel = os.path.relpath(path, root)
                    name = re.sub(r"/layer\.ya?ml$", "", rel)
                    match = (doc.get("match") or {}).get("labels") or {}
                    layers.append((name, doc["precedence"], match, doc.get("resources") or {}))
    return hosts, layers


def write_inventory(hosts, layers, path):
    import yaml
    children = {}
    for name, precedence, match, resources in layers:
        members = {h: None for h, labels in hosts.items() if all(labels.get(k) == str(v) for k, v in match.items())}
        if not members:
            continue
        gvars = {"ansible_group_priority": precedence}
        for rid, fields in resources.items():
            for field, value in (fields or {}).items():
                if field in ("requires", "restart_on") and isinstance(value, str):
                    value = [value]
                gvars[var(rid, field)] = value
        group = "layer_" + re.sub(r"[^A-Za-z0-9_]", "_", name)
        children[group] = {"hosts": members, "vars": gvars}
    with open(path, "w") as f:
        yaml.safe_dump({"all": {"children": children}}, f, sort_keys=True)


def median_time(args, runs, ok=(0,)):
    times = []
    for _ in range(runs):
        start = time.monotonic()
        p = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times.append(time.monotonic() - start)
        if p.returncode not in ok:
            sys.exit(f"{args[0]} exited {p.returncode}: {p.stderr[-2000:]}")
    return statistics.median(times)


def main():
    ensure_venv()
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sample", type=int, default=25)
    ap.add_argument("--work", default=os.path.join(ROOT, "target", "ansible-compare"))
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--locked", "-p", "datum-cli", "-p", "datum-bench"], cwd=ROOT, check=True,
                   capture_output=True)
    fleet = os.path.join(a.work, f"fleet-{a.hosts}")
    shutil.rmtree(fleet, ignore_errors=True)
    subprocess.run([BENCH, "gen", "--hosts", str(a.hosts), "--seed", "1", "--out", fleet], check=True, capture_output=True)
    hosts, layers = load_fleet(fleet)
    inventory = os.path.join(a.work, f"inventory-{a.hosts}.yml")
    write_inventory(hosts, layers, inventory)
    ansible_inventory = os.path.join(VENV, "bin", "ansible-inventory")
    env = dict(os.environ, ANSIBLE_INVENTORY_ENABLED="yaml", ANSIBLE_HOME=os.path.join(a.work, "ansible-home"))

    # Same answers first.
    listed = json.loads(subprocess.run([ansible_inventory, "-i", inventory, "--list"], env=env, check=True,
                                       capture_output=True, text=True).stdout)
    hostvars = listed["_meta"]["hostvars"]
    names = sorted(hosts)
    step = max(1, len(names) // a.sample)
    checked = 0
    for h in names[::step][: a.sample]:
        manifest = json.loads(subprocess.run([DATUM, "render", h, "--format", "json", "--fleet", fleet], check=True,
                                             capture_output=True, text=True).stdout)
        want = {}
        for rid, fields in manifest["resources"].items():
            for field, value in fields.items():
                if field != "source_sha256":
                    want[var(rid, field)] = value
        got = {k: v for k, v in hostvars[h].items() if k.startswith("r_")}
        if got != want:
            diff = sorted(set(got.items()) ^ set(want.items()), key=str) if all(
                isinstance(v, (str, int, bool)) for v in list(got.values()) + list(want.values())) else "values differ"
            sys.exit(f"ansible and datum disagree on {h}: {diff}")
        checked += len(want)
    print(f"verified: {min(a.sample, len(names))} hosts, {checked} values identical in both tools", file=sys.stderr)

    ansible_t = median_time([ansible_inventory, "-i", inventory, "--list"], a.runs)
    datum_t = median_time([DATUM, "check", "--fleet", fleet], max(5, a.runs))
    print(f"| hosts | ansible-inventory --list | datum check | ratio |")
    print(f"|---|---|---|---|")
    print(f"| {a.hosts:,} | {ansible_t:.2f} s | {datum_t*1000:.0f} ms | {ansible_t/datum_t:.0f}× |")


if __name__ == "__main__":
    main()
