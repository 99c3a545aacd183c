//! A local file's bytes, read whole and bounded in size: a bundle named by
//! a path, the configuration, the CA file. Below `http` (which reads
//! `file://` URLs through it) and `ca`.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Why a local file was not read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is larger than the limit of {limit} bytes", path.display())]
    TooLarge { path: PathBuf, limit: u64 },
}

impl FileError {
    /// What the operating system said, or that the file is too large.
    pub fn into_io(self) -> io::Error {
        match self {
            FileError::Read { source, .. } => source,
            other => io::Error::other(other.to_string()),
        }
    }
}

/// The bytes of a local file, at most `max` of them.
pub fn read_file(path: &Path, max: u64) -> Result<Vec<u8>, FileError> {
    let fail = |source| FileError::Read {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(fail)?;
    let too_large = || FileError::TooLarge {
        path: path.to_owned(),
        limit: max,
    };
    if file.metadata().map_err(fail)?.len() > max {
        return Err(too_large());
    }
    // The length can change under us (or lie, for a device): read one
    // byte past the limit to know.
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(fail)?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}
