//! A deterministic generator of realistic fleets.
//!
//! The same options give the same bytes on every machine. The shape follows
//! what real fleets look like: 3 environments, 20 sites, 50 roles, layers
//! for each role in each environment, host overrides for about 5% of hosts,
//! about 25 resources and 100 fields per host, and hosts spread over one
//! inventory file per site. The generated fleet resolves cleanly unless
//! conflicts are asked for.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

pub const ENVIRONMENTS: [&str; 3] = ["production", "staging", "development"];

pub const SITES: [&str; 20] = [
    "london",
    "frankfurt",
    "paris",
    "dublin",
    "madrid",
    "milan",
    "stockholm",
    "warsaw",
    "zurich",
    "vienna",
    "amsterdam",
    "oslo",
    "helsinki",
    "lisbon",
    "prague",
    "brussels",
    "copenhagen",
    "athens",
    "bucharest",
    "sofia",
];

pub const ROLES: [&str; 50] = [
    "web",
    "api",
    "db",
    "cache",
    "queue",
    "search",
    "auth",
    "billing",
    "mail",
    "dns",
    "proxy",
    "cdn",
    "metrics",
    "logs",
    "trace",
    "alert",
    "backup",
    "storage",
    "build",
    "ci",
    "registry",
    "vault",
    "ldap",
    "vpn",
    "ntp",
    "bastion",
    "ftp",
    "git",
    "wiki",
    "chat",
    "video",
    "media",
    "batch",
    "etl",
    "ml",
    "gpu",
    "kafka",
    "zookeeper",
    "consul",
    "nomad",
    "ingress",
    "gateway",
    "payments",
    "ledger",
    "reports",
    "admin",
    "static",
    "assets",
    "scheduler",
    "worker",
];

/// What to generate.
#[derive(Clone, Debug)]
pub struct Options {
    pub hosts: usize,
    pub seed: u64,
    /// Layers that conflict with a role layer on the hosts they match.
    pub conflicts: usize,
}

/// splitmix64: small, fast and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A generated host.
#[derive(Clone, Debug)]
pub struct Host {
    pub name: String,
    pub role: usize,
    pub site: usize,
    pub env: usize,
    pub overridden: bool,
}

/// The hosts a generator run produces (without writing anything).
pub fn hosts(opts: &Options) -> Vec<Host> {
    let mut rng = Rng(opts.seed);
    (0..opts.hosts)
        .map(|i| {
            // Roles are uneven, as in real fleets: a few are large.
            let role = if rng.below(3) == 0 {
                rng.below(5)
            } else {
                rng.below(ROLES.len())
            };
            let site = rng.below(SITES.len());
            let env = match rng.below(10) {
                0..=6 => 0,
                7 | 8 => 1,
                _ => 2,
            };
            Host {
                name: format!("{}-{:06}", ROLES[role], i),
                role,
                site,
                env,
                overridden: rng.below(20) == 0,
            }
        })
        .collect()
}

fn write(root: &Path, rel: &str, text: &str) -> io::Result<()> {
    let path = root.join(rel);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    fs::write(path, text)
}

fn layer(name: &str, precedence: i32, labels: &[(&str, &str)], resources: &str) -> String {
    let mut s = format!("datum: v1alpha1\ntype: Layer\nname: {name}\nprecedence: {precedence}\n");
    if labels.is_empty() {
        s.push_str("match: {}\n");
    } else {
        s.push_str("match:\n  labels:\n");
        for (k, v) in labels {
            let _ = writeln!(s, "    {k}: {v}");
        }
    }
    s.push_str("resources:\n");
    s.push_str(resources);
    s
}

fn file(id: &str, path: &str, mode: &str, content: &str) -> String {
    format!(
        "  File[{id}]:\n    path: {path}\n    owner: root\n    group: root\n    mode: \"{mode}\"\n    content: |\n      {}\n",
        content.replace('\n', "\n      ")
    )
}

/// Writes a fleet into `root` (which should be empty or absent).
pub fn generate(root: &Path, opts: &Options) -> io::Result<Vec<Host>> {
    let hosts = hosts(opts);
    fs::create_dir_all(root)?;
    write(
        root,
        "datum.yaml",
        "datum: v1alpha1\ntype: Fleet\nname: generated\n",
    )?;
    base_layer(root)?;
    environment_layers(root)?;
    site_layers(root)?;
    for (i, role) in ROLES.iter().enumerate() {
        role_layer(root, i, role)?;
        for env in ENVIRONMENTS {
            role_environment_layer(root, i, role, env)?;
        }
    }
    conflict_layers(root, opts.conflicts)?;
    inventory(root, &hosts)?;
    Ok(hosts)
}

/// Base: every host.
fn base_layer(root: &Path) -> io::Result<()> {
    let mut base = String::new();
    base.push_str("  Group[ops]:\n    gid: 2000\n    system: false\n");
    base.push_str("  User[ops]:\n    uid: 2000\n    group: ops\n    groups: [adm, sudo]\n    home: /home/ops\n    shell: /bin/bash\n");
    for pkg in ["openssh-server", "chrony", "curl", "vim", "htop"] {
        let _ = write!(base, "  Package[{pkg}]:\n    ensure: installed\n");
    }
    base.push_str("  Service[ssh]:\n    ensure: running\n    enabled: true\n    requires: Package[openssh-server]\n");
    base.push_str(&file("motd", "/etc/motd", "0644", "Managed by Datum."));
    base.push_str(&file(
        "resolv-conf",
        "/etc/resolv.conf",
        "0644",
        "nameserver 10.0.0.2",
    ));
    base.push_str(&file(
        "sysctl",
        "/etc/sysctl.d/60-datum.conf",
        "0644",
        "vm.swappiness = 10",
    ));
    base.push_str(&file(
        "chrony-conf",
        "/etc/chrony/chrony.conf",
        "0644",
        "pool pool.ntp.org iburst",
    ));
    base.push_str("    requires: Package[chrony]\n");
    base.push_str("  Service[chrony]:\n    ensure: running\n    enabled: true\n    restart_on: File[chrony-conf]\n");
    base.push_str("  Directory[etc-datum]:\n    path: /etc/datum\n    owner: root\n    group: root\n    mode: \"0755\"\n");
    write(root, "base/layer.yaml", &layer("base", 0, &[], &base))
}

/// One layer per environment.
fn environment_layers(root: &Path) -> io::Result<()> {
    for env in ENVIRONMENTS {
        let mut r = String::new();
        let _ = write!(
            r,
            "  File[motd]:\n    content: |\n      Managed by Datum ({env}).\n"
        );
        let _ = write!(
            r,
            "  File[sysctl]:\n    content: |\n      vm.swappiness = {}\n",
            env.len()
        );
        r.push_str(&file("env-marker", "/etc/datum/environment", "0644", env));
        write(
            root,
            &format!("environments/{env}/layer.yaml"),
            &layer(env, 10, &[("environment", env)], &r),
        )?;
    }
    Ok(())
}

/// One layer per site.
fn site_layers(root: &Path) -> io::Result<()> {
    for (i, site) in SITES.iter().enumerate() {
        let mut r = String::new();
        let _ = write!(
            r,
            "  File[resolv-conf]:\n    content: |\n      search {site}.example.net\n      nameserver 10.{i}.0.2\n"
        );
        let _ = write!(
            r,
            "  File[chrony-conf]:\n    content: |\n      server ntp.{site}.example.net iburst\n"
        );
        r.push_str(&file("site-marker", "/etc/datum/site", "0644", site));
        write(
            root,
            &format!("sites/{site}/layer.yaml"),
            &layer(site, 20, &[("site", site)], &r),
        )?;
    }
    Ok(())
}

/// The layer of role number `i`, and its configuration file.
fn role_layer(root: &Path, i: usize, role: &str) -> io::Result<()> {
    let uid = 3000 + i;
    let mut r = String::new();
    let _ = write!(
        r,
        "  Package[{role}]:\n    name: {role}-server\n    ensure: installed\n    version: \"1.{i}\"\n"
    );
    let _ = write!(r, "  Group[{role}]:\n    gid: {uid}\n    system: true\n");
    let _ = write!(
        r,
        "  User[{role}]:\n    uid: {uid}\n    group: {role}\n    home: /var/lib/{role}\n    shell: /usr/sbin/nologin\n    system: true\n"
    );
    let _ = write!(
        r,
        "  Directory[{role}-data]:\n    path: /var/lib/{role}\n    owner: {role}\n    group: {role}\n    mode: \"0750\"\n    requires: User[{role}]\n"
    );
    let _ = write!(
        r,
        "  File[{role}-config]:\n    path: /etc/{role}/{role}.conf\n    owner: root\n    group: {role}\n    mode: \"0640\"\n    source: files/{role}.conf\n    requires:\n      - Package[{role}]\n"
    );
    r.push_str(&file(
        &format!("{role}-env"),
        &format!("/etc/default/{role}"),
        "0644",
        &format!("ROLE={role}"),
    ));
    let _ = write!(
        r,
        "  File[{role}-logrotate]:\n    path: /etc/logrotate.d/{role}\n    mode: \"0644\"\n    content: |\n      /var/log/{role}/*.log {{ weekly }}\n"
    );
    let _ = write!(
        r,
        "  Symlink[{role}-current]:\n    path: /srv/{role}/current\n    target: /srv/{role}/releases/1.{i}\n"
    );
    let _ = write!(
        r,
        "  Service[{role}]:\n    name: {role}-server\n    ensure: running\n    enabled: true\n    restart_on: File[{role}-config]\n    requires: Package[{role}]\n"
    );
    write(
        root,
        &format!("roles/{role}/layer.yaml"),
        &layer(role, 30, &[("role", role)], &r),
    )?;
    write(
        root,
        &format!("files/{role}.conf"),
        &format!(
            "# {role}\nlisten 0.0.0.0:{}\nworkers {}\n",
            8000 + i,
            1 + i % 8
        ),
    )?;
    Ok(())
}

/// The layer of role number `i` in one environment.
fn role_environment_layer(root: &Path, i: usize, role: &str, env: &str) -> io::Result<()> {
    let mut r = String::new();
    let mode = if env == "production" { "0600" } else { "0640" };
    let _ = write!(r, "  File[{role}-config]:\n    mode: \"{mode}\"\n");
    let _ = write!(r, "  Package[{role}]:\n    version: \"1.{i}-{env}\"\n");
    let _ = write!(
        r,
        "  File[{role}-env]:\n    content: |\n      ROLE={role}\n      ENV={env}\n"
    );
    r.push_str(&file(
        &format!("{role}-tuning"),
        &format!("/etc/{role}/tuning.conf"),
        "0644",
        &format!("profile={env}"),
    ));
    write(
        root,
        &format!("roles/{role}/{env}/layer.yaml"),
        &layer(
            &format!("{role}-{env}"),
            40,
            &[("role", role), ("environment", env)],
            &r,
        ),
    )?;
    Ok(())
}

/// Layers that conflict with a role layer on the hosts they match.
fn conflict_layers(root: &Path, conflicts: usize) -> io::Result<()> {
    for k in 0..conflicts {
        let role = ROLES[k % ROLES.len()];
        let site = SITES[(k / ROLES.len()) % SITES.len()];
        let r = format!("  File[{role}-config]:\n    owner: {role}\n");
        write(
            root,
            &format!("conflicts/{role}-{site}/layer.yaml"),
            &layer(
                &format!("conflict-{k}"),
                30,
                &[("role", role), ("site", site)],
                &r,
            ),
        )?;
    }

    Ok(())
}

/// Inventory: one file per site; overrides for about 5% of hosts.
fn inventory(root: &Path, hosts: &[Host]) -> io::Result<()> {
    let mut inventories = vec![String::new(); SITES.len()];
    for h in hosts {
        let inv = &mut inventories[h.site];
        let _ = write!(
            inv,
            "---\ndatum: v1alpha1\ntype: Host\nname: {}\nlabels:\n  role: {}\n  site: {}\n  environment: {}\n  rack: r{:02}\n",
            h.name,
            ROLES[h.role],
            SITES[h.site],
            ENVIRONMENTS[h.env],
            h.name.len() % 40,
        );
        if h.overridden {
            let role = ROLES[h.role];
            let r = format!(
                "  File[{role}-config]:\n    mode: \"0600\"\n  File[motd]:\n    content: |\n      {} is special.\n",
                h.name
            );
            write(
                root,
                &format!("hosts/{}/layer.yaml", h.name),
                &layer(
                    &format!("host-{}", h.name),
                    100,
                    &[("datum/host", &h.name)],
                    &r,
                ),
            )?;
        }
    }
    for (i, inv) in inventories.iter().enumerate() {
        write(root, &format!("inventory/{}.yaml", SITES[i]), inv)?;
    }
    Ok(())
}
