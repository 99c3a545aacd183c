//! A one-thread HTTP server on 127.0.0.1 that answers each connection with
//! the next canned reply and records what it was sent; over TLS too.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread::{self, JoinHandle};
use std::time::Duration;

pub enum Reply {
    /// These bytes, then close.
    Send(Vec<u8>),
    /// Read the request, then say nothing for this long.
    Stall(Duration),
}

/// What a client sent: the request head and the body.
pub struct Request {
    pub head: String,
    pub body: Vec<u8>,
}

pub struct Server {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    handle: JoinHandle<Vec<Request>>,
}

impl Server {
    /// Every request received, once all replies are given.
    pub fn requests(self) -> Vec<Request> {
        self.handle.join().unwrap()
    }
}

pub fn serve(replies: Vec<Reply>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handle = thread::spawn(move || {
        let mut seen = Vec::new();
        for reply in replies {
            let (mut stream, _) = listener.accept().unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            seen.push(read_request(&mut stream));
            match reply {
                Reply::Send(bytes) => {
                    let _ = stream.write_all(&bytes);
                }
                Reply::Stall(d) => thread::sleep(d),
            }
        }
        seen
    });
    Server { base, handle }
}

/// A full response with a `Content-Length`.
pub fn response(status: &str, body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend(body);
    r
}

/// A base URL where nothing listens: a port bound, then released.
pub fn down() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

/// Serves HTTPS with the certificate chain `chain` (DER, the server's
/// first) and its PKCS#8 `key`: each connection gets the next reply. A
/// client that refuses the certificate ends its connection in the
/// handshake; that connection is not recorded, and its reply is used up.
pub fn serve_tls(chain: Vec<Vec<u8>>, key: Vec<u8>, replies: Vec<Vec<u8>>) -> Server {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            chain.into_iter().map(CertificateDer::from).collect(),
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key)),
        )
        .unwrap();
    let config = std::sync::Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("https://{}", listener.local_addr().unwrap());
    let handle = thread::spawn(move || {
        let mut seen = Vec::new();
        for reply in replies {
            let (tcp, _) = listener.accept().unwrap();
            tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let conn = rustls::ServerConnection::new(config.clone()).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            let request = read_request(&mut tls);
            if request.head.is_empty() {
                continue;
            }
            seen.push(request);
            let _ = tls.write_all(&reply);
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
        seen
    });
    Server { base, handle }
}

fn read_request(stream: &mut impl Read) -> Request {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break bytes.len(),
            Ok(n) => bytes.extend(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&bytes[..head_end]).into_owned();
    let length = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = bytes[head_end..].to_vec();
    while body.len() < length {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => body.extend(&buf[..n]),
        }
    }
    Request { head, body }
}
