//! HTTP servers on 127.0.0.1 for the tests: one that answers each
//! connection with the next canned reply and records what it was sent
//! (over TLS too), and one that serves a directory and takes POSTs.

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;
/// What the scripted [`Server`] does with one connection.
pub enum Reply {
    /// These bytes, then close.
    Send(Vec<u8>),
    /// Read the request, then say nothing until the client hangs up (at
    /// most ten minutes): a client that gives up on its own is the only
    /// way such a request ends soon, and nothing is timed.
    Silent,
}

/// What a client sent: the request head and the body.
pub struct Request {
    pub head: String,
    pub body: Vec<u8>,
}

/// The scripted server: the replies given to [`serve`] or [`serve_tls`],
/// one a connection, in order.
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

/// Serves HTTP: each connection gets the next reply.
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
                Reply::Silent => {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(600)));
                    let mut buf = [0u8; 1024];
                    // End of stream or a reset: the client gave up.
                    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
                }
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

/// Reads one request: its head up to the blank line, then the
/// `Content-Length` bytes of body (less when the peer stops sending).
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

/// A request line and its body.
pub type Line = (String, Vec<u8>);

/// A file server on 127.0.0.1 serving a directory to GETs and answering
/// POSTs with 204, recording every request, until dropped.
pub struct FileServer {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    stop: Arc<AtomicBool>,
    /// Every request received: its request line and body.
    pub requests: Arc<Mutex<Vec<Line>>>,
    handle: Option<JoinHandle<()>>,
}

impl FileServer {
    /// Serves `dir` until the server is dropped.
    pub fn serve(dir: &Path) -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (dir, flag, seen) = (dir.to_owned(), stop.clone(), requests.clone());
        let handle = thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => answer(stream, &dir, &seen),
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        FileServer {
            base,
            stop,
            requests,
            handle: Some(handle),
        }
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// One [`FileServer`] connection: the file a GET names (200), 204 to a
/// POST, 404 to anything else.
fn answer(mut stream: TcpStream, dir: &Path, seen: &Mutex<Vec<Line>>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let Request { head, body } = read_request(&mut stream);
    let line = head.lines().next().unwrap_or_default().to_owned();
    seen.lock().unwrap().push((line.clone(), body));
    let path = line.split(' ').nth(1).unwrap_or("/");
    let reply = if line.starts_with("POST ") {
        b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n".to_vec()
    } else {
        let file = dir.join(path.trim_start_matches('/'));
        match (
            line.starts_with("GET "),
            path.contains(".."),
            fs::read(&file),
        ) {
            (true, false, Ok(body)) => response("200 OK", &body),
            _ => response("404 Not Found", b""),
        }
    };
    let _ = stream.write_all(&reply);
}
