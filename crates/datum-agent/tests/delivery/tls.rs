//! HTTPS with a private CA (`ca_file`): a CA and a certificate for
//! 127.0.0.1 made here, a bundle served over TLS, and the agent trusting
//! the CA only when told to.

use datum_core::hint::Hinted as _;
use std::path::Path;
use std::time::Duration;

use datum_agent::ca::{CaError, CaFile};
use datum_agent::cycle::{Run, publish};
use datum_agent::http::{self, FetchError, FetchOptions};
use datum_agent::report::{Mode, Timestamp};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

use datum_testkit::http::{response, serve_tls};

/// A private CA's certificate (PEM), and a server certificate for
/// 127.0.0.1 it signed (DER) with the server's key (PKCS#8 DER).
struct Pki {
    ca_pem: String,
    server_der: Vec<u8>,
    server_key: Vec<u8>,
}

fn ca(name: &str) -> (String, Issuer<'static, KeyPair>) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    (cert.pem(), Issuer::new(params, key))
}

fn pki() -> Pki {
    let (ca_pem, issuer) = ca("Datum test CA");
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "bundles.internal");
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();
    Pki {
        ca_pem,
        server_der: cert.der().to_vec(),
        server_key: key.serialize_der(),
    }
}

fn opts(ca: Option<CaFile>) -> FetchOptions {
    FetchOptions {
        timeout: Duration::from_secs(5),
        env_proxy: false,
        ca,
        ..FetchOptions::default()
    }
}

/// The CA file `pem`, written and read as the agent reads `ca_file`.
fn ca_file(dir: &Path, pem: &str) -> CaFile {
    let path = dir.join("internal-ca.pem");
    std::fs::write(&path, pem).unwrap();
    CaFile::read(&path).unwrap()
}

#[test]
fn a_bundle_over_https_is_fetched_when_ca_file_names_the_servers_ca() {
    let pki = pki();
    let tmp = tempfile::tempdir().unwrap();
    // The CA among other certificates, as in a bundle of several CAs.
    let (other, _) = ca("Another CA");
    let ca = ca_file(tmp.path(), &format!("{other}{}", pki.ca_pem));
    let server = serve_tls(
        vec![pki.server_der],
        pki.server_key,
        vec![response("200 OK", b"bundle over tls")],
    );
    let url = format!("{}/bundles/web-001.bundle", server.base);
    assert_eq!(
        http::fetch(&url, &opts(Some(ca))).unwrap(),
        b"bundle over tls"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0]
            .head
            .starts_with("GET /bundles/web-001.bundle HTTP/1.1\r\n"),
        "{}",
        requests[0].head
    );
}

/// An `https://` URL redirected to `http://` is refused: the plain server
/// is never asked.
#[test]
fn a_redirect_from_https_to_http_is_refused() {
    let pki = pki();
    let tmp = tempfile::tempdir().unwrap();
    let ca = ca_file(tmp.path(), &pki.ca_pem);
    std::fs::write(tmp.path().join("web-001.bundle"), b"plain").unwrap();
    let plain = datum_testkit::http::FileServer::serve(tmp.path());
    let to = format!("{}/web-001.bundle", plain.base);
    let redirect = format!(
        "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    let server = serve_tls(
        vec![pki.server_der],
        pki.server_key,
        vec![redirect.into_bytes()],
    );
    let url = format!("{}/bundles/web-001.bundle", server.base);
    let err = http::fetch(&url, &opts(Some(ca))).unwrap_err();
    assert!(matches!(&err, FetchError::Downgrade { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("{url}: refusing a redirect from https:// to {to}")
    );
    assert!(err.hint().unwrap().contains("https://"));
    assert_eq!(server.requests().len(), 1);
    assert!(plain.requests.lock().unwrap().is_empty());
}

/// A run's report reaches an HTTPS collector of the same CA: `publish`
/// posts with the agent's `ca_file`, and warns without it.
#[test]
fn a_report_is_posted_over_https_with_the_ca_file() {
    let pki = pki();
    let tmp = tempfile::tempdir().unwrap();
    let ca = ca_file(tmp.path(), &pki.ca_pem);
    let server = serve_tls(
        vec![pki.server_der],
        pki.server_key,
        vec![
            response("204 No Content", b""),
            response("204 No Content", b""),
        ],
    );
    let url = format!("{}/reports", server.base);
    std::fs::create_dir(tmp.path().join("root")).unwrap();
    let root = datum_apply::root::Root::at(tmp.path().join("root"));
    let run = || Run {
        host: "web-001".into(),
        started: Timestamp::from(std::time::SystemTime::now()),
        mode: Mode::Bundle,
        source: None,
        commit: None,
        cached_input: false,
        fetch_failed: false,
        notes: Vec::new(),
        summary: None,
        resources: serde_json::Value::Null,
        status: datum_apply::RunStatus::NotApplied,
        facts: serde_json::Value::Null,
        label_mismatches: Vec::new(),
        insecure_allow_unsigned: false,
        input_expires: None,
        refused: None,
        pending: None,
        rolled_back: None,
    };
    let metrics = Path::new("/metrics.prom");
    let (_, _, warnings) = publish(&root, run(), metrics, Some(&url), Some(&ca));
    assert_eq!(warnings, Vec::<String>::new());
    let (_, _, warnings) = publish(&root, run(), metrics, Some(&url), None);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("TLS failed: invalid peer certificate: UnknownIssuer"),
        "{warnings:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].head.starts_with("POST /reports HTTP/1.1\r\n"),
        "{}",
        requests[0].head
    );
}

#[test]
fn without_ca_file_or_with_another_ca_the_server_is_not_trusted() {
    let pki = pki();
    let tmp = tempfile::tempdir().unwrap();
    let (wrong, _) = ca("Datum test CA");
    let wrong = ca_file(tmp.path(), &wrong);
    let server = serve_tls(
        vec![pki.server_der],
        pki.server_key,
        vec![
            response("200 OK", b"never read"),
            response("200 OK", b"never read"),
        ],
    );
    let url = format!("{}/bundles/web-001.bundle", server.base);
    for ca in [None, Some(wrong)] {
        let named = ca.is_some();
        let err = http::fetch(&url, &opts(ca)).unwrap_err();
        assert!(matches!(err, FetchError::Tls { .. }), "{err:?}");
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("GET {url}: TLS failed: invalid peer certificate")),
            "ca_file set: {named}: {text}"
        );
        assert!(
            err.hint().unwrap().contains("`ca_file`"),
            "{:?}",
            err.hint()
        );
    }
    // Neither client got as far as a request.
    assert_eq!(server.requests().len(), 0);
}

#[test]
fn a_ca_file_that_cannot_be_used_says_which_and_why() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("ca.pem");
    let shown = path.display().to_string();
    let missing = CaFile::read(&path).unwrap_err();
    assert!(matches!(missing, CaError::Read { .. }), "{missing:?}");
    assert!(
        missing
            .to_string()
            .starts_with(&format!("cannot read the CA file {shown}: No such file")),
        "{missing}"
    );
    let key = KeyPair::generate().unwrap().serialize_pem();
    for (text, expected) in [
        (
            String::new(),
            format!("the CA file {shown} holds no certificate"),
        ),
        (
            "just text\n".to_owned(),
            format!("the CA file {shown} holds no certificate"),
        ),
        (
            "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n".to_owned(),
            format!("the CA file {shown} is not PEM: "),
        ),
        (
            "-----BEGIN CERTIFICATE-----\nAAAA\n".to_owned(),
            format!("the CA file {shown} is not PEM: "),
        ),
        (
            "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n".to_owned(),
            format!("certificate 1 of the CA file {shown} cannot be trusted as a CA: "),
        ),
        (
            format!("{}{key}", pki().ca_pem),
            format!("the CA file {shown} is not PEM: it holds a private key"),
        ),
    ] {
        std::fs::write(&path, &text).unwrap();
        let err = CaFile::read(&path).unwrap_err();
        assert!(err.to_string().starts_with(&expected), "{text:?}: {err}");
        assert!(
            err.hint()
                .unwrap()
                .contains("PEM file of one or more CA certificates")
        );
    }
}
