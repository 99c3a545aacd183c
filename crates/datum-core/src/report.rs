//! Resolution problems as diagnostics, naming the hosts they hit.
//!
//! A conflict keeps the exact shape of the specification (the sides as an
//! aligned table, then the hosts line); the places it involves follow as
//! `-->` lines, and a hint says how to settle it.

mod display;
pub use display::{
    HOSTS_SHOWN, align, column_widths, count, display_setting, display_value, display_var,
    host_list,
};

use crate::diagnostic::{Code, Diagnostic, Line};
use crate::fleet::{Contrib, Fleet, ResId, VarContrib};
use crate::printable::{display_text, escape};
use crate::resolve::{ExecRule, Problem};
use crate::schema::Field;
use crate::sensitive::is_sensitive;
use crate::source::Span;
use crate::vars::VarSetting;

fn hosts_phrase(hosts: &[&str]) -> String {
    if hosts.len() == 1 {
        format!("host {}", hosts[0])
    } else {
        format!("hosts {}", host_list(hosts))
    }
}

/// The diagnostic for a problem found on `hosts` (sorted, at least one).
pub fn problem_diagnostic(fleet: &Fleet, problem: &Problem, hosts: &[&str]) -> Diagnostic {
    let mut d = match problem {
        Problem::Conflict {
            resource,
            field,
            sides,
        } => conflict(fleet, *resource, *field, sides, hosts),
        Problem::Missing {
            resource,
            field,
            declared,
        } => missing(fleet, *resource, *field, declared, hosts),
        Problem::Exclusive { resource, sides } => exclusive(fleet, *resource, sides, hosts),
        Problem::Template { resource, problem } => template(fleet, *resource, problem, hosts),
        Problem::Dangling {
            resource,
            field,
            target,
            by,
        } => dangling(fleet, *resource, *field, *target, *by, hosts),
        Problem::VarConflict { name, sides } => var_conflict(fleet, name, sides, hosts),
        Problem::Cycle { steps } => cycle(fleet, steps, hosts),
        Problem::BadTitle { resource, declared } => bad_title(fleet, *resource, declared, hosts),
        Problem::Duplicate {
            field,
            value,
            resources,
        } => duplicate(fleet, *field, value, resources, hosts),
        Problem::Exec {
            resource,
            rule,
            places,
        } => exec(fleet, *resource, *rule, places, hosts),
    };
    d.hosts = hosts.iter().map(|h| h.to_string()).collect();
    d
}

/// An Exec that does not say when it runs, or whose command reads two ways.
fn exec(
    fleet: &Fleet,
    resource: ResId,
    rule: ExecRule,
    places: &[Span],
    hosts: &[&str],
) -> Diagnostic {
    let r = fleet.resources.text(resource);
    let (code, message, label, hint) = match rule {
        ExecRule::Unguarded => (
            Code::UnguardedExec,
            format!("{r} has no guard, so it would run on every apply"),
            "declared here",
            "add `creates: PATH` (runs while PATH is missing), `unless: [...]` (runs unless that command succeeds), `onlyif: [...]` (runs only if it succeeds), or `refresh_only: true` with `run_on: [...]` (runs when one of those resources changes)".to_owned(),
        ),
        ExecRule::RefreshWithoutRunOn => (
            Code::ExecTrigger,
            format!("{r} has `refresh_only: true` but no `run_on`, so nothing would ever run it"),
            "refresh only",
            "list the resources whose change runs it, such as `run_on: [\"File[aliases]\"]`".to_owned(),
        ),
        ExecRule::RunOnWithoutRefresh => (
            Code::ExecTrigger,
            format!("{r} lists `run_on` without `refresh_only: true`"),
            "run_on",
            "set `refresh_only: true` to run it only when one of these changes; to order it after them and run it by its guards, list them in `requires` instead".to_owned(),
        ),
        ExecRule::ShellArguments(field) => (
            Code::ExecCommand,
            format!("{r} has `shell: true`, so its `{field}` must be one script, not a list of arguments"),
            "more than one entry",
            format!("write the whole command line as one entry, such as `{field}: [\"newaliases && postfix reload\"]`, or set `shell: false` and keep the arguments"),
        ),
        ExecRule::SpacedProgram(field) => (
            Code::ExecCommand,
            format!("{r} `{field}` names a program with a space in it; no shell splits it"),
            "the program",
            format!("write the program and each argument as its own entry, such as `{field}: [systemctl, daemon-reload]`, or set `shell: true` to have /bin/sh read the line"),
        ),
    };
    let mut d = Diagnostic::error(code, message)
        .note(on_hosts(hosts))
        .hint(hint);
    for &span in places {
        d = d.place(span, label);
    }
    d
}

fn on_hosts(hosts: &[&str]) -> String {
    format!("on {}", hosts_phrase(hosts))
}

/// `both layers match host web-001 at equal precedence`, after the sides;
/// the host names are marked for a terminal to set off.
fn sides_line(n: usize, hosts: &[&str]) -> Line {
    let who = if n == 2 {
        "both layers".to_owned()
    } else {
        format!("all {n} layers")
    };
    let (word, names) = match hosts {
        [one] => ("host", (*one).to_owned()),
        _ => ("hosts", host_list(hosts)),
    };
    let start = format!("{who} match {word} ");
    Line {
        hosts: Some((start.len(), start.len() + names.len())),
        text: format!("{start}{names} at equal precedence"),
    }
}

/// Aligned rows, as the lines of a diagnostic's body.
fn table(rows: &[Vec<String>]) -> Vec<Line> {
    align(rows).into_iter().map(Line::from).collect()
}

/// A var conflict, in the shape of a field's.
fn var_conflict(fleet: &Fleet, name: &str, sides: &[VarContrib], hosts: &[&str]) -> Diagnostic {
    let rows: Vec<Vec<String>> = sides
        .iter()
        .map(|&c| {
            let layer = fleet.layer(c.layer);
            vec![
                display_var(fleet, c),
                layer.display.clone(),
                format!("precedence {}", layer.precedence),
            ]
        })
        .collect();
    let mut body = table(&rows);
    body.push(sides_line(sides.len(), hosts));
    let mut d = Diagnostic::error(
        Code::Conflict,
        format!("conflicting values for vars.{name}"),
    )
    .with_body(body)
    .hint("give the layer that should win a higher precedence, or narrow a matcher so the layers no longer overlap");
    for &c in sides {
        d = d.place(fleet.var(c).span, "");
    }
    d
}

/// The sides as an aligned table (value, layer, precedence), then the hosts.
fn conflict(
    fleet: &Fleet,
    resource: ResId,
    field: Field,
    sides: &[Contrib],
    hosts: &[&str],
) -> Diagnostic {
    let hidden = field == Field::Content && is_sensitive(fleet, resource);
    let rows: Vec<Vec<String>> = sides
        .iter()
        .map(|&c| {
            let layer = fleet.layer(c.layer);
            vec![
                if hidden {
                    "(sensitive)".to_owned()
                } else {
                    display_setting(fleet, c)
                },
                layer.display.clone(),
                format!("precedence {}", layer.precedence),
            ]
        })
        .collect();
    let mut body = table(&rows);
    body.push(sides_line(sides.len(), hosts));
    let mut d = Diagnostic::error(
        Code::Conflict,
        format!("conflicting values for {}.{}", fleet.resources.text(resource), field),
    )
    .with_body(body)
    .hint("give the layer that should win a higher precedence, or narrow a matcher so the layers no longer overlap");
    for &c in sides {
        d = d.place(fleet.setting(c).span, "");
    }
    d
}

fn missing(
    fleet: &Fleet,
    resource: ResId,
    field: Field,
    declared: &[Span],
    hosts: &[&str],
) -> Diagnostic {
    let r = fleet.resources.text(resource);
    let mut d = Diagnostic::error(Code::MissingField, format!("{r} has no `{field}`"))
        .note(on_hosts(hosts))
        .hint(format!(
            "set `{field}` in one of the layers that declare {r}"
        ));
    for &span in declared {
        d = d.place(span, "declared here");
    }
    d
}

/// A title standing for a name apply cannot use.
fn bad_title(fleet: &Fleet, resource: ResId, declared: &[Span], hosts: &[&str]) -> Diagnostic {
    let id = fleet.resources.get(resource);
    let rule = crate::names::title_rule(id.kind).expect("only named kinds have a bad title");
    let why = rule.check(&id.title).unwrap_or_default();
    let mut d = Diagnostic::error(
        Code::InvalidName,
        format!(
            "{} is named by its title, which is not {}: {why}",
            fleet.resources.text(resource),
            rule.what()
        ),
    )
    .note(on_hosts(hosts))
    .hint(format!(
        "{}; or keep the title and set `name:`",
        rule.hint()
    ));
    for &span in declared {
        d = d.place(span, "the title is the name");
    }
    d
}

/// `File[x] has both `source` (from a) and `content` (from b)`: the
/// last side is the place shown first.
fn exclusive(fleet: &Fleet, resource: ResId, sides: &[Contrib], hosts: &[&str]) -> Diagnostic {
    let r = fleet.resources.text(resource);
    let named: Vec<String> = sides
        .iter()
        .map(|&c| {
            format!(
                "`{}` (from {})",
                fleet.setting(c).field,
                fleet.layer(c.layer).display
            )
        })
        .collect();
    let (last, rest) = match sides.split_last() {
        Some((last, rest)) => (*last, rest),
        None => {
            return Diagnostic::error(
                Code::SourceAndContent,
                format!("{r} has two kinds of content"),
            );
        }
    };
    let all = match named.split_last() {
        Some((l, r)) if !r.is_empty() => format!("{} and {l}", r.join(", ")),
        _ => named.join(""),
    };
    let kinds: Vec<String> = fleet
        .resources
        .get(resource)
        .kind
        .content_fields()
        .iter()
        .map(|f| format!("`{f}`"))
        .collect();
    let mut d = Diagnostic::error(
        Code::SourceAndContent,
        format!(
            "{r} has {} {all}",
            if sides.len() == 2 { "both" } else { "all of" }
        ),
    )
    .at(fleet.setting(last).span, fleet.setting(last).field.name());
    for &c in rest {
        d = d.also(fleet.setting(c).span, fleet.setting(c).field.name());
    }
    let kinds = match kinds.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => kinds.join(""),
    };
    d.note(on_hosts(hosts)).hint(format!(
        "a File takes one of {kinds}: in the layer that should win, set the others to null (`{}: null`)",
        fleet.setting(rest.first().copied().unwrap_or(last)).field
    ))
}

/// A template that does not render: where it failed, and for an
/// undefined var, the layers that could have set it.
fn template(
    fleet: &Fleet,
    resource: ResId,
    p: &crate::template::TemplateProblem,
    hosts: &[&str],
) -> Diagnostic {
    use crate::template::Failure;
    let r = fleet.resources.text(resource);
    let what = match (&p.failure, &p.var, &p.label) {
        (Failure::Undefined, Some(v), _) => format!("undefined var `vars.{v}`"),
        (Failure::Undefined, None, Some(l)) => format!("undefined label `labels.{l}`"),
        (Failure::Undefined, None, None) => "an undefined name".to_owned(),
        (Failure::Syntax, ..) => "a syntax error".to_owned(),
        (Failure::NotFound, ..) => "a missing include".to_owned(),
        (Failure::TooMuchWork, ..) => "too much work".to_owned(),
        (Failure::Other, ..) => "an error".to_owned(),
    };
    let mut d = Diagnostic::error(
        Code::TemplateError,
        format!(
            "{r} does not render on {}: {what} in {}",
            hosts_phrase(hosts),
            p.template
        ),
    );
    if let Some(at) = p.at {
        d = d.at(at, escape(&p.detail).into_owned());
    } else {
        d = d.note(escape(&p.detail).into_owned());
    }
    let hint = match (&p.failure, &p.var, &p.label) {
        (Failure::Undefined, Some(v), _) => {
            let setters: Vec<String> = fleet
                .layers
                .iter()
                .filter_map(|l| {
                    let set = l.vars.iter().find(|x| *x.name == **v)?;
                    let matcher = if l.matcher.is_empty() {
                        "every host".to_owned()
                    } else {
                        l.matcher
                            .iter()
                            .map(|m| format!("{}={}", fleet.sym(m.key), fleet.sym(m.value)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    let what = match set.setting {
                        VarSetting::Unset => "unsets it",
                        VarSetting::Value(_) => "sets it",
                    };
                    Some(format!("{} ({what}; matches {matcher})", l.display))
                })
                .collect();
            if setters.is_empty() {
                d = d.note(format!("no layer sets vars.{v}"));
            } else {
                d = d.note(format!("layers that could set vars.{v}: {}", setters.join(", ")));
            }
            format!("set `vars.{v}` in a layer that matches {}, or guard it in the template: {{% if vars.{v} is defined %}}", if hosts.len() == 1 { "the host" } else { "these hosts" })
        }
        (Failure::Undefined, None, Some(l)) => {
            format!("give the host the label `{l}`, or guard it: {{% if labels['{l}'] is defined %}}")
        }
        (Failure::Undefined, None, None) => {
            "a template sees only `host`, `labels` and `vars`".to_owned()
        }
        (Failure::NotFound, ..) => {
            "templates include others by their path under `templates/`: {% include \"partials/x.j2\" %}".to_owned()
        }
        (Failure::TooMuchWork, ..) => {
            "a template may take about a million steps and make at most 64 MiB of text in all (every string, list and output it makes counts); look for a loop that does not end, or a value built larger than the file it is for".to_owned()
        }
        (Failure::Syntax, ..) => {
            "templates are written in Jinja's syntax (minijinja): check the tag at the place shown".to_owned()
        }
        _ => "`datum explain` with the File's id shows what the template reads".to_owned(),
    };
    d.hint(hint)
}

fn dangling(
    fleet: &Fleet,
    resource: ResId,
    field: Field,
    target: ResId,
    by: Contrib,
    hosts: &[&str],
) -> Diagnostic {
    let (r, t) = (fleet.resources.text(resource), fleet.resources.text(target));
    let lacks = if hosts.len() == 1 {
        "which that host does not have"
    } else {
        "which those hosts do not have"
    };
    Diagnostic::error(
        Code::UnknownReference,
        format!("{r} `{field}` names {t}, {lacks}"),
    )
    .at(
        fleet.entry_span(by, target),
        format!("listed by {}", fleet.layer(by.layer).display),
    )
    .note(on_hosts(hosts))
    .hint(match fleet.suggest_declared(target) {
        Some(near) => format!(
            "did you mean {}? Otherwise declare {t} in a layer these hosts match, or remove the entry",
            fleet.resources.text(near)
        ),
        None => format!("declare {t} in a layer these hosts match, or remove the entry"),
    })
}

/// `A -> B -> A`, each step placed where its entry is listed.
fn cycle(fleet: &Fleet, steps: &[(ResId, Contrib)], hosts: &[&str]) -> Diagnostic {
    let mut names: Vec<&str> = steps
        .iter()
        .map(|(id, _)| fleet.resources.text(*id))
        .collect();
    names.push(names[0]);
    let mut d = Diagnostic::error(
        Code::Cycle,
        format!("dependency cycle: {}", names.join(" -> ")),
    )
    .note(on_hosts(hosts))
    .hint("remove one of these `requires` or `restart_on` entries to break the cycle");
    for (i, (id, via)) in steps.iter().enumerate() {
        let next = names[i + 1];
        let label = format!("{} needs {next}", fleet.resources.text(*id));
        let next_id = steps[(i + 1) % steps.len()].0;
        let span = fleet.entry_span(*via, next_id);
        d = d.place(span, label);
    }
    d
}

fn duplicate(
    fleet: &Fleet,
    field: Field,
    value: &str,
    resources: &[(ResId, Span)],
    hosts: &[&str],
) -> Diagnostic {
    let names: Vec<&str> = resources
        .iter()
        .map(|(id, _)| fleet.resources.text(*id))
        .collect();
    let message = if names.len() == 2 {
        format!(
            "{} and {} both manage {field} {}",
            names[0],
            names[1],
            display_text(value)
        )
    } else {
        format!(
            "{} all manage {field} {}",
            names.join(", "),
            display_text(value)
        )
    };
    let mut d = Diagnostic::error(Code::DuplicateTarget, message)
        .note(on_hosts(hosts))
        .hint(format!(
            "one resource manages each {field}: remove one, or change its {field}"
        ));
    for &(id, span) in resources {
        d = d.place(span, fleet.resources.text(id).to_owned());
    }
    d
}

#[cfg(test)]
mod tests {
    use super::align;

    #[test]
    fn wide_characters_take_two_columns() {
        let rows = [
            vec!["値".to_owned(), "a".to_owned()],
            vec!["xx".to_owned(), "b".to_owned()],
            vec!["é".to_owned(), "c".to_owned()],
        ];
        assert_eq!(align(&rows), ["値  a", "xx  b", "é   c"]);
    }
}
