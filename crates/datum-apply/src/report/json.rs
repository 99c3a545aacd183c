//! The JSON report: one document at the end of a run, as `datum apply
//! --format json` prints it and the agent's run reports carry it.

use std::io::{self, Write};

use datum_core::emit::{self, Tree};

use super::{Outcome, Reporter, RunInfo, Summary};

/// One JSON document at the end: the run, every resource with its status
/// and changes, and the counts.
pub struct JsonReporter<W> {
    out: W,
    run: Option<RunInfo>,
    notes: Vec<String>,
    outcomes: Vec<Outcome>,
    facts: Option<Tree<'static>>,
    health: Vec<super::Checked>,
}

impl<W: Write> JsonReporter<W> {
    pub fn new(out: W) -> JsonReporter<W> {
        JsonReporter {
            out,
            run: None,
            notes: Vec::new(),
            outcomes: Vec::new(),
            facts: None,
            health: Vec::new(),
        }
    }

    /// The report also carries what the host observes
    /// ([`crate::facts::Facts::tree`]).
    pub fn with_facts(mut self, facts: Tree<'static>) -> JsonReporter<W> {
        self.facts = Some(facts);
        self
    }
}

impl<W: Write> Reporter for JsonReporter<W> {
    fn start(&mut self, run: &RunInfo) -> io::Result<()> {
        self.run = Some(run.clone());
        Ok(())
    }

    fn note(&mut self, text: &str) -> io::Result<()> {
        self.notes.push(text.to_owned());
        Ok(())
    }

    fn resource(&mut self, outcome: &Outcome) -> io::Result<()> {
        self.outcomes.push(outcome.clone());
        Ok(())
    }

    fn health(&mut self, checked: &super::Checked) -> io::Result<()> {
        self.health.push(checked.clone());
        Ok(())
    }

    fn finish(&mut self, summary: &Summary) -> io::Result<()> {
        let mut t = Tree::document("ApplyReport");
        if let Some(run) = &self.run {
            t.push("host", Tree::str(run.host.as_str()));
            if let Some(root) = &run.root {
                t.push("root", Tree::str(root.as_str()));
            }
            t.push("noop", Tree::Bool(run.noop));
        }
        if let Some(facts) = &self.facts {
            t.push("facts", facts.clone());
        }
        t.push("notes", Tree::strs(self.notes.iter().map(String::as_str)));
        let resources = self.outcomes.iter().map(outcome_tree).collect();
        t.push("resources", Tree::List(resources));
        let health = self.health.iter().map(|c| {
            Tree::map()
                .with("id", Tree::str(c.id.as_str()))
                .with("check", Tree::str(c.what.as_str()))
                .with(
                    "status",
                    Tree::str(if c.passed { "passed" } else { "failed" }),
                )
                .with("detail", Tree::str(c.detail.as_str()))
                .with("output", Tree::str(c.output.as_str()))
        });
        t.push("health", Tree::List(health.collect()));
        t.push(
            "summary",
            Tree::map()
                .with("changed", int(summary.changed))
                .with("would_change", int(summary.would_change))
                .with("failed", int(summary.failed))
                .with("skipped", int(summary.skipped))
                .with("unchanged", int(summary.unchanged))
                .with("health_passed", int(summary.health_passed))
                .with("health_failed", int(summary.health_failed)),
        );
        emit::write_json(&mut self.out, &t)?;
        self.out.flush()
    }
}

fn int(n: usize) -> Tree<'static> {
    Tree::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

fn outcome_tree(o: &Outcome) -> Tree<'_> {
    let mut t = Tree::map()
        .with("id", Tree::str(o.id.as_str()))
        .with("summary", Tree::str(o.summary.as_str()))
        .with("status", Tree::str(o.status.key()));
    let changes = o
        .changes
        .iter()
        .map(|c| {
            let mut ct = Tree::map().with("attribute", Tree::str(c.attribute.name()));
            if let Some(f) = &c.from {
                ct.push("from", Tree::str(f.as_str()));
            }
            if let Some(to) = &c.to {
                ct.push("to", Tree::str(to.as_str()));
            }
            if let Some(d) = &c.diff {
                ct.push("diff", Tree::str(d.as_str()));
            }
            ct
        })
        .collect();
    t.push("changes", Tree::List(changes));
    if !o.notes.is_empty() {
        t.push("notes", Tree::strs(o.notes.iter().map(String::as_str)));
    }
    if let Some(r) = &o.reason {
        t.push("reason", Tree::str(r.to_string()));
    }
    if let Some(c) = &o.command {
        let mut ct = Tree::map().with("exit", Tree::str(c.exit.to_string()));
        if let Some(code) = c.exit.code() {
            ct.push("code", Tree::Int(code.into()));
        }
        ct.push("output", Tree::str(c.output.as_str()));
        ct.push(
            "omitted_bytes",
            Tree::Int(i64::try_from(c.omitted).unwrap_or(i64::MAX)),
        );
        t.push("command", ct);
    }
    t
}
