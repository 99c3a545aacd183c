//! `read_source`: symbolic links are followed only while they stay inside
//! the fleet root.

mod common;

use common::Fixture;
use datum_core::reader::{Reader, SourceError};
use datum_git::{GitReader, Repo};

/// A repository with the fleet in `fleet/`, links of every kind, and a
/// secret beside the fleet.
fn fixture() -> (Fixture, GitReader) {
    let f = Fixture::new();
    f.write("secret", "outside the fleet\n");
    f.write("fleet/datum.yaml", "datum: v1alpha1\n");
    f.write("fleet/files/nginx.conf", "worker_processes 4;\n");
    f.write("fleet/files/.env", "hidden but readable\n");
    f.write("fleet/other/deep/x.txt", "deep\n");
    f.symlink("nginx.conf", "fleet/files/same-dir");
    f.symlink("../other/deep/x.txt", "fleet/files/up-and-down");
    f.symlink("same-dir", "fleet/files/chain");
    f.symlink("../other", "fleet/files/dir-link");
    f.symlink("../../secret", "fleet/files/out");
    f.symlink("/etc/passwd", "fleet/files/absolute");
    f.symlink("../../fleet/files/nginx.conf", "fleet/files/out-and-back");
    f.symlink("loop-b", "fleet/files/loop-a");
    f.symlink("loop-a", "fleet/files/loop-b");
    f.symlink("self", "fleet/files/self");
    f.symlink("missing.conf", "fleet/files/dangling");
    f.symlink("deep/../..", "fleet/other/root");
    f.symlink("deep/../../..", "fleet/other/up");
    f.commit_all("sources");
    let repo = Repo::discover(&f.repo.join("fleet")).unwrap();
    let reader = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    (f, reader)
}

#[test]
fn plain_files_and_links_inside_the_fleet() {
    let (_f, r) = fixture();
    assert_eq!(
        r.read_source("files/nginx.conf", u64::MAX).unwrap(),
        b"worker_processes 4;\n"
    );
    assert_eq!(
        r.read_source("files/.env", u64::MAX).unwrap(),
        b"hidden but readable\n"
    );
    assert_eq!(
        r.read_source("files/same-dir", u64::MAX).unwrap(),
        b"worker_processes 4;\n"
    );
    assert_eq!(
        r.read_source("files/chain", u64::MAX).unwrap(),
        b"worker_processes 4;\n"
    );
    assert_eq!(
        r.read_source("files/up-and-down", u64::MAX).unwrap(),
        b"deep\n"
    );
    // A link back to the fleet root itself.
    assert_eq!(
        r.read_source("other/root/datum.yaml", u64::MAX).unwrap(),
        b"datum: v1alpha1\n"
    );
    // A link in the middle of the path.
    assert_eq!(
        r.read_source("files/dir-link/deep/x.txt", u64::MAX)
            .unwrap(),
        b"deep\n"
    );
    // `..` after a link climbs from where the link led (other/), not from files/.
    assert_eq!(
        r.read_source("files/dir-link/../datum.yaml", u64::MAX)
            .unwrap(),
        b"datum: v1alpha1\n"
    );
}

#[test]
fn links_leading_out_of_the_fleet_escape() {
    let (_f, r) = fixture();
    assert_eq!(
        r.read_source("files/out", u64::MAX),
        Err(SourceError::Escapes {
            target: "../secret".into()
        })
    );
    assert_eq!(
        r.read_source("files/absolute", u64::MAX),
        Err(SourceError::Escapes {
            target: "/etc/passwd".into()
        })
    );
    // Leaving the fleet root is refused even when the path would come back.
    assert!(matches!(
        r.read_source("files/out-and-back", u64::MAX),
        Err(SourceError::Escapes { .. })
    ));
    assert!(matches!(
        r.read_source("other/up/secret", u64::MAX),
        Err(SourceError::Escapes { .. })
    ));
}

#[test]
fn link_loops_stop() {
    let (_f, r) = fixture();
    for path in ["files/loop-a", "files/self"] {
        match r.read_source(path, u64::MAX) {
            Err(SourceError::Io(message)) => {
                assert!(
                    message.contains("too many levels of symbolic links"),
                    "{message}"
                )
            }
            other => panic!("{path}: {other:?}"),
        }
    }
}

#[test]
fn missing_and_directories() {
    let (_f, r) = fixture();
    assert_eq!(
        r.read_source("files/nope", u64::MAX),
        Err(SourceError::Missing)
    );
    assert_eq!(
        r.read_source("nope/deeper", u64::MAX),
        Err(SourceError::Missing)
    );
    assert_eq!(
        r.read_source("files/dangling", u64::MAX),
        Err(SourceError::Missing)
    );
    assert_eq!(
        r.read_source("files/nginx.conf/x", u64::MAX),
        Err(SourceError::Missing)
    );
    assert_eq!(r.read_source("files", u64::MAX), Err(SourceError::NotAFile));
    assert_eq!(
        r.read_source("files/dir-link", u64::MAX),
        Err(SourceError::NotAFile)
    );
    assert_eq!(r.read_source("", u64::MAX), Err(SourceError::NotAFile));
    // An absolute path is outside the fleet whatever it names.
    assert!(matches!(
        r.read_source("/etc/passwd", u64::MAX),
        Err(SourceError::Escapes { .. })
    ));
    // The secret is in the repository but not in the fleet.
    assert_eq!(r.read_source("secret", u64::MAX), Err(SourceError::Missing));
}

#[test]
fn sources_are_read_at_the_revision() {
    let (f, _) = fixture();
    f.write("fleet/files/nginx.conf", "worker_processes 8;\n");
    f.commit_all("more workers");
    let repo = Repo::discover(&f.repo.join("fleet")).unwrap();
    let old = repo.reader(&repo.resolve("HEAD~1").unwrap()).unwrap();
    let new = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    assert_eq!(
        old.read_source("files/same-dir", u64::MAX).unwrap(),
        b"worker_processes 4;\n"
    );
    assert_eq!(
        new.read_source("files/same-dir", u64::MAX).unwrap(),
        b"worker_processes 8;\n"
    );
}

/// The variant of a result, for comparing readers whose messages differ.
fn shape(r: &Result<Vec<u8>, SourceError>) -> String {
    match r {
        Ok(bytes) => format!("Ok({})", String::from_utf8_lossy(bytes)),
        Err(SourceError::Missing) => "Missing".into(),
        Err(SourceError::NotAFile) => "NotAFile".into(),
        Err(SourceError::Escapes { .. }) => "Escapes".into(),
        Err(SourceError::Io(_)) => "Io".into(),
        Err(SourceError::TooLarge { .. }) => "TooLarge".into(),
        Err(SourceError::Ignored) => "Ignored".into(),
    }
}

#[test]
fn agrees_with_dir_reader_on_a_checkout() {
    let (f, r) = fixture();
    let copy = f.checkout_copy("HEAD");
    let dir = datum_core::reader::DirReader::new(&copy.join("fleet")).unwrap();
    for path in [
        "datum.yaml",
        "files/nginx.conf",
        "files/.env",
        "files/same-dir",
        "files/chain",
        "files/up-and-down",
        "files/dir-link/deep/x.txt",
        "files/dir-link",
        "files/out",
        "files/absolute",
        "files/loop-a",
        "files/self",
        "files/dangling",
        "files/nope",
        "files",
        "other/root/datum.yaml",
        "other/up/secret",
        "secret",
        // A link that leaves the fleet and comes back: both refuse the step
        // outside (on disk the kernel does, resolving beneath the root).
        "files/out-and-back",
    ] {
        assert_eq!(
            shape(&r.read_source(path, u64::MAX)),
            shape(&dir.read_source(path, u64::MAX)),
            "{path}"
        );
    }
    assert_eq!(
        shape(&r.read_source("files/out-and-back", u64::MAX)),
        "Escapes"
    );
}

#[test]
fn oversized_link_targets_are_refused() {
    // No file system would check this out; only a crafted tree holds it.
    let f = Fixture::new();
    f.write("datum.yaml", "datum: v1alpha1\n");
    f.write("long-target", "a/".repeat(3000));
    let blob = f.git(&["hash-object", "-w", "long-target"]);
    f.remove("long-target");
    f.git(&["add", "datum.yaml"]);
    let cacheinfo = format!("120000,{},files/long", blob.trim());
    f.git(&["update-index", "--add", "--cacheinfo", &cacheinfo]);
    f.git(&["commit", "-q", "-m", "crafted"]);
    let repo = Repo::discover(&f.repo).unwrap();
    let r = repo.reader(&repo.resolve("HEAD").unwrap()).unwrap();
    match r.read_source("files/long", u64::MAX) {
        Err(SourceError::Io(message)) => assert!(message.contains("6000-byte"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn sources_over_the_limit_are_refused_from_the_object_header() {
    let (_f, r) = fixture();
    let size = r.read_source("files/nginx.conf", u64::MAX).unwrap().len() as u64;
    assert_eq!(
        r.read_source("files/nginx.conf", size - 1),
        Err(SourceError::TooLarge {
            size,
            limit: size - 1
        })
    );
    assert_eq!(
        r.read_source("files/nginx.conf", size).unwrap().len() as u64,
        size
    );
}
