//! Reading fleets at revisions: bytes per commit, fleets in subdirectories,
//! revision syntax, errors, and discovery rules.

mod common;

use common::{Fixture, sorted};
use datum_core::reader::{ReadError, Reader, SourceError};
use datum_git::{GitError, GitReader, Repo};

const FLEET: &str = "datum: v1alpha1\ntype: Fleet\nname: example\n";

fn assert_sync_send<T: Sync + Send>() {}

#[test]
fn git_reader_is_sync_and_send() {
    assert_sync_send::<GitReader>();
}

#[test]
fn each_revision_reads_its_own_bytes() {
    let f = Fixture::new();
    f.write("datum.yaml", FLEET);
    f.write("hosts/web-001.yaml", "datum: v1alpha1 # first\n");
    f.write("hosts/gone.yaml", "datum: v1alpha1\n");
    let first = f.commit_all("first");
    f.write("hosts/web-001.yaml", "datum: v1alpha1 # second\n");
    f.remove("hosts/gone.yaml");
    f.write("hosts/new.yml", "datum: v1alpha1\n");
    let second = f.commit_all("second");
    // Uncommitted changes are not seen.
    f.write("hosts/web-001.yaml", "datum: v1alpha1 # dirty\n");

    let repo = Repo::discover(&f.repo).unwrap();
    assert_eq!(repo.prefix(), "");

    let head = repo.resolve("HEAD").unwrap();
    assert_eq!(head.id(), second);
    assert!(second.starts_with(head.short()));
    assert!(head.short().len() >= 7);
    let r = repo.reader(&head).unwrap();
    assert_eq!(
        sorted(r.discover().unwrap()),
        ["datum.yaml", "hosts/new.yml", "hosts/web-001.yaml"]
    );
    assert_eq!(
        r.read("hosts/web-001.yaml", 1000).unwrap(),
        b"datum: v1alpha1 # second\n"
    );

    let prev = repo.resolve("HEAD~1").unwrap();
    assert_eq!(prev.id(), first);
    assert_eq!(prev.spec(), "HEAD~1");
    assert_eq!(prev.describe(), format!("HEAD~1 ({})", prev.short()));
    let r = repo.reader(&prev).unwrap();
    assert_eq!(
        sorted(r.discover().unwrap()),
        ["datum.yaml", "hosts/gone.yaml", "hosts/web-001.yaml"]
    );
    assert_eq!(
        r.read("hosts/web-001.yaml", 1000).unwrap(),
        b"datum: v1alpha1 # first\n"
    );
    assert_eq!(r.read("datum.yaml", 1000).unwrap(), FLEET.as_bytes());
    // The git error is typed, kept as the source.
    let e = r.read("hosts/new.yml", 1000).unwrap_err();
    assert!(matches!(e, ReadError::Store { .. }), "{e:?}");
    let source = std::error::Error::source(&e).expect("a source");
    assert!(
        matches!(
            source.downcast_ref::<datum_git::BlobError>(),
            Some(datum_git::BlobError::Missing { .. })
        ),
        "{source:?}"
    );
    assert!(
        e.to_string()
            .starts_with("cannot read hosts/new.yml: no such file (at "),
        "{e}"
    );
}

#[test]
fn revisions_in_every_usual_spelling() {
    let f = Fixture::new();
    f.write("datum.yaml", FLEET);
    let first = f.commit_all("first");
    f.git(&["tag", "light"]);
    f.git(&["tag", "-a", "-m", "annotated", "v1"]);
    f.git(&["checkout", "-q", "-b", "feature"]);
    f.write("x.yaml", "datum: v1alpha1\n");
    let second = f.commit_all("second");
    f.git(&["checkout", "-q", "main"]);

    let repo = Repo::discover(&f.repo).unwrap();
    for (spec, want) in [
        ("HEAD", &first),
        ("main", &first),
        ("feature", &second),
        ("feature~1", &first),
        ("feature^", &first),
        ("light", &first),
        ("v1", &first),
        (first.as_str(), &first),
        (&first[..8], &first),
        (&second[..7], &second),
    ] {
        let rev = repo.resolve(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(rev.id(), want, "{spec}");
    }
    // A hash is shown as its short form alone.
    assert_eq!(
        repo.resolve(&first).unwrap().describe(),
        repo.resolve(&first).unwrap().short()
    );
}

#[test]
fn unknown_revisions_are_named_in_the_error() {
    let f = Fixture::new();
    f.write("datum.yaml", FLEET);
    f.commit_all("first");
    let repo = Repo::discover(&f.repo).unwrap();
    for spec in [
        "HEAD~5",
        "nope",
        "0123456789abcdef",
        "",
        "HEAD:datum.yaml",
        "HEAD^{tree}",
    ] {
        match repo.resolve(spec) {
            Err(e @ GitError::UnknownRevision { .. }) => {
                let text = e.to_string();
                assert!(
                    text.starts_with(&format!(
                        "`{spec}` does not name a commit in {}",
                        repo.workdir().display()
                    )),
                    "{text}"
                );
            }
            other => panic!("{spec}: {other:?}"),
        }
    }
}

#[test]
fn unborn_head_is_an_unknown_revision() {
    let f = Fixture::new();
    f.write("datum.yaml", FLEET);
    let repo = Repo::discover(&f.repo).unwrap();
    assert!(matches!(
        repo.resolve("HEAD"),
        Err(GitError::UnknownRevision { .. })
    ));
}

#[test]
fn not_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    std::fs::create_dir_all(&fleet).unwrap();
    // Only meaningful when no repository encloses the temporary directory.
    if std::process::Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .current_dir(&fleet)
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return;
    }
    let err = Repo::discover(&fleet).unwrap_err();
    assert_eq!(
        err,
        GitError::NotARepository {
            path: fleet.clone()
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "not inside a git repository: {} (datum diff reads revisions from git)",
            fleet.display()
        )
    );

    let missing = dir.path().join("missing");
    assert!(matches!(
        Repo::discover(&missing),
        Err(GitError::FleetDir { .. })
    ));
}

#[test]
fn fleet_in_a_subdirectory() {
    let f = Fixture::new();
    f.write("README.yaml", "datum: v1alpha1\n");
    f.write("other/x.yaml", "datum: v1alpha1\n");
    f.write("examples/fleet/datum.yaml", FLEET);
    f.write("examples/fleet/roles/web.yaml", "datum: v1alpha1\n");
    f.commit_all("fleet");

    let repo = Repo::discover(&f.repo.join("examples/fleet")).unwrap();
    assert_eq!(repo.prefix(), "examples/fleet");
    assert_eq!(repo.workdir(), std::fs::canonicalize(&f.repo).unwrap());
    let r = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    assert_eq!(
        sorted(r.discover().unwrap()),
        ["datum.yaml", "roles/web.yaml"]
    );
    assert_eq!(r.read("datum.yaml", 1000).unwrap(), FLEET.as_bytes());

    // Discovered from a directory inside the fleet, the prefix is that directory.
    let inner = Repo::discover(&f.repo.join("examples/fleet/roles")).unwrap();
    assert_eq!(inner.prefix(), "examples/fleet/roles");
}

#[test]
fn fleet_missing_at_a_revision() {
    let f = Fixture::new();
    f.write("README.md", "hello\n");
    f.commit_all("before the fleet");
    f.write("examples/fleet/datum.yaml", FLEET);
    f.commit_all("fleet");

    let repo = Repo::discover(&f.repo.join("examples/fleet")).unwrap();
    let rev = repo.resolve("HEAD~1").unwrap();
    let err = repo.reader(&rev).unwrap_err();
    assert_eq!(
        err,
        GitError::NoFleet {
            rev: rev.describe(),
            path: "examples/fleet".to_owned()
        }
    );
    let text = err.to_string();
    assert!(
        text.contains("HEAD~1") && text.contains("examples/fleet"),
        "{text}"
    );
}

#[test]
fn fleet_prefix_that_is_a_file_at_a_revision_is_missing() {
    let f = Fixture::new();
    f.write("fleet", "a file, once\n");
    f.commit_all("file");
    f.remove("fleet");
    f.write("fleet/datum.yaml", FLEET);
    f.commit_all("dir");
    let repo = Repo::discover(&f.repo.join("fleet")).unwrap();
    assert!(matches!(
        repo.reader(&repo.resolve("HEAD~1").unwrap()),
        Err(GitError::NoFleet { .. })
    ));
}

#[test]
fn too_large_is_refused() {
    let f = Fixture::new();
    f.write("datum.yaml", FLEET);
    f.write("big.yaml", "x".repeat(10_000));
    f.commit_all("big");
    // Packed objects too (sizes come from the pack's header then).
    let repo = Repo::discover(&f.repo).unwrap();
    let r = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    assert_eq!(
        r.read("big.yaml", 9_999),
        Err(ReadError::TooLarge {
            path: "big.yaml".into(),
            size: 10_000,
            limit: 9_999
        })
    );
    assert_eq!(r.read("big.yaml", 10_000).unwrap().len(), 10_000);

    f.git(&["gc", "-q", "--aggressive"]);
    let repo = Repo::discover(&f.repo).unwrap();
    let r = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    assert!(matches!(
        r.read("big.yaml", 9_999),
        Err(ReadError::TooLarge { size: 10_000, .. })
    ));
    assert_eq!(r.read("datum.yaml", 1000).unwrap(), FLEET.as_bytes());
}

#[test]
fn hidden_symlinked_and_non_yaml_files_are_not_discovered() {
    let f = Fixture::new();
    f.write("datum.yaml", FLEET);
    f.write(".hidden.yaml", "datum: v1alpha1\n");
    f.write(".dir/x.yaml", "datum: v1alpha1\n");
    f.write("roles/.also-hidden/y.yml", "datum: v1alpha1\n");
    f.write("roles/web.yaml", "datum: v1alpha1\n");
    f.write("roles/notes.txt", "notes\n");
    f.write("roles/yaml", "not a yaml name\n");
    f.write("run.yaml", "datum: v1alpha1\n");
    f.git(&["add", "-A"]);
    f.git(&["update-index", "--chmod=+x", "run.yaml"]);
    f.symlink("datum.yaml", "link.yaml");
    f.symlink("roles", "roles-link");
    f.commit_all("mixed");

    let repo = Repo::discover(&f.repo).unwrap();
    let r = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    assert_eq!(
        sorted(r.discover().unwrap()),
        ["datum.yaml", "roles/web.yaml", "run.yaml"]
    );
}

#[test]
fn submodules_are_not_discovered() {
    let f = Fixture::new();
    let sub = Fixture::new();
    sub.write("inner.yaml", "datum: v1alpha1\n");
    sub.commit_all("sub");
    f.write("datum.yaml", FLEET);
    let sub_path = sub.repo.to_string_lossy().into_owned();
    f.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        &sub_path,
        "vendor.yaml",
    ]);
    f.commit_all("with submodule");
    let repo = Repo::discover(&f.repo).unwrap();
    let r = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    assert_eq!(r.discover().unwrap(), ["datum.yaml"]);
    assert_eq!(
        r.read_source("vendor.yaml", u64::MAX),
        Err(datum_core::reader::SourceError::NotAFile)
    );
    assert_eq!(
        r.read_source("vendor.yaml/inner.yaml", u64::MAX),
        Err(datum_core::reader::SourceError::Missing)
    );
}

#[test]
fn gitignore_at_root_in_subdirectories_and_above_the_fleet() {
    let f = Fixture::new();
    // Above the fleet: the repository root and an intermediate directory.
    f.write(".gitignore", "*.tmp.yaml\n/top-anchored.yaml\nscratch/\n");
    f.write(
        "ops/.gitignore",
        "generated.yaml\n!fleet/keep/generated.yaml\nlegacy.yaml\n",
    );
    // In the fleet root and below it.
    f.write(
        "ops/fleet/.gitignore",
        "build/\n*.yml\n!important.yml\n/anchored.yaml\n",
    );
    f.write(
        "ops/fleet/roles/.gitignore",
        "draft-*.yaml\n!draft-ok.yaml\nlocal/\n!legacy.yaml\n",
    );
    for path in [
        "datum.yaml",
        "a.tmp.yaml",
        "top-anchored.yaml",
        "scratch/x.yaml",
        "roles/scratch/y.yaml",
        "generated.yaml",
        "roles/generated.yaml",
        "keep/generated.yaml",
        "build/out.yaml",
        "roles/build/out.yaml",
        "x.yml",
        "roles/important.yml",
        "anchored.yaml",
        "roles/anchored.yaml",
        "roles/draft-1.yaml",
        "roles/draft-ok.yaml",
        "roles/sub/draft-2.yaml",
        "roles/local/z.yaml",
        "roles/web.yaml",
        // Ignored from above the fleet, re-included in roles/ only.
        "legacy.yaml",
        "roles/legacy.yaml",
        // A negation cannot re-include a file inside an ignored directory.
        "build/important.yml",
    ] {
        f.write(&format!("ops/fleet/{path}"), "datum: v1alpha1\n");
    }
    f.commit_all("ignores");

    let repo = Repo::discover(&f.repo.join("ops/fleet")).unwrap();
    let r = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    assert_eq!(
        sorted(r.discover().unwrap()),
        [
            "datum.yaml",
            "keep/generated.yaml",
            "roles/anchored.yaml",
            "roles/draft-ok.yaml",
            "roles/important.yml",
            "roles/legacy.yaml",
            "roles/web.yaml",
            "top-anchored.yaml",
        ]
    );
    // An ignored file is no source, even committed (as a checkout reads it).
    assert_eq!(
        r.read_source("build/out.yaml", u64::MAX),
        Err(SourceError::Ignored)
    );
}

#[test]
fn gitignore_files_that_are_not_blobs_are_not_read() {
    let f = Fixture::new();
    f.write("datum.yaml", FLEET);
    f.write("rules", "*.yaml\n");
    f.symlink("../rules", "a/.gitignore");
    f.write("a/x.yaml", "datum: v1alpha1\n");
    f.write("b/.gitignore/oops", "x\n");
    f.write("b/y.yaml", "datum: v1alpha1\n");
    f.commit_all("odd gitignores");
    let repo = Repo::discover(&f.repo).unwrap();
    let r = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    assert_eq!(
        sorted(r.discover().unwrap()),
        ["a/x.yaml", "b/y.yaml", "datum.yaml"]
    );
}

#[test]
fn gitignore_with_crlf_bom_bad_patterns_and_comments() {
    let f = Fixture::new();
    f.write("datum.yaml", FLEET);
    f.write(
        ".gitignore",
        b"\xef\xbb\xbfa.yaml\r\n# b.yaml\r\n\\#c.yaml\n[\n\xff\xfe\nd.yaml   \n e.yaml\n"
            .as_slice(),
    );
    for name in ["a.yaml", "b.yaml", "#c.yaml", "d.yaml", " e.yaml", "f.yaml"] {
        f.write(name, "datum: v1alpha1\n");
    }
    f.commit_all("odd lines");
    let repo = Repo::discover(&f.repo).unwrap();
    let r = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    let found = sorted(r.discover().unwrap());
    assert_eq!(found, ["b.yaml", "datum.yaml", "f.yaml"]);
    // And DirReader agrees on a checkout.
    let copy = f.checkout_copy("HEAD");
    let dir = datum_core::reader::DirReader::new(&copy).unwrap();
    assert_eq!(sorted(dir.discover().unwrap()), found);
}

#[test]
fn negations_do_not_reveal_hidden_names() {
    // The specification skips hidden names whatever .gitignore says.
    // (DirReader, built on the ignore crate, lets a whitelisted hidden name
    // through: `!.z.yaml` below makes it discover `.z.yaml` and `.h/a.yaml`.)
    let f = Fixture::new();
    f.write("datum.yaml", FLEET);
    f.write(".gitignore", "!.z.yaml\n!.h/\n!*.yaml\n");
    f.write(".z.yaml", "datum: v1alpha1\n");
    f.write(".h/a.yaml", "datum: v1alpha1\n");
    f.commit_all("hidden");
    let repo = Repo::discover(&f.repo).unwrap();
    let r = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    assert_eq!(r.discover().unwrap(), ["datum.yaml"]);
}

#[test]
fn fleet_in_a_linked_worktree() {
    let f = Fixture::new();
    f.write("fleet/datum.yaml", FLEET);
    f.commit_all("first");
    f.git(&["branch", "other"]);
    let wt = f.dir.path().join("wt");
    f.git(&["worktree", "add", "-q", &wt.to_string_lossy(), "other"]);
    std::fs::write(wt.join("fleet/x.yaml"), "datum: v1alpha1\n").unwrap();
    f.git_in(&wt, &["add", "-A"]);
    f.git_in(&wt, &["commit", "-q", "-m", "in the worktree"]);

    let repo = Repo::discover(&wt.join("fleet")).unwrap();
    assert_eq!(repo.workdir(), std::fs::canonicalize(&wt).unwrap());
    assert_eq!(repo.prefix(), "fleet");
    let head = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    assert_eq!(sorted(head.discover().unwrap()), ["datum.yaml", "x.yaml"]);
    let main = repo.reader(&repo.resolve("main").unwrap()).unwrap();
    assert_eq!(main.discover().unwrap(), ["datum.yaml"]);
}

#[test]
fn the_git_directory_is_no_fleet() {
    let f = Fixture::new();
    f.write("datum.yaml", FLEET);
    f.commit_all("first");
    assert!(matches!(
        Repo::discover(&f.repo.join(".git")),
        Err(GitError::OutsideWorkTree { .. })
    ));
}
