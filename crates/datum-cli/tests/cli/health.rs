//! `Health` checks: asked by `datum apply` after a run that changed
//! something, never under `--noop` nor after a run that changed nothing.
//! Commands run chrooted into a machine root holding this machine's `sh`
//! and `test` (with their libraries), as Execs do; HTTP checks ask a
//! server on 127.0.0.1.

use std::fs;
use std::path::PathBuf;

use datum_testkit::http::{Reply, response, serve};

use crate::common::{Run, apply_under, run_in};

struct Scene {
    dir: tempfile::TempDir,
}

impl Scene {
    fn new(resources: &str) -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let s = Scene { dir };
        for d in ["root/etc", "root/srv", "fleet"] {
            fs::create_dir_all(s.dir.path().join(d)).unwrap();
        }
        fs::write(
            s.root().join("etc/passwd"),
            "root:x:0:0:root:/root:/bin/sh\n",
        )
        .unwrap();
        datum_testkit::machine::install_programs(&s.root(), &["/bin/sh", "test", "cat"]);
        fs::write(
            s.fleet().join("datum.yaml"),
            "datum: v1alpha1\ntype: Fleet\nname: health\n",
        )
        .unwrap();
        fs::write(
            s.fleet().join("hosts.yaml"),
            "datum: v1alpha1\ntype: Host\nname: app-001\n",
        )
        .unwrap();
        s.layer(resources);
        s
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    fn fleet(&self) -> PathBuf {
        self.dir.path().join("fleet")
    }

    fn layer(&self, resources: &str) {
        fs::write(
            self.fleet().join("layer.yaml"),
            format!(
                "datum: v1alpha1\ntype: Layer\nname: app\nprecedence: 0\nmatch: {{}}\nresources:\n  File[motd]:\n    path: /etc/motd\n    content: \"hello\\n\"\n{resources}"
            ),
        )
        .unwrap();
    }

    fn apply(&self, args: &[&str]) -> Run {
        apply_under(&self.root(), "app-001", &self.fleet(), args)
    }
}

/// The `health ...` lines of a run's output.
fn health_lines(run: &Run) -> Vec<&str> {
    run.stdout
        .lines()
        .filter(|l| l.starts_with("health "))
        .collect()
}

#[test]
fn a_failing_check_fails_the_run_and_says_which_with_its_output() {
    let server = serve(vec![Reply::Send(response("200 OK", b"ok"))]);
    let s = Scene::new(&format!(
        "  Health[ready]:\n    command: [sh, -c, \"echo not ready yet; exit 3\"]\n  Health[web]:\n    http: {}/healthz\n",
        server.base
    ));
    let run = s.apply(&[]);
    assert_eq!(
        run.code, 6,
        "changes and a failure\n{}\n{}",
        run.stdout, run.stderr
    );
    assert_eq!(
        health_lines(&run),
        [
            "health failed: Health[ready] sh -c 'echo not ready yet; exit 3': exit 3",
            &*format!(
                "health passed: Health[web] GET {}/healthz: answered 200",
                server.base
            ),
        ]
    );
    assert!(run.stdout.contains("  | not ready yet\n"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("summary: 1 changed; health checks: 1 failed, 1 passed"),
        "{}",
        run.stdout
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].head.starts_with("GET /healthz HTTP/1.0\r\n"),
        "{}",
        requests[0].head
    );
}

#[test]
fn the_json_report_lists_each_check() {
    let server = serve(vec![Reply::Send(response(
        "503 Service Unavailable",
        b"draining",
    ))]);
    let s = Scene::new(&format!("  Health[web]:\n    http: {}/\n", server.base));
    let run = s.apply(&["--format", "json"]);
    assert_eq!(run.code, 6, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["summary"]["health_failed"], 1);
    assert_eq!(v["summary"]["health_passed"], 0);
    let check = &v["health"][0];
    assert_eq!(check["id"], "Health[web]");
    assert_eq!(check["status"], "failed");
    assert_eq!(check["detail"], "answered 503, expected 200");
    assert!(check["output"].as_str().unwrap().contains("draining"));
    crate::json_contract::assert_conforms("apply with a failing health check", &run);
}

#[test]
fn an_expected_status_other_than_200_passes() {
    let server = serve(vec![Reply::Send(response("204 No Content", b""))]);
    let s = Scene::new(&format!(
        "  Health[web]:\n    http: {}/ping\n    status: 204\n",
        server.base
    ));
    let run = s.apply(&[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        health_lines(&run),
        [&*format!(
            "health passed: Health[web] GET {}/ping: answered 204",
            server.base
        )]
    );
}

#[test]
fn a_server_that_is_down_fails_its_check() {
    let s = Scene::new(&format!(
        "  Health[web]:\n    http: {}/\n",
        datum_testkit::http::down()
    ));
    let run = s.apply(&[]);
    assert_eq!(run.code, 6, "{}", run.stdout);
    let lines = health_lines(&run);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].contains(": cannot connect to 127.0.0.1:"),
        "{}",
        lines[0]
    );
}

#[test]
fn checks_run_only_after_a_run_that_changed_something_and_never_under_noop() {
    let s = Scene::new("  Health[ready]:\n    command: [test, -e, /srv/ready]\n");
    let noop = s.apply(&["--noop"]);
    assert_eq!(noop.code, 2, "{}", noop.stdout);
    assert!(health_lines(&noop).is_empty(), "{}", noop.stdout);
    // The command runs chrooted: /srv/ready is the root's.
    fs::write(s.root().join("srv/ready"), "").unwrap();
    let run = s.apply(&[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        health_lines(&run),
        ["health passed: Health[ready] test -e /srv/ready: exit 0"]
    );
    // Nothing changes on the next run: nothing is asked.
    fs::remove_file(s.root().join("srv/ready")).unwrap();
    let again = s.apply(&[]);
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert!(health_lines(&again).is_empty(), "{}", again.stdout);
}

#[test]
fn a_check_that_is_not_one_is_an_error_at_its_place() {
    let s = Scene::new(
        "  Health[web]:\n    http: http://example.com/\n  Health[both]:\n    http: http://127.0.0.1/\n    command: [true]\n  Health[code]:\n    http: http://127.0.0.1/\n    status: 700\n",
    );
    let run = run_in(&s.fleet(), &["check"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("layer.yaml:11:11"), "{}", run.stderr);
    assert!(
        run.stderr.contains("is not the host itself"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("`status` must be an HTTP status from 100 to 599"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("Health[both]"), "{}", run.stderr);
}
