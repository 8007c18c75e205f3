//! Any file `cargo wasmprof report --input` reads: a wasmprof profile, a
//! Chrome DevTools or Node `.cpuprofile`, a JS Self-Profiling trace, a
//! Firefox profile (the Gecko profiler's own format), or a
//! runtime's raw snapshot (what a WASI 0.2 component writes under another
//! host), told apart by their content, and converted to a profile.

use std::path::Path;

use crate::error::{Error, Result};
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::profile::{self, Profile};
use crate::sampled;

pub(crate) mod kind;
pub use kind::InputKind;

/// One input file, read and converted.
pub struct Input {
    /// What the file was.
    pub kind: InputKind,
    /// Its profile.
    pub profile: Profile,
    /// The records of a sampling profile that were bad and left out, by
    /// what was wrong with them.
    pub problems: sampled::Problems,
    /// A sampling profile's samples in time order (empty for a wasmprof
    /// profile, which has no order in time).
    pub timeline: Vec<sampled::Span>,
}

/// One kind of file `report --input` reads, in the way of inferno's
/// `Collapse`: whether a file's top-level keys are of its kind, and how to
/// read one. A new format is one more reader in [`READERS`].
trait Reader: Sync {
    fn kind(&self) -> InputKind;
    /// Whether a JSON object with these top-level keys is of this kind.
    fn is_applicable(&self, keys: &TopLevelKeys) -> bool;
    /// The file as a profile, with its samples in time order if it has any.
    /// `bytes` is taken so that a large file is not held twice while it is
    /// converted.
    fn read(
        &self,
        bytes: Vec<u8>,
        path: &Path,
        options: &sampled::Options,
        problems: &mut sampled::Problems,
    ) -> Result<(Profile, Vec<sampled::Span>)>;
}

/// The readers, asked in this order: the first that applies reads the file.
static READERS: [&dyn Reader; 5] = [
    &WasmprofReader,
    &CpuProfileReader,
    &TraceReader,
    &ProcessedReader,
    &GeckoReader,
];

/// The top-level keys that tell the kinds apart.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TopLevelKeys {
    format: Option<IgnoredAny>,
    nodes: Option<IgnoredAny>,
    profile: Option<IgnoredAny>,
    frames: Option<IgnoredAny>,
    stacks: Option<IgnoredAny>,
    time_deltas: Option<IgnoredAny>,
    trace_events: Option<IgnoredAny>,
    /// Small, and what tells Gecko's format from the Firefox Profiler's.
    meta: Option<serde_json::Value>,
    threads: Option<IgnoredAny>,
}

impl TopLevelKeys {
    /// `meta.preprocessedProfileVersion`: the Firefox Profiler's format.
    fn is_processed(&self) -> bool {
        self.meta
            .as_ref()
            .is_some_and(|meta| meta["preprocessedProfileVersion"].is_number())
    }
}

struct WasmprofReader;

impl Reader for WasmprofReader {
    fn kind(&self) -> InputKind {
        InputKind::Wasmprof
    }

    fn is_applicable(&self, keys: &TopLevelKeys) -> bool {
        keys.format.is_some()
    }

    fn read(
        &self,
        bytes: Vec<u8>,
        path: &Path,
        _: &sampled::Options,
        _: &mut sampled::Problems,
    ) -> Result<(Profile, Vec<sampled::Span>)> {
        // A wasmprof profile has no order in time.
        Ok((profile::parse_profile(&bytes, path)?, Vec::new()))
    }
}

struct CpuProfileReader;

impl Reader for CpuProfileReader {
    fn kind(&self) -> InputKind {
        InputKind::CpuProfile
    }

    /// A `.cpuprofile`, or `Profiler.stop`'s result (`{profile: …}`).
    fn is_applicable(&self, keys: &TopLevelKeys) -> bool {
        let trace = keys.frames.is_some() || keys.stacks.is_some();
        keys.profile.is_some() || (!trace && (keys.nodes.is_some() || keys.time_deltas.is_some()))
    }

    fn read(
        &self,
        bytes: Vec<u8>,
        path: &Path,
        options: &sampled::Options,
        problems: &mut sampled::Problems,
    ) -> Result<(Profile, Vec<sampled::Span>)> {
        let parsed =
            sampled::parse_cpuprofile(&bytes).map_err(|e| malformed(path, self.kind(), e))?;
        drop(bytes);
        let source = path.display().to_string();
        Ok(sampled::cpuprofile::convert(
            &parsed, &source, options, problems,
        ))
    }
}

struct TraceReader;

impl Reader for TraceReader {
    fn kind(&self) -> InputKind {
        InputKind::SelfProfilingTrace
    }

    fn is_applicable(&self, keys: &TopLevelKeys) -> bool {
        keys.frames.is_some() || keys.stacks.is_some()
    }

    fn read(
        &self,
        bytes: Vec<u8>,
        path: &Path,
        options: &sampled::Options,
        problems: &mut sampled::Problems,
    ) -> Result<(Profile, Vec<sampled::Span>)> {
        let parsed: sampled::trace::Trace =
            serde_json::from_slice(&bytes).map_err(|e| malformed(path, self.kind(), e))?;
        drop(bytes);
        let source = path.display().to_string();
        Ok(sampled::trace::convert(&parsed, &source, options, problems))
    }
}

struct GeckoReader;

impl Reader for GeckoReader {
    fn kind(&self) -> InputKind {
        InputKind::GeckoProfile
    }

    fn is_applicable(&self, keys: &TopLevelKeys) -> bool {
        keys.meta.is_some() && keys.threads.is_some()
    }

    fn read(
        &self,
        bytes: Vec<u8>,
        path: &Path,
        options: &sampled::Options,
        problems: &mut sampled::Problems,
    ) -> Result<(Profile, Vec<sampled::Span>)> {
        let gecko: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| malformed(path, self.kind(), e))?;
        drop(bytes);
        let samples = sampled::gecko::program_samples(&gecko, None)
            .map_err(|what| malformed(path, self.kind(), GeckoShape(what)))?
            .ok_or_else(|| Error::NoWasmThread {
                path: path.to_owned(),
            })?;
        drop(gecko);
        let host = |samples| format!("Firefox's profiler (Gecko profile, {samples} samples)");
        firefox_samples(samples, path, self.kind(), host, options, problems)
    }
}

struct ProcessedReader;

impl Reader for ProcessedReader {
    fn kind(&self) -> InputKind {
        InputKind::FirefoxProfilerProfile
    }

    fn is_applicable(&self, keys: &TopLevelKeys) -> bool {
        keys.threads.is_some() && keys.is_processed()
    }

    fn read(
        &self,
        bytes: Vec<u8>,
        path: &Path,
        options: &sampled::Options,
        problems: &mut sampled::Problems,
    ) -> Result<(Profile, Vec<sampled::Span>)> {
        use sampled::processed::Refusal;
        let processed: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| malformed(path, self.kind(), e))?;
        drop(bytes);
        let samples = sampled::processed::program_samples(&processed)
            .map_err(|refusal| match refusal {
                Refusal::Version(version) => Error::ProcessedVersion {
                    path: path.to_owned(),
                    version,
                },
                Refusal::WrittenByWasmprof => Error::OwnFirefoxProfile {
                    path: path.to_owned(),
                },
                Refusal::NotSampled(what) | Refusal::Shape(what) => {
                    malformed(path, self.kind(), GeckoShape(what))
                }
            })?
            .ok_or_else(|| Error::NoWasmThread {
                path: path.to_owned(),
            })?;
        let product = processed["meta"]["product"]
            .as_str()
            .filter(|p| !p.is_empty())
            .unwrap_or("Firefox")
            .to_owned();
        drop(processed);
        let host = |samples| format!("{product} (a Firefox Profiler profile, {samples} samples)");
        firefox_samples(samples, path, self.kind(), host, options, problems)
    }
}

/// A Firefox profile's samples, as the `.cpuprofile` its reader made of
/// them, read as one; `host` names the profiler from the count of samples.
fn firefox_samples(
    samples: serde_json::Value,
    path: &Path,
    kind: InputKind,
    host: impl Fn(usize) -> String,
    options: &sampled::Options,
    problems: &mut sampled::Problems,
) -> Result<(Profile, Vec<sampled::Span>)> {
    let parsed: sampled::cpuprofile::CpuProfile =
        serde_json::from_value(samples).map_err(|e| malformed(path, kind, e))?;
    let source = path.display().to_string();
    let (mut profile, timeline) = sampled::cpuprofile::convert(&parsed, &source, options, problems);
    profile.run.host = host(parsed.samples.len());
    Ok((profile, timeline))
}

/// What is wrong with a Gecko profile's tables.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct GeckoShape(String);

/// Reads any file [`InputKind`] names, gzip-compressed or not, telling
/// them apart by their content.
pub fn read(path: &Path, options: &sampled::Options) -> Result<Input> {
    let bytes = std::fs::read(path).map_err(|source| Error::Read {
        path: path.to_owned(),
        source,
    })?;
    let bytes = gunzipped(bytes, path)?;
    let reader = reader_for(&bytes, path)?;
    let mut problems = sampled::Problems::default();
    let (profile, timeline) = reader.read(bytes, path, options, &mut problems)?;
    profile::check_invariants(&profile).map_err(|what| Error::InconsistentFile {
        path: path.to_owned(),
        what,
    })?;
    Ok(Input {
        kind: reader.kind(),
        profile,
        problems,
        timeline,
    })
}

/// `bytes` decompressed when they are gzip's (`profile.json.gz`, as the
/// Firefox Profiler downloads a profile), as they are otherwise.
fn gunzipped(bytes: Vec<u8>, path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len() * 4);
    flate2::read::MultiGzDecoder::new(&bytes[..])
        .read_to_end(&mut out)
        .map_err(|source| Error::Gzip {
            path: path.to_owned(),
            source,
        })?;
    Ok(out)
}

/// A snapshot, written by the runtime itself: nothing says how the run
/// ended but the snapshot, whose frames still open make it incomplete.
struct SnapshotReader;

impl Reader for SnapshotReader {
    fn kind(&self) -> InputKind {
        InputKind::Snapshot
    }

    fn is_applicable(&self, _: &TopLevelKeys) -> bool {
        // Told by its first bytes, not its keys (`reader_for`).
        false
    }

    fn read(
        &self,
        bytes: Vec<u8>,
        path: &Path,
        _: &sampled::Options,
        _: &mut sampled::Problems,
    ) -> Result<(Profile, Vec<sampled::Span>)> {
        let snapshot =
            wasmprof_wire::Snapshot::decode(&bytes).map_err(|e| malformed(path, self.kind(), e))?;
        // The file holds what the runtime knew, not the host's account of
        // the run: which host, how it ended and its wall time.
        let context = crate::snapshot::RunContext {
            package: path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            entry: "unknown".to_owned(),
            ..crate::snapshot::RunContext::default()
        };
        // Without a module, nothing can go wrong in naming its functions.
        let converted = crate::snapshot::to_profile(
            &snapshot,
            &crate::snapshot::RunEnding::unrecorded(),
            context,
        );
        Ok((converted.profile, Vec::new()))
    }
}

/// The reader for the file `bytes` hold, from their first bytes or their
/// top-level keys.
fn reader_for(bytes: &[u8], path: &Path) -> Result<&'static dyn Reader> {
    if bytes.starts_with(wasmprof_wire::MAGIC) {
        return Ok(&SnapshotReader);
    }
    let keys: TopLevelKeys = match serde_json::from_slice(bytes) {
        Ok(keys) => keys,
        Err(e) if e.is_eof() => {
            return Err(Error::Truncated {
                path: path.to_owned(),
                line: e.line(),
                column: e.column(),
            });
        }
        Err(source) => {
            return Err(Error::NotAnObject {
                path: path.to_owned(),
                source,
            });
        }
    };
    if let Some(reader) = READERS.iter().find(|r| r.is_applicable(&keys)) {
        return Ok(*reader);
    }
    Err(Error::UnknownKind {
        path: path.to_owned(),
        chrome_trace: keys.trace_events.is_some(),
    })
}

/// A file of a kind that is read, whose content is not that kind's.
fn malformed(
    path: &Path,
    kind: InputKind,
    source: impl std::error::Error + Send + Sync + 'static,
) -> Error {
    Error::Malformed {
        path: path.to_owned(),
        kind,
        source: Box::new(source),
    }
}

#[cfg(test)]
mod tests {
    use super::{InputKind, read, reader_for, sampled};
    use std::path::Path;

    fn kind(json: &str) -> InputKind {
        reader_for(json.as_bytes(), Path::new("x.json"))
            .unwrap()
            .kind()
    }

    #[test]
    fn each_kind_is_told_by_its_top_level_keys() {
        assert_eq!(
            kind(r#"{"format":"wasmprof/1","nodes":[]}"#),
            InputKind::Wasmprof
        );
        assert_eq!(
            kind(r#"{"nodes":[],"samples":[],"timeDeltas":[]}"#),
            InputKind::CpuProfile
        );
        assert_eq!(kind(r#"{"timeDeltas":[]}"#), InputKind::CpuProfile);
        assert_eq!(kind(r#"{"profile":{"nodes":[]}}"#), InputKind::CpuProfile);
        assert_eq!(
            kind(r#"{"frames":[],"stacks":[],"samples":[]}"#),
            InputKind::SelfProfilingTrace
        );
        assert_eq!(
            kind(r#"{"stacks":[],"nodes":[]}"#),
            InputKind::SelfProfilingTrace
        );
        assert_eq!(
            kind(r#"{"meta":{"version":34},"threads":[]}"#),
            InputKind::GeckoProfile
        );
    }

    #[test]
    fn a_firefox_profile_without_the_program_or_processed_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("firefox.json");
        let refuse = |json: &str| {
            std::fs::write(&path, json).unwrap();
            read(&path, &sampled::Options::default())
                .err()
                .unwrap()
                .to_string()
        };
        let empty = r#"{"meta":{"version":34,"interval":1},"threads":[]}"#;
        assert!(
            refuse(empty).contains("no thread ran WebAssembly"),
            "{}",
            refuse(empty)
        );
        let processed = r#"{"meta":{"version":34,"preprocessedProfileVersion":55},"threads":[]}"#;
        assert!(refuse(processed).contains("no thread ran WebAssembly"));
        let old = r#"{"meta":{"preprocessedProfileVersion":40},"threads":[]}"#;
        let error = refuse(old);
        assert!(
            error.contains("format version 40") && error.contains("download it again"),
            "{error}"
        );
        let new = r#"{"meta":{"preprocessedProfileVersion":80},"threads":[]}"#;
        assert!(
            refuse(new).ends_with("a newer wasmprof reads it"),
            "{}",
            refuse(new)
        );
        let broken = r#"{"meta":{"version":34},"threads":[{"name":"GeckoMain"}]}"#;
        let error = refuse(broken);
        assert!(
            error.contains("is a Firefox profile that cannot be read"),
            "{error}"
        );
        let whole = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sampled/firefox-fib.gecko.json"),
        )
        .unwrap();
        std::fs::write(&path, &whole[..whole.len() / 3]).unwrap();
        let error = read(&path, &sampled::Options::default()).err().unwrap();
        assert!(
            error.to_string().contains("corrupt or truncated"),
            "{error}"
        );
    }

    #[test]
    fn a_gzip_compressed_file_is_read_as_its_content_and_a_cut_one_is_refused() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let plain = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/sampled/node-appendix-b.cpuprofile");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&std::fs::read(&plain).unwrap()).unwrap();
        let gz = gz.finish().unwrap();
        let path = dir.path().join("profile.json.gz");
        std::fs::write(&path, &gz).unwrap();
        let read_gz = read(&path, &sampled::Options::default()).unwrap();
        let read_plain = read(&plain, &sampled::Options::default()).unwrap();
        assert_eq!(read_gz.kind, InputKind::CpuProfile);
        assert_eq!(read_gz.profile.nodes, read_plain.profile.nodes);
        std::fs::write(&path, &gz[..gz.len() / 2]).unwrap();
        let error = read(&path, &sampled::Options::default()).err().unwrap();
        assert!(
            error
                .to_string()
                .contains("is gzip-compressed but does not decompress"),
            "{error}"
        );
    }

    #[test]
    fn a_file_of_no_known_kind_is_refused_with_what_to_do() {
        let refuse = |json: &str| {
            reader_for(json.as_bytes(), Path::new("x.json"))
                .err()
                .unwrap()
                .to_string()
        };
        assert!(refuse(r#"{"traceEvents":[]}"#).contains("save the .cpuprofile itself"));
        assert!(refuse(r#"{"a":1}"#).contains("a kind of file wasmprof does not read"));
        assert!(refuse(r#"{"nodes":["#).contains("corrupt or truncated"));
        assert!(refuse("[1]").contains("not a JSON object"));
    }

    /// A component's snapshot, as its runtime writes it: `fib` called
    /// three times under `main`, `fib` still running (a panic).
    fn snapshot_bytes() -> Vec<u8> {
        use crate::fixtures::{snapshot_function as function, snapshot_node};
        let node = |parent, function, calls| snapshot_node(parent, function, calls, 1.0);
        wasmprof_wire::Snapshot {
            timed: true,
            functions: vec![function("app::main"), function("app::fib")],
            nodes: vec![node(u32::MAX, u32::MAX, 0), node(0, 0, 1), node(1, 1, 3)],
            current: 2,
            overflow: None,
            cap: 100,
            clock_cost: 0.0,
            futures: Vec::new(),
            memory: None,
            oracle: None,
            frames: None,
            threads: None,
        }
        .encode()
    }

    #[test]
    fn a_snapshot_file_is_read_as_the_profile_of_its_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.wprf");
        let bytes = snapshot_bytes();
        std::fs::write(&path, &bytes).unwrap();
        let input = read(&path, &sampled::Options::default()).unwrap();
        assert_eq!(input.kind, InputKind::Snapshot);
        let fib = input
            .profile
            .functions
            .iter()
            .position(|f| f.name == "app::fib");
        let calls: u64 = (input.profile.nodes.iter())
            .filter(|n| n.function == fib)
            .map(|n| n.calls)
            .sum();
        assert_eq!(calls, 3);
        // A frame still open: the run did not end there.
        assert!(!input.profile.run.complete);
        // Cut short, it is refused as a snapshot that cannot be read.
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let error = read(&path, &sampled::Options::default()).err().unwrap();
        assert!(
            error
                .to_string()
                .contains("is a wasmprof snapshot that cannot be read"),
            "{error}"
        );
    }
}
