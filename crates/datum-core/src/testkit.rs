//! Small fleets written in memory for unit tests.

/// A `datum.yaml` with no declared labels.
pub const FLEET: &str = "datum: v1alpha1\ntype: Fleet\nname: t\n";

/// A Host document, ending with `---` so several can share a file.
pub fn host(name: &str, labels: &str) -> String {
    format!("datum: v1alpha1\ntype: Host\nname: {name}\nlabels: {labels}\n---\n")
}

/// A Layer document; `resources` is the indented body of `resources:`.
pub fn layer(prec: i32, labels: &str, resources: &str) -> String {
    format!(
        "datum: v1alpha1\ntype: Layer\nname: l\nprecedence: {prec}\nmatch: {{labels: {labels}}}\nresources:\n{resources}"
    )
}
