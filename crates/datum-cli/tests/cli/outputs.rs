//! Every file `render --all`, `bundle` and `man --out` write is created new
//! under a random temporary name and renamed into place: a symbolic link
//! planted where a run writes (the output itself, or the temporary name an
//! earlier Datum used, `.<name>.tmp`) is replaced or left alone, and what
//! it points to is never written.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use crate::common::{Run, datum, example, run_in};
use crate::delivery::Repo;

const PRECIOUS: &str = "precious: never written by datum\n";

/// Plants a link at `dir/name` to a file of its own outside `dir`.
fn plant(dir: &Path, outside: &Path, name: &str) -> PathBuf {
    let target = outside.join(format!("target-of-{name}"));
    fs::write(&target, PRECIOUS).unwrap();
    symlink(&target, dir.join(name)).unwrap();
    target
}

fn untouched(targets: &[PathBuf]) {
    for t in targets {
        let now = fs::read(t).unwrap();
        assert!(
            now == PRECIOUS.as_bytes(),
            "{} was written through a link: {}",
            t.display(),
            String::from_utf8_lossy(&now)
        );
        assert!(fs::symlink_metadata(t).unwrap().is_file());
    }
}

/// `dir/name` is now a regular file (the link replaced) holding `bytes`.
fn replaced(dir: &Path, name: &str, bytes: &[u8]) {
    let path = dir.join(name);
    let meta = fs::symlink_metadata(&path).unwrap();
    assert!(meta.is_file(), "{} is not a regular file", path.display());
    assert_eq!(fs::read(&path).unwrap(), bytes, "{}", path.display());
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn render_all_never_writes_through_a_link_at_an_output_or_a_temporary_name() {
    let tmp = tempfile::tempdir().unwrap();
    let fleet = example("fleet");
    let (clean, dir, outside) = (
        tmp.path().join("clean"),
        tmp.path().join("out"),
        tmp.path().join("outside"),
    );
    for d in [&dir, &outside] {
        fs::create_dir(d).unwrap();
    }
    let render = |out: &Path| run_in(&fleet, &["render", "--all", "--out", out.to_str().unwrap()]);
    assert_eq!(render(&clean).code, 0);
    let files = names(&clean);
    assert!(files.len() > 1, "{files:?}");
    let mut targets = Vec::new();
    for f in &files {
        targets.push(plant(&dir, &outside, f));
        targets.push(plant(&dir, &outside, &format!(".{f}.tmp")));
    }
    let run = render(&dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    untouched(&targets);
    for f in &files {
        replaced(&dir, f, &fs::read(clean.join(f)).unwrap());
    }
}

#[test]
fn bundle_never_writes_through_a_link_at_an_output_or_a_temporary_name() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = Repo::new(&tmp.path().join("repo"));
    let (clean, dir, outside) = (
        tmp.path().join("clean"),
        tmp.path().join("out"),
        tmp.path().join("outside"),
    );
    for d in [&dir, &outside] {
        fs::create_dir(d).unwrap();
    }
    let bundle_all = |out: &Path| {
        run_in(
            &repo.fleet(),
            &["bundle", "--all", "--out", out.to_str().unwrap()],
        )
    };
    assert_eq!(bundle_all(&clean).code, 0);
    let files = names(&clean);
    assert_eq!(files, ["db-001.bundle", "web-001.bundle"]);
    let mut targets = Vec::new();
    for f in &files {
        targets.push(plant(&dir, &outside, f));
        targets.push(plant(&dir, &outside, &format!(".{f}.tmp")));
    }
    let run = bundle_all(&dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // One host's bundle, to a file of its own.
    targets.push(plant(&dir, &outside, "one.bundle"));
    targets.push(plant(&dir, &outside, ".one.bundle.tmp"));
    let one = run_in(
        &repo.fleet(),
        &[
            "bundle",
            "web-001",
            "--out",
            dir.join("one.bundle").to_str().unwrap(),
        ],
    );
    assert_eq!(one.code, 0, "{}", one.stderr);
    untouched(&targets);
    for f in &files {
        replaced(&dir, f, &fs::read(clean.join(f)).unwrap());
    }
    replaced(
        &dir,
        "one.bundle",
        &fs::read(clean.join("web-001.bundle")).unwrap(),
    );
}

#[test]
fn man_out_never_writes_through_a_link_at_a_page() {
    let tmp = tempfile::tempdir().unwrap();
    let (clean, dir, outside) = (
        tmp.path().join("clean"),
        tmp.path().join("out"),
        tmp.path().join("outside"),
    );
    for d in [&dir, &outside] {
        fs::create_dir(d).unwrap();
    }
    let man = |out: &Path| Run::from(datum().args(["man", "--out"]).arg(out).output().unwrap());
    assert_eq!(man(&clean).code, 0);
    let pages = names(&clean);
    assert!(pages.contains(&"datum.1".to_owned()), "{pages:?}");
    let mut targets = Vec::new();
    for p in &pages {
        targets.push(plant(&dir, &outside, p));
        targets.push(plant(&dir, &outside, &format!(".{p}.tmp")));
    }
    let run = man(&dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    untouched(&targets);
    for p in &pages {
        replaced(&dir, p, &fs::read(clean.join(p)).unwrap());
    }
}
