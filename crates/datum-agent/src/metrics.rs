//! The Prometheus textfile-collector file (by default
//! `/var/lib/prometheus/node-exporter/datum.prom`): the last run's outcome
//! as gauges and counters node_exporter exposes for this host, replaced
//! atomically so the collector never reads half a file.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use datum_fs::{Attrs, write_atomic};

use crate::report::RunRecord;

/// Where node_exporter's textfile collector conventionally looks.
pub const DEFAULT_PATH: &str = "/var/lib/prometheus/node-exporter/datum.prom";
/// The collector runs as its own user: the file must be world-readable.
const MODE: u32 = 0o644;

/// The exposition text for a run.
pub fn render(record: &RunRecord) -> String {
    let mut out = String::new();
    let finished = record.finished.since_epoch().as_secs_f64();
    metric(
        &mut out,
        "datum_last_run_timestamp_seconds",
        "gauge",
        "When the last Datum run finished, in seconds since the Unix epoch.",
        &[("", finished)],
    );
    metric(
        &mut out,
        "datum_last_run_exit_status",
        "gauge",
        "Exit status of the last Datum run: 0 no change, 2 changed, 4 failures, 6 both, 1 refused or unresolved.",
        &[("", f64::from(record.exit_status))],
    );
    let by_status: Vec<(String, f64)> = record
        .counts
        .by_status()
        .iter()
        .map(|(status, n)| (labels(&[("status", status)]), *n as f64))
        .collect();
    let by_status: Vec<(&str, f64)> = by_status.iter().map(|(l, n)| (l.as_str(), *n)).collect();
    metric(
        &mut out,
        "datum_resources",
        "gauge",
        "Resources of the last Datum run, by final status.",
        &by_status,
    );
    let revision = labels(&[
        ("commit", record.commit.as_deref().unwrap_or("")),
        ("source", record.source.as_deref().unwrap_or("")),
    ]);
    metric(
        &mut out,
        "datum_revision_info",
        "gauge",
        "The revision the last Datum run applied, and where it came from.",
        &[(&revision, 1.0)],
    );
    metric(
        &mut out,
        "datum_last_run_cached_input",
        "gauge",
        "1 when fetching failed and the last run applied the last verified input instead.",
        &[("", if record.cached_input { 1.0 } else { 0.0 })],
    );
    metric(
        &mut out,
        "datum_fetch_failures_total",
        "counter",
        "Times fetching the configuration failed.",
        &[("", record.fetch_failures_total as f64)],
    );
    input(&mut out, record);
    rollout(&mut out, record);
    facts(&mut out, record);
    metric(
        &mut out,
        "datum_run_duration_seconds",
        "gauge",
        "How long the last Datum run took, in seconds.",
        &[("", record.duration().as_secs_f64())],
    );
    out
}

/// What the agent trusts: whether it checks signatures, what it refused,
/// when its input expires.
fn input(out: &mut String, record: &RunRecord) {
    metric(
        out,
        "datum_insecure_allow_unsigned",
        "gauge",
        "1 when the agent applies input that no signature vouches for (insecure_allow_unsigned: true).",
        &[(
            "",
            if record.insecure_allow_unsigned {
                1.0
            } else {
                0.0
            },
        )],
    );
    let refusals: Vec<(String, f64)> = record
        .input_refusals_total
        .iter()
        .map(|(reason, n)| (labels(&[("reason", reason)]), *n as f64))
        .collect();
    let refusals: Vec<(&str, f64)> = refusals.iter().map(|(l, n)| (l.as_str(), *n)).collect();
    if !refusals.is_empty() {
        metric(
            out,
            "datum_input_refusals_total",
            "counter",
            "Inputs the agent refused, by reason (rollback, rolled_back, expired, signature, unsigned, no_signers, fleet, damaged, wrong_host, labels, other).",
            &refusals,
        );
    }
    if let Some(expires) = record.input_expires {
        metric(
            out,
            "datum_input_expiry_timestamp_seconds",
            "gauge",
            "When the signed input the host runs expires, in seconds since the Unix epoch: alert well before it.",
            &[("", expires as f64)],
        );
    }
}

/// A newer input waiting for its rollout wave, and an input taken back
/// after its health checks failed: present only when there is one.
fn rollout(out: &mut String, record: &RunRecord) {
    let serial = |s: Option<u64>| s.map_or_else(String::new, |n| n.to_string());
    if let Some(p) = &record.pending {
        let l = labels(&[
            ("commit", p.commit.as_deref().unwrap_or("")),
            ("serial", &serial(p.serial)),
        ]);
        metric(
            out,
            "datum_pending_revision_info",
            "gauge",
            "A newer input the agent verified that waits for this host's rollout wave.",
            &[(&l, 1.0)],
        );
        metric(
            out,
            "datum_pending_due_timestamp_seconds",
            "gauge",
            "When the pending input becomes due on this host, in seconds since the Unix epoch.",
            &[("", p.due as f64)],
        );
    }
    if let Some(r) = &record.rolled_back {
        let l = labels(&[
            ("commit", r.commit.as_deref().unwrap_or("")),
            ("serial", &serial(r.serial)),
        ]);
        metric(
            out,
            "datum_rolled_back_revision_info",
            "gauge",
            "An input this host applied and took back because its health checks failed: refused until a newer one arrives.",
            &[(&l, 1.0)],
        );
    }
}

/// What the host observed, and its labels that disagreed with it.
fn facts(out: &mut String, record: &RunRecord) {
    let fact = |k: &str| record.facts.get(k).and_then(|v| v.as_str()).unwrap_or("");
    let info = labels(&[
        ("arch", fact("arch")),
        ("kernel", fact("kernel")),
        ("os", fact("os")),
        ("virtualization", fact("virtualization")),
    ]);
    metric(
        out,
        "datum_host_facts_info",
        "gauge",
        "What the host observed in the last Datum run: its OS release, architecture, kernel and virtualization (empty when unknown).",
        &[(&info, 1.0)],
    );
    metric(
        out,
        "datum_label_mismatches",
        "gauge",
        "Labels of this host tied to a fact that disagreed with what it observed in the last Datum run, which was then refused.",
        &[("", record.label_mismatches.len() as f64)],
    );
    let each: Vec<String> = record
        .label_mismatches
        .iter()
        .map(|m| {
            labels(&[
                ("declared", &m.declared),
                ("fact", &m.fact),
                ("label", &m.label),
                ("observed", m.observed.as_deref().unwrap_or("")),
            ])
        })
        .collect();
    if !each.is_empty() {
        let samples: Vec<(&str, f64)> = each.iter().map(|l| (l.as_str(), 1.0)).collect();
        metric(
            out,
            "datum_label_mismatch",
            "gauge",
            "A label of this host that disagreed with what it observed: declared value, fact and what was observed.",
            &samples,
        );
    }
}

/// Writes [`render`]'s text to `abs` inside `root` atomically, readable by
/// the collector, creating its directory (inside the root) when missing.
pub fn write_inside(root: &datum_apply::Root, abs: &str, record: &RunRecord) -> io::Result<()> {
    let parent = match abs.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &abs[..i],
    };
    root.create_dir_all(parent, 0o755)?;
    let attrs = Attrs {
        mode: Some(MODE),
        ..Attrs::default()
    };
    root.write_atomic(abs, render(record).as_bytes(), attrs)
}

/// Writes [`render`]'s text to `path` atomically, readable by the collector.
pub fn write(path: &Path, record: &RunRecord) -> io::Result<()> {
    let attrs = Attrs {
        mode: Some(MODE),
        ..Attrs::default()
    };
    write_atomic(path, render(record).as_bytes(), attrs)
}

/// One metric family: `# HELP`, `# TYPE`, then a sample per label set
/// (already rendered, `""` for none).
fn metric(out: &mut String, name: &str, kind: &str, help: &str, samples: &[(&str, f64)]) {
    let _ = writeln!(out, "# HELP {name} {}", escape_help(help));
    let _ = writeln!(out, "# TYPE {name} {kind}");
    for (labels, value) in samples {
        let _ = writeln!(out, "{name}{labels} {value}");
    }
}

/// `{a="x",b="y"}`, values escaped as the exposition format requires.
fn labels(pairs: &[(&str, &str)]) -> String {
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// In a label value, `\`, `"` and a line feed must be escaped.
fn escape_label(v: &str) -> String {
    escape_help(v).replace('"', "\\\"")
}

/// In help text, `\` and a line feed must be escaped.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}
