//! A Prometheus text file read back by a real exposition-format parser,
//! family by family, for the tests of what the agent writes.

use std::collections::BTreeMap;

use openmetrics_parser::prometheus::parse_prometheus;
use openmetrics_parser::{PrometheusType, PrometheusValue};

/// A metric family as a real exposition-format parser reads it.
#[derive(Debug, PartialEq)]
pub struct Family {
    /// `counter`, `gauge` or `other`.
    pub kind: &'static str,
    pub help: String,
    /// Each sample's value by its labels (sorted by name).
    pub samples: BTreeMap<Vec<(String, String)>, f64>,
}

impl Family {
    /// The value of a family with one sample and no labels; panics otherwise.
    pub fn one(&self) -> f64 {
        assert_eq!(self.samples.len(), 1, "{self:?}");
        self.samples[&Vec::new()]
    }
}

/// Every family in `text` by name; text the parser refuses panics with it.
pub fn parse(text: &str) -> BTreeMap<String, Family> {
    let exposition = parse_prometheus(text).unwrap_or_else(|e| panic!("{e:?} in\n{text}"));
    let mut out = BTreeMap::new();
    for (name, family) in exposition.families {
        let mut samples = BTreeMap::new();
        for s in family.iter_samples() {
            let labels = s
                .get_labelset()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let value = match &s.value {
                PrometheusValue::Gauge(n) | PrometheusValue::Unknown(n) => n.as_f64(),
                PrometheusValue::Counter(c) => c.value.as_f64(),
                other => panic!("unexpected value {other:?}"),
            };
            samples.insert(labels, value);
        }
        let kind = match family.family_type {
            PrometheusType::Counter => "counter",
            PrometheusType::Gauge => "gauge",
            _ => "other",
        };
        let help = family.help.clone();
        out.insert(
            name,
            Family {
                kind,
                help,
                samples,
            },
        );
    }
    out
}

/// A label set as [`Family::samples`] keys it.
pub fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
