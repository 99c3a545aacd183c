//! The module map in docs/architecture.md stays whole: every source module
//! of every crate is in it under its crate, says its job in an opening `//!`
//! comment, and every module the map names exists. And the layers hold: no
//! crate's top-level modules import each other in a cycle
//! (`scripts/cycles.py`).

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::repo_root;

/// A source module: its path under the crate's `src/` as the map writes it
/// (`loader/` for `loader/mod.rs`), and whether it opens with a `//!`.
struct Module {
    name: String,
    documented: bool,
}

/// Test-only files (`tests.rs`, `*_tests.rs`) are not modules of the map.
fn modules(src: &Path) -> Vec<Module> {
    let mut out = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            if !file.ends_with(".rs") || file == "tests.rs" || file.ends_with("_tests.rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().to_string_lossy();
            let name = match rel.strip_suffix("mod.rs") {
                Some(dir) => dir.to_owned(),
                None => rel.into_owned(),
            };
            let text = fs::read_to_string(&path).unwrap();
            let documented = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.starts_with("//!"));
            out.push(Module { name, documented });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The map's section for a crate: from its `### NAME (` heading to the next.
fn section<'m>(map: &'m str, krate: &str) -> Option<&'m str> {
    let start = map.find(&format!("### {krate} ("))?;
    let rest = &map[start + 4..];
    Some(&rest[..rest.find("\n### ").unwrap_or(rest.len())])
}

/// The modules a section's table names: the first cell of each row.
fn named(section: &str) -> Vec<&str> {
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split_once('`').map(|(name, _)| name))
        .collect()
}

/// What is wrong with the map for one crate.
fn problems(map: &str, krate: &str, modules: &[Module]) -> Vec<String> {
    let Some(section) = section(map, krate) else {
        return vec![format!("{krate} has no section `### {krate} (...)`")];
    };
    let names = named(section);
    let mut out = Vec::new();
    for m in modules {
        if !names.contains(&m.name.as_str()) {
            out.push(format!("{krate}: `{}` is not in the map", m.name));
        }
        if !m.documented {
            out.push(format!(
                "{krate}: `{}` does not open with a `//!` comment saying its job",
                m.name
            ));
        }
    }
    for name in names {
        if !modules.iter().any(|m| m.name == name) {
            out.push(format!(
                "{krate}: the map names `{name}`, which does not exist"
            ));
        }
    }
    out
}

#[test]
fn every_module_is_in_the_map_with_its_job() {
    let root = repo_root();
    let map = fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let mut all = Vec::new();
    let mut crates: Vec<_> = fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    crates.sort();
    assert!(crates.len() >= 5, "{crates:?}");
    for dir in crates {
        let krate = dir.file_name().unwrap().to_string_lossy().into_owned();
        all.extend(problems(&map, &krate, &modules(&dir.join("src"))));
    }
    assert!(all.is_empty(), "docs/architecture.md:\n{}", all.join("\n"));
}

#[test]
fn a_module_missing_renamed_or_undocumented_is_named() {
    let map = "### demo (`crates/demo/src`)\n\n| module | job |\n|---|---|\n| `lib.rs` | map |\n| `gone.rs` | was |\n\n### other (`x`)\n| `a.rs` | a |\n";
    let modules = [
        Module {
            name: "lib.rs".into(),
            documented: true,
        },
        Module {
            name: "loader/".into(),
            documented: false,
        },
    ];
    assert_eq!(
        problems(map, "demo", &modules),
        [
            "demo: `loader/` is not in the map",
            "demo: `loader/` does not open with a `//!` comment saying its job",
            "demo: the map names `gone.rs`, which does not exist",
        ]
    );
    assert_eq!(
        problems(map, "absent", &modules),
        ["absent has no section `### absent (...)`"]
    );
}

/// `scripts/cycles.py` on the repository at `root`: its exit code and what
/// it printed.
fn cycles(root: &Path) -> (i32, String) {
    let out = Command::new("python3")
        .arg(repo_root().join("scripts/cycles.py"))
        .arg("--root")
        .arg(root)
        .output()
        .expect("python3 runs scripts/cycles.py");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn no_crate_imports_its_own_modules_in_a_cycle() {
    let (code, text) = cycles(&repo_root());
    assert_eq!(code, 0, "scripts/cycles.py:\n{text}");
    assert!(text.ends_with("cycles: 0\n"), "{text}");
}

/// The layers docs/architecture.md draws for the core: each module with
/// its layer's number.
fn drawn_layers(map: &str) -> Vec<(String, u32)> {
    let section = &map[map
        .find("## Layers of the core")
        .expect("the layers are drawn")..];
    let drawing = section
        .split("```")
        .nth(1)
        .expect("a drawing of the layers");
    let mut out = Vec::new();
    for line in drawing.lines().filter(|l| !l.trim().is_empty()) {
        // `N  name  modules`, the columns two spaces or more apart.
        let cols: Vec<&str> = line
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        let [n, _name, modules] = cols[..] else {
            panic!("a layer reads `N  name  modules`: {line:?}");
        };
        let n: u32 = n.parse().unwrap();
        out.extend(modules.split(' ').map(|m| (m.to_owned(), n)));
    }
    out
}

#[test]
fn the_core_uses_only_its_own_layer_and_those_below() {
    let root = repo_root();
    let map = fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let layers = drawn_layers(&map);
    let layer = |m: &str| layers.iter().find(|(x, _)| x == m).map(|&(_, n)| n);
    let out = Command::new("python3")
        .arg(root.join("scripts/cycles.py"))
        .arg("--edges")
        .output()
        .unwrap();
    let edges = String::from_utf8(out.stdout).unwrap();
    let mut problems = Vec::new();
    for line in edges.lines().filter_map(|l| l.strip_prefix("datum-core: ")) {
        if let Some(modules) = line.strip_prefix("modules: ") {
            for m in modules.split(' ').filter(|m| layer(m).is_none()) {
                problems.push(format!("`{m}` is in no layer"));
            }
        } else if let Some((from, rest)) = line.split_once(" -> ") {
            let to = rest.split(' ').next().unwrap();
            if let (Some(a), Some(b)) = (layer(from), layer(to))
                && b > a
            {
                problems.push(format!("{line}: layer {a} uses layer {b}"));
            }
        }
    }
    assert!(layers.len() > 30, "{layers:?}");
    assert!(
        problems.is_empty(),
        "docs/architecture.md:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_cycle_through_a_grouped_use_or_a_doc_link_is_found_and_test_code_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("crates/demo/src");
    fs::create_dir_all(src.join("b")).unwrap();
    fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\nmod c;\nmod d;\n#[cfg(test)]\nmod testkit;\n",
    )
    .unwrap();
    // a -> b through a nested group, b -> a through a doc link in a child.
    fs::write(src.join("a.rs"), "use crate::{x, b::{inner::Y}};\n").unwrap();
    fs::write(src.join("b/mod.rs"), "mod inner;\n").unwrap();
    fs::write(
        src.join("b/inner.rs"),
        "/// Made by [`crate::a`].\npub struct Y;\n",
    )
    .unwrap();
    // c -> d in code; d -> c only in tests, strings and plain comments.
    fs::write(src.join("c.rs"), "fn f() { crate::d::g() }\n").unwrap();
    fs::write(
        src.join("d.rs"),
        "pub fn g() { let _ = \"crate::c\"; } // crate::c\n\
         #[cfg(test)]\nmod tests { use crate::c; }\n\
         #[cfg(test)]\nuse crate::c::f;\n",
    )
    .unwrap();
    fs::write(src.join("testkit.rs"), "use crate::c;\n").unwrap();
    let (code, text) = cycles(tmp.path());
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("demo: cycle of 2: a b\n"), "{text}");
    assert!(text.contains("a -> b  (src/a.rs:1)"), "{text}");
    assert!(text.contains("b -> a  (src/b/inner.rs:1)"), "{text}");
    assert!(!text.contains("c d"), "{text}");
    assert!(text.contains("cycles: 1\n"), "{text}");
}
