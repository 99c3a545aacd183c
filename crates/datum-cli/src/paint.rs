//! Colour for the reports people read on a terminal: `diff` and `apply` in
//! red and green, `explain`'s winning value against the ones it displaced,
//! `check`'s headings, counts and hosts.
//!
//! The core draws reports as plain text; painting wraps parts of each line
//! in anstyle styles and never changes a character of it, so stripping the
//! styles gives back exactly what `--color never` prints. A line whose shape
//! is not recognised is left plain. Whether to paint at all is the
//! [`crate::ui::Ui`]'s decision (`--color`, `NO_COLOR`, a terminal).

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};

const ADDED: Style = AnsiColor::Green.on_default();
const REMOVED: Style = AnsiColor::Red.on_default();
const CHANGED: Style = AnsiColor::Yellow.on_default();
const WINNER: Style = AnsiColor::Green.on_default().bold();
const DISPLACED: Style = AnsiColor::Red.on_default();
const HEADING: Style = Style::new().bold();
const FAILURE: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();
const GOOD: Style = AnsiColor::Green.on_default().bold();
const PLACE: Style = AnsiColor::Cyan.on_default();
const QUIET: Style = Style::new().dimmed();
const HINT: Style = AnsiColor::Cyan.on_default().bold();

/// Which report a text is, so its lines are read for what they are.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// `datum diff`'s text report.
    Diff,
    /// `datum explain`'s text.
    Explain,
    /// `datum apply`'s plan and report.
    Apply,
    /// `datum check`: diagnostics and the closing line.
    Check,
}

/// `text` with its parts styled, line by line.
pub fn paint(scheme: Scheme, text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        out.push_str(&paint_line(scheme, body));
        out.push_str(end);
    }
    out
}

/// Paints each whole line written through it, for reports that stream
/// (`apply` prints each resource as it is done).
pub struct PaintLines<W: Write> {
    inner: W,
    scheme: Scheme,
    pending: Vec<u8>,
}

impl<W: Write> PaintLines<W> {
    pub fn new(inner: W, scheme: Scheme) -> PaintLines<W> {
        PaintLines {
            inner,
            scheme,
            pending: Vec::new(),
        }
    }
}

impl<W: Write> Write for PaintLines<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if let Some(last) = self.pending.iter().rposition(|&b| b == b'\n') {
            let rest = self.pending.split_off(last + 1);
            let lines = std::mem::replace(&mut self.pending, rest);
            let text = String::from_utf8_lossy(&lines);
            self.inner.write_all(paint(self.scheme, &text).as_bytes())?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let text = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            self.inner.write_all(paint(self.scheme, &text).as_bytes())?;
        }
        self.inner.flush()
    }
}

/// A report cut short still shows its last line.
impl<W: Write> Drop for PaintLines<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

fn styled(style: Style, text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    format!("{style}{text}{style:#}")
}

fn paint_line(scheme: Scheme, line: &str) -> String {
    match scheme {
        Scheme::Diff => diff_line(line),
        Scheme::Explain => explain_line(line),
        Scheme::Apply => apply_line(line),
        Scheme::Check => check_line(line),
    }
}

/// The line split as indentation and the rest.
fn indented(line: &str) -> (&str, &str) {
    let body = line.trim_start_matches(' ');
    (&line[..line.len() - body.len()], body)
}

/// Splits at the first run of two or more spaces: the cell, the gap and
/// the rest.
fn cell(text: &str) -> Option<(&str, &str, &str)> {
    let at = text.find("  ")?;
    let rest = text[at..].trim_start_matches(' ');
    let gap_end = text.len() - rest.len();
    Some((&text[..at], &text[at..gap_end], rest))
}

/// `error:`, `warning:`, `note:`, `hint:` at the start of `body`, styled.
fn severity(body: &str) -> Option<String> {
    for (word, style) in [
        ("error:", FAILURE),
        ("warning:", WARNING),
        ("= hint:", HINT),
        ("= note:", HEADING),
        ("note:", HEADING),
        ("fixed:", GOOD),
        ("still:", FAILURE),
    ] {
        if let Some(rest) = body.strip_prefix(word) {
            return Some(format!("{}{rest}", styled(style, word)));
        }
    }
    None
}

fn diff_line(line: &str) -> String {
    let (indent, body) = indented(line);
    if body.is_empty() {
        return line.to_owned();
    }
    if let Some(s) = severity(body) {
        return format!("{indent}{s}");
    }
    if indent.is_empty() {
        // Section headings: what happens to the hosts named after them.
        for (start, style) in [
            ("fails to resolve now", FAILURE),
            ("still fails", FAILURE),
            ("removed", REMOVED),
            ("added", ADDED),
            ("resolves now", GOOD),
            ("changed", CHANGED),
        ] {
            if body.starts_with(start) {
                return match body.split_once(": ") {
                    Some((head, hosts)) => {
                        format!("{}: {}", styled(style, head), styled(HEADING, hosts))
                    }
                    None => styled(style, body),
                };
            }
        }
        return line.to_owned();
    }
    match body.as_bytes() {
        [b'+', b' ', ..] => return format!("{indent}{}", styled(ADDED, body)),
        [b'-', b' ', ..] => return format!("{indent}{}", styled(REMOVED, body)),
        [b'~', b' ', ..] => {
            return format!("{indent}{}{}", styled(CHANGED, "~"), &body[1..]);
        }
        _ => {}
    }
    // `field  old → new  layers`.
    if let Some((name, gap, rest)) = cell(body)
        && !name.contains(' ')
        && let Some((old, after)) = rest.split_once(" → ")
    {
        let (new, tail) = match cell(after) {
            Some((new, gap2, layers)) => (new, format!("{gap2}{layers}")),
            None => (after, String::new()),
        };
        return format!(
            "{indent}{name}{gap}{} → {}{tail}",
            styled(REMOVED, old),
            styled(ADDED, new)
        );
    }
    line.to_owned()
}

/// Words that title a section of `explain`.
const EXPLAIN_SECTIONS: &[&str] = &[
    "contributed by",
    "fields",
    "requires",
    "restart_on",
    "labels",
    "layers",
    "contributions",
    "entries",
];

fn explain_line(line: &str) -> String {
    let (indent, body) = indented(line);
    if body.is_empty() {
        return line.to_owned();
    }
    if indent.is_empty() {
        return styled(HEADING, line);
    }
    if indent.len() == 2 && EXPLAIN_SECTIONS.contains(&body) {
        return format!("{indent}{}", styled(QUIET, body));
    }
    if indent.len() != 4 {
        return line.to_owned();
    }
    // `layer  precedence N  value  set|overridden|...  matched ...`
    if let Some((layer, g1, rest)) = cell(body)
        && rest.starts_with("precedence ")
        && let Some((prec, g2, rest)) = cell(rest)
        && let Some((value, g3, rest)) = cell(rest)
        && let Some((role, g4, rest)) = cell(rest)
    {
        let style = match role {
            "set" => WINNER,
            "overridden" => DISPLACED,
            _ => return line.to_owned(),
        };
        return format!(
            "{indent}{layer}{g1}{prec}{g2}{}{g3}{}{g4}{rest}",
            styled(style, value),
            styled(style, role)
        );
    }
    // `field  value  layer  overrides OLD from LAYER`: only rows whose
    // value displaced another are painted.
    if let Some((name, g1, rest)) = cell(body)
        && !name.contains(' ')
        && let Some((value, g2, rest)) = cell(rest)
        && let Some((layer, g3, tail)) = cell(rest)
        && let Some(at) = tail.find("overrides ")
        && (at == 0 || tail[..at].ends_with("; "))
    {
        let end = tail[at..].find("; ").map_or(tail.len(), |e| at + e);
        return format!(
            "{indent}{name}{g1}{}{g2}{}{g3}{}{}{}",
            styled(WINNER, value),
            styled(WINNER, layer),
            &tail[..at],
            styled(DISPLACED, &tail[at..end]),
            &tail[end..]
        );
    }
    line.to_owned()
}

fn apply_line(line: &str) -> String {
    let (indent, body) = indented(line);
    if body.is_empty() {
        return line.to_owned();
    }
    if let Some(s) = severity(body) {
        return format!("{indent}{s}");
    }
    match indent.len() {
        0 => {
            for (start, style) in [
                ("changed:", CHANGED),
                ("would change:", CHANGED),
                ("failed:", FAILURE),
                ("skipped:", QUIET),
                ("summary:", HEADING),
            ] {
                if let Some(rest) = body.strip_prefix(start) {
                    return format!("{}{rest}", styled(style, start));
                }
            }
            line.to_owned()
        }
        // `attribute FROM -> TO`
        2 => match body.split_once(' ') {
            Some((attribute, change)) => match change.rsplit_once(" -> ") {
                Some((from, to)) => format!(
                    "{indent}{attribute} {} -> {}",
                    styled(REMOVED, from),
                    styled(ADDED, to)
                ),
                None => line.to_owned(),
            },
            None => line.to_owned(),
        },
        // A unified diff of a file's content.
        _ if body.starts_with("--- ") || body.starts_with("+++ ") => {
            format!("{indent}{}", styled(HEADING, body))
        }
        _ if body.starts_with("@@") => format!("{indent}{}", styled(PLACE, body)),
        _ if body.starts_with('+') => format!("{indent}{}", styled(ADDED, body)),
        _ if body.starts_with('-') => format!("{indent}{}", styled(REMOVED, body)),
        _ => line.to_owned(),
    }
}

fn check_line(line: &str) -> String {
    let (indent, body) = indented(line);
    if let Some(rest) = body.strip_prefix("checked ")
        && let Some((what, counts)) = rest.split_once(": ")
    {
        let counts: Vec<String> = counts
            .split(", ")
            .map(|c| {
                let style = if c.starts_with("no ") {
                    GOOD
                } else if c.ends_with("error") || c.ends_with("errors") {
                    FAILURE
                } else {
                    WARNING
                };
                styled(style, c)
            })
            .collect();
        return format!("{indent}checked {what}: {}", counts.join(", "));
    }
    if indent.len() == 2 {
        if let Some(rest) = body.strip_prefix("--> ") {
            return format!("{indent}{} {}", styled(PLACE, "-->"), rest);
        }
        if let Some(s) = severity(body) {
            return format!("{indent}{s}");
        }
        // `both layers match hosts a, b at equal precedence`
        for start in ["both layers match host ", "both layers match hosts "] {
            if let Some(rest) = body.strip_prefix(start)
                && let Some(hosts) = rest.strip_suffix(" at equal precedence")
            {
                return format!(
                    "{indent}{start}{} at equal precedence",
                    styled(HEADING, hosts)
                );
            }
        }
        if let Some(rest) = body.strip_prefix("all ")
            && let Some((n, rest)) = rest.split_once(" layers match ")
            && let Some((word, rest)) = rest.split_once(' ')
            && let Some(hosts) = rest.strip_suffix(" at equal precedence")
        {
            return format!(
                "{indent}all {n} layers match {word} {} at equal precedence",
                styled(HEADING, hosts)
            );
        }
    }
    line.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> String {
        anstream::adapter::strip_str(s).to_string()
    }

    /// Painting adds styles and nothing else.
    fn roundtrip(scheme: Scheme, text: &str) -> String {
        let painted = paint(scheme, text);
        assert_eq!(plain(&painted), text);
        painted
    }

    const DIFF: &str = "old: HEAD~1 (d46d9a4)
3 hosts change, 1 added, 0 removed

added
  web-004  environment=production  role=web

fails to resolve now (2 hosts): web-001, web-002
  error: conflicting values for File[nginx-config].mode
    0644  roles/web      precedence 30

changed: web-003
  labels
    environment  staging → production
  layers
    + environments/production
    - environments/staging
  ~ File[nginx-config]  /etc/nginx/nginx.conf
      mode  0640 → 0644  roles/web
      content  \"a  → b\" → \"c\"  base → hosts/x
  + File[sysctl]  /etc/sysctl.d/60-datum.conf  from environments/production
";

    #[test]
    fn diff_paints_what_goes_red_and_what_comes_green() {
        let p = roundtrip(Scheme::Diff, DIFF);
        let green = |s: &str| format!("{ADDED}{s}{ADDED:#}");
        let red = |s: &str| format!("{REMOVED}{s}{REMOVED:#}");
        assert!(p.contains(&format!("    {}\n", green("+ environments/production"))));
        assert!(p.contains(&format!("    {}\n", red("- environments/staging"))));
        assert!(p.contains(&format!(
            "mode  {} → {}  roles/web",
            red("0640"),
            green("0644")
        )));
        assert!(p.contains(&format!(
            "environment  {} → {}",
            red("staging"),
            green("production")
        )));
        assert!(p.contains(&format!(
            "{}: {}",
            styled(CHANGED, "changed"),
            styled(HEADING, "web-003")
        )));
        assert!(p.contains(&format!("  {} conflicting", styled(FAILURE, "error:"))));
        // Lines of no known shape stay plain.
        assert!(p.starts_with("old: HEAD~1 (d46d9a4)\n3 hosts change"));
    }

    #[test]
    fn explain_paints_the_winner_and_what_it_displaced() {
        let text = "File[nginx-config] /etc/nginx/nginx.conf
  fields
    path    /etc/nginx/nginx.conf  roles/web
    mode    0600                   hosts/web-001  agreed by x; overrides 0640 from roles/web, 0644 from base
File[nginx-config].mode 0600
  contributions
    roles/web      precedence 30   0640  overridden  matched role=web            roles/web/layer.yaml:20:11
    hosts/web-001  precedence 100  0600  set         matched datum/host=web-001  hosts/web-001/layer.yaml:12:11
";
        let p = roundtrip(Scheme::Explain, text);
        let win = |s: &str| styled(WINNER, s);
        let lost = |s: &str| styled(DISPLACED, s);
        assert!(p.contains(&format!(
            "mode    {}                   {}  agreed by x; {}\n",
            win("0600"),
            win("hosts/web-001"),
            lost("overrides 0640 from roles/web, 0644 from base")
        )));
        assert!(p.contains("    path    /etc/nginx/nginx.conf  roles/web\n"));
        assert!(p.contains(&format!(
            "{}  {}  matched role=web",
            lost("0640"),
            lost("overridden")
        )));
        assert!(p.contains(&format!(
            "{}  {}         matched datum",
            win("0600"),
            win("set")
        )));
        assert!(p.starts_with(&styled(HEADING, "File[nginx-config] /etc/nginx/nginx.conf")));
    }

    #[test]
    fn apply_paints_changes_and_content_diffs() {
        let text = "applying web-001: 3 resources
changed: File[motd] /etc/motd
  mode 0644 -> 0640
  content
    --- /etc/motd (on disk)
    +++ /etc/motd (manifest)
    @@ -1 +1 @@
    -old
    +new
failed: Service[x] x
  error: no systemctl
summary: 1 changed, 1 failed
";
        let p = roundtrip(Scheme::Apply, text);
        assert!(p.contains(&format!(
            "  mode {} -> {}\n",
            styled(REMOVED, "0644"),
            styled(ADDED, "0640")
        )));
        assert!(p.contains(&format!("    {}\n", styled(ADDED, "+new"))));
        assert!(p.contains(&format!("    {}\n", styled(REMOVED, "-old"))));
        assert!(p.contains(&styled(FAILURE, "failed:")));
        assert!(p.starts_with("applying web-001"));
    }

    #[test]
    fn check_paints_counts_places_and_hosts() {
        let text = "error: conflicting values for File[x].mode
  0640  roles/web      precedence 30
  both layers match hosts web-001, web-002 at equal precedence
  --> roles/web/layer.yaml:15:11
  = hint: give one a higher precedence

checked 2 hosts against 2 layers: 1 error, no warnings
";
        let p = roundtrip(Scheme::Check, text);
        assert!(p.contains(&format!(
            "match hosts {} at equal",
            styled(HEADING, "web-001, web-002")
        )));
        assert!(p.contains(&format!("  {} roles/web", styled(PLACE, "-->"))));
        assert!(p.contains(&format!(
            ": {}, {}\n",
            styled(FAILURE, "1 error"),
            styled(GOOD, "no warnings")
        )));
    }

    #[test]
    fn streamed_lines_are_painted_whole() {
        let mut out = Vec::new();
        {
            let mut w = PaintLines::new(&mut out, Scheme::Apply);
            w.write_all(b"changed: File[a] /a\n  mode 0644").unwrap();
            w.write_all(b" -> 0640\nsummary: 1 changed").unwrap();
            w.flush().unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            plain(&text),
            "changed: File[a] /a\n  mode 0644 -> 0640\nsummary: 1 changed"
        );
        assert!(text.contains(&styled(ADDED, "0640")));
    }
}
