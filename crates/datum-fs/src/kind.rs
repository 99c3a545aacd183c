//! What kind of thing stands at a path, in the words every message uses:
//! "it is a FIFO, not a regular file", "it is now a directory".

use std::fs::Metadata;
use std::os::unix::fs::FileTypeExt;

/// `a file`, `a directory`, `a symbolic link`, `a FIFO`, `a device`,
/// `a socket` (or `a special file` for anything else).
pub fn kind_of(m: &Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a file"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_word() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| std::fs::symlink_metadata(dir.path().join(name)).unwrap();
        std::fs::write(dir.path().join("f"), "").unwrap();
        std::os::unix::fs::symlink("f", dir.path().join("l")).unwrap();
        nix::unistd::mkfifo(&dir.path().join("p"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(kind_of(&at("f")), "a file");
        assert_eq!(kind_of(&at("l")), "a symbolic link");
        assert_eq!(kind_of(&at("p")), "a FIFO");
        assert_eq!(
            kind_of(&std::fs::metadata(dir.path()).unwrap()),
            "a directory"
        );
        assert_eq!(
            kind_of(&std::fs::metadata("/dev/null").unwrap()),
            "a device"
        );
    }
}
