//! The YAML reader: places, refusals (anchors, aliases, tags, duplicate keys, depth).

use super::*;

fn codes(diags: &[Diagnostic]) -> Vec<Code> {
    diags.iter().map(|d| d.code).collect()
}

fn parse_ok(text: &str) -> (Vec<Doc<'_>>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let docs = parse(FileId(0), text, &mut diags);
    (docs, diags)
}

#[test]
fn builds_a_flat_tree() {
    let (docs, diags) = parse_ok("a: 1\nb:\n  - x\n  - {c: d}\n");
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(docs.len(), 1);
    let d = &docs[0];
    let entries: Vec<_> = d.entries(0).collect();
    assert_eq!(entries.len(), 2);
    let (_, b) = entries[1];
    assert_eq!(d.children(b).count(), 2);
    assert_eq!(d.node(b).span.start, Pos { line: 3, col: 3 });
}

#[test]
fn several_documents_and_empty_ones() {
    let (docs, diags) = parse_ok("a: 1\n---\n---\nb: 2\n");
    assert!(diags.is_empty());
    assert_eq!(docs.len(), 3);
    assert!(
        docs[1].nodes.is_empty()
            || matches!(docs[1].nodes[0].kind, Kind::Scalar(ref t, Style::Plain) if t.is_empty())
    );
}

#[test]
fn refuses_duplicates_anchors_aliases_and_tags() {
    let (_, diags) = parse_ok("a: 1\na: 2\n");
    assert_eq!(diags[0].code, Code::YamlDuplicateKey);
    assert_eq!(
        diags[0].primary.as_ref().unwrap().span.start,
        Pos { line: 2, col: 1 }
    );
    let (_, diags) = parse_ok("a: &x 1\nb: *x\n");
    let codes: Vec<_> = diags.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::YamlAnchor, Code::YamlAlias]);
    let (_, diags) = parse_ok("a: !!str 1\n");
    assert_eq!(diags[0].code, Code::YamlTag);
}

#[test]
fn deep_nesting_is_refused_without_recursion() {
    // Block sequences nest on one line: `- - - x`.
    let text = format!("{}x\n", "- ".repeat(10_000));
    let (_, diags) = parse_ok(&text);
    assert_eq!(codes(&diags), [Code::YamlDepth]);
    // Flow collections: the scanner stops them first.
    let text = format!("a: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let (_, diags) = parse_ok(&text);
    assert_eq!(codes(&diags), [Code::YamlDepth]);
}

#[test]
fn malformed_yaml_points_at_the_problem() {
    let (_, diags) = parse_ok("a: [1, 2\nb: 3\n");
    assert_eq!(diags[0].code, Code::YamlSyntax);
}

#[test]
fn parsing_resumes_after_a_broken_document() {
    let (docs, diags) = parse_ok("a: 1\n---\nb: [1\nc: 2\n---\nd: 4\n");
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].primary.as_ref().unwrap().span.start.line, 4);
    // The first document, the broken one, and the one after it.
    assert_eq!(docs.len(), 3);
    assert!(docs[1].broken);
    let last = &docs[2];
    assert!(!last.broken);
    assert_eq!(last.node(1).span.start, Pos { line: 6, col: 1 });
}

#[test]
fn parsing_resumes_after_a_document_whose_error_is_found_past_its_end() {
    // A `[` never closed: the scanner reads on through the `---` and only
    // stops at the end of the text, but the `---` ended the document.
    let text = "a: 1\nb:\n  c: [x\n---\nd: 4\ne: 5\n---\nf: 6\n";
    let (docs, diags) = parse_ok(text);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(docs.len(), 3);
    assert!(docs[0].broken);
    assert!(!docs[1].broken && !docs[2].broken);
    assert_eq!(docs[1].node(1).span.start, Pos { line: 5, col: 1 });
    assert_eq!(docs[2].node(1).span.start, Pos { line: 8, col: 1 });
}

#[test]
fn parsing_resumes_at_the_same_line_whatever_the_line_endings() {
    for eol in ["\n", "\r\n", "\r"] {
        let text = "a: 1\n---\nb: [1\nc: 2\n---\nd: 4\n".replace('\n', eol);
        let (docs, diags) = parse_ok(&text);
        assert_eq!(diags.len(), 1, "{eol:?}");
        assert_eq!(docs.len(), 3, "{eol:?}");
        let last = &docs[2];
        assert_eq!(last.node(1).span.start, Pos { line: 6, col: 1 }, "{eol:?}");
    }
}

#[test]
fn core_schema() {
    assert_eq!(classify_plain("0640"), Plain::Int(640));
    assert_eq!(classify_plain("0o640"), Plain::Int(0o640));
    assert_eq!(classify_plain("-12"), Plain::Int(-12));
    assert_eq!(classify_plain("yes"), Plain::Str);
    assert_eq!(classify_plain("1.10"), Plain::Float);
    assert_eq!(classify_plain("1e3"), Plain::Float);
    assert_eq!(classify_plain("1.2.3"), Plain::Str);
    assert_eq!(classify_plain("~"), Plain::Null);
    assert_eq!(classify_plain("True"), Plain::Bool(true));
    assert_eq!(classify_plain("99999999999999999999"), Plain::BigInt);
    assert_eq!(classify_plain("-9223372036854775808"), Plain::Int(i64::MIN));
    assert_eq!(classify_plain("-9223372036854775809"), Plain::BigInt);
    assert_eq!(classify_plain("."), Plain::Str);
    assert_eq!(classify_plain("-"), Plain::Str);
}
