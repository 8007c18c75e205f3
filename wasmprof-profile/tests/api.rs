//! The library as another tool uses it: a viewer or a CI bot that reads the
//! profiles the engines and `cargo wasmprof` write, merges them and renders
//! reports, through the public API only (no fixtures, no private module).
//! The inputs are real: sampling profiles recorded by Node and Chromium
//! (`tests/data/sampled/README.md` says how).

use std::path::{Path, PathBuf};

use wasmprof_profile::input::{self, InputKind};
use wasmprof_profile::profile;
use wasmprof_profile::report::{self, Format, RenderOptions};
use wasmprof_profile::sampled;
use wasmprof_profile::{Error, Profile, RenderOption};

fn recorded(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sampled")
        .join(name)
}

fn read(path: &Path) -> input::Input {
    input::read(path, &sampled::Options::default())
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// A sampling profile's samples, each counted at the stack it had.
fn total_samples(profile: &Profile) -> u64 {
    profile.nodes.iter().map(|node| node.samples).sum()
}

fn rendered(profile: &Profile, options: &RenderOptions) -> Vec<u8> {
    let mut out = Vec::new();
    report::render(profile, options, &mut out)
        .unwrap_or_else(|error| panic!("{:?}: {error}", options.format));
    out
}

#[test]
fn each_recorded_file_is_told_apart_by_its_content() {
    for (name, kind) in [
        ("node-appendix-b.cpuprofile", InputKind::CpuProfile),
        ("chromium-fib.cpuprofile", InputKind::CpuProfile),
        (
            "chromium-fib.selfprofile.json",
            InputKind::SelfProfilingTrace,
        ),
        ("firefox-fib.gecko.json", InputKind::GeckoProfile),
        (
            "firefox-fib.processed.json.gz",
            InputKind::FirefoxProfilerProfile,
        ),
        (
            "wasmtime-appendix-b.guest.json",
            InputKind::FirefoxProfilerProfile,
        ),
    ] {
        let read = read(&recorded(name));
        assert_eq!(read.kind, kind, "{name}");
        assert!(total_samples(&read.profile) > 0, "{name}: no samples read");
        assert!(
            !read.timeline.is_empty(),
            "{name}: a sampling profile keeps its samples in time order"
        );
    }
}

#[test]
fn a_recorded_cpuprofile_renders_in_every_format() {
    renders_in_every_format("chromium-fib.cpuprofile");
}

#[test]
fn a_profile_firefox_saved_renders_in_every_format_with_the_program_s_functions() {
    let read = read(&recorded("firefox-fib.gecko.json"));
    let names: Vec<&str> = read
        .profile
        .functions
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert!(names.contains(&"fib::fib"), "{names:?}");
    // The browser's own code is set apart, never named as the program's.
    assert!(names.contains(&"(browser)"), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.contains("trampoline") || n.contains("js::")),
        "{names:?}"
    );
    renders_in_every_format("firefox-fib.gecko.json");
}

/// The same run as the Firefox Profiler's "Download" saved it: processed
/// (format 75), its URLs removed, gzip-compressed. It reads into the same
/// functions and the same samples as the profile Firefox wrote.
#[test]
fn the_firefox_profiler_s_download_reads_as_the_profile_firefox_saved() {
    let downloaded = read(&recorded("firefox-fib.processed.json.gz"));
    let saved = read(&recorded("firefox-fib.gecko.json"));
    let names = |read: &wasmprof_profile::input::Input| -> Vec<String> {
        let mut names: Vec<String> = (read.profile.functions.iter())
            .map(|f| f.name.clone())
            .filter(|n| !n.contains('('))
            .collect();
        names.sort();
        names
    };
    assert!(names(&downloaded).contains(&"fib::fib".to_owned()));
    assert_eq!(names(&downloaded), names(&saved));
    let fib_samples = |read: &wasmprof_profile::input::Input| {
        let fib = (read.profile.functions.iter())
            .position(|f| f.name == "fib::fib")
            .unwrap();
        let own = read.profile.self_nanos();
        (read.profile.nodes.iter().enumerate())
            .filter(|(_, n)| n.function == Some(fib))
            .map(|(i, _)| own[i])
            .sum::<f64>()
    };
    assert_eq!(fib_samples(&downloaded), fib_samples(&saved));
    renders_in_every_format("firefox-fib.processed.json.gz");
}

/// wasmtime's guest profiler writes the Firefox Profiler's format (55),
/// without JavaScript: every frame is the program's, named from the module
/// it says, demangled.
#[test]
fn wasmtime_s_guest_profile_reads_with_the_program_s_functions_demangled() {
    let read = read(&recorded("wasmtime-appendix-b.guest.json"));
    let names: Vec<&str> = (read.profile.functions.iter())
        .map(|f| f.name.as_str())
        .collect();
    for expected in [
        "appendix_b::add",
        "appendix_b::f_quarter",
        "appendix_b::main",
    ] {
        assert!(names.contains(&expected), "{names:?}");
    }
    assert!(!names.iter().any(|n| n.starts_with("_ZN")), "{names:?}");
    // `add` is where the program spends its time.
    let own = read.profile.self_nanos();
    let heaviest = (0..own.len())
        .max_by(|&a, &b| own[a].total_cmp(&own[b]))
        .and_then(|n| read.profile.nodes[n].function)
        .map(|f| read.profile.functions[f].name.as_str());
    assert_eq!(heaviest, Some("appendix_b::add"));
}

fn renders_in_every_format(file: &str) {
    let read = read(&recorded(file));
    for format in Format::ALL {
        // The options grow with the formats (`#[non_exhaustive]`): made,
        // then set.
        let mut options = RenderOptions::format(format);
        options.timeline = &read.timeline;
        let out = rendered(&read.profile, &options);
        assert!(!out.is_empty(), "{format:?} wrote nothing");
        match format {
            Format::Gprof => {
                let text = String::from_utf8(out).unwrap();
                assert!(text.contains("Flat profile:"), "{text}");
                assert!(text.contains("fib::fib"), "{text}");
            }
            Format::Json | Format::Speedscope | Format::Cpuprofile => {
                let value: serde_json::Value = serde_json::from_slice(&out)
                    .unwrap_or_else(|error| panic!("{format:?} is not JSON: {error}"));
                assert!(value.is_object(), "{format:?}");
            }
            // gzip's magic number.
            Format::Pprof => assert_eq!(out[..2], [0x1f, 0x8b]),
            Format::Flamegraph | Format::Flamechart => {
                let text = String::from_utf8(out).unwrap();
                assert!(text.contains("<svg"), "{format:?}");
            }
            Format::Html => {
                let text = String::from_utf8(out).unwrap();
                assert!(text.contains("fib::fib"), "the page names the functions");
            }
            Format::Folded => {
                let text = String::from_utf8(out).unwrap();
                assert!(text.lines().all(|line| line.rsplit_once(' ').is_some()));
            }
            // A format added later is rendered above, and checked here
            // when it is.
            _ => {}
        }
    }
}

#[test]
fn a_profile_written_reads_back_the_same_and_two_runs_merge_into_one() {
    let sampled = read(&recorded("node-appendix-b.cpuprofile")).profile;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.wasmprof.json");
    profile::write_profile(&sampled, &path).unwrap();

    let again = read(&path);
    assert_eq!(again.kind, InputKind::Wasmprof);
    assert_eq!(again.profile, sampled);

    // Nodes with the same stack add up.
    let merged = profile::merge(vec![sampled.clone(), again.profile]).expect("two profiles");
    assert_eq!(total_samples(&merged), 2 * total_samples(&sampled));
    profile::validate(&merged).unwrap();
    assert!(!rendered(&merged, &RenderOptions::format(Format::Gprof)).is_empty());
}

#[test]
fn a_profile_compared_with_itself_has_nothing_changed() {
    let read = read(&recorded("chromium-fib.cpuprofile"));
    let functions = read.profile.functions.len();
    let mut options = RenderOptions::format(Format::Gprof);
    options.base = Some(&read.profile);
    let text = String::from_utf8(rendered(&read.profile, &options)).unwrap();
    assert!(
        text.contains(&format!("0 of {functions} functions changed")),
        "{text}"
    );
    assert!(text.contains("(+0 ns, +0.0%)"), "{text}");
}

#[test]
fn a_truncated_file_is_an_error_that_names_it_not_a_panic() {
    let whole = std::fs::read(recorded("chromium-fib.cpuprofile")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.cpuprofile");
    std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
    let error = match input::read(&path, &sampled::Options::default()) {
        Ok(_) => panic!("half a file was read as a profile"),
        Err(error) => error,
    };
    assert!(matches!(error, Error::Truncated { .. }), "{error}");
    assert!(error.to_string().contains("cut.cpuprofile"), "{error}");
}

#[test]
fn a_json_file_of_another_shape_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.json");
    std::fs::write(&path, br#"{"traceEvents": 3, "name": "not a profile"}"#).unwrap();
    match input::read(&path, &sampled::Options::default()) {
        Err(Error::UnknownKind {
            chrome_trace: true, ..
        }) => {}
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("a Chrome trace was read as a profile"),
    }
}

/// A caller tells the errors apart by their variant, and words them for
/// its own users: the library's messages name no flag.
#[test]
fn an_option_a_format_does_not_take_is_an_error_to_match_on() {
    let read = read(&recorded("node-appendix-b.cpuprofile"));
    let mut options = RenderOptions::format(Format::Gprof);
    options.icicle = true;
    match report::render(&read.profile, &options, &mut Vec::new()) {
        Err(Error::OptionNotAvailable {
            option: RenderOption::Icicle,
            format: Format::Gprof,
        }) => {}
        other => panic!("icicle in gprof: {:?}", other.err()),
    }
    let error = "svg".parse::<Format>().unwrap_err();
    assert!(error.to_string().contains("flamegraph"), "{error}");
}
