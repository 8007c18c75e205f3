//! The report API as the command line uses it: a profile file as written by
//! `cargo wasmprof run`, read back, rendered in every format.

use std::io::Read;
use std::path::Path;

use wasmprof_profile::profile::parse_profile;
use wasmprof_profile::report::{self, Format};

/// main → work ×3 → leaf ×12, plus work ×2 straight from the host.
const PROFILE: &str = r#"{
  "format": "wasmprof/1",
  "created_unix_nanos": 1700000000000000000,
  "run": {
    "package": "demo",
    "module": "target/wasm32-unknown-unknown/debug/demo.wasm",
    "module_sha256": "ab",
    "host": "node v20.20.2",
    "command": ["cargo", "wasmprof", "run"],
    "entry": "main",
    "complete": true,
    "incomplete_reason": null,
    "exit_code": 0,
    "wall_nanos": 2000000
  },
  "timer": { "mode": "host", "resolution_nanos": 1000.0 },
  "functions": [
    { "name": "demo::main", "file": "src/main.rs", "line": 3 },
    { "name": "demo::work", "file": "src/main.rs", "line": 10 },
    { "name": "demo::leaf", "file": "src/main.rs", "line": 20 }
  ],
  "nodes": [
    { "parent": null, "function": null, "calls": 0, "inclusive_nanos": 0.0 },
    { "parent": 0, "function": 0, "calls": 1, "inclusive_nanos": 1000000.0 },
    { "parent": 1, "function": 1, "calls": 3, "inclusive_nanos": 900000.0 },
    { "parent": 2, "function": 2, "calls": 12, "inclusive_nanos": 600000.0 },
    { "parent": 0, "function": 1, "calls": 2, "inclusive_nanos": 100000.0 }
  ]
}"#;

fn render(format: Format) -> Vec<u8> {
    let profile = parse_profile(PROFILE.as_bytes(), Path::new("demo.json")).expect("valid");
    let mut out = Vec::new();
    report::render(&profile, &report::RenderOptions::format(format), &mut out).expect("rendered");
    out
}

#[test]
fn gprof_text_has_the_exact_counts_and_times() {
    let text = String::from_utf8(render(Format::Gprof)).expect("UTF-8");
    assert!(text.starts_with("wasmprof: package demo, entry main, host node v20.20.2"));
    // work: 3 calls from main, 2 from the host, with the time of each.
    assert!(
        text.contains("                0.10    0.00       2/5           <spontaneous>\n"),
        "{text}"
    );
    assert!(
        text.contains("                0.30    0.60       3/5           demo::main [2]\n"),
        "{text}"
    );
    assert!(
        text.contains("[1]     90.9    0.40    0.60       5         demo::work [1]\n"),
        "{text}"
    );
    assert!(
        text.contains("                0.60    0.00      12/12          demo::leaf [3]\n"),
        "{text}"
    );
}

#[test]
fn pprof_is_gzipped_protobuf() {
    use prost::Message;
    let gzipped = render(Format::Pprof);
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(gzipped.as_slice())
        .read_to_end(&mut bytes)
        .expect("gzip");
    let message = report::pprof::proto::Profile::decode(bytes.as_slice()).expect("protobuf");
    assert_eq!(message.sample.len(), 4);
    assert_eq!(message.function.len(), 3);
}

#[test]
fn json_has_functions_arcs_and_the_profile() {
    let json: serde_json::Value = serde_json::from_slice(&render(Format::Json)).expect("JSON");
    assert_eq!(json["functions"][0]["name"], "demo::leaf");
    assert_eq!(json["functions"][0]["self_nanos"], 600000.0);
    let arcs = json["arcs"].as_array().expect("arcs");
    assert_eq!(arcs.len(), 4);
    assert_eq!(json["profile"]["run"]["package"], "demo");
}

#[test]
fn summary_fits_on_a_screen() {
    let profile = parse_profile(PROFILE.as_bytes(), Path::new("demo.json")).expect("valid");
    let mut out = Vec::new();
    report::write_summary(&profile, report::DEFAULT_SUMMARY_TOP, &mut out).expect("written");
    let text = String::from_utf8(out).expect("UTF-8");
    assert!(text.lines().count() <= 15, "{text}");
    assert!(text.contains("demo::leaf"), "{text}");
}

/// `report -o PATH` through the real binary: `/dev/null` stays the device
/// (renamed over, it became a regular file that every program on the
/// machine then wrote into), a FIFO's reader gets the report, `-` is
/// standard output.
#[cfg(unix)]
#[test]
fn reports_go_to_devices_and_fifos_in_place_and_to_standard_output_for_a_dash() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("demo.wasmprof.json");
    std::fs::write(&profile, PROFILE).unwrap();
    let report = |output: &str, format: &str| {
        crate::support::wasmprof_in(
            dir.path(),
            &[
                "report",
                "--input",
                profile.to_str().unwrap(),
                "--format",
                format,
                "-o",
                output,
            ],
        )
    };
    for format in ["gprof", "pprof", "html"] {
        report("/dev/null", format).assert_success();
        let null = std::fs::metadata("/dev/null").unwrap().file_type();
        assert!(
            null.is_char_device(),
            "{format}: /dev/null is still a device"
        );
    }
    let fifo = dir.path().join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            std::fs::File::open(fifo)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            text
        })
    };
    report(fifo.to_str().unwrap(), "gprof").assert_success();
    assert!(reader.join().unwrap().contains("Flat profile:"));
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    let dash = report("-", "json");
    dash.assert_success();
    assert!(dash.stdout.starts_with('{'), "{}", dash.stdout);
    assert!(!dir.path().join("-").exists());
}
