//! Crate-wide instrumentation of code no one here wrote: the `realworld`
//! example runs a Markdown parser (pulldown-cmark) and a DEFLATE compressor
//! (miniz_oxide) from crates.io, both instrumented with `--instrument-crate`,
//! and its own crate with `--instrument-all`.

use crate::support::*;

const INSTRUMENTED: &[&str] = &[
    "run",
    "-p",
    "realworld",
    "--release",
    "--instrument-all",
    "--instrument-crate",
    "pulldown-cmark",
    "--instrument-crate",
    "miniz_oxide",
];

/// Every function, tiny accessors included.
const EVERY_FUNCTION: &[&str] = &["--min-size", "0"];

/// Rounds of the example's pipeline (`realworld::ROUNDS`).
const ROUNDS: u64 = 12;

#[test]
fn real_crates_instrumented_crate_wide_compute_the_same_and_are_counted_exactly() {
    let plain = wasmprof(&["run", "-p", "realworld", "--release", "--no-instrument"]);
    plain.assert_success();
    let run = wasmprof(&[INSTRUMENTED, EVERY_FUNCTION].concat());
    run.assert_success();

    // (a) The program computes exactly what the plain one does.
    assert!(plain.stdout.contains("rounds"), "{}", plain.stdout);
    assert_eq!(run.stdout, plain.stdout);

    let profile = run.profile();
    let calls = calls_by_function(&profile);
    let count = |name: &str| {
        calls
            .get(name)
            .copied()
            .unwrap_or_else(|| panic!("{name} missing from {:?}", calls.keys().collect::<Vec<_>>()))
    };

    // (c) Exact counts where the workload fixes them.
    assert_eq!(count("realworld::main"), 1);
    assert_eq!(count("realworld::document"), 1);
    assert_eq!(count("realworld::render"), ROUNDS);
    assert_eq!(count("realworld::fingerprint"), 1);
    assert_eq!(count("pulldown_cmark::html::push_html"), ROUNDS);
    assert_eq!(count("miniz_oxide::deflate::compress_to_vec"), ROUNDS);
    assert_eq!(count("miniz_oxide::inflate::decompress_to_vec"), ROUNDS);
    assert_eq!(
        calls_of_path(
            &profile,
            &[
                "realworld::main",
                "realworld::render",
                "pulldown_cmark::html::push_html"
            ]
        ),
        ROUNDS
    );

    // Many functions of both crates ran and were recorded.
    let of = |prefix: &str| {
        calls
            .keys()
            .filter(|n| n.trim_start_matches('<').starts_with(prefix))
            .count()
    };
    assert!(
        of("pulldown_cmark::") >= 40,
        "{} pulldown_cmark functions",
        of("pulldown_cmark::")
    );
    assert!(
        of("miniz_oxide::") >= 15,
        "{} miniz_oxide functions",
        of("miniz_oxide::")
    );

    // (b) Every function that ran is reported at its own file and line, as
    // they are in the original sources (not the rewritten copy).
    for function in &profile.functions {
        assert_function_at_its_line(function, &examples_dir());
    }
}

#[test]
fn by_default_accessors_are_counted_only_and_every_count_is_the_same() {
    // Each set of flags keeps its code apart (a cfg of its own in the one
    // build directory): the two builds, one after the other, must not
    // reuse each other's code.
    let every = wasmprof(&[INSTRUMENTED, EVERY_FUNCTION].concat());
    every.assert_success();
    let default = wasmprof(INSTRUMENTED);
    default.assert_success();
    assert_eq!(default.stdout, every.stdout);
    let all_calls = calls_by_function(&every.profile());
    let profile = default.profile();
    assert_eq!(profile.run.min_size, Some(40));
    let counted = counted_functions(&profile);

    // The accessors the parser calls a million times are counted only; the
    // functions with loops, and the entry, are fully instrumented.
    for accessor in [
        "pulldown_cmark::tree::TreeIndex::get",
        "<pulldown_cmark::tree::Tree<T> as core::ops::index::Index<pulldown_cmark::tree::TreeIndex>>::index",
        "miniz_oxide::deflate::core::DictOxide::read_unaligned_u64",
    ] {
        assert!(counted.contains(accessor), "{accessor} not counted only");
    }
    for kept in [
        "realworld::main",
        "<pulldown_cmark::parse::Parser<F> as core::iter::traits::iterator::Iterator>::next",
        "pulldown_cmark::firstpass::FirstPass::parse_line",
        "miniz_oxide::deflate::core::DictOxide::find_match",
    ] {
        assert!(!counted.contains(kept), "{kept} counted only");
    }
    // Function by function, the counts of --min-size 0.
    assert_eq!(calls_by_function(&profile), all_calls);
    assert!(counted.len() > 100, "{} counted only", counted.len());
}
