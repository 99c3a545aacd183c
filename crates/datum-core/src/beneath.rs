//! Opening a `source` payload confined beneath the fleet root on disk:
//! by the kernel (`openat2`, `RESOLVE_BENEATH`) where it can, else by
//! resolving and checking where the open descriptor really is.

use std::fs;
use std::path::Path;

/// Why a path could not be opened beneath a directory.
#[derive(Debug)]
pub(crate) enum Beneath {
    /// It leads out, by `..`, an absolute path or a symbolic link.
    Escapes,
    Io(std::io::Error),
}

/// Opens `path` for reading, resolved by the kernel beneath `root`: `..`
/// and symbolic links may move about inside the root but never out, and
/// the check and the open are one step. Devices and FIFOs are opened
/// without blocking so the caller can refuse them.
#[cfg(target_os = "linux")]
pub(crate) fn open_beneath(root: &Path, path: &str) -> Result<fs::File, Beneath> {
    use nix::errno::Errno;
    use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2};
    let dir = fs::File::open(root).map_err(Beneath::Io)?;
    let how = OpenHow::new()
        .flags(OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NOCTTY | OFlag::O_NONBLOCK)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_MAGICLINKS);
    // The kernel answers EAGAIN when a rename raced the resolution and it
    // cannot be sure `..` stayed inside; asking again is the documented cure.
    let mut tries = 0;
    loop {
        match openat2(&dir, path, how) {
            Ok(fd) => return Ok(fs::File::from(fd)),
            Err(Errno::EAGAIN) if tries < 64 => tries += 1,
            Err(Errno::EXDEV) => return Err(Beneath::Escapes),
            // Kernels before 5.6, and sandboxes that filter the call.
            Err(Errno::ENOSYS | Errno::EPERM) => return open_checked(root, path),
            Err(e) => return Err(Beneath::Io(e.into())),
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn open_beneath(root: &Path, path: &str) -> Result<fs::File, Beneath> {
    open_checked(root, path)
}

/// Without `openat2`: resolve the path, refuse it outside the root, open
/// the result without following a final link, then check where the open
/// descriptor really is (a link swapped in between shows there).
pub(crate) fn open_checked(root: &Path, path: &str) -> Result<fs::File, Beneath> {
    let real = fs::canonicalize(root.join(path)).map_err(Beneath::Io)?;
    if !real.starts_with(root) {
        return Err(Beneath::Escapes);
    }
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK);
    }
    let file = options.open(&real).map_err(Beneath::Io)?;
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let opened =
            fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).map_err(Beneath::Io)?;
        if !opened.starts_with(root) {
            return Err(Beneath::Escapes);
        }
    }
    Ok(file)
}
