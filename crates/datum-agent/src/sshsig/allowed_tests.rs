//! Reading allowed-signers files: principals, options, and what is refused.

use std::path::Path;

use super::*;

const ED: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGuptaHXaG5mJDk8PTZloFft1LqC1XyQZfv6UloG3b+n";
const EC: &str = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBE/B4NZSEJdhIxoHpdu9oZWQE+ure9UROqaeFCeMLoQGEa4zM+95vMxDtnvkGmKeu1WklOzh5foDRn4cXkZwxzw=";

fn parse(text: &str) -> Result<AllowedSigners, AllowedSignersError> {
    AllowedSigners::parse(Path::new("signers"), text)
}

fn one(text: &str) -> Entry {
    let signers = parse(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(signers.entries.len(), 1, "{text}");
    signers.entries.into_iter().next().unwrap()
}

/// The line, column and message of a syntax error.
fn syntax(text: &str) -> (usize, usize, String) {
    match parse(text) {
        Err(AllowedSignersError::Syntax {
            line,
            column,
            problem,
            ..
        }) => (line, column, problem.to_string()),
        other => panic!("expected a syntax error for {text:?}, got {other:?}"),
    }
}

#[test]
fn reads_principals_key_and_comment() {
    let entry = one(&format!("ops@example.net {ED} laptop of ops"));
    assert_eq!(entry.principals, "ops@example.net");
    assert_eq!(entry.line, 1);
    assert_eq!(entry.key.algorithm(), ssh_key::Algorithm::Ed25519);
    assert!(entry.options.namespaces.is_none() && !entry.options.cert_authority);
}

#[test]
fn skips_comments_and_blank_lines_and_counts_them() {
    let text = format!("# trusted\n\n   \n  # indented comment\nops {ED}\n\tdev,ci {EC}\n");
    let signers = parse(&text).unwrap();
    let lines: Vec<_> = signers
        .entries
        .iter()
        .map(|e| (e.line, e.principals.as_str()))
        .collect();
    assert_eq!(lines, [(5, "ops"), (6, "dev,ci")]);
    assert_eq!(signers.len(), 2);
    assert!(parse("# nothing\n").unwrap().is_empty());
}

#[test]
fn reads_quoted_principals_with_spaces() {
    let entry = one(&format!("\"Ops Team,ci\" {ED}"));
    assert_eq!(entry.principals, "Ops Team,ci");
}

#[test]
fn reads_every_option() {
    let entry = one(&format!(
        "ops namespaces=\"git,datum-*\",VALID-AFTER=\"20240101Z\",valid-before=\"202701011200Z\" {ED}"
    ));
    assert_eq!(entry.options.namespaces.as_deref(), Some("git,datum-*"));
    assert_eq!(entry.options.valid_after, Some(1_704_067_200));
    assert_eq!(entry.options.valid_before, Some(1_798_804_800));
    assert!(entry.allows_namespace("datum-bundle"));
    assert!(!entry.allows_namespace("file"));
    let ca = one(&format!("*@example.net cert-authority {ED}"));
    assert!(ca.options.cert_authority);
}

#[test]
fn option_values_may_hold_spaces_and_commas() {
    let entry = one(&format!("ops namespaces=\"a b,c\" {ED}"));
    assert_eq!(entry.options.namespaces.as_deref(), Some("a b,c"));
}

#[test]
fn tabs_and_runs_of_spaces_separate_fields() {
    let entry = one(&format!(
        "ops\t\tnamespaces=\"git\"   {}",
        ED.replace(' ', "\t ")
    ));
    assert_eq!(entry.key.algorithm(), ssh_key::Algorithm::Ed25519);
}

#[test]
fn errors_point_at_the_line_and_column() {
    assert_eq!(
        syntax(&format!("# c\nops {ED}\nops frobnicate=\"x\" {ED}")),
        (3, 5, "unknown option `frobnicate`".to_owned())
    );
    assert_eq!(
        syntax(&format!("ops namespaces=\"git\",namespaces=\"x\" {ED}")),
        (1, 22, "option `namespaces` is given twice".to_owned())
    );
    assert_eq!(
        syntax("ops"),
        (
            1,
            4,
            "the line ends before the signer's public key".to_owned()
        )
    );
    assert_eq!(
        syntax("\"ops ssh-ed25519 AAAA"),
        (1, 1, "this quote is never closed".to_owned())
    );
    assert_eq!(
        syntax(&format!("\"ops\"x {ED}")),
        (1, 6, "expected a space or `,` here, found `x`".to_owned())
    );
    assert_eq!(
        syntax(&format!("\"\" {ED}")),
        (1, 1, "the principals are empty".to_owned())
    );
}

#[test]
fn columns_count_characters_not_bytes() {
    let (_, column, _) = syntax(&format!("Zoë bogus=\"1\" {ED}"));
    assert_eq!(column, 5);
}

#[test]
fn refuses_option_misuse() {
    let cases = [
        (
            "ops namespaces ssh-ed25519 AAAA",
            "option `namespaces` needs a quoted value",
        ),
        (
            "ops namespaces=git ssh-ed25519 AAAA",
            "option `namespaces` needs a quoted value",
        ),
        (
            "ops cert-authority=\"yes\" ssh-ed25519 AAAA",
            "option `cert-authority` takes no value",
        ),
        (
            "ops namespaces=\"git,\" ssh-ed25519 AAAA",
            "`namespaces` has an empty entry",
        ),
        (
            "ops namespaces=\"git\"",
            "the line ends before the signer's public key",
        ),
        (
            "ops namespaces=\"git\";x ssh-ed25519 AAAA",
            "expected a space or `,` here, found `;`",
        ),
    ];
    for (text, expected) in cases {
        let (_, _, message) = syntax(text);
        assert!(message.starts_with(expected), "{text}: {message}");
    }
}

#[test]
fn refuses_times_that_are_local_malformed_or_never_valid() {
    let (_, column, message) = syntax(&format!("ops valid-after=\"20240101\" {ED}"));
    assert_eq!(column, 18, "points at the value");
    assert!(message.contains("no trailing Z"), "{message}");
    let (_, _, message) = syntax(&format!("ops valid-before=\"2024-01-01Z\" {ED}"));
    assert!(message.contains("expected YYYYMMDD"), "{message}");
    let (_, _, message) = syntax(&format!("ops valid-before=\"20240230Z\" {ED}"));
    assert!(message.contains("no such date"), "{message}");
    let (_, _, message) = syntax(&format!(
        "ops valid-after=\"20250101Z\",valid-before=\"20240101Z\" {ED}"
    ));
    assert!(message.contains("never valid"), "{message}");
}

#[test]
fn refuses_keys_that_do_not_parse() {
    let (line, column, message) = syntax("ops ssh-ed25519 AAAAnotbase64!!");
    assert_eq!((line, column), (1, 5));
    assert!(
        message.starts_with("cannot read the public key"),
        "{message}"
    );
    let (_, _, message) = syntax("ops ssh-ed25519");
    assert_eq!(message, "the line ends before the signer's public key");
    // The type in front must agree with the key inside the base64.
    let data = ED.split_once(' ').unwrap().1;
    let (_, _, message) = syntax(&format!("ops ssh-rsa {data}"));
    assert!(
        message.starts_with("cannot read the public key"),
        "{message}"
    );
}

#[test]
fn the_message_shows_the_file_and_the_line_and_a_hint() {
    let err = parse(&format!("ops {ED}\nops bogus=\"1\" {ED}")).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("signers:2:5: unknown option `bogus`\n"),
        "{text}"
    );
    assert!(
        text.ends_with(&format!("\n    2 | ops bogus=\"1\" {ED}")),
        "{text}"
    );
    assert!(
        err.hint()
            .unwrap()
            .starts_with("the options are cert-authority"),
        "{:?}",
        err.hint()
    );
    // A bare word where the key type goes reads as a key that is not one.
    let err = parse(&format!("ops bogus {ED}")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("signers:1:5: cannot read the public key"),
        "{err}"
    );
    assert!(
        err.hint().unwrap().contains(".pub file"),
        "{:?}",
        err.hint()
    );
}

#[test]
fn a_missing_file_is_a_read_error_naming_it() {
    let err = AllowedSigners::read(Path::new("/nonexistent/allowed_signers")).unwrap_err();
    assert!(matches!(err, AllowedSignersError::Read { .. }));
    assert!(
        err.to_string().contains("/nonexistent/allowed_signers"),
        "{err}"
    );
    assert!(std::error::Error::source(&err).is_some());
}
