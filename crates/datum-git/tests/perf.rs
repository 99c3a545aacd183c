//! How long reading a large fleet at a revision takes. Ignored by default;
//! run with
//! `cargo test --release -p datum-git --test perf -- --ignored --nocapture`.

mod common;

use std::time::Instant;

use common::Fixture;
use datum_core::reader::{DirReader, Reader};
use datum_git::Repo;
use rayon::prelude::*;

const HOSTS: usize = 10_000;
const HOSTS_PER_FILE: usize = 5;
const LAYERS: usize = 500;
const PAYLOADS: usize = 300;

fn build(f: &Fixture) {
    f.write(".gitignore", "target/\n");
    f.write("README.md", "a bigger repository\n");
    f.write(
        "examples/fleet/datum.yaml",
        "datum: v1alpha1\ntype: Fleet\nname: big\n",
    );
    f.write("examples/fleet/.gitignore", "build/\n*.local.yaml\n");
    for file in 0..HOSTS / HOSTS_PER_FILE {
        let mut text = String::new();
        for h in 0..HOSTS_PER_FILE {
            let n = file * HOSTS_PER_FILE + h;
            text.push_str(&format!(
                "---\ndatum: v1alpha1\ntype: Host\nname: web-{n:05}\nlabels:\n  role: {}\n  site: {}\n  environment: {}\n",
                ["web", "db", "cache"][n % 3],
                ["london", "frankfurt", "virginia", "tokyo"][n % 4],
                ["production", "staging"][n % 2],
            ));
        }
        f.write(
            &format!(
                "examples/fleet/hosts/{:03}/hosts-{file:05}.yaml",
                file / 100
            ),
            text,
        );
    }
    for l in 0..LAYERS {
        f.write(
            &format!("examples/fleet/layers/{:02}/layer-{l:04}.yaml", l / 50),
            format!(
                "datum: v1alpha1\ntype: Layer\nname: layer-{l}\nprecedence: {}\nmatch:\n  role: web\nresources:\n  File[motd-{l}]:\n    path: /etc/motd.d/{l}\n    owner: root\n    mode: \"0644\"\n    source: files/payload-{:04}.txt\n",
                l % 100,
                l % PAYLOADS
            ),
        );
    }
    for p in 0..PAYLOADS {
        f.write(
            &format!("examples/fleet/files/payload-{p:04}.txt"),
            format!("payload {p}\n").repeat(40),
        );
    }
}

/// Discovers and reads every document candidate, in parallel as the core
/// does, returning the file count and total bytes.
fn read_all(r: &(impl Reader + ?Sized)) -> (usize, usize) {
    let paths = r.discover().expect("discover");
    let bytes: usize = paths
        .par_iter()
        .map(|p| r.read(p, 1 << 20).expect("read").len())
        .sum();
    (paths.len(), bytes)
}

fn time<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    eprintln!(
        "{what:<55} {:>8.1} ms",
        start.elapsed().as_secs_f64() * 1000.0
    );
    out
}

#[test]
#[ignore = "a measurement, not a check; run with --release --ignored --nocapture"]
fn read_a_ten_thousand_host_fleet() {
    let f = Fixture::new();
    build(&f);
    f.commit_all("a big fleet");
    let fleet = f.repo.join("examples/fleet");

    for round in ["loose objects", "packed (git gc --aggressive)"] {
        if round.starts_with("packed") {
            f.git(&["gc", "-q", "--aggressive"]);
        }
        eprintln!("-- {round}");
        for attempt in 0..3 {
            let total = Instant::now();
            let repo = time("Repo::discover", || Repo::discover(&fleet).expect("repo"));
            let rev = time("Repo::resolve(HEAD)", || repo.resolve("HEAD").expect("rev"));
            let reader = time("Repo::reader (walk the tree)", || {
                repo.reader(&rev).expect("reader")
            });
            let (files, bytes) = time("discover + read every candidate (rayon)", || {
                read_all(&reader)
            });
            eprintln!(
                "{:<55} {:>8.1} ms  ({files} files, {bytes} bytes, attempt {attempt})",
                "total",
                total.elapsed().as_secs_f64() * 1000.0
            );
            assert_eq!(files, 1 + HOSTS / HOSTS_PER_FILE + LAYERS);
        }
    }
    eprintln!("-- DirReader on the work tree, for comparison");
    for _ in 0..3 {
        let dir = DirReader::new(&fleet).expect("dir");
        time("DirReader discover + read every candidate (rayon)", || {
            read_all(&dir)
        });
    }
}
