//! Criterion benchmarks on generated fleets of 1k, 10k and 100k hosts
//! (`DATUM_BENCH_SIZES=1000,10000` to choose). Each size measures the parse
//! floor beside the work Datum does on the same files, so ratios come from
//! one run on one machine.
//!
//! ```text
//! cargo bench -p datum-bench --bench fleet
//! ```

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use datum_bench::{floor, generator};
use datum_core::check::check;
use datum_core::emit;
use datum_core::explain::{Explanation, Target};
use datum_core::fleet::HostId;
use datum_core::loader;
use datum_core::manifest::Manifest;
use datum_core::reader::DirReader;
use datum_core::resolve::resolve_all;
use rayon::prelude::*;

/// The same allocator as the `datum` binary, so the figures match it.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn sizes() -> Vec<usize> {
    std::env::var("DATUM_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000])
}

fn fleet_at(dir: &Path, hosts: usize) -> DirReader {
    generator::generate(
        dir,
        &generator::Options {
            hosts,
            seed: 1,
            conflicts: 0,
        },
    )
    .unwrap();
    DirReader::new(dir).unwrap()
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("fleet");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4));
    for n in sizes() {
        let tmp = tempfile::tempdir().unwrap();
        let reader = fleet_at(&tmp.path().join("fleet"), n);
        g.bench_with_input(BenchmarkId::new("parse_floor", n), &reader, |b, r| {
            b.iter(|| black_box(floor::parse_all(r, true)))
        });
        g.bench_with_input(BenchmarkId::new("load", n), &reader, |b, r| {
            b.iter(|| black_box(loader::load(r).unwrap()))
        });
        let loaded = loader::load(&reader).unwrap();
        assert!(loaded.diagnostics.is_empty());
        g.bench_with_input(BenchmarkId::new("resolve_all", n), &loaded, |b, f| {
            b.iter(|| black_box(resolve_all(f)))
        });
        g.bench_with_input(BenchmarkId::new("check", n), &reader, |b, r| {
            b.iter(|| {
                let f = loader::load(r).unwrap();
                let all = resolve_all(&f);
                black_box(check(&f, &all).errors())
            })
        });
        let all = resolve_all(&loaded);
        g.bench_with_input(BenchmarkId::new("render_all", n), &loaded, |b, f| {
            b.iter(|| {
                let bytes: usize = (0..f.hosts.len() as u32)
                    .into_par_iter()
                    .map(|h| {
                        let host = HostId(h);
                        let mut out = Vec::new();
                        let res = all.of(host).unwrap();
                        emit::write_yaml(&mut out, &Manifest::new(f, host, res).tree()).unwrap();
                        out.len()
                    })
                    .sum();
                black_box(bytes)
            })
        });
        // Two git revisions (the second changes one role's mode), read from
        // the object database, both resolved, and compared.
        let repo_dir = tmp.path().join("fleet");
        two_revisions(&repo_dir);
        let repo = datum_git::Repo::discover(&repo_dir).unwrap();
        g.bench_with_input(
            BenchmarkId::new("diff_two_revisions", n),
            &repo,
            |b, repo| {
                b.iter(|| {
                    let load = |rev: &str| {
                        let reader = repo.reader(&repo.resolve(rev).unwrap()).unwrap();
                        loader::load(&reader).unwrap()
                    };
                    let (old, new) = rayon::join(|| load("HEAD~1"), || load("HEAD"));
                    let (old_all, new_all) =
                        rayon::join(|| resolve_all(&old), || resolve_all(&new));
                    let d = datum_core::diff::diff(
                        Some(datum_core::diff::Side {
                            fleet: &old,
                            all: &old_all,
                        }),
                        Some(datum_core::diff::Side {
                            fleet: &new,
                            all: &new_all,
                        }),
                    );
                    black_box(datum_core::present::diff::render(&d, "HEAD~1", "HEAD").len())
                })
            },
        );
        // One host: rendering it, and explaining every resource of it.
        let host = HostId(loaded.hosts.len() as u32 / 2);
        g.bench_with_input(BenchmarkId::new("render_one_host", n), &loaded, |b, f| {
            b.iter(|| {
                let res = datum_core::resolve::resolve_host(f, host);
                let mut out = Vec::new();
                emit::write_yaml(&mut out, &Manifest::new(f, host, &res).tree()).unwrap();
                black_box(out.len())
            })
        });
        g.bench_with_input(BenchmarkId::new("explain_one_host", n), &loaded, |b, f| {
            b.iter(|| {
                let res = datum_core::resolve::resolve_host(f, host);
                let ex = Explanation::new(f, host, &res);
                let answer = ex.answer(&Target::Host);
                black_box(datum_core::present::explain::render(&ex, &answer).len())
            })
        });
    }
    g.finish();
}

/// Commits the generated fleet, then a second revision changing the mode of
/// one role's configuration file.
fn two_revisions(dir: &Path) {
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args([
                "-c",
                "init.defaultBranch=main",
                "-c",
                "gc.auto=0",
                "-c",
                "user.name=bench",
                "-c",
                "user.email=bench@example.net",
            ])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "generated"]);
    let layer = dir.join("roles/web/layer.yaml");
    let text =
        std::fs::read_to_string(&layer)
            .unwrap()
            .replacen("mode: \"0640\"", "mode: \"0644\"", 1);
    std::fs::write(&layer, text).unwrap();
    git(&["commit", "-qam", "web config mode"]);
    // A clone holds packed objects; a fresh commit's loose ones are slower to open.
    git(&["gc", "-q"]);
}

criterion_group!(fleet_benches, benches);
criterion_main!(fleet_benches);
