use datum_core::hint::Hinted as _;
use std::time::Duration;

use datum_agent::http::{self, FetchError, FetchOptions, Location};

use datum_testkit::http::{Reply, down, response, serve};

fn opts(max_bytes: u64) -> FetchOptions {
    FetchOptions {
        max_bytes,
        timeout: Duration::from_secs(5),
        env_proxy: false,
        ca: None,
    }
}

#[test]
fn a_bundle_is_fetched_from_the_hosts_url() {
    let server = serve(vec![Reply::Send(response("200 OK", b"bundle bytes"))]);
    let url = http::expand(
        &format!("{}/bundles/{{host}}.bundle", server.base),
        "web-001",
    )
    .unwrap();
    assert_eq!(http::fetch(&url, &opts(1024)).unwrap(), b"bundle bytes");
    let requests = server.requests();
    assert!(
        requests[0]
            .head
            .starts_with("GET /bundles/web-001.bundle HTTP/1.1\r\n"),
        "{}",
        requests[0].head
    );
    assert!(
        requests[0].head.contains("datum-agent/"),
        "{}",
        requests[0].head
    );
}

#[test]
fn a_missing_bundle_names_the_status() {
    let server = serve(vec![Reply::Send(response(
        "404 Not Found",
        b"no such file",
    ))]);
    let url = format!("{}/bundles/db-1.bundle", server.base);
    let err = http::fetch(&url, &opts(1024)).unwrap_err();
    assert!(
        matches!(err, FetchError::Status { status: 404, .. }),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        format!("GET {url}: the server answered 404")
    );
    assert!(err.hint().unwrap().contains("nothing for this host"));
}

#[test]
fn a_server_that_is_down_is_a_connection_error() {
    let url = format!("{}/x.bundle", down());
    let err = http::fetch(&url, &opts(1024)).unwrap_err();
    assert!(matches!(err, FetchError::Connect { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("GET {url}: cannot connect: connection refused")
    );
    assert!(err.hint().is_some());
}

#[test]
fn a_body_over_the_cap_is_refused() {
    let big = vec![b'x'; 2048];
    let mut no_length = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec();
    no_length.extend(&big);
    let server = serve(vec![
        Reply::Send(no_length.clone()),
        Reply::Send(no_length),
        Reply::Send(response("200 OK", &big)),
        Reply::Send(response("200 OK", &big)),
    ]);
    let url = format!("{}/big", server.base);
    for max in [1024, 2047] {
        let err = http::fetch(&url, &opts(max)).unwrap_err();
        assert!(
            matches!(err, FetchError::TooLarge { limit, .. } if limit == max),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("{url} is larger than the limit of {max} bytes")
        );
    }
    // Exactly at the cap is fine, with a length or without.
    assert_eq!(http::fetch(&url, &opts(2048)).unwrap().len(), 2048);
    assert_eq!(http::fetch(&url, &opts(2048)).unwrap().len(), 2048);
}

/// A `Content-Length` over the cap is refused on the headers alone: the
/// server sends no body at all, so a client that tried to read one would
/// fail on the cut connection instead.
#[test]
fn an_announced_length_over_the_cap_is_refused_before_reading() {
    let head = b"HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\nConnection: close\r\n\r\n";
    let server = serve(vec![Reply::Send(head.to_vec())]);
    let url = format!("{}/huge", server.base);
    let err = http::fetch(&url, &opts(256 << 20)).unwrap_err();
    assert!(
        matches!(
            err,
            FetchError::Announced {
                length: 10_000_000_000,
                limit: 268_435_456,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{url} announces 10000000000 bytes (Content-Length), over the limit of 268435456 bytes"
        )
    );
    assert!(err.hint().is_some());
}

#[test]
fn a_slow_server_hits_the_timeout() {
    // The server never answers and waits for the client to hang up: only
    // the client's own timeout ends the request soon, and only it gives a
    // Timeout error (a server giving up would close, a different error).
    let server = serve(vec![Reply::Silent]);
    let url = format!("{}/slow", server.base);
    let quick = FetchOptions {
        timeout: Duration::from_millis(300),
        ..opts(1024)
    };
    let err = http::fetch(&url, &quick).unwrap_err();
    assert!(matches!(err, FetchError::Timeout { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("GET {url}: no complete answer within 300ms")
    );
}

#[test]
fn passwords_in_urls_never_reach_messages() {
    let base = down();
    let url = base.replace("http://", "http://deploy:s3cret@");
    let err = http::fetch(&url, &opts(16)).unwrap_err();
    let text = err.to_string();
    assert!(!text.contains("s3cret"), "{text}");
    assert!(text.contains("deploy:***@"), "{text}");
}

#[test]
fn files_are_read_by_url_or_path_with_the_same_cap() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("web 001.bundle");
    std::fs::write(&file, b"local bundle").unwrap();
    let path = file.to_str().unwrap();
    assert_eq!(http::fetch(path, &opts(64)).unwrap(), b"local bundle");
    let url = format!("file://{}", path.replace(' ', "%20"));
    assert_eq!(http::locate(&url).unwrap(), Location::File(file.clone()));
    assert_eq!(http::fetch(&url, &opts(64)).unwrap(), b"local bundle");
    let err = http::fetch(path, &opts(4)).unwrap_err();
    assert!(
        matches!(err, FetchError::TooLarge { limit: 4, .. }),
        "{err:?}"
    );
    let missing = dir.path().join("nope.bundle");
    let err = http::fetch(missing.to_str().unwrap(), &opts(64)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("cannot read {}", missing.display())
    );
    assert!(matches!(err, FetchError::File { .. }));
}

#[test]
fn templates_take_only_the_host_placeholder() {
    let t = "https://config.example.net/{host}/{host}.bundle";
    assert_eq!(
        http::expand(t, "web-001.london").unwrap(),
        "https://config.example.net/web-001.london/web-001.london.bundle"
    );
    assert_eq!(
        http::expand("/srv/bundles/{host}", "db-1").unwrap(),
        "/srv/bundles/db-1"
    );
    let err = http::expand("https://x/{hostname}.bundle", "db-1").unwrap_err();
    assert_eq!(
        err.to_string(),
        "https://x/{hostname}.bundle: unknown placeholder `{hostname}`: the only one is `{host}`"
    );
    for host in ["../etc", "a/b", "Web", "", "a?b"] {
        let err = http::expand("https://x/{host}", host).unwrap_err();
        assert!(matches!(err, FetchError::BadHost { .. }), "{host}: {err}");
    }
}

#[test]
fn unsupported_urls_are_refused_clearly() {
    for (url, want) in [
        ("ftp://x/y", "the scheme `ftp` is not supported"),
        ("file://server/share/x", "a file URL names a local path"),
        ("file:///a%zz", "not followed by two hex digits"),
        ("file:///a%00b", "NUL"),
        ("", "it is empty"),
    ] {
        let err = http::locate(url).unwrap_err().to_string();
        assert!(err.contains(want), "{url}: {err}");
    }
    assert_eq!(
        http::locate("HTTPS://x/y").unwrap(),
        Location::Http("HTTPS://x/y".into())
    );
    assert_eq!(
        http::locate("file://localhost/srv/x").unwrap(),
        Location::File("/srv/x".into())
    );
    assert_eq!(
        http::locate("bundles/x").unwrap(),
        Location::File("bundles/x".into())
    );
}

#[test]
fn json_is_posted_and_failures_named() {
    let server = serve(vec![
        Reply::Send(response("204 No Content", b"")),
        Reply::Send(response("500 Internal Server Error", b"")),
    ]);
    let url = format!("{}/reports", server.base);
    http::post_json(&url, b"{\"a\":1}", &opts(1024)).unwrap();
    let err = http::post_json(&url, b"{}", &opts(1024)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("POST {url}: the server answered 500")
    );
    let requests = server.requests();
    assert!(requests[0].head.starts_with("POST /reports HTTP/1.1\r\n"));
    assert!(
        requests[0]
            .head
            .to_ascii_lowercase()
            .contains("content-type: application/json")
    );
    assert_eq!(requests[0].body, b"{\"a\":1}");
    assert!(http::post_json("/tmp/file", b"{}", &opts(16)).is_err());
}
