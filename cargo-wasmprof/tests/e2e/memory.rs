//! `--memory`: `examples/memory`'s allocations, whose every figure is known
//! in advance, charged to exactly their call paths in every host (Node and
//! wasmtime run the WASI program, Node and headless Chromium the
//! wasm-bindgen one), under the attribute and crate-wide; a program that
//! runs out of memory keeps its profile; `go tool pprof` reads the heap.

use wasmprof_profile::profile::{PathMemory, Profile};

use crate::support::*;

/// Each function's figures, summed over its call paths.
pub(crate) fn memory_of(profile: &Profile, function: &str) -> PathMemory {
    let memory = profile.memory.as_ref().expect("the profile has memory");
    let mut sum = PathMemory::default();
    for path in &memory.paths {
        let name = profile.nodes[path.node]
            .function
            .map(|f| profile.functions[f].name.as_str());
        if name == Some(function) {
            sum.add(path);
        }
    }
    sum
}

/// What `examples/memory/src/lib.rs` says each function does.
fn assert_known_figures(profile: &Profile, host: &str) {
    let grow_vec = memory_of(profile, "memory::grow_vec");
    // Capacities 4 to 128 of u64: one allocation, five reallocations.
    assert_eq!(
        (grow_vec.allocs, grow_vec.reallocs, grow_vec.alloc_bytes),
        (6, 5, 8 * (4 + 8 + 16 + 32 + 64 + 128)),
        "{host}: {grow_vec:?}"
    );
    assert_eq!(
        (grow_vec.frees, grow_vec.freed_bytes, grow_vec.live_bytes),
        (6, 2016, 0),
        "{host}"
    );
    let boxes = memory_of(profile, "memory::make_boxes");
    assert_eq!(
        (
            boxes.allocs,
            boxes.alloc_bytes,
            boxes.frees,
            boxes.live_blocks
        ),
        (11, 80, 11, 0),
        "{host}: {boxes:?}"
    );
    let leak = memory_of(profile, "memory::leak");
    assert_eq!(
        (
            leak.allocs,
            leak.alloc_bytes,
            leak.frees,
            leak.live_blocks,
            leak.live_bytes
        ),
        (1, 1000, 0, 1, 1000),
        "{host}: {leak:?}"
    );
    let peak = memory_of(profile, "memory::peak");
    assert_eq!(
        (
            peak.allocs,
            peak.alloc_bytes,
            peak.live_bytes,
            peak.peak_bytes
        ),
        (1, 1 << 20, 0, 1 << 20),
        "{host}: {peak:?}"
    );
    // The MiB does not fit in the memory the module starts with.
    assert!(
        peak.grows >= 1 && peak.grown_pages >= 16,
        "{host}: {peak:?}"
    );
    let memory = profile.memory.as_ref().unwrap();
    let peak_node = memory
        .paths
        .iter()
        .find(|p| p.peak_bytes == 1 << 20)
        .expect("the peak's path")
        .node;
    assert!(
        memory
            .grows
            .iter()
            .any(|g| g.node == peak_node && g.pages_after >= g.pages_before + 16),
        "{host}: {:?}",
        memory.grows
    );
    // At the peak, the leak was already there.
    assert!(memory.peak_bytes >= (1 << 20) + 1000, "{host}: {memory:?}");
    assert_eq!(leak.peak_bytes, 1000, "{host}");
    let totals = memory.totals();
    assert_eq!(
        totals.alloc_bytes - totals.freed_bytes,
        memory.live_bytes,
        "{host}"
    );
    assert!(memory.live_bytes >= 1000, "{host}");
}

#[test]
fn a_known_workload_s_figures_are_exact_in_node_and_wasmtime() {
    // The release build (LTO) too: the allocator runs optimised there.
    for (host, profile) in [("node", "--profile=dev"), ("wasmtime", "--release")] {
        let run = wasmprof(&["run", "-p", "memory", "--memory", "--host", host, profile]);
        run.assert_success();
        assert!(run.stdout.contains("memory: "), "{host}: {}", run.stdout);
        assert_known_figures(&run.profile(), host);
        // The summary says who held the peak and who leaked.
        assert!(
            run.stderr
                .contains("the most of it held by memory::peak 1.0 MiB"),
            "{host}: {}",
            run.stderr
        );
        assert!(
            run.stderr
                .contains("the most of it allocated by memory::leak 1000 B"),
            "{host}: {}",
            run.stderr
        );
    }
}

#[test]
fn the_wasm_bindgen_program_s_figures_are_exact_in_node_and_chromium() {
    let mut hosts = vec!["node"];
    if browser_available() {
        hosts.push("browser");
    }
    for host in hosts {
        let run = wasmprof(&["run", "-p", "memory-web", "--memory", "--host", host]);
        run.assert_success();
        assert_known_figures(&run.profile(), host);
    }
}

#[test]
fn crate_wide_instrumentation_charges_the_same_paths() {
    let run = wasmprof(&[
        "run",
        "-p",
        "memory",
        "--memory",
        "--instrument-all",
        "--min-size",
        "0",
        "--timer",
        "none",
    ]);
    run.assert_success();
    assert_known_figures(&run.profile(), "crate-wide");
}

#[test]
fn a_program_that_runs_out_of_memory_keeps_its_profile_with_the_failed_allocation() {
    let run = wasmprof(&["run", "-p", "memory", "--memory", "--", "oom"]);
    assert_ne!(run.code(), Some(0), "{}", run.stderr);
    let profile = run.profile();
    assert!(!profile.run.complete);
    let failed = profile
        .memory
        .as_ref()
        .and_then(|m| m.failed)
        .expect("the failed allocation is in the profile");
    assert_eq!(failed.bytes, 128 << 20);
    let function = profile.nodes[failed.node].function.unwrap();
    assert_eq!(profile.functions[function].name, "memory::exhaust");
    assert!(
        run.stderr
            .contains("out of memory: 128.0 MiB could not be allocated in memory::exhaust"),
        "{}",
        run.stderr
    );
}

#[test]
fn go_tool_pprof_reads_the_heap_and_gprof_prints_the_memory_sections() {
    let run = wasmprof(&["run", "-p", "memory", "--memory"]);
    run.assert_success();
    let profile = run.profile_path();
    let dir = tempfile::tempdir().unwrap();
    let pprof = dir.path().join("memory.pb.gz");
    wasmprof(&[
        "report",
        "--input",
        profile.to_str().unwrap(),
        "--format",
        "pprof",
        "-o",
        pprof.to_str().unwrap(),
    ])
    .assert_success();
    let top = go_pprof(&[
        "-sample_index=inuse_space",
        "-top",
        "-unit=B",
        pprof.to_str().unwrap(),
    ]);
    let leak = top
        .lines()
        .find(|l| l.ends_with("memory::leak"))
        .unwrap_or_else(|| panic!("no memory::leak in\n{top}"));
    assert!(leak.trim_start().starts_with("1000B"), "{leak}");

    let gprof = wasmprof(&["report", "--input", profile.to_str().unwrap()]);
    gprof.assert_success();
    let text = &gprof.stdout;
    let flat = &text[text
        .find("Memory flat profile")
        .expect("the memory section")..];
    let row = flat
        .lines()
        .find(|l| l.ends_with("  memory::grow_vec"))
        .unwrap_or_else(|| panic!("no grow_vec row in\n{flat}"));
    let figures: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        figures[..6],
        ["6", "2016", "2016", "5", "6", "2016"],
        "{row}"
    );
    assert!(flat.contains("Memory call graph"), "{flat}");

    // Folded stacks and the flame graph weighed by memory.
    let input = profile.to_str().unwrap();
    let folded = wasmprof(&[
        "report",
        "--input",
        input,
        "--format",
        "folded",
        "--weight",
        "alloc-bytes",
    ]);
    folded.assert_success();
    assert!(
        folded
            .stdout
            .lines()
            .any(|l| l == "memory::workload;memory::grow_vec 2016"),
        "{}",
        folded.stdout
    );
    let live = wasmprof(&[
        "report",
        "--input",
        input,
        "--format",
        "folded",
        "--weight",
        "live-bytes",
    ]);
    live.assert_success();
    assert!(
        live.stdout
            .lines()
            .any(|l| l == "memory::workload;memory::leak 1000"),
        "{}",
        live.stdout
    );
    let svg = wasmprof(&[
        "report",
        "--input",
        input,
        "--format",
        "flamegraph",
        "--weight",
        "peak-bytes",
    ]);
    svg.assert_success();
    assert!(
        svg.stdout.contains("widths: bytes held at the peak"),
        "{}",
        svg.stdout
    );
    assert!(
        svg.stdout.contains("memory::peak (1.0 MiB"),
        "the frame's tooltip"
    );
}

#[test]
fn weighing_by_memory_a_profile_without_it_says_how_to_record_it() {
    let run = wasmprof(&["run", "-p", "memory"]);
    run.assert_success();
    let report = wasmprof(&[
        "report",
        "--input",
        run.profile_path().to_str().unwrap(),
        "--format",
        "flamegraph",
        "--weight",
        "live-bytes",
    ]);
    assert_ne!(report.code(), Some(0));
    assert!(report.stderr.contains("run --memory"), "{}", report.stderr);
}

#[test]
fn a_comparison_shows_memory_and_fails_when_it_grew_more_than_allowed() {
    let run_with = |rounds: &str| {
        let run = wasmprof(&[
            "run", "-p", "memory", "--memory", "--timer", "none", "--", "churn", rounds,
        ]);
        run.assert_success();
        run.profile_path()
    };
    let (ten, ten_again, twenty) = (run_with("10"), run_with("10"), run_with("20"));
    let compare = |base: &std::path::Path, new: &std::path::Path| {
        wasmprof(&[
            "report",
            "--input",
            new.to_str().unwrap(),
            "--diff",
            base.to_str().unwrap(),
            "--fail-if-more-memory",
            "10",
        ])
    };
    // Exact figures: the same program allocates the same, to the byte.
    let same = compare(&ten, &ten_again);
    assert_eq!(same.code(), Some(0), "{}\n{}", same.stdout, same.stderr);
    assert!(
        same.stdout.contains("no function allocated differently"),
        "{}",
        same.stdout
    );
    let more = compare(&ten, &twenty);
    assert_eq!(more.code(), Some(1), "{}\n{}", more.stdout, more.stderr);
    assert!(
        more.stdout.contains("memory::churn_once"),
        "{}",
        more.stdout
    );
    assert!(
        more.stderr.contains("bytes allocated grew from"),
        "{}",
        more.stderr
    );
    // Two runs against one add up to twice as much: said, not hidden.
    let unbalanced = wasmprof(&[
        "report",
        "--input",
        ten.to_str().unwrap(),
        "--input",
        ten_again.to_str().unwrap(),
        "--diff",
        ten.to_str().unwrap(),
    ]);
    unbalanced.assert_success();
    assert!(
        unbalanced
            .stderr
            .contains("the new side merges 2 profile(s) and the base 1"),
        "{}",
        unbalanced.stderr
    );
    assert!(!same.stderr.contains("merges"), "{}", same.stderr);
}

#[test]
fn a_program_s_own_allocator_wrapped_in_one_line_is_recorded_and_only_forwards_without_memory() {
    // lol_alloc's free-list allocator, from crates.io, grows memory itself.
    let run = wasmprof(&["run", "-p", "memory-lol", "--memory"]);
    run.assert_success();
    assert_known_figures(&run.profile(), "lol_alloc");
    let plain = wasmprof(&["run", "-p", "memory-lol"]);
    plain.assert_success();
    assert!(plain.profile().memory.is_none());
    assert!(plain.stdout.contains("memory-lol: "), "{}", plain.stdout);
}

/// A crate of its own in a temporary directory, with `main_rs` for its
/// program and the runtime as a dependency.
fn own_allocator_crate(main_rs: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let runtime = repo_root().join("wasmprof-rt");
    std::fs::write(
        dir.path().join("Cargo.toml"),
        format!(
            "[package]\nname = \"own-allocator\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [dependencies]\nwasmprof = {{ package = \"wasmprof-rt\", path = {:?} }}\n\n\
             [workspace]\n",
            runtime.display().to_string()
        ),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), main_rs).unwrap();
    dir
}

const MAKES_A_HUNDRED_BYTES: &str = "\n#[wasmprof::instrument]\nfn make() -> Vec<u8> {\n    \
     vec![1; 100]\n}\n\n#[wasmprof::instrument]\nfn main() {\n    \
     std::hint::black_box(make());\n}\n";

#[test]
fn a_program_s_own_allocator_is_wrapped_in_a_copy_without_an_edit() {
    let dir = own_allocator_crate(&format!(
        "#[global_allocator]\nstatic ALLOCATOR: std::alloc::System = std::alloc::System;\n\
         {MAKES_A_HUNDRED_BYTES}"
    ));
    let source = std::fs::read_to_string(dir.path().join("src/main.rs")).unwrap();
    // Annotated, not instrumented crate-wide: the crate is copied for its
    // allocator alone.
    let run = wasmprof_in(dir.path(), &["run", "--memory"]);
    run.assert_success();
    assert!(
        run.stderr.contains(
            "own-allocator v0.1.0: its #[global_allocator] wrapped in wasmprof::Recording, \
             in the copy only"
        ),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    let made = memory_of(&profile, "own_allocator::make");
    assert_eq!(
        (made.allocs, made.alloc_bytes, made.frees),
        (1, 100, 0),
        "{made:?}"
    );
    assert_eq!(memory_of(&profile, "own_allocator::main").frees, 1);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/main.rs")).unwrap(),
        source,
        "the user's source is untouched"
    );

    // Instrumented crate-wide, the same.
    let run = wasmprof_in(
        dir.path(),
        &["run", "--memory", "--instrument-all", "--min-size", "0"],
    );
    run.assert_success();
    assert_eq!(
        memory_of(&run.profile(), "own_allocator::make").alloc_bytes,
        100
    );
}

#[test]
fn an_allocator_the_rewrite_cannot_see_is_shown_the_wrapper_before_building() {
    // Declared inside a macro: the text has it, the syntax tree does not.
    let dir = own_allocator_crate(&format!(
        "macro_rules! allocator {{\n    () => {{\n        #[global_allocator]\n        \
         static ALLOCATOR: std::alloc::System = std::alloc::System;\n    }};\n}}\n\
         allocator!();\n{MAKES_A_HUNDRED_BYTES}"
    ));
    let run = wasmprof_in(dir.path(), &["run", "--memory"]);
    assert_ne!(run.code(), Some(0), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("src/main.rs:3 declares a global allocator"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("wasmprof::Recording::new("),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("Compiling"),
        "refused before building: {}",
        run.stderr
    );
}

#[test]
fn a_test_suite_s_memory_is_per_test_and_the_test_that_leaks_is_named() {
    let run = wasmprof(&["test", "-p", "memory", "--memory", "--per-test"]);
    run.assert_success();
    assert!(
        run.stderr.contains("1 test left memory live at the end:\n   1000 B  memory::tests::a_kilobyte_is_leaked (1 block)"),
        "{}",
        run.stderr
    );
    let profile = run.profile();
    let grown = memory_of(&profile, "memory::grow_vec");
    assert_eq!(
        (
            grown.allocs,
            grown.reallocs,
            grown.alloc_bytes,
            grown.live_bytes
        ),
        (6, 5, 2016, 0)
    );
    // Each test's own profile keeps its part of the memory.
    let dir = run.profile_path().with_file_name(format!(
        "{}.tests",
        run.profile_path()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .trim_end_matches(".wasmprof.json")
    ));
    let leaky = wasmprof_profile::profile::read_profile(
        &dir.join("memory-tests-a_kilobyte_is_leaked.wasmprof.json"),
    )
    .expect("the leaking test's profile");
    let memory = leaky.memory.as_ref().expect("memory in the test's profile");
    assert_eq!((memory.live_bytes, memory.live_blocks), (1000, 1));
    assert_eq!(memory_of(&leaky, "memory::leak").live_bytes, 1000);
}

/// The figures of exactly this path of function names.
fn memory_of_path(profile: &Profile, path: &[&str]) -> PathMemory {
    let by_node = profile
        .memory
        .as_ref()
        .unwrap()
        .by_node(profile.nodes.len());
    let mut sum = PathMemory::default();
    for node in node_indices_of_path(profile, path) {
        sum.add(&by_node[node]);
    }
    sum
}

#[test]
fn a_registry_crate_s_test_suite_shows_its_known_allocations_exactly() {
    // semver 1.0.28 as published, its own tests instrumented crate-wide.
    // Its criterion benchmarks are left out: `cargo test` does not build
    // them, and criterion would be resolved afresh from the registry.
    let (_dir, copy) = registry_crate_copy("semver", "1.0.28");
    let manifest = copy.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let bench = "[[bench]]\nname = \"parse\"\npath = \"benches/parse.rs\"\nharness = false\n";
    let criterion = "[target.\"cfg(not(miri))\".dev-dependencies.criterion]\nversion = \"0.8\"\ndefault-features = false\n";
    assert!(text.contains(bench) && text.contains(criterion), "{text}");
    std::fs::write(&manifest, text.replace(bench, "").replace(criterion, "")).unwrap();
    let _ = std::fs::remove_file(copy.join("Cargo.lock"));

    let run = wasmprof_in(
        &copy,
        &["test", "--instrument-all", "--memory", "--verify-counts"],
    );
    run.assert_success();
    assert!(!run.stdout.contains("FAILED"), "{}", run.stdout);
    for said in [
        "slowest 5 of 37 tests",
        "no test left memory live",
        "Verified every call count",
    ] {
        assert!(run.stderr.contains(said), "{said}: {}", run.stderr);
    }
    let profile = run.profile();
    // tests/test_identifier.rs, test_new: a `String` pushed to 280 bytes
    // (capacities 8 to 512: one allocation, six reallocations), then that
    // string repeated 20 000 times, 5 600 000 bytes; all freed. At the
    // peak it held both, while the prerelease made of the long string and
    // its clone were live too: 5 600 000 bytes and a 4-byte length each.
    let test_new = memory_of_path(&profile, &["test_identifier::test_new"]);
    assert_eq!(
        (test_new.allocs, test_new.reallocs, test_new.alloc_bytes),
        (8, 6, 8 + 16 + 32 + 64 + 128 + 256 + 512 + 5_600_000),
        "{test_new:?}"
    );
    assert_eq!(
        (test_new.frees, test_new.freed_bytes, test_new.live_bytes),
        (8, 5_601_016, 0),
        "{test_new:?}"
    );
    assert_eq!((test_new.peak_blocks, test_new.peak_bytes), (2, 5_600_512));
    for made in [
        "semver::identifier::Identifier::new_unchecked",
        "<semver::identifier::Identifier as core::clone::Clone>::clone",
    ] {
        // Of the 280 identifiers (0 to 279 ones, then the long one), those
        // of 9 bytes or more are on the heap: 272.
        let path = memory_of_path(&profile, &["test_identifier::test_new", made]);
        assert_eq!((path.allocs, path.live_bytes), (272, 0), "{made}: {path:?}");
        assert_eq!(
            (path.peak_blocks, path.peak_bytes),
            (1, 5_600_004),
            "{made}"
        );
    }
    let memory = profile.memory.as_ref().unwrap();
    assert!(memory.peak_bytes >= 3 * 5_600_000, "{}", memory.peak_bytes);
}

#[test]
fn an_async_function_s_allocations_are_under_its_logical_caller() {
    let run = wasmprof(&["run", "-p", "async-loads", "--memory"]);
    run.assert_success();
    let profile = run.profile();
    let memory = profile.memory.as_ref().unwrap();
    let by_node = memory.by_node(profile.nodes.len());
    // `join_all` polls the four loads, yet what they allocate is charged
    // to run -> batch -> load, each of the four alike.
    let loads: Vec<usize> = node_indices_of_path(
        &profile,
        &[
            "async_loads::run",
            "async_loads::batch",
            "async_loads::load",
        ],
    )
    .collect();
    assert_eq!(loads.len(), 1, "one path");
    let load = by_node[loads[0]];
    assert!(load.allocs > 0 && load.allocs.is_multiple_of(4), "{load:?}");
    assert!(load.alloc_bytes.is_multiple_of(4), "{load:?}");
}
