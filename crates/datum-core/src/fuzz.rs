//! The fuzzing harness: one input format and the properties checked on it,
//! shared by the `cargo fuzz` targets under `fuzz/` and by the property
//! tests that run the same checks on every `cargo test`.
//!
//! An input is a whole fleet as bytes: files separated by a NUL byte, each
//! file a path, a newline, then its contents. Bytes that do not spell a
//! usable path still become a file (`fNN.yaml`), so every input loads.
//!
//! The properties, whatever the bytes: loading and resolving do not panic;
//! every diagnostic renders with its source line; each manifest serialises;
//! resolving the whole fleet at once gives each host what resolving it
//! alone gives; and loading the files in reverse order gives the same text.

use crate::check;
use crate::emit;
use crate::fleet::HostId;
use crate::loader;
use crate::manifest::Manifest;
use crate::reader::{MemReader, Reader};
use crate::resolve::resolve_all;

/// At most this many files are taken from one input: the fuzzer looks for
/// shapes, not sizes, and the hostile sizes have their own benchmarks.
const MAX_FILES: usize = 64;

/// The files of a fleet spelled by `data`, in the order given.
pub fn fleet_from_bytes(data: &[u8]) -> MemReader {
    let mut reader = MemReader::new();
    for (i, chunk) in data.split(|&b| b == 0).take(MAX_FILES).enumerate() {
        let (name, body) = match chunk.iter().position(|&b| b == b'\n') {
            Some(n) => (&chunk[..n], &chunk[n + 1..]),
            None => (&[][..], chunk),
        };
        let path = usable_path(name).unwrap_or_else(|| format!("f{i:02}.yaml"));
        reader.add(&path, body.to_vec());
    }
    reader
}

/// The bytes [`fleet_from_bytes`] reads back as these files.
pub fn bytes_from_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, (path, body)) in files.into_iter().enumerate() {
        if i > 0 {
            out.push(0);
        }
        out.extend_from_slice(path.as_bytes());
        out.push(b'\n');
        out.extend(body.iter().filter(|&&b| b != 0));
    }
    out
}

/// A relative path of plain components, or nothing.
fn usable_path(name: &[u8]) -> Option<String> {
    let name = std::str::from_utf8(name).ok()?;
    let plain = |c: &str| {
        !c.is_empty()
            && c != "."
            && c != ".."
            && c.chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "._-".contains(ch))
    };
    (name.len() <= 100 && name.split('/').all(plain)).then(|| name.to_owned())
}

/// Loads the fleet `data` spells and renders every diagnostic: must not panic.
pub fn load(data: &[u8]) {
    let reader = fleet_from_bytes(data);
    let fleet = loader::load(&reader).expect("a reader in memory cannot fail");
    let mut sink = Vec::new();
    for d in &fleet.diagnostics {
        crate::present::diagnostic::write(d, &fleet.files, &mut sink)
            .expect("rendering to memory cannot fail");
    }
}

/// Loads, checks and resolves the fleet `data` spells, and returns every
/// host's manifest and every diagnostic as one text. Panics when one of the
/// module's properties does not hold.
pub fn load_and_resolve(data: &[u8]) -> String {
    let reader = fleet_from_bytes(data);
    let text = render(&reader);
    let mut reversed = reader.clone();
    let mut order = reader.paths().to_vec();
    order.reverse();
    reversed.set_order(order);
    assert_eq!(
        render(&reversed),
        text,
        "discovery order changed the output"
    );
    text
}

fn render(reader: &dyn Reader) -> String {
    let fleet = loader::load(reader).expect("a reader in memory cannot fail");
    let all = resolve_all(&fleet);
    let report = check::check(&fleet, &all);
    let mut out = Vec::new();
    for d in &report.diagnostics {
        crate::present::diagnostic::write(d, &fleet.files, &mut out)
            .expect("rendering to memory cannot fail");
    }
    for h in 0..fleet.hosts.len() as u32 {
        let host = HostId(h);
        let alone = crate::resolve::resolve_host(&fleet, host);
        match all.of(host) {
            Some(shared) => {
                assert_eq!(shared.problems, alone.problems, "shared fold differs");
                assert_eq!(shared.vars, alone.vars, "shared vars differ");
                assert_eq!(shared.rendered, alone.rendered, "shared rendering differs");
                assert_eq!(
                    format!("{:?}", shared.resources),
                    format!("{:?}", alone.resources),
                    "shared fold differs"
                );
                if shared.is_ok() {
                    let tree = Manifest::new(&fleet, host, shared).tree();
                    emit::write_yaml(&mut out, &tree).expect("writing to memory");
                    emit::write_json(&mut out, &tree).expect("writing to memory");
                }
            }
            None => out.extend_from_slice(b"held back\n"),
        }
    }
    String::from_utf8(out).expect("output is UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_round_trip_through_bytes() {
        let bytes = bytes_from_files([
            ("datum.yaml", &b"datum: v1alpha1\n"[..]),
            ("hosts/a.yaml", &b"x\0y"[..]),
        ]);
        let reader = fleet_from_bytes(&bytes);
        assert_eq!(reader.paths(), ["datum.yaml", "hosts/a.yaml"]);
        assert_eq!(reader.read("hosts/a.yaml", u64::MAX).unwrap(), b"xy");
    }

    #[test]
    fn unusable_paths_get_a_name_of_their_own() {
        let reader = fleet_from_bytes(b"../up\nx\0/abs\ny\0no newline");
        assert_eq!(reader.paths(), ["f00.yaml", "f01.yaml", "f02.yaml"]);
    }
}
