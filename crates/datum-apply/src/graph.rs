//! The order resources are applied in: the edges the manifest states
//! (`requires`, `restart_on`, `run_on`) and the ones the resources imply (a path after
//! the Directory resource holding it, a File or Directory after the User and
//! Group that own it, a User after its groups, an Exec after the User it
//! runs as and the Directory it runs in, a Cron after the User it runs as,
//! a Mount after the Directory of its mount point and the Mount it is
//! mounted inside), sorted topologically with
//! ties broken by resource id. When no order exists, the cycles come from
//! `datum_core::graph`, the routine resolution names its cycles with.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt;

use datum_core::schema::ResourceId;

use crate::spec::{Desired, Item, PackageSystem};

/// Why one resource comes after another.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Why {
    /// Listed in `requires`.
    Requires,
    /// Listed in `restart_on`.
    RestartOn,
    /// Listed in an Exec's `run_on`.
    RunOn,
    /// The nearest Directory resource above its path.
    Parent,
    /// The User resource named by `owner`.
    Owner,
    /// The Group resource named by `group`.
    Group,
    /// A User after the Group resources of its `group` and `groups`.
    Member,
    /// An Exec after the User resource named by its `user`.
    RunsAs,
    /// An Exec after the Directory resource managing its `cwd`, or the
    /// nearest one above it.
    WorksIn,
    /// A Mount after the Directory resource of its mount point.
    MountsOn,
    /// A Mount after the Mount nearest above its mount point (so its
    /// line follows that one's in /etc/fstab, as `mount -a` needs).
    Nested,
    /// A Package after every Repository of its package system (the same
    /// `provider`, or either without one), unless that Repository comes
    /// after the Package already (a keyring's package, say).
    Source,
}

impl Why {
    /// How the later resource relates to the earlier, for messages:
    /// `File[x] <phrase> Directory[y]`.
    pub fn phrase(self) -> &'static str {
        match self {
            Why::Requires => "requires",
            Why::RestartOn => "restarts on",
            Why::RunOn => "runs on",
            Why::Parent => "is inside",
            Why::Owner => "is owned by",
            Why::Group => "has the group of",
            Why::Member => "is a member of",
            Why::RunsAs => "runs as",
            Why::WorksIn => "runs in",
            Why::MountsOn => "mounts on",
            Why::Nested => "is mounted inside",
            Why::Source => "installs from",
        }
    }
}

/// The resources in the order to apply them, with what each waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Indices into the items, in apply order.
    pub order: Vec<usize>,
    /// For each item, the items it comes after and why (sorted, one reason per pair).
    pub deps: Vec<Vec<(usize, Why)>>,
}

/// Resources that wait for each other in a circle: each step is a resource,
/// why it waits for the next, and the last waits for the first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    pub steps: Vec<(ResourceId, Why)>,
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (id, why)) in self.steps.iter().enumerate() {
            let next = &self.steps[(i + 1) % self.steps.len()].0;
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{id} {} {next}", why.phrase())?;
        }
        Ok(())
    }
}

impl Cycle {
    /// `A -> B -> A`.
    pub fn chain(&self) -> String {
        let mut ids: Vec<String> = self.steps.iter().map(|(id, _)| id.to_string()).collect();
        if let Some(first) = ids.first().cloned() {
            ids.push(first);
        }
        ids.join(" -> ")
    }
}

/// Which items item `i` comes after, directly or through others, by the
/// edges of a [`Plan`]'s `deps`.
pub fn upstream(deps: &[Vec<(usize, Why)>], i: usize) -> Vec<bool> {
    let mut seen = vec![false; deps.len()];
    let mut stack: Vec<usize> = deps[i].iter().map(|&(d, _)| d).collect();
    while let Some(d) = stack.pop() {
        if !std::mem::replace(&mut seen[d], true) {
            stack.extend(deps[d].iter().map(|&(e, _)| e));
        }
    }
    seen
}

/// Orders the items (given sorted by id), or gives every cycle, one per
/// knot of resources that wait on each other. Ties are broken by the id
/// as written (`Type[title]`), the order a manifest lists resources in.
pub fn plan(items: &[Item]) -> Result<Plan, Vec<Cycle>> {
    let deps = edges(items);
    let written: Vec<String> = items.iter().map(|it| it.id.to_string()).collect();
    let n = items.len();
    let mut waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, ds) in deps.iter().enumerate() {
        for &(d, _) in ds {
            dependents[d].push(i);
        }
    }
    let mut ready: BinaryHeap<Reverse<(&str, usize)>> = (0..n)
        .filter(|&i| waiting[i] == 0)
        .map(|i| Reverse((written[i].as_str(), i)))
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse((_, i))) = ready.pop() {
        order.push(i);
        for &j in &dependents[i] {
            waiting[j] -= 1;
            if waiting[j] == 0 {
                ready.push(Reverse((written[j].as_str(), j)));
            }
        }
    }
    if order.len() == n {
        // A Health is asked after the run (`provider::health`), not applied.
        order.retain(|&i| !matches!(items[i].desired, crate::spec::Desired::Health(_)));
        return Ok(Plan { order, deps });
    }
    Err(cycles(items, &deps))
}

/// Every edge, as `deps[later] = [(earlier, why)]`.
fn edges(items: &[Item]) -> Vec<Vec<(usize, Why)>> {
    let by_id: BTreeMap<&ResourceId, usize> = items
        .iter()
        .enumerate()
        .map(|(i, it)| (&it.id, i))
        .collect();
    let mut dirs = BTreeMap::new();
    let mut users = BTreeMap::new();
    let mut groups = BTreeMap::new();
    let mut mounts = BTreeMap::new();
    for (i, it) in items.iter().enumerate() {
        match &it.desired {
            Desired::Mount(m) => {
                mounts.insert(m.path.as_str(), i);
            }
            Desired::Directory(d) => {
                dirs.insert(d.path.as_str(), i);
            }
            Desired::User(u) => {
                users.insert(u.name.as_str(), i);
            }
            Desired::Group(g) => {
                groups.insert(g.name.as_str(), i);
            }
            _ => {}
        }
    }
    let mut deps = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        let mut mine: BTreeMap<usize, Why> = BTreeMap::new();
        let mut add = |j: Option<&usize>, why: Why| {
            if let Some(&j) = j
                && j != i
            {
                let e = mine.entry(j).or_insert(why);
                *e = (*e).min(why);
            }
        };
        for id in &it.requires {
            add(by_id.get(id), Why::Requires);
        }
        for id in &it.restart_on {
            add(by_id.get(id), Why::RestartOn);
        }
        for id in &it.run_on {
            add(by_id.get(id), Why::RunOn);
        }
        if let Some(path) = it.desired.path() {
            let parent = ancestors(path).find_map(|a| dirs.get(a));
            add(parent, Why::Parent);
        }
        let (owner, group) = it.desired.ownership();
        add(owner.and_then(|o| users.get(o)), Why::Owner);
        add(group.and_then(|g| groups.get(g)), Why::Group);
        if let Desired::User(u) = &it.desired {
            for g in u.group.iter().chain(u.groups.iter().flatten()) {
                add(groups.get(g.as_str()), Why::Member);
            }
        }
        if let Desired::Exec(e) = &it.desired {
            add(e.user.as_deref().and_then(|u| users.get(u)), Why::RunsAs);
            let cwd = e.cwd.as_deref().and_then(|c| {
                std::iter::once(c)
                    .chain(ancestors(c))
                    .find_map(|a| dirs.get(a))
            });
            add(cwd, Why::WorksIn);
        }
        system_edges(&it.desired, &dirs, &users, &mounts, &mut add);
        deps.push(mine.into_iter().collect());
    }
    source_edges(items, &mut deps);
    deps
}

/// Every Package after the Repositories of its system ([`Why::Source`]),
/// except one a Repository already waits for.
fn source_edges(items: &[Item], deps: &mut [Vec<(usize, Why)>]) {
    let repos: Vec<(usize, Option<PackageSystem>)> = items
        .iter()
        .enumerate()
        .filter_map(|(i, it)| match &it.desired {
            Desired::Repository(r) => Some((i, r.provider)),
            _ => None,
        })
        .collect();
    for (r, system) in repos {
        let before = upstream(deps, r);
        for (p, it) in items.iter().enumerate() {
            let Desired::Package(pkg) = &it.desired else {
                continue;
            };
            let same = match (system, pkg.provider) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            };
            if same && !before[p] && !deps[p].iter().any(|&(d, _)| d == r) {
                deps[p].push((r, Why::Source));
                deps[p].sort_unstable();
            }
        }
    }
}

/// The edges of a Cron (its user) and a Mount (its mount point's
/// Directory, the Mount it is inside).
fn system_edges(
    desired: &Desired,
    dirs: &BTreeMap<&str, usize>,
    users: &BTreeMap<&str, usize>,
    mounts: &BTreeMap<&str, usize>,
    add: &mut dyn FnMut(Option<&usize>, Why),
) {
    match desired {
        Desired::Cron(c) => add(users.get(c.user.as_str()), Why::RunsAs),
        Desired::Mount(m) => {
            add(dirs.get(m.path.as_str()), Why::MountsOn);
            add(ancestors(&m.path).find_map(|a| mounts.get(a)), Why::Nested);
        }
        _ => {}
    }
}

/// The ancestors of an absolute path, nearest first: `/a/b/c` gives `/a/b`, `/a`, `/`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut rest = path;
    std::iter::from_fn(move || {
        if rest == "/" || rest.is_empty() {
            return None;
        }
        let cut = rest.rfind('/')?;
        rest = if cut == 0 { "/" } else { &rest[..cut] };
        Some(rest)
    })
}

/// The cycles among the items Kahn's algorithm could not place: for each
/// knot (strongly connected set), the shortest cycle through its first id.
/// Items are sorted by id, so node numbers order cycles and ties by id.
fn cycles(items: &[Item], deps: &[Vec<(usize, Why)>]) -> Vec<Cycle> {
    debug_assert!(
        items
            .windows(2)
            .all(|w| w[0].id.to_string() < w[1].id.to_string())
    );
    datum_core::graph::shortest_cycles(deps)
        .into_iter()
        .map(|steps| Cycle {
            steps: steps
                .into_iter()
                .map(|(i, why)| (items[i].id.clone(), why))
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{
        DirectorySpec, Ensure, ExecSpec, FileSpec, GroupSpec, ServiceSpec, UserSpec,
    };

    fn id(text: &str) -> ResourceId {
        ResourceId::parse(text).unwrap()
    }

    fn item(text: &str, desired: Desired) -> Item {
        Item {
            id: id(text),
            summary: String::new(),
            desired,
            requires: vec![],
            restart_on: vec![],
            run_on: vec![],
            problem: None,
        }
    }

    fn file(id: &str, path: &str) -> Item {
        item(
            id,
            Desired::File(FileSpec {
                path: path.into(),
                ensure: Ensure::Present,
                owner: None,
                group: None,
                mode: None,
                content: None,
                sensitive: false,
                secret: None,
            }),
        )
    }

    fn dir(id: &str, path: &str) -> Item {
        item(
            id,
            Desired::Directory(DirectorySpec {
                path: path.into(),
                ensure: Ensure::Present,
                owner: None,
                group: None,
                mode: None,
            }),
        )
    }

    fn user(id: &str, name: &str, group: Option<&str>, groups: &[&str]) -> Item {
        item(
            id,
            Desired::User(UserSpec {
                name: name.into(),
                ensure: Ensure::Present,
                uid: None,
                group: group.map(Into::into),
                groups: Some(groups.iter().map(|g| g.to_string()).collect()),
                home: None,
                shell: None,
                system: false,
            }),
        )
    }

    fn group(id: &str, name: &str) -> Item {
        item(
            id,
            Desired::Group(GroupSpec {
                name: name.into(),
                ensure: Ensure::Present,
                gid: None,
                system: false,
            }),
        )
    }

    fn service(id: &str) -> Item {
        item(
            id,
            Desired::Service(ServiceSpec {
                name: id.into(),
                running: None,
                enabled: None,
            }),
        )
    }

    fn exec(id: &str, user: Option<&str>, cwd: Option<&str>) -> Item {
        item(
            id,
            Desired::Exec(ExecSpec {
                command: vec!["true".into()],
                shell: false,
                creates: None,
                unless: None,
                onlyif: None,
                refresh_only: false,
                timeout: std::time::Duration::from_secs(300),
                user: user.map(Into::into),
                cwd: cwd.map(Into::into),
                environment: vec![],
            }),
        )
    }

    fn sorted(mut items: Vec<Item>) -> Vec<Item> {
        // As a manifest lists them: by the id as written.
        items.sort_by_key(|it| it.id.to_string());
        items
    }

    fn ids(items: &[Item], plan: &Plan) -> Vec<String> {
        plan.order
            .iter()
            .map(|&i| items[i].id.to_string())
            .collect()
    }

    #[test]
    fn without_edges_the_order_is_the_id_order() {
        let items = sorted(vec![
            file("File[b]", "/b"),
            file("File[a]", "/a"),
            service("Service[a]"),
        ]);
        let plan = plan(&items).unwrap();
        assert_eq!(ids(&items, &plan), ["File[a]", "File[b]", "Service[a]"]);
    }

    #[test]
    fn requires_and_restart_on_come_first() {
        let mut a = file("File[a]", "/a");
        a.requires = vec![id("Service[z]")];
        let mut s = service("Service[m]");
        s.restart_on = vec![id("File[a]")];
        let items = sorted(vec![a, s, service("Service[z]")]);
        let plan = plan(&items).unwrap();
        assert_eq!(ids(&items, &plan), ["Service[z]", "File[a]", "Service[m]"]);
        let m = items.iter().position(|i| i.id == id("Service[m]")).unwrap();
        let a = items.iter().position(|i| i.id == id("File[a]")).unwrap();
        assert_eq!(plan.deps[m], [(a, Why::RestartOn)]);
    }

    #[test]
    fn an_exec_runs_after_what_it_runs_on() {
        let mut x = service("Service[x]");
        x.run_on = vec![id("File[z]")];
        let items = sorted(vec![x, file("File[z]", "/z")]);
        let plan = plan(&items).unwrap();
        assert_eq!(ids(&items, &plan), ["File[z]", "Service[x]"]);
        let x = items.iter().position(|i| i.id == id("Service[x]")).unwrap();
        let z = items.iter().position(|i| i.id == id("File[z]")).unwrap();
        assert_eq!(plan.deps[x], [(z, Why::RunOn)]);
    }

    #[test]
    fn a_path_waits_for_the_nearest_managed_directory_above_it() {
        // File[a] sorts first, but lives in the directory Directory[z] makes;
        // /srv/x is not managed, so /srv/x/y/f waits for /srv.
        let items = sorted(vec![
            file("File[a]", "/srv/app/conf"),
            file("File[deep]", "/srv/x/y/f"),
            dir("Directory[z]", "/srv/app"),
            dir("Directory[srv]", "/srv"),
            file("File[elsewhere]", "/etc/app"),
        ]);
        let plan = plan(&items).unwrap();
        assert_eq!(
            ids(&items, &plan),
            [
                "Directory[srv]",
                "Directory[z]",
                "File[a]",
                "File[deep]",
                "File[elsewhere]"
            ]
        );
        let deep = items.iter().position(|i| i.id == id("File[deep]")).unwrap();
        let srv = items
            .iter()
            .position(|i| i.id == id("Directory[srv]"))
            .unwrap();
        assert_eq!(plan.deps[deep], [(srv, Why::Parent)]);
    }

    #[test]
    fn owners_and_groups_come_before_what_they_own_and_groups_before_members() {
        let mut f = file("File[a]", "/a");
        if let Desired::File(s) = &mut f.desired {
            s.owner = Some("zed".into());
            s.group = Some("staff".into());
        }
        let items = sorted(vec![
            f,
            user("User[zed]", "zed", Some("zed-primary"), &["wheel"]),
            group("Group[wheel]", "wheel"),
            group("Group[zz-primary]", "zed-primary"),
            group("Group[staff]", "staff"),
        ]);
        let plan = plan(&items).unwrap();
        assert_eq!(
            ids(&items, &plan),
            [
                "Group[staff]",
                "Group[wheel]",
                "Group[zz-primary]",
                "User[zed]",
                "File[a]"
            ]
        );
    }

    #[test]
    fn an_exec_waits_for_its_user_and_the_directory_it_runs_in() {
        // Each Exec sorts before what it waits for (the Directory, owned by
        // the User, comes after it); /srv/app/sub is not managed, so the
        // Exec in it waits for /srv/app.
        let mut d = dir("Directory[z]", "/srv/app");
        if let Desired::Directory(s) = &mut d.desired {
            s.owner = Some("zed".into());
        }
        let items = sorted(vec![
            exec("Exec[a-here]", Some("zed"), Some("/srv/app")),
            exec("Exec[a-below]", None, Some("/srv/app/sub")),
            exec("Exec[a-free]", Some("nobody"), Some("/opt")),
            d,
            user("User[zed]", "zed", None, &[]),
        ]);
        let plan = plan(&items).unwrap();
        assert_eq!(
            ids(&items, &plan),
            [
                "Exec[a-free]",
                "User[zed]",
                "Directory[z]",
                "Exec[a-below]",
                "Exec[a-here]"
            ]
        );
        let at = |text: &str| items.iter().position(|i| i.id == id(text)).unwrap();
        assert_eq!(
            plan.deps[at("Exec[a-here]")],
            [
                (at("Directory[z]"), Why::WorksIn),
                (at("User[zed]"), Why::RunsAs)
            ]
        );
        assert_eq!(
            plan.deps[at("Exec[a-below]")],
            [(at("Directory[z]"), Why::WorksIn)]
        );
    }

    #[test]
    fn a_cycle_through_an_execs_user_or_cwd_names_the_edge() {
        let mut u = user("User[deploy]", "deploy", None, &[]);
        u.requires = vec![id("Exec[make-home]")];
        let mut d = dir("Directory[app]", "/srv/app");
        d.requires = vec![id("Exec[build]")];
        let items = sorted(vec![
            u,
            exec("Exec[make-home]", Some("deploy"), None),
            d,
            exec("Exec[build]", None, Some("/srv/app/src")),
        ]);
        let cycles = plan(&items).unwrap_err();
        let shown: Vec<String> = cycles.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "Directory[app] requires Exec[build], Exec[build] runs in Directory[app]",
                "Exec[make-home] runs as User[deploy], User[deploy] requires Exec[make-home]"
            ]
        );
    }

    #[test]
    fn a_cycle_through_an_automatic_edge_names_every_resource_in_it() {
        // The directory requires a file inside it: the file waits for its
        // directory, the directory for the file.
        let mut d = dir("Directory[app]", "/srv/app");
        d.requires = vec![id("File[conf]")];
        let items = sorted(vec![
            d,
            file("File[conf]", "/srv/app/conf"),
            file("File[free]", "/x"),
        ]);
        let cycles = plan(&items).unwrap_err();
        assert_eq!(cycles.len(), 1);
        assert_eq!(
            cycles[0].chain(),
            "Directory[app] -> File[conf] -> Directory[app]"
        );
        assert_eq!(
            cycles[0].to_string(),
            "Directory[app] requires File[conf], File[conf] is inside Directory[app]"
        );
    }

    #[test]
    fn each_knot_is_reported_once_and_downstream_resources_are_not_blamed() {
        let mut a = service("Service[a]");
        a.requires = vec![id("Service[b]")];
        let mut b = service("Service[b]");
        b.requires = vec![id("Service[c]")];
        let mut c = service("Service[c]");
        c.requires = vec![id("Service[a]")];
        let mut after = service("Service[d]");
        after.requires = vec![id("Service[a]")];
        let mut x = service("Service[x]");
        x.requires = vec![id("Service[y]")];
        let mut y = service("Service[y]");
        y.restart_on = vec![id("Service[x]")];
        let items = sorted(vec![a, b, c, after, x, y]);
        let cycles = plan(&items).unwrap_err();
        let chains: Vec<String> = cycles.iter().map(Cycle::chain).collect();
        assert_eq!(
            chains,
            [
                "Service[a] -> Service[b] -> Service[c] -> Service[a]",
                "Service[x] -> Service[y] -> Service[x]"
            ]
        );
        assert_eq!(
            cycles[1].to_string(),
            "Service[x] requires Service[y], Service[y] restarts on Service[x]"
        );
    }

    fn package(id: &str, provider: Option<PackageSystem>) -> Item {
        item(
            id,
            Desired::Package(crate::spec::PackageSpec {
                name: id
                    .trim_start_matches("Package[")
                    .trim_end_matches(']')
                    .into(),
                ensure: Ensure::Present,
                version: None,
                provider,
            }),
        )
    }

    fn repo(id: &str, provider: Option<PackageSystem>) -> Item {
        item(
            id,
            Desired::Repository(crate::spec::RepositorySpec {
                name: "r".into(),
                ensure: Ensure::Present,
                provider,
                url: "file:///r".into(),
                suites: vec![],
                components: vec![],
                key: None,
            }),
        )
    }

    #[test]
    fn packages_come_after_the_repositories_of_their_system() {
        use PackageSystem::{Apt, Dnf};
        let mut keyring = package("Package[a-keyring]", None);
        keyring.requires = vec![];
        let mut vendor = repo("Repository[vendor]", None);
        vendor.requires = vec![id("Package[a-keyring]")];
        let items = vec![
            keyring,
            package("Package[b-apt]", Some(Apt)),
            package("Package[c-dnf]", Some(Dnf)),
            repo("Repository[epel]", Some(Dnf)),
            vendor,
        ];
        let plan = plan(&items).unwrap();
        // The keyring the vendor's Repository needs comes before it (after
        // epel, as it names no system); the dnf Package after both
        // Repositories, the apt one after the vendor's (no system) only.
        assert_eq!(
            ids(&items, &plan),
            [
                "Repository[epel]",
                "Package[a-keyring]",
                "Repository[vendor]",
                "Package[b-apt]",
                "Package[c-dnf]"
            ]
        );
        assert_eq!(plan.deps[1], [(4, Why::Source)]);
        assert_eq!(plan.deps[2], [(3, Why::Source), (4, Why::Source)]);
        assert_eq!(plan.deps[0], [(3, Why::Source)]);
    }

    #[test]
    fn ancestors_run_nearest_first() {
        assert_eq!(ancestors("/a/b/c").collect::<Vec<_>>(), ["/a/b", "/a", "/"]);
        assert_eq!(ancestors("/").count(), 0);
    }
}
