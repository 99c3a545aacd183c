//! Paths as fields hold them: absolute paths on the host, and paths
//! relative to the fleet root, normalised so that equal paths compare equal.

/// Why a path is refused. The decoder words each case for the field it
/// reads; the messages here are the plain ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path is not absolute")]
    NotAbsolute,
    #[error("the path is absolute")]
    Absolute,
    #[error("the path goes up through `..`")]
    ParentDir,
    #[error("the path names nothing")]
    Empty,
    #[error("the path holds a NUL byte")]
    Nul,
}

/// Normalises an absolute path: repeated and trailing `/` and `.` components go.
pub fn normalise_abs_path(s: &str) -> Result<String, PathError> {
    if s.contains('\0') {
        return Err(PathError::Nul);
    }
    if !s.starts_with('/') {
        return Err(PathError::NotAbsolute);
    }
    let mut out = String::with_capacity(s.len());
    for part in s.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(PathError::ParentDir),
            p => {
                out.push('/');
                out.push_str(p);
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// Normalises a path relative to the fleet root: `./files/x` is `files/x`.
pub fn normalise_rel_path(s: &str) -> Result<String, PathError> {
    if s.contains('\0') {
        return Err(PathError::Nul);
    }
    if s.starts_with('/') {
        return Err(PathError::Absolute);
    }
    let mut parts = Vec::new();
    for part in s.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(PathError::ParentDir),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(PathError::Empty);
    }
    Ok(parts.join("/"))
}
