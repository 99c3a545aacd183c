//! `ca_file`: the PEM file of CA certificates the agent trusts for HTTPS
//! instead of the platform's roots, read and checked whole (every
//! certificate a usable trust anchor) before any connection is made.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datum_core::hint::Hinted;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use ureq::tls::{Certificate, PemItem, parse_pem};

use crate::file;

/// A CA file is a few certificates; a system bundle is under 300 KiB.
pub(crate) const MAX_SIZE: u64 = 4 << 20;

/// The CA certificates of one `ca_file`.
#[derive(Clone)]
pub struct CaFile {
    path: PathBuf,
    certs: Arc<Vec<Certificate<'static>>>,
}

impl std::fmt::Debug for CaFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaFile")
            .field("path", &self.path)
            .field("certificates", &self.certs.len())
            .finish()
    }
}

impl PartialEq for CaFile {
    fn eq(&self, other: &CaFile) -> bool {
        self.path == other.path
            && self.certs.len() == other.certs.len()
            && self
                .certs
                .iter()
                .zip(other.certs.iter())
                .all(|(a, b)| a.der() == b.der())
    }
}

impl Eq for CaFile {}

/// Why a `ca_file` cannot be used. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum CaError {
    #[error("cannot read the CA file {}: {why}", path.display())]
    Read { path: PathBuf, why: String },
    #[error("the CA file {} is not PEM: {why}", path.display())]
    Pem { path: PathBuf, why: String },
    #[error("the CA file {} holds no certificate", path.display())]
    Empty { path: PathBuf },
    #[error("certificate {number} of the CA file {} cannot be trusted as a CA: {why}", path.display())]
    Unusable {
        path: PathBuf,
        number: usize,
        why: String,
    },
}

impl Hinted for CaError {
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(
            "`ca_file` in the agent configuration names a PEM file of one or more CA certificates (`-----BEGIN CERTIFICATE-----` blocks)",
        ))
    }
}

impl CaFile {
    /// Reads the CA file at `path` (already under the agent's root).
    pub fn read(path: &Path) -> Result<CaFile, CaError> {
        let bytes = file::read_file(path, MAX_SIZE).map_err(|e| CaError::Read {
            path: path.to_owned(),
            why: e.into_io().to_string(),
        })?;
        CaFile::parse(path, &bytes)
    }

    /// The certificates of `bytes`, the content of the CA file `path`:
    /// every PEM block must decode, and every certificate must be one a
    /// CA could sign with. Other PEM blocks (a private key) are refused.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<CaFile, CaError> {
        let mut certs = Vec::new();
        for item in parse_pem(bytes) {
            match item {
                Ok(PemItem::Certificate(c)) => certs.push(c),
                Ok(_) => {
                    return Err(CaError::Pem {
                        path: path.to_owned(),
                        why: "it holds a private key: a CA file holds certificates only".into(),
                    });
                }
                Err(e) => {
                    return Err(CaError::Pem {
                        path: path.to_owned(),
                        why: e.to_string(),
                    });
                }
            }
        }
        if certs.is_empty() {
            return Err(CaError::Empty {
                path: path.to_owned(),
            });
        }
        let mut store = RootCertStore::empty();
        for (i, c) in certs.iter().enumerate() {
            store
                .add(CertificateDer::from(c.der().to_vec()))
                .map_err(|e| CaError::Unusable {
                    path: path.to_owned(),
                    number: i + 1,
                    why: e.to_string(),
                })?;
        }
        Ok(CaFile {
            path: path.to_owned(),
            certs: Arc::new(certs),
        })
    }

    /// The certificates, as the HTTP client takes them.
    pub(crate) fn certificates(&self) -> Arc<Vec<Certificate<'static>>> {
        Arc::clone(&self.certs)
    }
}
