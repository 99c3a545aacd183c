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

/// A directory a command writes into twice: first `clean` (empty), then
/// `dir`, where a link to a file of `outside` stands at every name the
/// first run wrote and at `.<name>.tmp` beside it.
struct Planted {
    clean: PathBuf,
    dir: PathBuf,
    outside: PathBuf,
    files: Vec<String>,
    targets: Vec<PathBuf>,
}

impl Planted {
    /// Runs `write` into `clean`, then plants the links in `dir`.
    fn new(tmp: &Path, write: impl Fn(&Path) -> Run) -> Planted {
        let mut p = Planted {
            clean: tmp.join("clean"),
            dir: tmp.join("out"),
            outside: tmp.join("outside"),
            files: Vec::new(),
            targets: Vec::new(),
        };
        for d in [&p.dir, &p.outside] {
            fs::create_dir(d).unwrap();
        }
        let run = write(&p.clean);
        assert_eq!(run.code, 0, "{}", run.stderr);
        p.files = names(&p.clean);
        assert!(p.files.len() > 1, "{:?}", p.files);
        for f in p.files.clone() {
            p.plant(&f);
            p.plant(&format!(".{f}.tmp"));
        }
        p
    }

    fn plant(&mut self, name: &str) {
        let target = plant(&self.dir, &self.outside, name);
        self.targets.push(target);
    }

    /// Every target is untouched, and `dir` holds what `clean` does.
    fn check(&self) {
        untouched(&self.targets);
        for f in &self.files {
            replaced(&self.dir, f, &fs::read(self.clean.join(f)).unwrap());
        }
    }
}

#[test]
fn render_all_never_writes_through_a_link_at_an_output_or_a_temporary_name() {
    let tmp = tempfile::tempdir().unwrap();
    let render = |out: &Path| {
        run_in(
            &example("fleet"),
            &["render", "--all", "--out", out.to_str().unwrap()],
        )
    };
    let p = Planted::new(tmp.path(), render);
    let run = render(&p.dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    p.check();
}

#[test]
fn bundle_never_writes_through_a_link_at_an_output_or_a_temporary_name() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = Repo::new(&tmp.path().join("repo"));
    // Runs compared byte for byte: the expiry counts from
    // SOURCE_DATE_EPOCH, not from a clock that may tick between them.
    let bundle = |args: &[&str]| {
        let mut cmd = datum();
        cmd.env("SOURCE_DATE_EPOCH", "1750000000")
            .arg("bundle")
            .args(args)
            .arg("--fleet")
            .arg(repo.fleet());
        Run::from(cmd.output().unwrap())
    };
    let all = |out: &Path| bundle(&["--all", "--out", out.to_str().unwrap()]);
    let mut p = Planted::new(tmp.path(), all);
    assert_eq!(p.files, ["db-001.bundle", "web-001.bundle"]);
    let run = all(&p.dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // One host's bundle, to a file of its own.
    p.plant("one.bundle");
    p.plant(".one.bundle.tmp");
    let one = p.dir.join("one.bundle");
    let run = bundle(&["web-001", "--out", one.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    p.check();
    replaced(
        &p.dir,
        "one.bundle",
        &fs::read(p.clean.join("web-001.bundle")).unwrap(),
    );
}

#[test]
fn man_out_never_writes_through_a_link_at_a_page() {
    let tmp = tempfile::tempdir().unwrap();
    let man = |out: &Path| Run::from(datum().args(["man", "--out"]).arg(out).output().unwrap());
    let p = Planted::new(tmp.path(), man);
    assert!(p.files.contains(&"datum.1".to_owned()), "{:?}", p.files);
    let run = man(&p.dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    p.check();
}
