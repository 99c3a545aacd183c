//! CLI tests: one binary, a module per command. Each runs the real `datum`
//! binary and asserts whole outputs (insta snapshots); fixture fleets are
//! folders under `tests/fixtures/`, and the example fleets under `examples/`.
//! A new file here must be declared below: `test_files` fails otherwise.

mod apply;
mod bad_input;
mod check;
mod common;
mod diff;
mod docs;
mod escaping;
mod explain;
mod hosts;
mod names;
mod query;
mod render;
mod test_files;
mod usage;
