//! `--format short` and `--format github` for `check` and `diff`: one line
//! per diagnostic, for editors and for GitHub Actions' annotations. The
//! github output is read back with a parser of the workflow-command
//! syntax written here from its documentation, so what the runner would
//! read is what is checked.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::common::{Run, copy_tree, datum, example, repo_root};
use crate::diff::Git;

/// One workflow command: `::NAME k=v,k=v::DATA`, unescaped.
#[derive(Debug, PartialEq)]
struct WorkflowCommand {
    name: String,
    props: BTreeMap<String, String>,
    data: String,
}

/// Undoes the runner's escapes; any other `%` is malformed, and so is a
/// raw line break.
fn unescape(text: &str, property: bool) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let code = rest.get(i..i + 3).ok_or("a `%` without its code")?;
        out.push(match code {
            "%25" => '%',
            "%0D" => '\r',
            "%0A" => '\n',
            "%3A" if property => ':',
            "%2C" if property => ',',
            other => return Err(format!("unknown escape {other}")),
        });
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Ok(out)
}

fn parse_command(line: &str) -> Result<WorkflowCommand, String> {
    if line.contains(['\r', '\n']) {
        return Err("a raw line break".into());
    }
    let body = line.strip_prefix("::").ok_or("no leading `::`")?;
    let end = body.find("::").ok_or("no `::` before the message")?;
    let (head, data) = (&body[..end], &body[end + 2..]);
    let (name, props_text) = head.split_once(' ').unwrap_or((head, ""));
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
        return Err(format!("bad command name `{name}`"));
    }
    let mut props = BTreeMap::new();
    if !props_text.is_empty() {
        for pair in props_text.split(',') {
            let (k, v) = pair.split_once('=').ok_or(format!("`{pair}` is not k=v"))?;
            if v.contains(':') {
                return Err(format!("a raw `:` in property {k}"));
            }
            if props.insert(k.to_owned(), unescape(v, true)?).is_some() {
                return Err(format!("property {k} twice"));
            }
        }
    }
    Ok(WorkflowCommand {
        name: name.to_owned(),
        props,
        data: unescape(data, false)?,
    })
}

/// Every line of `stdout` as a workflow command of a known annotation kind,
/// whose `file` exists under `base`.
fn annotations(stdout: &str, base: &Path) -> Vec<WorkflowCommand> {
    stdout
        .lines()
        .map(|l| {
            let c = parse_command(l).unwrap_or_else(|e| panic!("{e}: {l:?}"));
            assert!(
                ["error", "warning", "notice"].contains(&c.name.as_str()),
                "{l}"
            );
            if let Some(file) = c.props.get("file") {
                assert!(base.join(file).is_file(), "{file} is not a file");
                for k in ["line", "col"] {
                    assert!(c.props[k].parse::<u32>().unwrap() > 0, "{l}");
                }
            }
            c
        })
        .collect()
}

#[test]
fn the_parser_refuses_what_the_runner_would_misread() {
    assert!(parse_command("::error file=a,b::x").is_err());
    assert!(parse_command("::error file=a:b::x").is_err());
    assert!(parse_command("::error::50% done").is_err());
    assert!(parse_command("error::x").is_err());
    assert_eq!(
        parse_command("::warning file=a%2Cb,line=3::x%0Ay").unwrap(),
        WorkflowCommand {
            name: "warning".into(),
            props: [("file".into(), "a,b".into()), ("line".into(), "3".into())].into(),
            data: "x\ny".into(),
        }
    );
}

/// Runs `datum ARGS` in `dir`, the fleet found from there.
fn run_at(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = datum();
    cmd.args(args).current_dir(dir);
    let run = Run::from(cmd.output().unwrap());
    assert_ne!(run.code, 101, "{}", run.stderr);
    run
}

#[test]
fn check_github_annotates_each_line_where_the_json_says() {
    let root = repo_root();
    let run = run_at(
        &root,
        &[
            "check",
            "--fleet",
            "examples/conflict",
            "--format",
            "github",
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "checked 2 hosts against 2 layers: 1 error, no warnings\n"
    );
    let got = annotations(&run.stdout, &root);
    let json = run_at(
        &root,
        &["check", "--fleet", "examples/conflict", "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let diags = v["diagnostics"].as_array().unwrap();
    assert_eq!(got.len(), diags.len());
    for (c, d) in got.iter().zip(diags) {
        let at = &d["primary"]["location"];
        assert_eq!(c.name, d["severity"]);
        assert_eq!(
            c.props["file"],
            format!("examples/conflict/{}", at["path"].as_str().unwrap())
        );
        assert_eq!(c.props["line"], at["line"].to_string());
        assert_eq!(c.props["col"], at["column"].to_string());
        assert_eq!(
            c.props["title"],
            format!("datum {}", d["code"].as_str().unwrap())
        );
        assert!(
            c.data.starts_with(d["message"].as_str().unwrap()),
            "{}",
            c.data
        );
        assert!(
            c.data
                .ends_with(&format!("\nhint: {}", d["hint"].as_str().unwrap()))
        );
    }
}

/// A layer in a directory whose name holds what ends a property, with an
/// unknown field: its annotation must still name the file.
fn odd_fleet() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&example("fleet"), dir.path());
    let odd = dir.path().join("roles/a,b:50%");
    fs::create_dir_all(&odd).unwrap();
    fs::write(
        odd.join("layer.yaml"),
        "datum: v1alpha1\ntype: Layer\nname: odd\nprecedence: 5\nmatch: {}\n\
         resources:\n  File[odd]:\n    path: /etc/odd\n    mdoe: \"0644\"\n",
    )
    .unwrap();
    dir
}

#[test]
fn check_short_and_github_escape_odd_paths() {
    let dir = odd_fleet();
    let run = run_at(dir.path(), &["check", "--format", "short"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("roles/a,b:50%/layer.yaml:9:5: error[unknown-field]: "),
        "{}",
        run.stdout
    );
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    let run = run_at(dir.path(), &["check", "--format", "github"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let got = annotations(&run.stdout, dir.path());
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].props["file"], "roles/a,b:50%/layer.yaml");
    assert_eq!(got[0].props["line"], "9");
}

#[test]
fn diff_github_annotates_the_errors_a_change_brings_and_sums_it_up() {
    let g = Git::with_example("fleet", "");
    g.write_file(
        "roles/web-tls/layer.yaml",
        "datum: v1alpha1\ntype: Layer\nname: web-tls\nprecedence: 30\nmatch:\n  labels:\n    role: web\n    site: london\n\
         resources:\n  File[nginx-config]:\n    mode: \"0600\"\n",
    );
    let run = g.datum(&["diff", "--format", "github"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let got = annotations(&run.stdout, &g.fleet);
    assert_eq!(got.len(), 2, "{}", run.stdout);
    assert_eq!(got[0].name, "error");
    assert_eq!(got[0].props["title"], "datum conflict");
    assert!(
        got[0]
            .data
            .starts_with("conflicting values for File[nginx-config].mode (hosts web-001, web-002)"),
        "{}",
        got[0].data
    );
    assert_eq!(
        got[1],
        WorkflowCommand {
            name: "notice".into(),
            props: [("title".into(), "datum diff".into())].into(),
            data: "2 hosts change, 0 added, 0 removed, 3 unchanged, 2 failing".into(),
        }
    );
    // The fleet is given by an absolute path outside the current
    // directory: paths are whole.
    let run = g.datum(&["diff", "--format", "short"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout
            .replace(&format!("{}/", g.fleet.display()), "[FLEET]/"),
        "[FLEET]/roles/web/layer.yaml:20:11: error[conflict]: conflicting values for File[nginx-config].mode (hosts web-001, web-002)\n"
    );
    assert!(
        run.stderr
            .starts_with("2 hosts change, 0 added, 0 removed, 3 unchanged, 2 failing\n"),
        "{}",
        run.stderr
    );
}
