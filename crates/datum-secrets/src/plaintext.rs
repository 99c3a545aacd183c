//! Decrypted bytes, held so they do not outlive their use: the memory is
//! overwritten with zeros when the value is dropped, and nothing formats
//! the bytes by accident. What age decrypts (a secret, or a passphrase-
//! protected identity file) is read into such memory here.

use std::fmt;

use zeroize::Zeroizing;

/// The content of a decrypted secret.
///
/// There is no `Display`, `Clone` or `Serialize`; `Debug` shows the length
/// only, so a `{:?}` in a log or an error cannot leak the secret. Read the
/// bytes with [`Plaintext::as_bytes`], and copy them only into the target.
pub struct Plaintext(Zeroizing<Vec<u8>>);

impl Plaintext {
    /// Takes ownership of `bytes`, which are zeroed when the plaintext is
    /// dropped.
    pub fn new(bytes: Vec<u8>) -> Plaintext {
        Plaintext(Zeroizing::new(bytes))
    }

    /// Reads everything `input` gives, up to `limit` bytes (`None` past
    /// it). The buffer grows by copying into a larger zeroized one, so no
    /// freed allocation keeps a copy of what was read.
    pub fn read_from(
        mut input: impl std::io::Read,
        limit: usize,
    ) -> std::io::Result<Option<Plaintext>> {
        let mut buffer = Zeroizing::new(vec![0u8; 4096]);
        let mut filled = 0;
        loop {
            if filled == buffer.len() {
                if buffer.len() > limit {
                    return Ok(None);
                }
                let mut bigger = Zeroizing::new(vec![0u8; buffer.len() * 2]);
                bigger[..filled].copy_from_slice(&buffer[..filled]);
                buffer = bigger;
            }
            match input.read(&mut buffer[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if filled > limit {
            return Ok(None);
        }
        buffer.truncate(filled);
        Ok(Some(Plaintext(buffer)))
    }

    /// The bytes, still zeroed when dropped, for a caller that keeps them
    /// in its own type.
    pub fn into_zeroizing(self) -> Zeroizing<Vec<u8>> {
        self.0
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Plaintext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Plaintext(<{} bytes, redacted>)", self.0.len())
    }
}

/// Reads an age payload from `reader`, decrypting a ciphertext of
/// `ciphertext_len` bytes, into zeroized memory. Age's payload is never
/// longer than its ciphertext, so a buffer that size never grows; growing
/// would leave an unzeroed copy behind.
pub(crate) fn read_payload(
    reader: &mut impl std::io::Read,
    ciphertext_len: usize,
) -> std::io::Result<Zeroizing<Vec<u8>>> {
    let mut buffer = Zeroizing::new(vec![0; ciphertext_len]);
    let mut filled = 0;
    loop {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        if filled == buffer.len() {
            // Full, yet no end seen: only a broken stream does this.
            return Err(std::io::Error::other("the payload is longer than the file"));
        }
    }
    buffer.truncate(filled);
    Ok(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_the_length_and_never_the_bytes() {
        let secret = Plaintext::new(b"hunter2-s3cr3t".to_vec());
        let shown = format!("{secret:?} {secret:#?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(!shown.contains("104"), "no byte values either: {shown}");
        assert!(shown.contains("14 bytes"), "{shown}");
    }

    #[test]
    fn reads_a_stream_whole_and_refuses_past_the_limit() {
        let data: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
        let read = Plaintext::read_from(&data[..], 20_000).unwrap().unwrap();
        assert_eq!(read.as_bytes(), &data[..]);
        assert!(Plaintext::read_from(&data[..], 9_999).unwrap().is_none());
        assert!(
            Plaintext::read_from(&b""[..], 10)
                .unwrap()
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn gives_the_bytes_it_was_made_from() {
        let secret = Plaintext::new(vec![0, 1, 2, 255]);
        assert_eq!(secret.as_bytes(), &[0, 1, 2, 255]);
        assert_eq!(secret.len(), 4);
        assert!(!secret.is_empty());
        assert!(Plaintext::new(Vec::new()).is_empty());
    }
}
