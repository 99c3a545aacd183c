//! Datum's benchmark support: a deterministic fleet generator ([`generator`]),
//! fleets shaped to be slow or large ([`hostile`]), and
//! the parse floor ([`floor`]), the time it takes only to read and parse a
//! fleet's files with the YAML parser Datum itself uses.
#![forbid(unsafe_code)]

pub mod floor;
pub mod generator;
pub mod hostile;
