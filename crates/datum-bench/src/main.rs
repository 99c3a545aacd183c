//! `datum-bench`: generates fleets and measures the parse floor.
//!
//! ```text
//! datum-bench gen --hosts 10000 --seed 1 --out /tmp/fleet-10k [--conflicts 3]
//! datum-bench floor /tmp/fleet-10k [--serial] [--repeat 5]
//! datum-bench hostile --out /tmp/hostile [--shape overlap]
//! ```
#![forbid(unsafe_code)]

/// mimalloc: the loader and resolver allocate many small values from
/// several threads, where glibc's allocator spends more time than parsing.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use datum_bench::{floor, generator, hostile};
use datum_core::reader::DirReader;

#[derive(Debug, Parser)]
#[command(name = "datum-bench")]
enum Cli {
    /// Write a generated fleet into a directory.
    Gen {
        #[arg(long)]
        hosts: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Layers that conflict with a role layer on the hosts they match.
        #[arg(long, default_value_t = 0)]
        conflicts: usize,
        #[arg(long)]
        out: PathBuf,
    },
    /// Time each phase of a check: load, resolve, report (medians).
    Phases {
        fleet: PathBuf,
        #[arg(long, default_value_t = 5)]
        repeat: usize,
    },
    /// Write the hostile shapes (see `hostile`), each into `OUT/<shape>`.
    Hostile {
        #[arg(long)]
        out: PathBuf,
        /// Only this shape.
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(hostile::SHAPES))]
        shape: Option<String>,
    },
    /// Read and parse every document file of a fleet; print the median time in seconds.
    Floor {
        fleet: PathBuf,
        /// Parse on one thread instead of the rayon pool.
        #[arg(long)]
        serial: bool,
        #[arg(long, default_value_t = 5)]
        repeat: usize,
    },
}

fn main() -> ExitCode {
    match Cli::parse() {
        Cli::Gen {
            hosts,
            seed,
            conflicts,
            out,
        } => generate(
            &generator::Options {
                hosts,
                seed,
                conflicts,
            },
            &out,
        ),
        Cli::Hostile { out, shape } => write_hostile(&out, shape.as_deref()),
        Cli::Phases { fleet, repeat } => phases(&fleet, repeat),
        Cli::Floor {
            fleet,
            serial,
            repeat,
        } => parse_floor(&fleet, serial, repeat),
    }
}

fn generate(opts: &generator::Options, out: &Path) -> ExitCode {
    match generator::generate(out, opts) {
        Ok(h) => {
            println!("generated {} hosts into {}", h.len(), out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", out.display());
            ExitCode::FAILURE
        }
    }
}

/// Writes the hostile shapes (or one), each into `out/<shape>`.
fn write_hostile(out: &Path, shape: Option<&str>) -> ExitCode {
    let shapes: Vec<&str> = match shape {
        Some(s) => vec![s],
        None => hostile::SHAPES.to_vec(),
    };
    for s in shapes {
        if let Err(e) = hostile::generate(s, &out.join(s)) {
            eprintln!("error: cannot write {}: {e}", out.join(s).display());
            return ExitCode::FAILURE;
        }
        println!("{}", out.join(s).display());
    }
    ExitCode::SUCCESS
}

/// The median time of loading, resolving and reporting on `fleet`.
fn phases(fleet: &Path, repeat: usize) -> ExitCode {
    let reader = match DirReader::new(fleet) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut rows: Vec<[f64; 3]> = Vec::new();
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        let Ok(fleet) = datum_core::loader::load(&reader) else {
            eprintln!("error: cannot list the fleet");
            return ExitCode::FAILURE;
        };
        let load = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let all = datum_core::resolve::resolve_all_for_check(&fleet);
        let resolve = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let report = datum_core::check::check(&fleet, &all);
        let check = t.elapsed().as_secs_f64();
        std::hint::black_box(report.errors());
        rows.push([load, resolve, check]);
    }
    for (i, name) in ["load", "resolve", "report"].iter().enumerate() {
        let mut v: Vec<f64> = rows.iter().map(|r| r[i]).collect();
        v.sort_by(f64::total_cmp);
        println!("{name:8} {:.4} s", v[v.len() / 2]);
    }
    ExitCode::SUCCESS
}

/// The median time of reading and parsing every document file of `fleet`.
fn parse_floor(fleet: &Path, serial: bool, repeat: usize) -> ExitCode {
    let reader = match DirReader::new(fleet) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut times = Vec::new();
    let mut events = 0;
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        events = floor::parse_all(&reader, !serial);
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{:.4} s median of {} runs, {} events",
        times[times.len() / 2],
        times.len(),
        events
    );
    ExitCode::SUCCESS
}
