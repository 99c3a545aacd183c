//! Any bytes, read as a fleet, load, check and resolve without panicking;
//! the shared fold equals each host alone; discovery order changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    datum_core::fuzz::load_and_resolve(data);
});
