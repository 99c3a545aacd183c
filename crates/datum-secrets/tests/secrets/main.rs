//! Secrets end to end, with keys made for each test: `ssh-keygen` for SSH
//! keys, the crate itself for native age keys.

mod ciphertext;
mod identities;
mod interop;
mod support;
