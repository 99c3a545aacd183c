#!/usr/bin/env python3
"""What one agent cycle costs a host, in git mode and in bundle mode, and
what producing every bundle costs, on a generated fleet (docs/scaling.md).

    scripts/agent-scaling.py [--hosts 100000] [--runs 5] [--work DIR]

Needs the release binaries (cargo build --release -p datum-cli -p
datum-bench), git, ssh-keygen and /usr/bin/time. The fleet is generated
(seed 1), committed to a git repository and pushed to a bare one that
serves as the remote; bundles are served by a static HTTP server on
127.0.0.1. Every agent run is `datum agent --once` under its own --root,
named after the fleet's first host, so both modes apply the same manifest.
Figures are medians: wall time, user+system CPU and peak RSS from
/usr/bin/time -v, bytes fetched from the repository's growth (git) or the
server's log (bundles). Prints Markdown tables.
"""
import argparse
import functools
import http.server
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATUM = os.path.join(ROOT, "target", "release", "datum")
BENCH = os.path.join(ROOT, "target", "release", "datum-bench")
GIT_ENV = dict(
    os.environ,
    GIT_CONFIG_GLOBAL="/dev/null",
    GIT_CONFIG_NOSYSTEM="1",
    GIT_AUTHOR_NAME="Bench",
    GIT_AUTHOR_EMAIL="bench@example.net",
    GIT_COMMITTER_NAME="Bench",
    GIT_COMMITTER_EMAIL="bench@example.net",
    GIT_AUTHOR_DATE="@1750000000 +0000",
    GIT_COMMITTER_DATE="@1750000000 +0000",
)


def sh(*args, cwd=None, env=None):
    return subprocess.run(args, check=True, capture_output=True, text=True, cwd=cwd, env=env)


def timed(args, ok=(0,)):
    """Wall seconds, CPU seconds (user + system) and peak RSS in KiB. The
    peak RSS is /usr/bin/time -v's; the CPU time comes from wait4() on it,
    which counts the command with microseconds (time -v rounds to 10 ms)."""
    start = time.monotonic()
    with tempfile.TemporaryFile("w+") as o, tempfile.TemporaryFile("w+") as e:
        p = subprocess.Popen(["/usr/bin/time", "-v", *args], stdout=o, stderr=e)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = 0  # reaped above; keep Popen from waiting again
        o.seek(0)
        e.seek(0)
        out, err = o.read(), e.read()
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        sys.exit(f"{' '.join(args)} exited {code}:\n{out[-1000:]}{err[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
    return wall, cpu, rss


def median(rows):
    return tuple(statistics.median(col) for col in zip(*rows))


def du(path):
    total = 0
    for d, _, files in os.walk(path):
        total += sum(os.lstat(os.path.join(d, f)).st_size for f in files)
    return total


class Log(http.server.SimpleHTTPRequestHandler):
    sent = []

    def log_message(self, *args):
        pass

    def copyfile(self, source, dest):
        data = source.read()
        Log.sent.append(len(data))
        dest.write(data)


def machine(work, name, host, config):
    root = os.path.join(work, name)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "etc/datum"))
    with open(os.path.join(root, "etc/datum/host"), "w") as f:
        f.write(host + "\n")
    with open(os.path.join(root, "etc/datum/agent.yaml"), "w") as f:
        f.write(config)
    return root


def agent(root):
    # Exit statuses 4 and 6: the generated fleet's packages and owners do
    # not exist under an empty root, so some resources fail, the same way
    # in every mode.
    return timed([DATUM, "agent", "--once", "--root", root], ok=(0, 2, 4, 6))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--work", default="/tmp/datum-agent-scaling")
    ap.add_argument("--agent-only", action="store_true",
                    help="reuse the bundles of an earlier run; measure only the agent")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    repo = os.path.join(a.work, f"repo-{a.hosts}")
    fleet = os.path.join(repo, "fleet")
    if not os.path.isdir(os.path.join(repo, ".git")):
        shutil.rmtree(repo, ignore_errors=True)
        sh(BENCH, "gen", "--hosts", str(a.hosts), "--seed", "1", "--out", fleet)
        sh("git", "-c", "init.defaultBranch=main", "init", "-q", cwd=repo, env=GIT_ENV)
        sh("git", "add", "-A", cwd=repo, env=GIT_ENV)
        sh("git", "-c", "gc.auto=0", "commit", "-q", "-m", "generated", cwd=repo, env=GIT_ENV)
        sh("git", "gc", "-q", cwd=repo, env=GIT_ENV)
    files = sum(len(f) for _, _, f in os.walk(fleet))
    print(f"fleet: {a.hosts} hosts, {files} files, {du(fleet) / 1e6:.1f} MB; "
          f"packed repository {du(os.path.join(repo, '.git/objects')) / 1e6:.1f} MB\n")

    # Every bundle, and every manifest, once per run into a fresh directory.
    key = os.path.join(a.work, "signing-key")
    if not os.path.exists(key):
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key)
    rows = []
    bundles = os.path.join(a.work, "bundles")
    measure_all = not (a.agent_only and os.path.isdir(bundles))
    for label, args in [] if not measure_all else [
        ("render --all", ["render", "--all", "--out"]),
        ("bundle --all", ["bundle", "--all", "--out"]),
        ("bundle --all --sign-key", ["bundle", "--all", "--sign-key", key, "--out"]),
    ]:
        runs = []
        for _ in range(max(1, a.runs // 2)):
            out = os.path.join(a.work, "out")
            shutil.rmtree(out, ignore_errors=True)
            runs.append(timed([DATUM, "--fleet", fleet, *args, out]))
        rows.append((label, median(runs)))
    if measure_all:
        shutil.rmtree(bundles, ignore_errors=True)
        shutil.move(os.path.join(a.work, "out"), bundles)
        base = rows[0][1][0]
        print("| command | wall | CPU | peak RSS | ÷ render --all |")
        print("|---|---|---|---|---|")
        for label, (wall, cpu, rss) in rows:
            print(f"| `datum {label}` | {wall:.1f} s | {cpu:.1f} s | {rss / 1024:.0f} MiB | {wall / base:.2f}× |")
    sizes = sorted(os.path.getsize(os.path.join(bundles, b)) for b in os.listdir(bundles))
    print(f"\nbundles: median {statistics.median(sizes)} bytes, largest {sizes[-1]} bytes, "
          f"{du(bundles) / 1e6:.0f} MB in all\n")

    host = sorted(os.listdir(bundles))[0][: -len(".bundle")]
    signers = os.path.join(a.work, "allowed_signers")
    with open(key + ".pub") as f, open(signers, "w") as out:
        out.write("bench@example.net " + f.read())

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Log, directory=bundles))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/{{host}}.bundle"

    # A local remote is taken under --root, like every path of the host.
    git_root = machine(a.work, "host-git", host,
                       "git:\n  remotes: [file:///srv/fleet.git]\n  fleet: fleet\n"
                       "insecure_allow_unsigned: true\n")
    remote = os.path.join(git_root, "srv/fleet.git")
    sh("git", "clone", "-q", "--bare", repo, remote, env=GIT_ENV)
    bundle_root = machine(a.work, "host-bundle", host,
                          f"bundle:\n  url: {url}\npublic_keys: /etc/datum/bundle_signers\n")
    shutil.copy(signers, os.path.join(bundle_root, "etc/datum/bundle_signers"))
    apply_root = machine(a.work, "host-apply", host, "")

    first = agent(git_root)
    cloned = du(os.path.join(git_root, "var/lib/datum/repo"))
    git_runs = [agent(git_root) for _ in range(a.runs)]
    grown = du(os.path.join(git_root, "var/lib/datum/repo")) - cloned
    # A one-line change, pushed: what a typical cycle after a merge fetches.
    with open(os.path.join(fleet, "datum.yaml"), "a") as f:
        f.write("# a one-line change\n")
    sh("git", "-c", "gc.auto=0", "commit", "-q", "-am", "a change", cwd=repo, env=GIT_ENV)
    sh("git", "push", "-q", remote, "HEAD:main", cwd=repo, env=GIT_ENV)
    before = du(os.path.join(git_root, "var/lib/datum/repo"))
    changed = agent(git_root)
    delta = du(os.path.join(git_root, "var/lib/datum/repo")) - before
    sh("git", "reset", "-q", "--hard", "HEAD~1", cwd=repo, env=GIT_ENV)
    Log.sent.clear()
    bundle_runs = [agent(bundle_root) for _ in range(a.runs)]
    fetched = statistics.median(Log.sent)
    own = os.path.join(bundles, host + ".bundle")
    apply_runs = [timed([DATUM, "apply", "--root", apply_root, "--bundle", own, "--allow-unsigned"], ok=(0, 2, 4, 6))
                  for _ in range(a.runs)]
    server.shutdown()

    print(f"one agent cycle on {host} (median of {a.runs}):\n")
    print("| | wall | CPU | peak RSS | fetched |")
    print("|---|---|---|---|---|")
    w, c, r = first
    print(f"| git mode, first run (clones) | {w * 1000:.0f} ms | {c * 1000:.0f} ms | {r / 1024:.0f} MiB | {cloned / 1e6:.1f} MB |")
    w, c, r = median(git_runs)
    print(f"| git mode, nothing new | {w * 1000:.0f} ms | {c * 1000:.0f} ms | {r / 1024:.0f} MiB | {grown} bytes |")
    w, c, r = changed
    print(f"| git mode, after a one-line change | {w * 1000:.0f} ms | {c * 1000:.0f} ms | {r / 1024:.0f} MiB | {delta} bytes |")
    w, c, r = median(bundle_runs)
    print(f"| bundle mode (signed, over HTTP) | {w * 1000:.0f} ms | {c * 1000:.0f} ms | {r / 1024:.0f} MiB | {fetched} bytes |")
    w, c, r = median(apply_runs)
    print(f"| `datum apply --bundle` (apply alone) | {w * 1000:.0f} ms | {c * 1000:.0f} ms | {r / 1024:.0f} MiB | |")


if __name__ == "__main__":
    main()
