//! Every command's page: its examples, the exit statuses beyond the common
//! ones, the environment and files it reads, and related commands.

use super::Page;

/// The fleet's root: a page that lists it reads a fleet (and --fleet).
pub const FLEET_FILE: (&str, &str) = (
    "datum.yaml",
    "The fleet's root document: the fleet is the directory holding it, found from the current directory upwards unless --fleet says where.",
);
const HOST_FILE: (&str, &str) = (
    "/etc/datum/host",
    "The host's name, when --host is not given (under --root); else the system hostname.",
);
const REPORTS: (&str, &str) = (
    "/var/lib/datum/reports/last.json",
    "The last run's report (docs/json.md), beside one file per run kept.",
);
const COLLECTED: (&str, &str) = (
    "--reports DIR",
    "Run reports collected from the hosts (through report_url, or each host's last.json copied), read to place each host in its wave.",
);
const METRICS: (&str, &str) = (
    "/var/lib/prometheus/node-exporter/datum.prom",
    "The run's metrics, for the Prometheus textfile collector.",
);
const RECIPIENTS: (&str, &str) = (
    "PATH.recipients",
    "Beside each secret: who it is encrypted to, written by datum secret.",
);
const EDITOR: &[(&str, &str)] = &[
    ("VISUAL", "The editor secret edit runs."),
    ("EDITOR", "The editor, when VISUAL is not set (else vi)."),
];

/// Every command's page, datum itself first.
pub const PAGES: &[Page] = &[
    Page {
        path: "",
        examples: &[
            ("Every problem in the fleet", "datum check"),
            (
                "Every layer and resource web-001 gets, and why",
                "datum explain web-001",
            ),
            (
                "What the uncommitted changes do to every host",
                "datum diff",
            ),
        ],
        status: &[
            (
                "2, 4, 6",
                "apply and agent: changes made, failures, or both.",
            ),
            ("3", "diff --exit-code: something changed."),
        ],
        env: &[],
        files: &[FLEET_FILE],
        see_also: &[],
    },
    Page {
        path: "render",
        examples: &[
            ("The manifest web-001 gets, as YAML", "datum render web-001"),
            (
                "As JSON, with the host given as explain and apply take it",
                "datum render --host web-001 --format json",
            ),
            (
                "Every host's manifest into a directory",
                "datum render --all --out manifests",
            ),
        ],
        status: &[],
        env: &[],
        files: &[FLEET_FILE],
        see_also: &["explain", "apply", "bundle"],
    },
    Page {
        path: "check",
        examples: &[
            ("Every problem in the fleet", "datum check"),
            (
                "Warnings fail too, one line each for an editor's quickfix list",
                "datum check --deny-warnings --format short",
            ),
            (
                "Annotations on a pull request, in GitHub Actions",
                "datum check --format github",
            ),
        ],
        status: &[("1", "Errors found (or warnings, with --deny-warnings).")],
        env: &[],
        files: &[FLEET_FILE],
        see_also: &["diff", "explain"],
    },
    Page {
        path: "explain",
        examples: &[
            (
                "Every layer and resource web-001 gets",
                "datum explain web-001",
            ),
            (
                "Where one resource comes from",
                "datum explain File[nginx-config] --host web-001",
            ),
            (
                "Which layer set one field, and what it overrode",
                "datum explain File[nginx-config].mode --host web-001",
            ),
        ],
        status: &[],
        env: &[],
        files: &[FLEET_FILE],
        see_also: &["render", "query", "layers"],
    },
    Page {
        path: "apply",
        examples: &[
            (
                "What apply would change under a machine image in ./image, changing nothing",
                "datum apply --host web-001 --root ./image --noop",
            ),
            (
                "The same, as JSON, the host given as a word as render takes it",
                "datum apply web-001 --root ./image --noop --format json",
            ),
            (
                "Apply it, printing only errors",
                "datum apply web-001 --root ./image -q",
            ),
        ],
        status: &[
            (
                "1",
                "Nothing was applied: the host did not resolve, a bundle was refused, a label disagreed with the host's facts, a dependency cycle, another run holds the lock.",
            ),
            ("2", "Changes made (or pending, with --noop)."),
            ("4", "Some resources failed; nothing else changed."),
            ("6", "Changes made and some resources failed."),
        ],
        env: &[],
        files: &[FLEET_FILE, HOST_FILE, REPORTS, METRICS],
        see_also: &["render", "agent", "facts"],
    },
    Page {
        path: "hosts",
        examples: &[
            (
                "The web servers in London",
                "datum hosts role=web,site=london",
            ),
            (
                "Names only, for xargs",
                "datum hosts 'role in (web,db)' --names",
            ),
            (
                "Globs and negations",
                "datum hosts 'datum/host=web-*' 'site!=london'",
            ),
        ],
        status: &[(
            "1",
            "No host matches (as grep), or the fleet does not load.",
        )],
        env: &[],
        files: &[FLEET_FILE],
        see_also: &["layers", "query"],
    },
    Page {
        path: "layers",
        examples: &[
            ("Every layer in fold order", "datum layers"),
            (
                "The layers one host matches, and why",
                "datum layers --host web-001",
            ),
        ],
        status: &[],
        env: &[],
        files: &[FLEET_FILE],
        see_also: &["hosts", "explain"],
    },
    Page {
        path: "facts",
        examples: &[
            ("What this machine reports about itself", "datum facts"),
            ("The same as JSON", "datum facts --format json"),
        ],
        status: &[],
        env: &[],
        files: &[],
        see_also: &["apply"],
    },
    Page {
        path: "diff",
        examples: &[
            (
                "What the uncommitted changes do to every host",
                "datum diff",
            ),
            ("A summary by layer and resource", "datum diff HEAD --stat"),
            (
                "The hosts a change touches, one a line",
                "datum diff HEAD --name-only",
            ),
        ],
        status: &[("3", "With --exit-code: something changed.")],
        env: &[],
        files: &[FLEET_FILE],
        see_also: &["check", "render"],
    },
    Page {
        path: "query",
        examples: &[
            (
                "One field on every host, with the layer that set it",
                "datum query File[nginx-config].mode",
            ),
            (
                "Hosts grouped by value",
                "datum query File[nginx-config].mode --summary",
            ),
            (
                "Only some hosts",
                "datum query File[motd].content --where 'environment!=production'",
            ),
        ],
        status: &[],
        env: &[],
        files: &[FLEET_FILE],
        see_also: &["explain", "hosts"],
    },
    Page {
        path: "bundle",
        examples: &[
            (
                "One host's bundle, signed",
                "datum bundle web-001 --out web-001.bundle --sign-key bundle-key",
            ),
            (
                "Every host's, as a release pipeline makes them, valid for 12 hours",
                "datum bundle --all --out bundles --sign-key bundle-key --valid-for 12h",
            ),
        ],
        status: &[(
            "1",
            "A host has errors and got no bundle (with --all, the others did).",
        )],
        env: &[(
            "SOURCE_DATE_EPOCH",
            "When set, --valid-for counts from this time (seconds since the epoch) rather than now, so a rebuild gives the same bytes.",
        )],
        files: &[FLEET_FILE],
        see_also: &["agent", "apply"],
    },
    Page {
        path: "agent",
        examples: &[
            (
                "One run under a machine image, reporting what would change",
                "datum agent --once --noop --root ./image",
            ),
            ("One run, applying", "datum agent --once --root ./image"),
        ],
        status: &[
            (
                "1",
                "With --once: nothing was applied (the input was refused, or could not be fetched with nothing verified to fall back to).",
            ),
            ("2", "With --once: changes made (or pending, with --noop)."),
            ("4", "With --once: some resources failed."),
            ("6", "With --once: changes made and some resources failed."),
        ],
        env: &[],
        files: &[
            (
                "/etc/datum/agent.yaml",
                "The agent's configuration (under --root).",
            ),
            HOST_FILE,
            (
                "/var/lib/datum/repo",
                "Git mode: the agent's bare repository.",
            ),
            (
                "/var/lib/datum/agent",
                "What was applied last, and from which fleet.",
            ),
            REPORTS,
            METRICS,
        ],
        see_also: &["apply", "bundle"],
    },
    Page {
        path: "init",
        examples: &[
            ("A new fleet in a new directory", "datum init new-fleet"),
            (
                "Beside files already in the directory (none is overwritten)",
                "datum init ops --force",
            ),
        ],
        status: &[],
        env: &[],
        files: &[
            (
                "DIR/datum.yaml",
                "Written with base/layer.yaml, roles/web/layer.yaml and hosts/web-001.yaml.",
            ),
            (
                "DIR/datum.schema.json",
                "The JSON Schema the documents' modelines name.",
            ),
        ],
        see_also: &["check", "schema"],
    },
    Page {
        path: "completions",
        examples: &[
            (
                "The script for bash (source it from ~/.bashrc)",
                "datum completions bash",
            ),
            ("For zsh", "datum completions zsh"),
            (
                "Installed for fish, which loads it the first time datum is completed",
                "datum completions fish > ~/.config/fish/completions/datum.fish",
            ),
        ],
        status: &[],
        env: &[
            (
                "COMPLETE",
                "Set by the script when it asks datum for candidates; never set it by hand.",
            ),
            (
                "DATUM_FLEET",
                "The fleet whose hosts, resources and labels are offered, when the directory is not in one.",
            ),
        ],
        files: &[],
        see_also: &[],
    },
    Page {
        path: "man",
        examples: &[
            ("datum(1) on the terminal", "datum man"),
            (
                "Every page into a directory for MANPATH",
                "datum man --out man1",
            ),
        ],
        status: &[],
        env: &[],
        files: &[],
        see_also: &[],
    },
    Page {
        path: "schema",
        examples: &[(
            "Saved beside the fleet, where the modelines `datum init` writes look for it",
            "datum schema > datum.schema.json",
        )],
        status: &[],
        env: &[],
        files: &[],
        see_also: &["init"],
    },
    Page {
        path: "secret",
        examples: &[
            (
                "Encrypt a new secret from a file",
                "datum secret encrypt secrets/db.age < db-password.txt",
            ),
            (
                "In CI: fail when a secret's recipients are out of date",
                "datum secret rekey --check",
            ),
        ],
        status: &[],
        env: &[],
        files: &[FLEET_FILE, RECIPIENTS],
        see_also: &[],
    },
    Page {
        path: "secret encrypt",
        examples: &[(
            "Encrypt a password from a file",
            "datum secret encrypt secrets/db.age < db-password.txt",
        )],
        status: &[],
        env: &[],
        files: &[FLEET_FILE, RECIPIENTS],
        see_also: &["secret edit"],
    },
    Page {
        path: "secret edit",
        examples: &[
            (
                "Change a secret in the editor, decrypting with your SSH key",
                "datum secret edit secrets/db.age --identity ~/.ssh/id_ed25519",
            ),
            (
                "With DATUM_IDENTITY naming your key (set once in your shell's profile)",
                "datum secret edit secrets/db.age",
            ),
        ],
        status: &[],
        env: EDITOR,
        files: &[FLEET_FILE, RECIPIENTS],
        see_also: &["secret encrypt"],
    },
    Page {
        path: "secret rekey",
        examples: &[
            (
                "In CI: fail when a secret's recipients are out of date",
                "datum secret rekey --check",
            ),
            (
                "Re-encrypt every secret whose recipients changed",
                "datum secret rekey --identity ~/.ssh/id_ed25519",
            ),
        ],
        status: &[("1", "With --check: a secret needs a rekey.")],
        env: &[],
        files: &[FLEET_FILE, RECIPIENTS],
        see_also: &["secret encrypt"],
    },
    Page {
        path: "rollout",
        examples: &[
            ("The waves and their hosts", "datum rollout plan --hosts"),
            (
                "As committed at HEAD, as JSON",
                "datum rollout plan --rev HEAD --format json",
            ),
        ],
        status: &[],
        env: &[],
        files: &[FLEET_FILE],
        see_also: &["bundle", "agent"],
    },
    Page {
        path: "rollout plan",
        examples: &[
            ("The waves and their hosts", "datum rollout plan --hosts"),
            (
                "As committed at HEAD, as JSON",
                "datum rollout plan --rev HEAD --format json",
            ),
        ],
        status: &[(
            "1",
            "The fleet or its rollout has errors (the plan is printed as far as it goes).",
        )],
        env: &[],
        files: &[FLEET_FILE],
        see_also: &["bundle", "agent"],
    },
    Page {
        path: "rollout status",
        examples: &[
            (
                "The rollout of the commit checked out, from reports collected in reports/",
                "datum rollout status --reports reports",
            ),
            (
                "Of HEAD, as JSON for a pipeline",
                "datum rollout status --reports reports --rev HEAD --format json",
            ),
        ],
        status: &[],
        env: &[],
        files: &[FLEET_FILE, COLLECTED],
        see_also: &["rollout gate", "agent"],
    },
    Page {
        path: "rollout gate",
        examples: &[
            (
                "Stop when any wave has a host that failed or rolled back",
                "datum rollout gate --reports reports --max-failed 0%",
            ),
            (
                "Tolerating one host in ten per wave, as of a given time",
                "datum rollout gate --reports reports --max-failed 10% --at 2026-12-06T10:00:00Z",
            ),
        ],
        status: &[(
            "1",
            "A wave's failed and rolled-back hosts are more than --max-failed of it (or its silent hosts more than --max-silent), or the fleet at the revision has errors.",
        )],
        env: &[],
        files: &[FLEET_FILE, COLLECTED],
        see_also: &["rollout status", "bundle"],
    },
];
