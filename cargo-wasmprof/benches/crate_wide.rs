//! Crate-wide instrumentation of real crates: build time, `.wasm` size and
//! run time of the `realworld` example built plain and with
//! `--instrument-all --instrument-crate pulldown-cmark --instrument-crate
//! miniz_oxide` in both timer modes, side by side, as ratios.
//!
//! `cargo bench -p cargo-wasmprof --bench crate_wide [-- REPETITIONS]`
//!
//! Build time is a full release build into an empty target directory.

use std::time::Instant;

#[path = "../tests/support/mod.rs"]
#[allow(dead_code, unused_imports)] // helpers only the tests use
mod support;
use support::*;

const MODES: [(&str, &[&str]); 3] = [
    ("plain", &["--no-instrument"]),
    (
        "none",
        &[
            "--timer",
            "none",
            "--instrument-all",
            "--instrument-crate",
            "pulldown-cmark",
            "--instrument-crate",
            "miniz_oxide",
        ],
    ),
    (
        "host",
        &[
            "--timer",
            "host",
            "--instrument-all",
            "--instrument-crate",
            "pulldown-cmark",
            "--instrument-crate",
            "miniz_oxide",
        ],
    ),
];

/// The size of the module a build left under `target_dir`: the plain one
/// in its mode's directory, a crate-wide one in its shadow copy's.
fn wasm_size(mode: &str, target_dir: &std::path::Path) -> u64 {
    fn find(dir: &std::path::Path) -> Option<std::path::PathBuf> {
        for entry in std::fs::read_dir(dir).ok()?.flatten() {
            let path = entry.path();
            if path.ends_with("wasm32-wasip1/release/realworld.wasm") {
                return Some(path);
            }
            if path.is_dir()
                && let Some(found) = find(&path)
            {
                return Some(found);
            }
        }
        None
    }
    let dir = target_dir.join("wasmprof").join(mode);
    let path = find(&dir).unwrap_or_else(|| panic!("no realworld.wasm under {}", dir.display()));
    std::fs::metadata(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .len()
}

fn main() {
    let repetitions: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let mut rows = Vec::new();
    for (mode, flags) in MODES {
        let target_dir = examples_dir()
            .join("target")
            .join(format!("bench-crate-wide-{mode}"));
        let _ = std::fs::remove_dir_all(&target_dir);
        let target = target_dir.to_str().unwrap().to_owned();
        // `build` and `run` take the same flags.
        let command = |verb: &'static str| {
            let mut args = vec![verb, "--release", "-q", "-p", "realworld", "--target-dir"];
            args.push(&target);
            args.extend(flags.iter().copied());
            args
        };
        let build = command("build");
        let started = Instant::now();
        wasmprof(&build).assert_success();
        let build_seconds = started.elapsed().as_secs_f64();
        let size = wasm_size(mode, &target_dir);
        let run = command("run");
        let mut times: Vec<f64> = (0..repetitions)
            .map(|_| {
                let r = wasmprof(&run);
                r.assert_success();
                program_seconds(&r.stderr)
            })
            .collect();
        times.sort_by(|a, b| a.total_cmp(b));
        let median = times[times.len() / 2];
        eprintln!(
            "  {mode}: build {build_seconds:.1} s, {size} bytes, run median {median:.4} s of {times:?}"
        );
        rows.push((mode, build_seconds, size, median));
        let _ = std::fs::remove_dir_all(&target_dir);
    }
    let (_, build0, size0, run0) = rows[0];
    println!(
        "realworld (pulldown-cmark + miniz_oxide), crate-wide, median of {repetitions} runs in Node"
    );
    println!(
        "{:<8} {:>9} {:>7} {:>10} {:>7} {:>9} {:>7}",
        "mode", "build s", "ratio", "wasm KiB", "ratio", "run s", "ratio"
    );
    for (mode, build, size, run) in rows {
        println!(
            "{mode:<8} {build:>9.1} {:>6.2}x {:>10.1} {:>6.2}x {run:>9.4} {:>6.2}x",
            build / build0,
            size as f64 / 1024.0,
            size as f64 / size0 as f64,
            run / run0
        );
    }
}
