//! Any bytes, read as a fleet (`datum_core::fuzz`), load without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| datum_core::fuzz::load(data));
