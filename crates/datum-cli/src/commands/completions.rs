//! `datum completions SHELL`: the script that makes a shell complete
//! `datum`, host names included.
//!
//! The script calls `datum` back as the operator types (clap_complete's
//! dynamic engine, through `COMPLETE=SHELL datum -- WORDS`), so host names
//! come from the fleet the shell is in, and the script never goes stale
//! against the binary's options.

use std::ffi::OsStr;

use std::collections::{BTreeMap, BTreeSet};

use clap::ValueEnum;
use clap_complete::engine::CompletionCandidate;
use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
use datum_core::document::HOST_LABEL;
use datum_core::fleet::{Fleet, HostId};

use crate::command_error::Result;
use crate::exit::Status;
use crate::root;
use crate::settings::Settings;
use crate::ui::Ui;

/// The environment variable that turns a run of `datum` into a completion
/// request (clap_complete's convention, shared with jj and others).
pub const VAR: &str = "COMPLETE";

/// Print the shell script that completes datum's commands, options and the
/// fleet's host names.
///
/// Load it from your shell's startup file, so it always matches the datum
/// on PATH:
///
///   bash:       source <(datum completions bash)     (in ~/.bashrc)
///   zsh:        source <(datum completions zsh)      (in ~/.zshrc)
///   fish:       datum completions fish | source      (in config.fish)
///   elvish:     eval (datum completions elvish | slurp)
///   powershell: datum completions powershell | Out-String | Invoke-Expression
///
/// Host names (`render HOST`, `--host`) are read from the fleet of the
/// directory being typed in (or DATUM_FLEET) when Tab is pressed.
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

impl Shell {
    fn completer(self) -> &'static dyn EnvCompleter {
        match self {
            Shell::Bash => &Bash,
            Shell::Zsh => &Zsh,
            Shell::Fish => &Fish,
            Shell::Elvish => &Elvish,
            Shell::Powershell => &Powershell,
        }
    }
}

pub fn run(ui: &mut Ui, _settings: &Settings, args: Args) -> Result<Status> {
    // The script runs `datum` from PATH, not this file's path: a packaged
    // script then keeps working after an upgrade moves the binary.
    args.shell
        .completer()
        .write_registration(VAR, "datum", "datum", "datum", ui.stdout())?;
    ui.flush()?;
    Ok(Status::OK)
}

/// At most this many candidates of one kind: a fleet of 100,000 hosts
/// must not print 100,000 lines at each Tab. Candidates are sorted and
/// the first ones kept, so typing more narrows to the rest.
const MAX: usize = 500;

/// The fleet of the directory being typed in (or DATUM_FLEET). None when
/// there is none or it does not load: a completion has nowhere to report
/// an error.
fn fleet() -> Option<Fleet> {
    root::load(&Settings::completing())
        .ok()
        .map(|(fleet, _)| fleet)
}

/// The fleet's host names starting with what is typed, each with its
/// labels as the description (shells that show one, such as zsh and fish).
pub fn host_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let (Some(prefix), Some(fleet)) = (current.to_str(), fleet()) else {
        return Vec::new();
    };
    hosts(&fleet, prefix)
}

/// Resource ids (`File[motd]`) and vars (`vars.ntp_server`) some layer
/// declares, starting with what is typed, and after an id and a dot its
/// type's fields (`File[motd].mode`): `explain`'s and `query`'s targets.
pub fn resource_ids(current: &OsStr) -> Vec<CompletionCandidate> {
    let (Some(prefix), Some(fleet)) = (current.to_str(), fleet()) else {
        return Vec::new();
    };
    ids(&fleet, prefix)
}

/// Host names and resource ids: `explain`'s words, which take either.
pub fn hosts_and_ids(current: &OsStr) -> Vec<CompletionCandidate> {
    let (Some(prefix), Some(fleet)) = (current.to_str(), fleet()) else {
        return Vec::new();
    };
    let mut out = hosts(&fleet, prefix);
    out.extend(ids(&fleet, prefix));
    out
}

/// A selector's last term (after the last comma): a label key, offered
/// as `key=`, or after `key=` or `key!=` one of the key's values (declared
/// in datum.yaml or carried by a host).
pub fn selector_terms(current: &OsStr) -> Vec<CompletionCandidate> {
    let (Some(typed), Some(fleet)) = (current.to_str(), fleet()) else {
        return Vec::new();
    };
    let labels = labels(&fleet);
    if !typed.contains(',')
        && let Some(key) = bash_split_key()
    {
        return labels
            .get(key.as_str())
            .into_iter()
            .flatten()
            .filter(|v| v.starts_with(typed))
            .take(MAX)
            .map(|v| CompletionCandidate::new(*v))
            .collect();
    }
    let (done, term) = match typed.rfind(',') {
        Some(i) => typed.split_at(i + 1),
        None => ("", typed),
    };
    let op = ["!=", "="]
        .into_iter()
        .find_map(|op| term.find(op).map(|i| (i, op)));
    let out: Vec<CompletionCandidate> = match op {
        Some((i, op)) => {
            let (key, value) = (&term[..i], &term[i + op.len()..]);
            let Some(values) = labels.get(key) else {
                return Vec::new();
            };
            values
                .iter()
                .filter(|v| v.starts_with(value))
                .take(MAX)
                .map(|v| CompletionCandidate::new(format!("{done}{key}{op}{v}")))
                .collect()
        }
        None => labels
            .iter()
            .filter(|(k, _)| k.starts_with(term))
            .take(MAX)
            .map(|(k, values)| {
                CompletionCandidate::new(format!("{done}{k}="))
                    .help(Some(format!("{} values", values.len()).into()))
            })
            .collect(),
    };
    out
}

/// Bash splits a word at `=` (it is in COMP_WORDBREAKS): `role=w` reaches
/// datum as `role`, `=`, `w`, and what is offered replaces `w` alone. Then
/// the key is the word before the `=` (its last term, `!` left off), and
/// the candidates are bare values. None when the word being typed does not
/// follow a `=` word, as in shells that keep `role=w` whole (a `=` alone
/// is no selector, so nothing else is taken for one).
fn bash_split_key() -> Option<String> {
    // The words as the shell passed them: `datum -- datum hosts role = w`.
    let words: Vec<std::ffi::OsString> = std::env::args_os()
        .skip_while(|a| a != "--")
        .skip(1)
        .collect();
    // The word being completed: bash and zsh say which (the cursor may be
    // before the end), the others complete the last.
    let index: usize = std::env::var("_CLAP_COMPLETE_INDEX")
        .ok()
        .and_then(|i| i.parse().ok())
        .unwrap_or(words.len().saturating_sub(1));
    if index < 2 || words.get(index - 1)? != "=" {
        return None;
    }
    let before = words[index - 2].to_str()?;
    let term = before.rsplit(',').next()?;
    Some(term.strip_suffix('!').unwrap_or(term).to_owned())
}

fn hosts(fleet: &Fleet, prefix: &str) -> Vec<CompletionCandidate> {
    // Hosts are sorted by name: those with the prefix are one run.
    let start = fleet.hosts.partition_point(|h| &*h.name < prefix);
    fleet.hosts[start..]
        .iter()
        .enumerate()
        .take_while(|(_, h)| h.name.starts_with(prefix))
        .take(MAX)
        .map(|(i, h)| {
            let labels: Vec<String> = fleet
                .labels_of(HostId((start + i) as u32))
                .into_iter()
                .filter(|(k, _)| *k != HOST_LABEL)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            CompletionCandidate::new(h.name.as_ref()).help(Some(labels.join(" ").into()))
        })
        .collect()
}

fn ids(fleet: &Fleet, prefix: &str) -> Vec<CompletionCandidate> {
    // `File[motd].mo`: the fields of that resource's type. A title holds
    // no brackets, so the id ends at the first `]`.
    if let Some(close) = prefix.find(']') {
        let id = &prefix[..=close];
        let Some(r) = fleet
            .resources
            .all()
            .find(|&r| fleet.resources.text(r) == id)
        else {
            return Vec::new();
        };
        return fleet
            .resources
            .get(r)
            .kind
            .fields()
            .iter()
            .map(|f| format!("{id}.{}", f.name()))
            .filter(|c| c.starts_with(prefix))
            .map(CompletionCandidate::new)
            .collect();
    }
    let mut out: Vec<CompletionCandidate> = fleet
        .resources
        .all()
        .map(|r| fleet.resources.text(r))
        .filter(|id| id.starts_with(prefix))
        .take(MAX)
        .map(CompletionCandidate::new)
        .collect();
    let vars: BTreeSet<String> = fleet
        .layers
        .iter()
        .flat_map(|l| &l.vars)
        .map(|v| format!("vars.{}", v.name))
        .filter(|v| v.starts_with(prefix))
        .collect();
    out.extend(vars.into_iter().take(MAX).map(CompletionCandidate::new));
    out
}

/// Every label key with its values: declared in datum.yaml, and carried
/// by the hosts (`datum/host` among them).
fn labels(fleet: &Fleet) -> BTreeMap<&str, BTreeSet<&str>> {
    let mut labels: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (key, values) in fleet.declared.iter().flatten() {
        labels
            .entry(key.as_str())
            .or_default()
            .extend(values.iter().map(String::as_str));
    }
    for host in &fleet.hosts {
        for label in &host.labels {
            labels
                .entry(fleet.sym(label.key))
                .or_default()
                .insert(fleet.sym(label.value));
        }
    }
    labels
}
