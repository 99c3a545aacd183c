//! CLI tests: one binary, a module per command. Each runs the real `datum`
//! binary and asserts whole outputs (insta snapshots); fixture fleets are
//! folders under `tests/fixtures/`, and the example fleets under `examples/`.
//! A new file here must be declared below: `test_files` fails otherwise.

mod agent;
mod apply;
mod apt_root;
mod architecture;
mod bad_input;
mod bundle;
mod check;
mod colour;
mod common;
mod completions;
mod confine;
mod delivery;
mod diagnostics;
mod diff;
mod docs;
mod document_files;
mod escaping;
mod exec;
mod explain;
mod facts;
mod fail_closed;
mod formats;
mod health;
mod help_examples;
mod hosts;
mod in_root;
mod init;
mod json_contract;
mod label_facts;
mod layers;
mod live_system;
mod matchers;
mod names;
mod outputs;
mod package;
mod pacman_root;
mod pty;
mod query;
mod render;
mod review_script;
mod rollout;
mod rollout_status;
mod rpm_root;
mod schema;
mod secret_fleet;
mod secret_prompt;
mod secrets;
mod sensitive;
mod system_files;
mod templates;
mod test_files;
mod trust;
mod usage;
