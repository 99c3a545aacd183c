//! Recipients files: reading, writing, and the mistakes refused.

use super::*;

const FP_A: &str = "SHA256:8ymdZ/m23VgRbzCNggxsH5qb2/WlEinvT216ysnvm2w";
const FP_B: &str = "SHA256:e1Nm0jxvGYDY1U1WrawqcyTSaDLNwvyGBHNRGGsDkJg";
const AGE: &str = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p";

fn fp(text: &str) -> Fingerprint {
    text.parse().unwrap()
}

fn host(name: &str) -> Holder {
    Holder::Host(name.to_owned())
}

fn sample() -> Recipients {
    let mut set = Recipients::new();
    // Inserted out of order on purpose: the writer sorts.
    set.insert(host("web-01"), fp(AGE));
    set.insert(host("db-01"), fp(FP_B));
    set.insert(Holder::Admin, fp(FP_B));
    set.insert(host("admin"), fp(FP_A));
    set.insert(Holder::Admin, fp(FP_A));
    set
}

fn parse_err(text: &str) -> RecipientsError {
    Recipients::parse(text).expect_err(text)
}

#[test]
fn writes_sorted_lines_under_a_header() {
    let text = sample().to_text();
    let expected = format!(
        "{HEADER}admin {FP_A}\nadmin {FP_B}\nhost admin {FP_A}\nhost db-01 {FP_B}\nhost web-01 {AGE}\n"
    );
    assert_eq!(text, expected);
}

#[test]
fn round_trips() {
    let set = sample();
    let parsed = Recipients::parse(&set.to_text()).unwrap();
    assert_eq!(parsed, set);
    assert_eq!(parsed.len(), 5);
    assert_eq!(parsed.to_text(), set.to_text());
}

#[test]
fn a_host_named_admin_stays_a_host() {
    let parsed = Recipients::parse(&format!("host admin {FP_A}\n")).unwrap();
    let only = parsed.iter().next().unwrap();
    assert_eq!(only.holder, host("admin"));
}

#[test]
fn insert_reports_repeats() {
    let mut set = Recipients::new();
    assert!(set.insert(Holder::Admin, fp(FP_A)));
    assert!(!set.insert(Holder::Admin, fp(FP_A)));
    assert_eq!(set.len(), 1);
}

#[test]
fn comments_anywhere_and_a_missing_final_newline_are_accepted() {
    let text = format!("# one\nadmin {FP_A}\n# two\nhost a {FP_B}");
    assert_eq!(Recipients::parse(&text).unwrap().len(), 2);
}

#[test]
fn compare_names_the_missing_and_the_extra() {
    let stored = sample();
    let mut wanted = sample();
    assert!(stored.compare(&wanted).is_empty());
    wanted.insert(host("web-02"), fp(FP_A));
    let mut fewer: Recipients = wanted
        .iter()
        .filter(|r| r.holder != host("db-01"))
        .cloned()
        .collect();
    let change = stored.compare(&fewer);
    assert_eq!(
        change.missing,
        [Recipient {
            holder: host("web-02"),
            fingerprint: fp(FP_A)
        }]
    );
    assert_eq!(
        change.extra,
        [Recipient {
            holder: host("db-01"),
            fingerprint: fp(FP_B)
        }]
    );
    assert!(!change.is_empty());
    // A host that changed its key is both: the old key extra, the new missing.
    fewer = stored.clone();
    fewer.0.retain(|r| r.holder != host("web-01"));
    fewer.insert(host("web-01"), fp(FP_B));
    let change = stored.compare(&fewer);
    assert_eq!(change.missing.len(), 1);
    assert_eq!(change.extra.len(), 1);
}

#[test]
fn the_path_sits_beside_the_secret() {
    assert_eq!(
        recipients_path(Path::new("secrets/db.age")),
        Path::new("secrets/db.age.recipients")
    );
}

#[test]
fn errors_carry_line_column_and_text() {
    let text = format!("# header\nadmin {FP_A}\nhost web-01 {FP_B} extra\n");
    let e = parse_err(&text);
    assert_eq!((e.line, e.column), (3, 13 + FP_B.len() + 1));
    assert_eq!(e.kind, RecipientsErrorKind::ExtraField);
    assert_eq!(e.text, format!("host web-01 {FP_B} extra"));
    assert!(e.to_string().starts_with("line 3, column "), "{e}");
    assert!(e.hint().unwrap().contains("datum secret rekey"));
}

#[test]
fn unknown_holder() {
    let e = parse_err(&format!("user alice {FP_A}\n"));
    assert_eq!((e.line, e.column), (1, 1));
    assert_eq!(
        e.kind,
        RecipientsErrorKind::UnknownHolder {
            found: "user".into()
        }
    );
}

#[test]
fn missing_fields() {
    let e = parse_err("host\n");
    assert_eq!(
        e.kind,
        RecipientsErrorKind::MissingField { what: "host name" }
    );
    assert_eq!(e.column, 5);
    let e = parse_err("host web-01\n");
    assert_eq!(
        e.kind,
        RecipientsErrorKind::MissingField {
            what: "fingerprint"
        }
    );
    let e = parse_err("admin\n");
    assert_eq!(
        e.kind,
        RecipientsErrorKind::MissingField {
            what: "fingerprint"
        }
    );
}

#[test]
fn bad_fingerprint_points_at_it() {
    let e = parse_err("host web-01 SHA256:nope\n");
    assert!(
        matches!(e.kind, RecipientsErrorKind::BadFingerprint { .. }),
        "{e:?}"
    );
    assert_eq!(e.column, 13);
}

#[test]
fn whitespace_is_exact() {
    for (text, column) in [
        (format!("admin  {FP_A}\n"), 7),
        (format!("admin\t{FP_A}\n"), 6),
        (format!("admin {FP_A}\r\n"), 7 + FP_A.len()),
        (format!(" admin {FP_A}\n"), 1),
        (format!("admin {FP_A} \n"), 8 + FP_A.len()),
    ] {
        let e = parse_err(&text);
        assert_eq!(e.kind, RecipientsErrorKind::BadWhitespace, "{text:?}");
        assert_eq!(e.column, column, "{text:?}");
    }
}

#[test]
fn blank_lines_are_refused() {
    let e = parse_err(&format!("admin {FP_A}\n\nadmin {FP_B}\n"));
    assert_eq!((e.line, e.kind), (2, RecipientsErrorKind::Blank));
}

#[test]
fn order_and_repeats_are_checked() {
    let e = parse_err(&format!("host web-01 {FP_A}\nadmin {FP_A}\n"));
    assert_eq!(
        (e.line, e.kind),
        (2, RecipientsErrorKind::OutOfOrder { previous_line: 1 })
    );
    let e = parse_err(&format!("# c\nadmin {FP_B}\nadmin {FP_A}\n"));
    assert_eq!(
        (e.line, e.kind),
        (3, RecipientsErrorKind::OutOfOrder { previous_line: 2 })
    );
    let e = parse_err(&format!("admin {FP_A}\nadmin {FP_A}\n"));
    assert_eq!(
        (e.line, e.kind),
        (2, RecipientsErrorKind::Duplicate { first_line: 1 })
    );
}

#[test]
fn a_file_with_no_recipient_is_refused() {
    assert_eq!(parse_err("").kind, RecipientsErrorKind::Empty);
    let e = parse_err("# only\n# comments\n");
    assert_eq!((e.line, e.kind), (2, RecipientsErrorKind::Empty));
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn on_any_text(text in "(\\PC|\n|\r|\t){0,200}") {
            if let Err(e) = Recipients::parse(&text) {
                prop_assert!(e.line >= 1 && e.column >= 1);
            }
        }

        /// Whatever set is written parses back to itself.
        #[test]
        fn round_trips_any_set(
            entries in prop::collection::vec(
                (prop::option::of("[a-z0-9][a-z0-9.-]{0,20}"), 0usize..3),
                1..12,
            )
        ) {
            let fingerprints = [FP_A, FP_B, AGE];
            let set: Recipients = entries
                .into_iter()
                .map(|(name, which)| Recipient {
                    holder: name.map_or(Holder::Admin, Holder::Host),
                    fingerprint: fp(fingerprints[which]),
                })
                .collect();
            prop_assert_eq!(Recipients::parse(&set.to_text()).unwrap(), set);
        }
    }
}

/// The example in docs/secrets.md is a file this parser accepts and this
/// writer would write, so the page cannot drift from the format.
#[test]
fn the_documented_example_is_exact() {
    let page = include_str!("../../../docs/secrets.md");
    let start = page
        .find("# Recipients of the secret")
        .expect("example in docs");
    let end = start + page[start..].find("```").unwrap();
    let example = &page[start..end];
    let parsed = Recipients::parse(example).unwrap();
    assert_eq!(parsed.len(), 4);
    assert_eq!(parsed.to_text(), example);
}
