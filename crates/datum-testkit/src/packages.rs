//! Packages built by the tests, and the local repositories they are
//! served from: rpms by `rpmbuild`, a dnf or zypper repository by
//! `createrepo_c`, and Rocky-like and openSUSE-like roots to install them in.

use std::fs;
use std::path::Path;
use std::process::Command;

fn ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Builds the noarch rpm `NAME-VERSION-RELEASE` (an `epoch` when not
/// `None`) into `dir`, shipping `/usr/share/NAME/version` that holds
/// `VERSION-RELEASE`.
pub fn rpm(dir: &Path, name: &str, epoch: Option<u32>, version: &str, release: &str) {
    let top = tempfile_dir();
    let spec = top.join("p.spec");
    let epoch = epoch.map(|e| format!("Epoch: {e}\n")).unwrap_or_default();
    fs::write(
        &spec,
        format!(
            "Name: {name}\n{epoch}Version: {version}\nRelease: {release}\nSummary: a test package\n\
             License: MIT\nBuildArch: noarch\n%description\nA test package.\n\
             %install\nmkdir -p %{{buildroot}}/usr/share/{name}\n\
             echo {version}-{release} > %{{buildroot}}/usr/share/{name}/version\n\
             %files\n/usr/share/{name}/version\n"
        ),
    )
    .unwrap();
    ok(Command::new("rpmbuild")
        .env("HOME", &top)
        .arg("--define")
        .arg(format!("_topdir {}", top.display()))
        .args(["--quiet", "-bb"])
        .arg(&spec));
    fs::create_dir_all(dir).unwrap();
    for entry in fs::read_dir(top.join("RPMS/noarch")).unwrap() {
        let path = entry.unwrap().path();
        fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    fs::remove_dir_all(&top).unwrap();
}

/// Makes `dir` a dnf repository (its `repodata`), with `createrepo_c`.
pub fn createrepo(dir: &Path) {
    ok(Command::new("createrepo_c").arg("--quiet").arg(dir));
}

/// A Rocky-like root: its os-release (`ID_LIKE="rhel centos fedora"`),
/// root's account, `/etc/yum.repos.d`, no rpm database yet.
pub fn rocky(root: &Path) {
    fs::create_dir_all(root.join("etc/yum.repos.d")).unwrap();
    fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
    fs::create_dir_all(root.join("var/lib/rpm")).unwrap();
    fs::write(
        root.join("etc/os-release"),
        "NAME=\"Rocky Linux\"\nID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.3\"\nPRETTY_NAME=\"Rocky Linux 9.3 (Blue Onyx)\"\n",
    )
    .unwrap();
}

/// An openSUSE-Leap-like root: its os-release (`ID="opensuse-leap"`,
/// `ID_LIKE="suse opensuse"`), root's account, `/etc/zypp/repos.d`, an
/// empty rpm database directory.
pub fn opensuse(root: &Path) {
    fs::create_dir_all(root.join("etc/zypp/repos.d")).unwrap();
    fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
    fs::create_dir_all(root.join("var/lib/rpm")).unwrap();
    fs::write(
        root.join("etc/os-release"),
        "NAME=\"openSUSE Leap\"\nVERSION=\"15.5\"\nID=\"opensuse-leap\"\nID_LIKE=\"suse opensuse\"\nVERSION_ID=\"15.5\"\nPRETTY_NAME=\"openSUSE Leap 15.5\"\n",
    )
    .unwrap();
}

/// What `rpm -q` says of packages in `root`'s database: `NAME-EVR INSTALLTID`
/// lines (the transaction id tells which were installed together).
pub fn rpm_query(root: &Path, names: &[&str]) -> String {
    let out = Command::new("rpm")
        .arg("--root")
        .arg(root)
        .args([
            "--dbpath",
            "/var/lib/rpm",
            "-q",
            "--qf",
            "%{NAME}-%{EVR} %{INSTALLTID}\\n",
        ])
        .args(names)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "datum-rpmbuild-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Builds the pacman package `NAME-VERSION-any.pkg.tar.zst` into `dir`
/// by hand (a `.PKGINFO` and the files, archived by bsdtar with zstd, as
/// makepkg would, which refuses to run as root), shipping
/// `/usr/share/NAME/version` that holds `VERSION`; its path.
pub fn pacman_package(dir: &Path, name: &str, version: &str) -> std::path::PathBuf {
    let build = tempfile_dir();
    fs::create_dir_all(build.join(format!("usr/share/{name}"))).unwrap();
    fs::write(
        build.join(format!("usr/share/{name}/version")),
        format!("{version}\n"),
    )
    .unwrap();
    fs::write(
        build.join(".PKGINFO"),
        format!(
            "pkgname = {name}\npkgbase = {name}\npkgver = {version}\npkgdesc = a test package\n\
             builddate = 1700000000\npackager = Datum tests\nsize = {}\narch = any\nlicense = MIT\n",
            version.len() + 1
        ),
    )
    .unwrap();
    fs::create_dir_all(dir).unwrap();
    let out = dir.join(format!("{name}-{version}-any.pkg.tar.zst"));
    ok(Command::new("bsdtar")
        .current_dir(&build)
        .arg("--zstd")
        .arg("-cf")
        .arg(&out)
        .args([".PKGINFO", "usr"]));
    fs::remove_dir_all(&build).unwrap();
    out
}

/// Adds the packages in `dir` to its pacman repository `NAME.db`, with
/// `repo-add`.
pub fn repo_add(dir: &Path, name: &str) {
    let mut cmd = Command::new("repo-add");
    cmd.arg("-q").arg(dir.join(format!("{name}.db.tar.gz")));
    let mut pkgs: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".pkg.tar.zst"))
        .collect();
    pkgs.sort();
    ok(cmd.args(pkgs));
}

/// An Arch-like root: its os-release (`ID=arch`), root's account, an
/// empty pacman database directory, and a pacman.conf with signatures
/// off and the repository `NAME` served from the root's `/srv/NAME`.
pub fn arch(root: &Path, repo: &str) {
    fs::create_dir_all(root.join("etc")).unwrap();
    fs::create_dir_all(root.join("var/lib/pacman")).unwrap();
    fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
    fs::write(
        root.join("etc/os-release"),
        "NAME=\"Arch Linux\"\nID=arch\nBUILD_ID=rolling\n",
    )
    .unwrap();
    fs::write(
        root.join("etc/pacman.conf"),
        format!(
            "[options]\nArchitecture = auto\nSigLevel = Never\n\n[{repo}]\nServer = file:///srv/{repo}\n"
        ),
    )
    .unwrap();
}

/// Builds the Debian package `NAME_VERSION_all.deb` into `dir` with
/// `dpkg-deb`, shipping `/usr/share/NAME/version` that holds `VERSION`,
/// depending on `depends` (a `Depends:` value) when given; its path.
pub fn deb(dir: &Path, name: &str, version: &str, depends: Option<&str>) -> std::path::PathBuf {
    let build = tempfile_dir();
    fs::create_dir_all(build.join("DEBIAN")).unwrap();
    fs::create_dir_all(build.join(format!("usr/share/{name}"))).unwrap();
    fs::write(
        build.join(format!("usr/share/{name}/version")),
        format!("{version}\n"),
    )
    .unwrap();
    let depends = depends
        .map(|d| format!("Depends: {d}\n"))
        .unwrap_or_default();
    fs::write(
        build.join("DEBIAN/control"),
        format!(
            "Package: {name}\nVersion: {version}\nArchitecture: all\n{depends}Maintainer: Datum tests <t@example.invalid>\nDescription: a test package\n"
        ),
    )
    .unwrap();
    fs::create_dir_all(dir).unwrap();
    let out = dir.join(format!("{name}_{version}_all.deb"));
    ok(Command::new("dpkg-deb")
        .args(["--root-owner-group", "--build"])
        .arg(&build)
        .arg(&out));
    fs::remove_dir_all(&build).unwrap();
    out
}

/// A Debian-like root: its os-release (`ID=debian`), root's account, an
/// empty dpkg database and `/var/log` (where dpkg logs each run).
pub fn debian(root: &Path) {
    for d in [
        "etc",
        "var/lib/dpkg/info",
        "var/lib/dpkg/updates",
        "var/log",
    ] {
        fs::create_dir_all(root.join(d)).unwrap();
    }
    fs::write(root.join("var/lib/dpkg/status"), "").unwrap();
    fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    fs::write(root.join("etc/group"), "root:x:0:\n").unwrap();
    fs::write(
        root.join("etc/os-release"),
        "NAME=\"Debian GNU/Linux\"\nID=debian\nVERSION_ID=\"12\"\n",
    )
    .unwrap();
}

/// Makes `dir`, holding `.deb` files, a flat apt repository (`Suites:
/// ./`): its `Packages` index by `dpkg-scanpackages`, a `Release` file
/// with the index's SHA-256, and `InRelease`, that file signed by a key
/// made here in `gnupg` (no passphrase). Returns the key's public half,
/// armored.
pub fn apt_repository(dir: &Path, gnupg: &Path) -> String {
    let packages = ok(Command::new("dpkg-scanpackages").current_dir(dir).args([
        "--multiversion",
        ".",
        "/dev/null",
    ]));
    fs::write(dir.join("Packages"), &packages).unwrap();
    let sum = ok(Command::new("sha256sum").arg(dir.join("Packages")));
    let sum = sum.split_whitespace().next().unwrap().to_owned();
    let date = ok(Command::new("date").args(["-R", "-u"]));
    fs::write(
        dir.join("Release"),
        format!(
            "Origin: datum-tests\nLabel: datum-tests\nDate: {}\nSHA256:\n {sum} {} Packages\n",
            date.trim(),
            packages.len()
        ),
    )
    .unwrap();
    fs::create_dir_all(gnupg).unwrap();
    fs::set_permissions(gnupg, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let gpg = |args: &[&str]| {
        ok(Command::new("gpg")
            .env("GNUPGHOME", gnupg)
            .args(["--batch", "--yes", "--passphrase", ""])
            .args(args))
    };
    gpg(&[
        "--quick-gen-key",
        "Datum test <apt@datum.invalid>",
        "rsa2048",
        "sign",
        "never",
    ]);
    let release = dir.join("Release");
    let inrelease = dir.join("InRelease");
    gpg(&[
        "--clearsign",
        "-o",
        inrelease.to_str().unwrap(),
        release.to_str().unwrap(),
    ]);
    gpg(&["--armor", "--export", "apt@datum.invalid"])
}

/// A signing key made in `gnupg` (no passphrase) for `email`; its public
/// half, armored.
pub fn signing_key(gnupg: &Path, email: &str) -> String {
    fs::create_dir_all(gnupg).unwrap();
    fs::set_permissions(gnupg, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let gpg = |args: &[&str]| {
        ok(Command::new("gpg")
            .env("GNUPGHOME", gnupg)
            .args(["--batch", "--yes", "--passphrase", ""])
            .args(args))
    };
    gpg(&[
        "--quick-gen-key",
        &format!("Datum test <{email}>"),
        "rsa2048",
        "sign",
        "never",
    ]);
    gpg(&["--armor", "--export", email])
}

/// Signs the package `file` with the key in `gnupg`: a detached
/// `FILE.sig` beside it, as `makepkg --sign` makes.
pub fn sign(file: &Path, gnupg: &Path) {
    ok(Command::new("gpg")
        .env("GNUPGHOME", gnupg)
        .args(["--batch", "--yes", "--detach-sign", "--no-armor"])
        .arg(file));
}

/// Copies the host's `gpg` and `gpgconf`, with the shared libraries `ldd`
/// lists, into `root`, and makes its `/dev/null`: what pacman, chrooted
/// with `--sysroot`, needs to check a signature (libgpgme asks the root's
/// `gpgconf` where `gpg` is, runs that, and gives it `/dev/null`), as an
/// Arch root has (pacman depends on gnupg).
pub fn gnupg_in_root(root: &Path) {
    for tool in ["/usr/bin/gpg", "/usr/bin/gpgconf"] {
        let mut files = vec![tool.to_owned()];
        let libs = ok(Command::new("ldd").arg(tool));
        files.extend(
            libs.split_whitespace()
                .filter(|w| w.starts_with('/'))
                .map(str::to_owned),
        );
        for file in files {
            let to = root.join(file.trim_start_matches('/'));
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::copy(&file, &to).unwrap();
        }
    }
    fs::create_dir_all(root.join("dev")).unwrap();
    if !root.join("dev/null").exists() {
        ok(Command::new("mknod")
            .args(["-m", "666"])
            .arg(root.join("dev/null"))
            .args(["c", "1", "3"]));
    }
}
