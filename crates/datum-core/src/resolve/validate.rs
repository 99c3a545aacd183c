//! The checks of a folded set of layers as a whole manifest: required
//! fields, `source` with `content`, an Exec that does not say when it runs
//! (or how its command is read), entries naming resources the host lacks,
//! dependency cycles, two resources managing one thing, and names taken
//! from titles that apply could not use.

use crate::fleet::{Fleet, ResId};
use crate::graph::shortest_cycles;
use crate::names;
use crate::schema::{Field, Kind, Value};
use crate::source::Span;

use super::field::ResolvedResource;
use super::{Contrib, ExecRule, Problem, Resolution};

/// Checks a folded set of layers as a whole manifest.
pub(super) fn validate(fleet: &Fleet, res: &Resolution, problems: &mut Vec<Problem>) {
    // The graph of `requires` and `restart_on`, by index into the resources.
    let mut edges: Vec<Vec<(usize, Contrib)>> = vec![Vec::new(); res.resources.len()];
    // (class, what it manages, resource, where): sorted, equal neighbours are duplicates.
    let mut claims: Vec<Claim<'_>> = Vec::with_capacity(res.resources.len());
    for (i, r) in res.resources.iter().enumerate() {
        // A resource with a declaration in error lacks the fields that
        // caused it: what their absence would cause is not a problem of
        // its own (the error already said what is wrong).
        let set_aside = r
            .declared_by
            .iter()
            .any(|&(l, d)| fleet.layer(l).resources[d as usize].set_aside);
        if !set_aside {
            missing(fleet, r, problems);
            title_name(fleet, r, problems);
            exec(fleet, r, problems);
        }
        exclusive(fleet, r, problems);
        references(fleet, res, r, &mut edges[i], problems);
        claims.extend(claim(fleet, r));
    }
    duplicates(claims, problems);
    if edges.iter().all(Vec::is_empty) {
        return;
    }
    for cycle in shortest_cycles(&edges) {
        let steps = cycle
            .iter()
            .map(|&(node, via)| (res.resources[node].id, via))
            .collect();
        problems.push(Problem::Cycle { steps });
    }
}

/// Required fields without a value. A conflicting field is reported as
/// the conflict only.
fn missing(fleet: &Fleet, r: &ResolvedResource, problems: &mut Vec<Problem>) {
    let kind = fleet.resources.get(r.id).kind;
    let absent = r.value(fleet, Field::Ensure).and_then(Value::as_str) == Some("absent");
    for &field in kind.required_when(absent) {
        let f = r.field(field);
        if f.is_some_and(|f| f.has_conflict()) {
            continue;
        }
        if f.and_then(|f| f.value(fleet)).is_none() {
            problems.push(Problem::Missing {
                resource: r.id,
                field,
                declared: r
                    .declared_by
                    .iter()
                    .map(|&(l, i)| fleet.layer(l).resources[i as usize].span)
                    .collect(),
            });
        }
    }
}

/// A resource named by its title (no `name:` in the manifest) whose title
/// is no name apply can use. A conflicting `name` is reported as the
/// conflict only.
fn title_name(fleet: &Fleet, r: &ResolvedResource, problems: &mut Vec<Problem>) {
    let id = fleet.resources.get(r.id);
    let Some(rule) = names::title_rule(id.kind) else {
        return;
    };
    let f = r.field(Field::Name);
    if f.is_some_and(|f| f.has_conflict() || f.value(fleet).is_some()) {
        return;
    }
    if rule.check(&id.title).is_some() {
        problems.push(Problem::BadTitle {
            resource: r.id,
            declared: r
                .declared_by
                .iter()
                .map(|&(l, i)| fleet.layer(l).resources[i as usize].span)
                .collect(),
        });
    }
}

/// A File with more than one of its kinds of content set
/// ([`crate::schema::Kind::content_fields`]).
fn exclusive(fleet: &Fleet, r: &ResolvedResource, problems: &mut Vec<Problem>) {
    let kind = fleet.resources.get(r.id).kind;
    let sides: Box<[Contrib]> = kind
        .content_fields()
        .iter()
        .filter_map(|&f| r.field(f))
        .filter(|f| f.value(fleet).is_some())
        .map(|f| f.winner())
        .collect();
    if sides.len() > 1 {
        problems.push(Problem::Exclusive {
            resource: r.id,
            sides,
        });
    }
}

/// An Exec as a whole: at least one guard, `refresh_only` and `run_on`
/// together, and a command line read one way only. A conflicting field is
/// reported as the conflict only, and nothing here is said about it.
fn exec(fleet: &Fleet, r: &ResolvedResource, problems: &mut Vec<Problem>) {
    if fleet.resources.get(r.id).kind != Kind::Exec {
        return;
    }
    let conflicted = |field| r.field(field).is_some_and(|f| f.has_conflict());
    if [
        Field::Creates,
        Field::Unless,
        Field::Onlyif,
        Field::RefreshOnly,
        Field::RunOn,
        Field::Shell,
        Field::Command,
    ]
    .into_iter()
    .any(conflicted)
    {
        return;
    }
    let span_of = |field| r.field(field).map(|f| fleet.setting(f.winner()).span);
    let mut push = |rule, places: Vec<Span>| {
        problems.push(Problem::Exec {
            resource: r.id,
            rule,
            places: places.into_boxed_slice(),
        })
    };
    let set = |field| r.value(fleet, field).is_some();
    let refresh = matches!(r.value(fleet, Field::RefreshOnly), Some(Value::Bool(true)));
    let run_on = r.entries(Field::RunOn);
    if !(set(Field::Creates) || set(Field::Unless) || set(Field::Onlyif) || refresh) {
        push(
            ExecRule::Unguarded,
            r.declared_by
                .iter()
                .map(|&(l, i)| fleet.layer(l).resources[i as usize].span)
                .collect(),
        );
    }
    if refresh && run_on.is_empty() {
        push(
            ExecRule::RefreshWithoutRunOn,
            span_of(Field::RefreshOnly).into_iter().collect(),
        );
    }
    if !refresh && let Some(e) = run_on.first() {
        push(
            ExecRule::RunOnWithoutRefresh,
            vec![fleet.entry_span(e.by[0], e.id)],
        );
    }
    let shell = matches!(r.value(fleet, Field::Shell), Some(Value::Bool(true)));
    for field in [Field::Command, Field::Unless, Field::Onlyif] {
        let Some(Value::List(argv)) = r.value(fleet, field) else {
            continue;
        };
        let places = span_of(field).into_iter().collect();
        if shell && argv.len() != 1 {
            push(ExecRule::ShellArguments(field), places);
        } else if !shell
            && argv
                .first()
                .is_some_and(|p| !p.starts_with('/') && p.contains(char::is_whitespace))
        {
            push(ExecRule::SpacedProgram(field), places);
        }
    }
}

/// Entries of `requires` and `restart_on`: dangling ones are problems, the
/// others edges of the dependency graph.
fn references(
    fleet: &Fleet,
    res: &Resolution,
    r: &ResolvedResource,
    edges: &mut Vec<(usize, Contrib)>,
    problems: &mut Vec<Problem>,
) {
    for field in [Field::Requires, Field::RestartOn, Field::RunOn] {
        for e in r.entries(field) {
            let rank = fleet.resources.rank(e.id);
            match res
                .resources
                .binary_search_by_key(&rank, |r| fleet.resources.rank(r.id))
            {
                Ok(j) => edges.push((j, e.by[0])),
                Err(_) => problems.push(Problem::Dangling {
                    resource: r.id,
                    field,
                    target: e.id,
                    by: e.by[0],
                }),
            }
        }
    }
}

/// What a resource manages: its class (0 for a path, else one per type,
/// since a Package and a Service may share a name, and a Mount's mount
/// point is a Directory's path), the path or name, the resource, and where
/// that is written.
type Claim<'f> = (u8, &'f str, ResId, Span);

fn claim<'f>(fleet: &'f Fleet, r: &ResolvedResource) -> Option<Claim<'f>> {
    let kind = fleet.resources.get(r.id).kind;
    let f = r.field(kind.summary_field());
    if f.is_some_and(|f| f.has_conflict()) {
        return None;
    }
    let class = if kind.is_path() { 0 } else { kind as u8 + 1 };
    let s = r.summary(fleet)?;
    let span = match f {
        Some(f) if f.value(fleet).is_some() => fleet.setting(f.winner()).span,
        // A name defaulting to the title: where the resource is declared.
        _ => {
            let (l, i) = r.declared_by[0];
            fleet.layer(l).resources[i as usize].span
        }
    };
    Some((class, s, r.id, span))
}

/// Resources that claim the same thing.
fn duplicates(mut claims: Vec<Claim<'_>>, problems: &mut Vec<Problem>) {
    // Stable: resources stay in id order within a group.
    claims.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    for group in claims.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
        if group.len() > 1 {
            problems.push(Problem::Duplicate {
                field: if group[0].0 == 0 || group[0].0 == Kind::Mount as u8 + 1 {
                    Field::Path
                } else {
                    Field::Name
                },
                value: group[0].1.to_owned(),
                resources: group.iter().map(|&(_, _, id, span)| (id, span)).collect(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::load;
    use crate::reader::MemReader;
    use crate::testkit::{FLEET, host, layer};

    /// The Exec problems of host `h`, whose layers are `base` (precedence
    /// 0) and `top` (10), as (title, rule, lines of their places).
    fn exec_problems(base: &str, top: &str) -> Vec<(String, ExecRule, Vec<u32>)> {
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file("hosts.yaml", host("h", "{}"))
            .file("base.yaml", layer(0, "{}", base))
            .file("top.yaml", layer(10, "{}", top));
        let fleet = load(&r).unwrap();
        let res = crate::resolve::resolve_host(&fleet, fleet.host_id("h").unwrap());
        res.problems
            .iter()
            .filter_map(|p| match p {
                Problem::Exec {
                    resource,
                    rule,
                    places,
                } => Some((
                    fleet.resources.get(*resource).title.to_string(),
                    *rule,
                    places.iter().map(|s| s.start.line).collect(),
                )),
                _ => None,
            })
            .collect()
    }

    /// The fields each resource of host `h` lacks, as `Type[title].field`.
    fn missing_fields(resources: &str) -> Vec<String> {
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file("hosts.yaml", host("h", "{}"))
            .file("base.yaml", layer(0, "{}", resources));
        let fleet = load(&r).unwrap();
        assert!(fleet.diagnostics.is_empty(), "{:?}", fleet.diagnostics);
        let res = crate::resolve::resolve_host(&fleet, fleet.host_id("h").unwrap());
        res.problems
            .iter()
            .filter_map(|p| match p {
                Problem::Missing {
                    resource, field, ..
                } => Some(format!("{}.{field}", fleet.resources.text(*resource))),
                _ => None,
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    #[test]
    fn what_is_removed_needs_only_what_names_it() {
        assert_eq!(
            missing_fields(
                "  Cron[a]:\n    ensure: absent\n  Sysctl[vm.swappiness]:\n    ensure: absent\n\
                 \x20 Mount[m]:\n    ensure: absent\n  Mount[n]:\n    ensure: absent\n    path: /n\n"
            ),
            ["Mount[m].path"]
        );
        assert_eq!(
            missing_fields(
                "  Cron[a]:\n    user: root\n  Sysctl[vm.swappiness]: {}\n  Mount[m]:\n    ensure: unmounted\n    path: /m\n"
            ),
            [
                "Cron[a].command",
                "Cron[a].schedule",
                "Mount[m].device",
                "Mount[m].fstype",
                "Sysctl[vm.swappiness].value"
            ]
        );
    }

    #[test]
    fn an_exec_needs_a_guard_which_any_layer_may_give() {
        let bare = "  Exec[x]:\n    command: [true]\n";
        assert_eq!(
            exec_problems(bare, ""),
            [("x".into(), ExecRule::Unguarded, vec![7])]
        );
        for guard in ["creates: /x", "unless: [test, -e, /x]", "onlyif: [true]"] {
            let top = format!("  Exec[x]:\n    {guard}\n");
            assert_eq!(exec_problems(bare, &top), [], "{guard}");
        }
        // A guard unset by a higher layer is no guard; both declarations are shown.
        assert_eq!(
            exec_problems(
                "  Exec[x]:\n    command: [true]\n    creates: /x\n",
                "  Exec[x]:\n    creates: null\n"
            ),
            [("x".into(), ExecRule::Unguarded, vec![7, 7])]
        );
        // `refresh_only: false` guards nothing.
        assert_eq!(
            exec_problems(
                "  Exec[x]:\n    command: [true]\n    refresh_only: false\n",
                ""
            )[0]
            .1,
            ExecRule::Unguarded
        );
    }

    #[test]
    fn refresh_only_and_run_on_go_together() {
        let base = "  File[f]:\n    path: /f\n  Exec[x]:\n    command: [true]\n";
        assert_eq!(
            exec_problems(base, "  Exec[x]:\n    refresh_only: true\n"),
            [("x".into(), ExecRule::RefreshWithoutRunOn, vec![8])]
        );
        assert_eq!(
            exec_problems(base, "  Exec[x]:\n    creates: /x\n    run_on: File[f]\n"),
            [("x".into(), ExecRule::RunOnWithoutRefresh, vec![9])]
        );
        assert_eq!(
            exec_problems(
                base,
                "  Exec[x]:\n    refresh_only: true\n    run_on: File[f]\n"
            ),
            []
        );
    }

    #[test]
    fn a_command_line_reads_one_way() {
        let shell = "  Exec[x]:\n    shell: true\n    creates: /x\n";
        assert_eq!(
            exec_problems(shell, "  Exec[x]:\n    command: [echo, hi]\n"),
            [(
                "x".into(),
                ExecRule::ShellArguments(Field::Command),
                vec![8]
            )]
        );
        assert_eq!(
            exec_problems(shell, "  Exec[x]:\n    command: [\"echo hi | wall\"]\n"),
            []
        );
        let plain = "  Exec[x]:\n    creates: /x\n";
        assert_eq!(
            exec_problems(
                plain,
                "  Exec[x]:\n    command: [\"systemctl daemon-reload\"]\n    unless: [\"test -e /x\"]\n"
            ),
            [
                ("x".into(), ExecRule::SpacedProgram(Field::Command), vec![8]),
                ("x".into(), ExecRule::SpacedProgram(Field::Unless), vec![9])
            ]
        );
        // A path may hold a space; arguments may too.
        assert_eq!(
            exec_problems(
                plain,
                "  Exec[x]:\n    command: [\"/opt/My Tool/bin/run\", \"two words\"]\n"
            ),
            []
        );
    }

    #[test]
    fn a_conflicting_guard_is_reported_as_the_conflict_only() {
        let r = MemReader::new()
            .file("datum.yaml", FLEET)
            .file("hosts.yaml", host("h", "{}"))
            .file(
                "a.yaml",
                layer(
                    0,
                    "{}",
                    "  Exec[x]:\n    command: [true]\n    creates: /a\n",
                ),
            )
            .file("b.yaml", layer(0, "{}", "  Exec[x]:\n    creates: null\n"));
        let fleet = load(&r).unwrap();
        let res = crate::resolve::resolve_host(&fleet, fleet.host_id("h").unwrap());
        assert!(
            matches!(
                &*res.problems,
                [Problem::Conflict {
                    field: Field::Creates,
                    ..
                }]
            ),
            "{:?}",
            res.problems
        );
    }
}
