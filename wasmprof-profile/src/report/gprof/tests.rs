//! The gprof report held against what GNU gprof printed for the same
//! programs (tests/data/gnu-gprof), and against golden files.

use super::*;
use crate::fixtures::{ProfileBuilder, appendix_b, assert_golden, recursion};

fn render(profile: &Profile) -> String {
    GprofWriter::new(profile).render()
}

fn reference(name: &str) -> String {
    let path = format!("{}/tests/data/gnu-gprof/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("reference file")
}

/// The call graph's entries, each without its separator line.
fn call_graph_blocks(text: &str) -> Vec<String> {
    let start = text.find("index % time").expect("a call graph");
    let body = &text[start..];
    let body = &body[body.find('\n').expect("header line") + 1..];
    let end = body.find('\x0c').expect("a form feed after the call graph");
    body[..end]
        .split("-----------------------------------------------\n")
        .filter(|block| !block.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The flat profile's function lines.
fn flat_lines(text: &str) -> Vec<String> {
    let start = text.find("\n time ").expect("a flat profile header") + 1;
    let body = &text[start..];
    let body = &body[body.find('\n').expect("header line") + 1..];
    let end = body
        .find('\x0c')
        .expect("a form feed after the flat profile");
    body[..end].lines().map(str::to_owned).collect()
}

/// Rewrites every `[n]` as `[map(n)]`.
fn renumber(text: &str, map: impl Fn(usize) -> usize) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let close = open + rest[open..].find(']').expect("closing bracket");
        out.push_str(&rest[..=open]);
        let number: usize = rest[open + 1..close].parse().expect("an index");
        out.push_str(&map(number).to_string());
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

#[test]
fn recursion_call_graph_is_what_gnu_gprof_printed() {
    let ours = call_graph_blocks(&render(&recursion(false)));
    // gprof numbered main [10] (an uninstrumented caller, never printed);
    // ours has main as entry [5], printed after the others.
    let theirs: Vec<String> =
        call_graph_blocks(&renumber(&reference("recursion.gnu-gprof.txt"), |n| {
            if n == 10 { 5 } else { n }
        }));
    assert_eq!(ours.len(), theirs.len() + 1);
    assert_eq!(ours[..theirs.len()], theirs[..]);
    assert!(ours[4].contains("[5]      0.0    0.00    0.00       1         main [5]\n"));
}

#[test]
fn recursion_flat_profile_is_what_gnu_gprof_printed() {
    let ours = flat_lines(&render(&recursion(false)));
    let theirs = flat_lines(&reference("recursion.gnu-gprof.txt"));
    assert_eq!(ours[..theirs.len()], theirs[..]);
    assert_eq!(
        ours[3],
        "  0.00      0.00     0.00        1     0.00     0.00  main"
    );
}

#[test]
fn appendix_b_call_graph_is_what_gnu_gprof_printed() {
    let ours = call_graph_blocks(&render(&appendix_b(false)));
    // gprof's [1] was frame_dummy (a sampling artefact: we have no such
    // entry) and main was [14]; everything else moves up by one.
    let reference = reference("appendix-b.gnu-gprof.txt");
    let theirs: Vec<String> = call_graph_blocks(&renumber(&reference, |n| match n {
        14 => 9,
        n => n - 1,
    }))
    .into_iter()
    .skip(1)
    .collect();
    assert_eq!(ours[..theirs.len()], theirs[..]);
    assert_eq!(ours.len(), theirs.len() + 1, "and main's own entry");
}

#[test]
fn appendix_b_flat_profile_has_gnu_gprof_counts() {
    let ours = flat_lines(&render(&appendix_b(false)));
    // Their cumulative column holds frame_dummy's 0.01 s.
    let theirs: Vec<String> = flat_lines(&reference("appendix-b.gnu-gprof.txt"))
        .into_iter()
        .skip(1)
        .map(|line| line.replacen("      0.01", "      0.00", 1))
        .collect();
    assert_eq!(ours[..theirs.len()], theirs[..]);
}

#[test]
fn timed_appendix_b_matches_golden() {
    let text = render(&appendix_b(true));
    assert_golden("appendix_b.gprof.txt", &text);
    assert!(text.contains("\n time        ms        ms    calls  ms/call  ms/call  name    \n"));
    assert!(
        text.contains("[2]     80.0  105.00    0.00 52500000         add [2]\n"),
        "{text}"
    );
    assert!(text.contains("               35.00    0.00 17500000/52500000     f_quarter [3]\n"));
}

#[test]
fn untimed_recursion_matches_golden() {
    let text = render(&recursion(false));
    assert_golden("recursion.gprof.txt", &text);
    assert!(text.contains("no time was measured (--timer none)"));
    assert!(text.contains("     200+4378000 fib [4]\n"));
    assert!(text.contains("     200+20200   <cycle 1 as a whole> [1]\n"));
}

#[test]
fn timed_recursion_matches_golden() {
    let text = render(&recursion(true));
    assert_golden("recursion.timed.gprof.txt", &text);
    // fib's 4,378,200 calls at 3 ns each: all of it self time.
    assert!(
        text.contains("[2]     99.7   13.13    0.00     200+4378000 fib [2]\n"),
        "{text}"
    );
}

/// A run that trapped inside a deep recursion, with calls past the node cap,
/// a function called both by the host and by another function, and long
/// Rust names.
fn incomplete() -> Profile {
    let mut deep = vec!["demo::main", "demo::parser::Parser::parse"];
    deep.extend(["demo::parser::Parser::expr"; 30]);
    let mut builder = ProfileBuilder::timed()
        .path(&["demo::main"], 1, 2_000.0)
        .path(&["demo::main", "demo::parser::Parser::parse"], 1, 10_000.0);
    for depth in 3..=deep.len() {
        builder = builder.path(&deep[..depth], 1, 500.0);
    }
    let mut deepest_lexer = deep.clone();
    deepest_lexer.push("demo::lexer::next_token");
    let mut profile = builder
        .path(
            &[
                "demo::main",
                "demo::parser::Parser::parse",
                "demo::lexer::next_token",
            ],
            40,
            12_000.0,
        )
        .path(&deepest_lexer, 5, 1_500.0)
        .path(&["demo::main", "demo::util::checksum"], 3, 900.0)
        .path(&["demo::util::checksum"], 2, 700.0)
        .open(&deep)
        .build();
    profile.run.complete = false;
    profile.run.incomplete_reason = Some("trap: call stack exhausted".into());
    profile.nodes.push(crate::profile::Node {
        parent: Some(Profile::ROOT),
        function: None,
        calls: 1234,
        inclusive_nanos: 99_999.0,
        open: false,
        partly_timed: false,
        sampled: false,
        samples: 0,
    });
    profile.overflow_calls = 1234;
    profile
}

#[test]
fn incomplete_run_matches_golden() {
    let text = render(&incomplete());
    assert_golden("incomplete.gprof.txt", &text);
    assert!(text.contains(
        "WARNING: incomplete profile: the run did not finish (trap: call stack exhausted)."
    ));
    assert!(text.contains(
        "WARNING:   demo::main > demo::parser::Parser::parse > demo::parser::Parser::expr (30 frames)\n"
    ));
    assert!(text.contains("WARNING: 1234 calls came after the call tree was full"));
    // checksum: 2 calls from the host, 3 from main, with exact times.
    assert!(
        text.contains("                0.70    0.00       2/5           <spontaneous>\n"),
        "{text}"
    );
    assert!(
        text.contains("                0.90    0.00       3/5           demo::main [1]\n"),
        "{text}"
    );
    // The open frames' own time is missing: their children's is known.
    assert!(
        text.contains("times in microseconds, 15.10 us in all"),
        "{text}"
    );
    assert!(
        text.contains("[1]     95.4    0.00   14.40       1         demo::main [1]\n"),
        "{text}"
    );
    assert!(text.contains("<overflow> ["));
}

#[test]
fn self_time_is_never_negative() {
    let text = render(&incomplete());
    assert!(!text.contains("-0.0"), "{text}");
    assert!(!text.contains(" -"), "{text}");
}

#[test]
fn count_only_functions_are_marked_in_both_tables() {
    let profile = ProfileBuilder::timed()
        .path(&["main"], 1, 5_000.0)
        .counted("get", 1000)
        .build();
    let text = render(&profile);
    let flat = flat_lines(&text);
    let get = flat.iter().find(|l| l.contains("get")).expect("get's line");
    assert!(get.ends_with(" get (counted)"), "{get}");
    assert!(get.contains(" 1000 "), "{get}");
    let blocks = call_graph_blocks(&text);
    let get_block = blocks
        .iter()
        .find(|b| b.contains("get (counted) ["))
        .expect("get's entry");
    let lines: Vec<&str> = get_block.lines().collect();
    assert_eq!(lines[0].trim(), "<callers not tracked>", "{get_block}");
    assert!(
        lines[1].contains("   1000         get (counted) ["),
        "{get_block}"
    );
}

#[test]
fn a_counted_function_the_samples_saw_shows_its_callers_without_counts() {
    let mut profile = ProfileBuilder::timed()
        .path(&["main"], 1, 1e6)
        .path(&["main", "get"], 0, 4e6)
        .counted("get", 1000)
        .build();
    for node in &mut profile.nodes[1..] {
        node.sampled = node.calls == 0;
    }
    let text = render(&profile);
    let flat = flat_lines(&text);
    let get = flat.iter().find(|l| l.contains("get")).expect("get's line");
    assert!(get.ends_with(" get (sampled)"), "{get}");
    assert!(get.contains(" 1000 "), "{get}");
    let blocks = call_graph_blocks(&text);
    let get_block = blocks
        .iter()
        .find(|b| b.contains("<callers not tracked>"))
        .expect("get's entry");
    let lines: Vec<&str> = get_block.lines().collect();
    assert_eq!(lines[0].trim(), "<callers not tracked>", "{get_block}");
    // The caller the samples found it under: times, and no `n/m`.
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["4.00", "0.00", "main", "[1]"]
    );
    assert!(
        lines[2].contains("   1000         get (sampled) ["),
        "{get_block}"
    );
    let main_block = blocks
        .iter()
        .find(|b| b.contains("<spontaneous>"))
        .expect(&text);
    assert!(
        main_block
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["4.00", "0.00", "get", "(sampled)", "[2]"]),
        "{main_block}"
    );
}

#[test]
fn async_functions_are_marked_and_their_futures_listed_last() {
    let profile = ProfileBuilder::timed()
        .path(&["app::batch"], 1, 1e6)
        .path(&["app::batch", "app::load"], 3, 6e6)
        .path(&["app::main", "app::load"], 1, 2e6)
        .future(&["app::batch"], 4, 1, 0, Some(90e6))
        .future(&["app::batch", "app::load"], 9, 2, 1, Some(50e6))
        .future(&["app::main", "app::load"], 1, 0, 0, None)
        .build();
    let text = GprofWriter::new(&profile).render();
    assert!(text.contains("app::load (async) [1]"), "{text}");
    let section = &text[text.find("Async functions").expect("the section")..];
    assert!(
        section.contains("Latency is wall\ntime from a future's first poll"),
        "{section}"
    );
    let lines: Vec<&str> = section.lines().collect();
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| {
                l.ends_with(name) && (name.starts_with(' ') || l.ends_with(&format!("  {name}")))
            })
            .unwrap_or_else(|| panic!("no row {name}: {section}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        row("  app::load"),
        [
            "4",
            "2",
            "1",
            "1",
            "2.50",
            "8.00",
            "~50.0",
            "ms",
            "50.0",
            "ms",
            "app::load"
        ]
    );
    assert_eq!(
        row("via app::batch"),
        [
            "3",
            "2",
            "1",
            "0",
            "3.00",
            "6.00",
            "50.0",
            "ms",
            "50.0",
            "ms",
            "via",
            "app::batch"
        ]
    );
    assert_eq!(
        row("  app::batch"),
        [
            "1",
            "1",
            "0",
            "0",
            "4.00",
            "7.00",
            "90.0",
            "ms",
            "90.0",
            "ms",
            "app::batch"
        ]
    );
    assert!(
        section.contains("1 futures were still pending"),
        "{section}"
    );
}

#[test]
fn memory_sections_match_golden() {
    let text = GprofWriter::new(&crate::fixtures::memory_profile()).render();
    let memory = &text[text.find("Memory flat profile").expect("a memory section")..];
    assert_golden("memory.gprof.txt", memory);
    assert!(
        memory.contains("[2]       90.4         1010            0         3  inner [2]"),
        "{memory}"
    );
}
