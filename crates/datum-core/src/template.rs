//! A File's `template` rendered for one host (minijinja), from a closed
//! context: `host` (its name), `labels` and `vars`, nothing else. No
//! filesystem, environment, clock or randomness reaches a template;
//! includes come only from the fleet's `templates/` directory as loaded;
//! an undefined name is an error; a template that runs too long stops.
//! What each rendering read is kept, for explain.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use minijinja::value::{Enumerator, Object, Value as JValue};
use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior};
use sha2::{Digest, Sha256};

use crate::document::TEMPLATE_DIR as DIR;
use crate::fleet::{Fleet, HostId, ResId};
use crate::schema::Value;
use crate::source::Span;
use crate::vars::VarValue;

/// How much work one rendering may do, in minijinja's fuel: one unit per
/// instruction, and one per 64 bytes of every string, list and map it
/// makes (operators such as `~` and `*`, filters such as `format`,
/// `replace` and `join`, and the output), checked before a large value is
/// made. A million is a million steps or 64 MiB made in all: far beyond
/// any configuration file, and short of a hang or of running the machine
/// out of memory (at 20 million, one rendering could make 1.2 GB).
const FUEL: u64 = 1_000_000;

/// What [`FUEL`] lets one rendering make, in bytes.
pub const MAX_BYTES: usize = 64 << 20;

/// How many renderings run at once, whatever the number of threads: each
/// may hold up to [`MAX_BYTES`], so `check` on a machine of many cores
/// holds at most this many times that.
pub const RENDERS_AT_ONCE: usize = 2;

/// A count of renderings under way, at most a fixed number.
#[derive(Debug)]
struct Permits {
    free: Mutex<usize>,
    freed: Condvar,
}

impl Permits {
    fn new(n: usize) -> Permits {
        Permits {
            free: Mutex::new(n),
            freed: Condvar::new(),
        }
    }

    /// Waits for a permit.
    fn acquire(&self) -> Permit<'_> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        while *free == 0 {
            free = self
                .freed
                .wait(free)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *free -= 1;
        Permit(self)
    }

    /// A permit if one is free now.
    #[cfg(test)]
    fn try_acquire(&self) -> Option<Permit<'_>> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        (*free > 0).then(|| {
            *free -= 1;
            Permit(self)
        })
    }
}

/// A rendering under way; dropping it frees its permit.
struct Permit<'a>(&'a Permits);

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.0.freed.notify_one();
    }
}

/// The largest text one rendering may produce.
const MAX_OUTPUT: usize = 64 << 20;

/// A var as a template sees it: its folded value, or that its layers
/// disagree. A var every layer leaves unset is not there at all.
#[derive(Copy, Clone, Debug)]
pub enum Var<'f> {
    Value(&'f VarValue),
    /// Layers of one precedence set it differently.
    Conflict,
}

/// A File's content as rendered for one host, with what the rendering read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    pub resource: ResId,
    /// The template the File names (`templates/resolv.conf.j2`).
    pub template: Box<str>,
    /// The rendered text, as a field value.
    pub content: Value,
    pub sha256: String,
    /// The vars it looked up, sorted; some may be unset.
    pub vars_read: Box<[Box<str>]>,
    /// The labels it looked up, sorted.
    pub labels_read: Box<[Box<str>]>,
}

impl Rendered {
    pub fn text(&self) -> &str {
        self.content.as_str().unwrap_or_default()
    }
}

/// What went wrong rendering a template.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Failure {
    /// A name the context does not have (`vars.dns` unset on this host).
    Undefined,
    /// The template (or one it includes) does not parse.
    Syntax,
    /// An include names no template under `templates/`.
    NotFound,
    /// The template ran past its budget of work or output.
    TooMuchWork,
    /// Anything else minijinja refuses (a bad filter argument, ...).
    Other,
}

/// A template that did not render, for the report.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TemplateProblem {
    /// The template the File names.
    pub template: Box<str>,
    pub failure: Failure,
    /// What minijinja says.
    pub detail: Box<str>,
    /// Where in the template (or the one it includes) it failed.
    pub at: Option<Span>,
    /// For an undefined var: its name.
    pub var: Option<Box<str>>,
    /// For an undefined label: its key.
    pub label: Option<Box<str>>,
}

/// The environment every rendering of one fleet shares: each template is
/// compiled once, on first use.
pub struct Templates {
    env: Environment<'static>,
    permits: Permits,
}

impl std::fmt::Debug for Templates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Templates")
    }
}

/// The name minijinja knows a template by: its path under `templates/`.
fn name_of(path: &str) -> &str {
    path.strip_prefix(DIR)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or(path)
}

impl Templates {
    pub fn new(fleet: &Fleet) -> Templates {
        let sources: BTreeMap<String, Result<String, String>> = fleet
            .templates
            .iter()
            .map(|(path, file)| {
                let text = file
                    .as_ref()
                    .map(|&id| fleet.files.get(id).text().to_owned())
                    .map_err(Clone::clone);
                (name_of(path).to_owned(), text)
            })
            .collect();
        let sources = Arc::new(sources);
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_fuel(Some(FUEL));
        // Configuration files, not web pages: nothing is escaped unless asked.
        env.set_auto_escape_callback(|_| AutoEscape::None);
        // `debug()` prints the whole context, read or not.
        env.remove_global("debug");
        if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
        {
            env.set_syntax(syntax);
        }
        env.set_loader(move |name| match sources.get(name) {
            None => Ok(None),
            Some(Ok(text)) => Ok(Some(text.clone())),
            Some(Err(why)) => Err(minijinja::Error::new(
                ErrorKind::InvalidOperation,
                format!("templates/{name} {why}"),
            )),
        });
        Templates {
            env,
            permits: Permits::new(RENDERS_AT_ONCE),
        }
    }

    /// Renders the template at `path` once a permit is free.
    fn run(&self, path: &str, ctx: JValue) -> Result<String, minijinja::Error> {
        let _permit = self.permits.acquire();
        self.env
            .get_template(name_of(path))
            .and_then(|t| t.render(ctx))
    }

    /// Renders the template at `path` for a host with its folded vars.
    /// `Ok(None)`: the rendering read a var whose layers conflict; that
    /// conflict is the host's problem, reported once already.
    pub fn render(
        &self,
        fleet: &Fleet,
        host: HostId,
        vars: &[(&str, Var<'_>)],
        resource: ResId,
        path: &str,
    ) -> Result<Option<Rendered>, TemplateProblem> {
        let misses = Arc::new(Mutex::new(Vec::new()));
        let mut var_map = BTreeMap::new();
        let mut conflicted = BTreeSet::new();
        for &(name, v) in vars {
            match v {
                Var::Value(x) => {
                    var_map.insert(name.to_owned(), to_jinja(x));
                }
                Var::Conflict => {
                    conflicted.insert(name.to_owned());
                }
            }
        }
        let vars_obj = Arc::new(Tracked::new("vars", var_map, &misses));
        let labels_obj = Arc::new(Tracked::new(
            "labels",
            fleet
                .labels_of(host)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), JValue::from(v)))
                .collect(),
            &misses,
        ));
        let ctx = minijinja::context! {
            host => &*fleet.host(host).name,
            labels => JValue::from_dyn_object(labels_obj.clone()),
            vars => JValue::from_dyn_object(vars_obj.clone()),
        };
        let result = self.run(path, ctx);
        let read = |o: &Tracked| -> Box<[Box<str>]> {
            o.read
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .map(|s| s.as_str().into())
                .collect()
        };
        let vars_read = read(&vars_obj);
        if vars_read.iter().any(|v| conflicted.contains(&**v)) {
            return Ok(None);
        }
        match result {
            Ok(text) if text.len() > MAX_OUTPUT => Err(TemplateProblem {
                template: path.into(),
                failure: Failure::TooMuchWork,
                detail: format!("the output is larger than {MAX_OUTPUT} bytes").into(),
                at: None,
                var: None,
                label: None,
            }),
            Ok(text) => Ok(Some(Rendered {
                resource,
                template: path.into(),
                sha256: hex(&Sha256::digest(text.as_bytes())),
                content: Value::Str(text.into()),
                vars_read,
                labels_read: read(&labels_obj),
            })),
            Err(e) => {
                let last_miss = misses
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .last()
                    .cloned();
                Err(problem(fleet, path, &e, last_miss))
            }
        }
    }
}

/// The report's view of a minijinja error: its kind, where it happened,
/// and for an undefined name, which var or label it was. An error inside
/// an included template is reported where it happened there.
fn problem(
    fleet: &Fleet,
    path: &str,
    mut e: &minijinja::Error,
    last_miss: Option<(&'static str, String)>,
) -> TemplateProblem {
    while let Some(inner) = std::error::Error::source(e).and_then(|s| s.downcast_ref()) {
        e = inner;
    }
    let failure = match e.kind() {
        ErrorKind::UndefinedError => Failure::Undefined,
        ErrorKind::SyntaxError => Failure::Syntax,
        ErrorKind::TemplateNotFound => Failure::NotFound,
        ErrorKind::OutOfFuel => Failure::TooMuchWork,
        _ => Failure::Other,
    };
    let detail = e
        .detail()
        .map_or_else(|| e.kind().to_string(), str::to_owned);
    // Where: the template it failed in (an include, maybe), and the byte
    // range there.
    let at = e.name().and_then(|name| {
        let full = format!("{DIR}/{name}");
        let id = *fleet.templates.get(&full)?.as_ref().ok()?;
        let file = fleet.files.get(id);
        let start = match e.range() {
            Some(r) => file.pos_at(r.start),
            None => file.line_start(u32::try_from(e.line()?).ok()?),
        };
        let end = e.range().map_or(start, |r| file.pos_at(r.end));
        Some(Span {
            file: id,
            start,
            end,
        })
    });
    let (mut var, mut label) = (None, None);
    if failure == Failure::Undefined {
        // minijinja names `vars.x` when it can; else the last name looked up in vain.
        let named = detail
            .strip_prefix('`')
            .and_then(|d| d.split_once("` is undefined"))
            .map(|(n, _)| n.to_owned());
        let from = |n: &str| -> Option<(&'static str, String)> {
            let (obj, key) = n.split_once('.')?;
            match obj {
                "vars" => Some(("vars", key.to_owned())),
                "labels" => Some(("labels", key.to_owned())),
                _ => None,
            }
        };
        match named.as_deref().and_then(from).or(last_miss) {
            Some(("vars", k)) => var = Some(k.into()),
            Some((_, k)) => label = Some(k.into()),
            None => {}
        }
    }
    TemplateProblem {
        template: path.into(),
        failure,
        detail: detail.into(),
        at,
        var,
        label,
    }
}

/// A mapping of the context (`vars`, `labels`) that records every name a
/// template looks up, found or not.
#[derive(Debug)]
struct Tracked {
    what: &'static str,
    map: BTreeMap<String, JValue>,
    read: Mutex<BTreeSet<String>>,
    /// Names looked up and not found, across both mappings, in order.
    misses: Arc<Mutex<Vec<(&'static str, String)>>>,
}

impl Tracked {
    fn new(
        what: &'static str,
        map: BTreeMap<String, JValue>,
        misses: &Arc<Mutex<Vec<(&'static str, String)>>>,
    ) -> Tracked {
        Tracked {
            what,
            map,
            read: Mutex::new(BTreeSet::new()),
            misses: Arc::clone(misses),
        }
    }
}

impl Object for Tracked {
    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        let key = key.as_str()?;
        self.read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.to_owned());
        let found = self.map.get(key).cloned();
        if found.is_none() {
            self.misses
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((self.what, key.to_owned()));
        }
        found
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let keys: Vec<JValue> = self.map.keys().map(|k| JValue::from(k.as_str())).collect();
        Enumerator::Values(keys)
    }
}

fn to_jinja(v: &VarValue) -> JValue {
    match v {
        VarValue::Str(s) => JValue::from(&**s),
        VarValue::Int(i) => JValue::from(*i),
        VarValue::Float(t) => JValue::from(VarValue::as_f64(t)),
        VarValue::Bool(b) => JValue::from(*b),
        VarValue::List(items) => JValue::from(items.iter().map(to_jinja).collect::<Vec<_>>()),
        VarValue::Map(entries) => JValue::from(
            entries
                .iter()
                .map(|(k, v)| (k.to_string(), to_jinja(v)))
                .collect::<BTreeMap<String, JValue>>(),
        ),
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::Permits;

    #[test]
    fn no_more_renderings_run_at_once_than_there_are_permits() {
        let permits = Permits::new(2);
        let a = permits.acquire();
        let b = permits.try_acquire().expect("a second permit");
        assert!(permits.try_acquire().is_none(), "a third rendering waits");
        drop(a);
        let c = permits.try_acquire().expect("a freed permit");
        assert!(permits.try_acquire().is_none());
        drop((b, c));
    }
}
