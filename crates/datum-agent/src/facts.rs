//! A host's declared labels checked against what it observes, before a
//! run changes anything (`datum apply` and the agent), and what a run
//! records of it: the facts, and each label that disagreed.
//!
//! The labels come from the fleet (with their places, so the refusal
//! points at the host's document) or from a bundle's manifest, which
//! carries the host's labels and, under `label_facts`, the ones tied to a
//! fact ([`manifest_tied`]).

use datum_apply::facts::Facts;
use datum_core::diagnostic::Diagnostic;
use datum_core::facts::{Mismatch, Observed, Tied, mismatches};
use datum_core::settings::{self, Value as Yaml};
use datum_core::source::Files;
use serde::{Deserialize, Serialize};

/// A tied label that disagreed, as a run report keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelMismatch {
    pub label: String,
    pub declared: String,
    pub fact: String,
    /// What the host observed; `None` when it could not.
    pub observed: Option<String>,
}

impl From<&Mismatch> for LabelMismatch {
    fn from(m: &Mismatch) -> LabelMismatch {
        LabelMismatch {
            label: m.tied.key.clone(),
            declared: m.tied.value.clone(),
            fact: m.tied.fact.clone(),
            observed: m.observed.clone().ok(),
        }
    }
}

/// What a run found comparing the labels with the facts.
#[derive(Debug, Default)]
pub struct Disagreement {
    pub mismatches: Vec<LabelMismatch>,
    /// The refusal, drawn: each mismatch as a diagnostic.
    pub text: String,
    /// What to do about the first.
    pub hint: String,
}

/// Compares `tied` with `observed`; `None` when every label agrees.
/// `files` places the labels (a fleet's), when there are places.
pub fn compare(
    tied: &[Tied],
    observed: &Observed,
    host: &str,
    files: Option<&Files>,
) -> Option<Disagreement> {
    let found = mismatches(tied, observed);
    let first = found.first()?;
    let whence = "observed by this host now (`datum facts` shows every fact)";
    let diags: Vec<Diagnostic> = found
        .iter()
        .map(|m| m.diagnostic(host, files, whence))
        .collect();
    let mut text = Vec::new();
    for d in &diags {
        match files {
            Some(files) => {
                let _ = datum_core::present::diagnostic::write(d, files, &mut text);
            }
            None => {
                text.extend(format!("error: {}\n", d.message).into_bytes());
            }
        }
    }
    Some(Disagreement {
        mismatches: found.iter().map(LabelMismatch::from).collect(),
        text: String::from_utf8_lossy(&text).trim_end().to_owned(),
        hint: diags
            .first()
            .and_then(|d| d.hint.clone())
            .unwrap_or_else(|| first.hint(None)),
    })
}

/// The facts as a run report carries them.
pub fn json(facts: &Facts) -> serde_json::Value {
    serde_json::to_value(facts.tree()).unwrap_or(serde_json::Value::Null)
}

/// The labels of a bundle's manifest tied to a fact: its `labels`, and
/// `label_facts` (label key to fact name). A manifest without them ties
/// nothing; one that does not parse is refused by its resources' reader.
pub fn manifest_tied(manifest: &[u8]) -> Vec<Tied> {
    let text = String::from_utf8_lossy(manifest).into_owned();
    let mut files = Files::default();
    let file = files.add("manifest".into(), text);
    let Ok(doc) = settings::parse(file, files.get(file).text()) else {
        return Vec::new();
    };
    let Some(root) = doc.root() else {
        return Vec::new();
    };
    let map = |key: &str| -> Vec<(String, String)> {
        root.entries()
            .filter(|(k, _, v)| *k == key && v.value() == Yaml::Map)
            .flat_map(|(_, _, v)| {
                v.entries()
                    .filter_map(|(k, _, v)| Some((k.to_owned(), v.scalar_text()?.to_owned())))
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let labels = map("labels");
    map("label_facts")
        .into_iter()
        .map(|(key, fact)| Tied {
            value: labels
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone())
                .unwrap_or_default(),
            key,
            fact,
            declared: None,
            places: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_says_which_labels_are_tied_to_which_fact() {
        let manifest = b"datum: v1alpha1\ntype: Manifest\nhost: h\nlabels:\n  datum/host: h\n  os: debian-12\n  role: web\nlabel_facts:\n  os: os\nlayers: []\nresources: {}\n";
        let tied = manifest_tied(manifest);
        assert_eq!(tied.len(), 1);
        assert_eq!(
            (
                tied[0].key.as_str(),
                tied[0].value.as_str(),
                tied[0].fact.as_str()
            ),
            ("os", "debian-12", "os")
        );
        assert!(
            manifest_tied(b"datum: v1alpha1\ntype: Manifest\nhost: h\nlabels: {}\n").is_empty()
        );
        let mut observed = Observed::new();
        observed.insert("os".into(), Ok("debian-13".into()));
        let d = compare(&tied, &observed, "h", None).unwrap();
        assert_eq!(
            d.text,
            "error: inventory says os=debian-12; h runs debian-13"
        );
        assert_eq!(d.hint, "update the host's document: `os: debian-13`");
        assert_eq!(
            d.mismatches,
            [LabelMismatch {
                label: "os".into(),
                declared: "debian-12".into(),
                fact: "os".into(),
                observed: Some("debian-13".into())
            }]
        );
        observed.insert("os".into(), Ok("debian-12".into()));
        assert!(compare(&tied, &observed, "h", None).is_none());
    }
}
