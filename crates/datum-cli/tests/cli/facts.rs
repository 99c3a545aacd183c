//! `datum facts`: on this machine, compared with what its own tools say,
//! and on a tree whose os-release is planted (a Rocky-like root), where
//! the OS release is the tree's and the rest the machine's.

use std::fs;
use std::process::Command;

use serde_json::Value;

use crate::common::{Run, datum};

fn facts(args: &[&str]) -> Run {
    let run = Run::from(datum().arg("facts").args(args).output().unwrap());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    run
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let run = facts(&all);
    assert_eq!(
        crate::json_contract::assert_conforms("datum facts", &run),
        "Facts"
    );
    serde_json::from_str(&run.stdout).unwrap()
}

/// What a command of this machine prints, trimmed; `None` when it cannot run.
fn tool(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_owned()).filter(|_| out.status.success())
}

#[test]
fn the_facts_of_this_machine_agree_with_its_own_tools() {
    let v = json(&[]);
    let f = &v["facts"];
    assert_eq!(f["arch"], tool("uname", &["-m"]).unwrap().as_str());
    assert_eq!(f["kernel"], tool("uname", &["-r"]).unwrap().as_str());
    let online = tool("getconf", &["_NPROCESSORS_ONLN"]).unwrap();
    assert_eq!(f["cpus"].to_string(), online);
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap();
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .unwrap()
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(f["memory_bytes"], kib * 1024);
    // os-release read by the shell, as its specification intends.
    let os = tool("sh", &["-c", ". /etc/os-release 2>/dev/null || . /usr/lib/os-release; v=${VERSION_ID:-}; case $ID in ubuntu|pop) ;; *) v=${v%%.*};; esac; echo \"$ID${v:+-$v}\""]).unwrap();
    assert_eq!(f["os"], os.as_str());
    assert_eq!(v["unobserved"].as_object().unwrap().len(), 0, "{v:#}");
    assert!(v.get("root").is_none());
    // systemd's own detection, where it names what files can tell (it
    // asks the CPU too, which names the hypervisor behind `vm-other`).
    let ours = f["virtualization"].as_str().unwrap();
    if datum_testkit::tools::installed(&["systemd-detect-virt"]) {
        // It exits 1 when it finds none, printing `none`.
        let out = Command::new("systemd-detect-virt").output().unwrap();
        let theirs = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if ours == "vm-other" {
            assert_ne!(theirs, "none");
        } else {
            assert_eq!(ours, theirs);
        }
    }
    let text = facts(&[]).stdout;
    assert!(text.contains(&format!("  os          {os}\n")), "{text}");
    assert!(text.contains("from this machine:\n  arch "), "{text}");
}

#[test]
fn under_a_root_the_os_release_is_the_trees_and_the_rest_the_machines() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    fs::create_dir_all(root.join("usr/lib")).unwrap();
    fs::create_dir_all(root.join("etc")).unwrap();
    fs::write(
        root.join("usr/lib/os-release"),
        "NAME=\"Rocky Linux\"\nID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.4\"\nPRETTY_NAME=\"Rocky Linux 9.4 (Blue Onyx)\"\n",
    )
    .unwrap();
    // Absolute, as shipped: it leads inside the root, never to this machine's.
    std::os::unix::fs::symlink("/usr/lib/os-release", root.join("etc/os-release")).unwrap();
    let r = root.to_str().unwrap();
    let v = json(&["--root", r]);
    let f = &v["facts"];
    assert_eq!(f["os"], "rocky-9");
    assert_eq!(f["os_id"], "rocky");
    assert_eq!(f["os_version"], "9.4");
    assert_eq!(
        f["os_like"],
        serde_json::json!(["rhel", "centos", "fedora"])
    );
    assert_eq!(v["root"], r);
    assert_eq!(v["os_release"], format!("{r}/etc/os-release"));
    assert_eq!(
        v["from_root"],
        serde_json::json!(["os", "os_id", "os_version", "os_like", "os_name"])
    );
    assert_eq!(f["arch"], tool("uname", &["-m"]).unwrap().as_str());
    let text = facts(&["--root", r]).stdout;
    assert!(
        text.starts_with(&format!(
            "from {r}/etc/os-release:\n  os          rocky-9\n"
        )),
        "{text}"
    );
    assert!(
        text.contains("from the machine Datum runs on (not the root):\n  arch "),
        "{text}"
    );

    // Without os-release the tree's facts are unknown, and say why.
    let empty = tempfile::tempdir().unwrap();
    let e = empty.path().canonicalize().unwrap();
    let v = json(&["--root", e.to_str().unwrap()]);
    assert_eq!(v["facts"]["os"], Value::Null);
    let why = v["unobserved"]["os"].as_str().unwrap();
    assert!(why.starts_with("no os-release ("), "{why}");
    let text = facts(&["--root", e.to_str().unwrap()]).stdout;
    assert!(
        text.contains(&format!(
            "from the tree at {}:\n  unknown: no os-release",
            e.display()
        )),
        "{text}"
    );
}

#[test]
fn a_root_that_is_not_a_directory_is_bad_usage() {
    let run = Run::from(
        datum()
            .args(["facts", "--root", "/nonexistent/x"])
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 64);
    assert!(
        run.stderr
            .contains("--root /nonexistent/x is not a directory"),
        "{}",
        run.stderr
    );
}
