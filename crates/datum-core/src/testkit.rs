//! Small fleets written in memory for unit tests.

/// A `datum.yaml` with no declared labels.
pub const FLEET: &str = "datum: v1alpha1\ntype: Fleet\nname: t\n";

/// A Host document, ending with `---` so several can share a file.
pub fn host(name: &str, labels: &str) -> String {
    format!("datum: v1alpha1\ntype: Host\nname: {name}\nlabels: {labels}\n---\n")
}

/// A Layer document; `resources` is the indented body of `resources:`.
/// Layer names are unique in a fleet: each call in a test names its layer
/// `l1`, `l2`, ... (counted per thread, and every test has its own).
pub fn layer(prec: i32, labels: &str, resources: &str) -> String {
    thread_local! {
        static COUNT: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }
    let n = COUNT.with(|c| {
        c.set(c.get() + 1);
        c.get()
    });
    format!(
        "datum: v1alpha1\ntype: Layer\nname: l{n}\nprecedence: {prec}\nmatch: {{labels: {labels}}}\nresources:\n{resources}"
    )
}
