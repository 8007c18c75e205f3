//! The wire format of wasmprof's snapshot: the whole profile as bytes in a
//! module's linear memory, encoded by the runtime and decoded by
//! `cargo-wasmprof`. A crate of its own, without dependencies, so that the
//! tool reads a snapshot without the runtime, and the two cannot disagree
//! on the bytes.
//!
//! A host calls the module's `__wasmprof_snapshot` export whenever it wants
//! the data — after the program returns, after a trap, on a timeout — and
//! copies the bytes out. Nothing is pushed to the host while the program
//! runs, so a host needs no more than the `getTime` import and this export.
//!
//! Layout, all integers little-endian:
//!
//! ```text
//! header   "WPRF" total_len:u32 version:u32 flags:u32 n_functions:u32
//!          n_nodes:u32 current:u32 overflow:u32 cap:u32 clock_cost_ms:f64
//! function name_len:u32 name:[u8] file_len:u32 file:[u8] line:u32 tier:u32
//!          flags:u32 marker:u32 calls:u64
//! node     parent:u32 function:u32 flags:u32 calls:u64 timed_calls:u64
//!          inclusive_ms:f64
//! futures  n_futures:u32, then n_futures times:
//!          node:u32 polls:u64 completions:u64 cancellations:u64
//!          pending_ms:f64 latency_count:u64 latency_total_ms:f64
//!          latency_median_ms:f64 latency_max_ms:f64
//! memory   only when flags bit 1 is set: see [`memory`]
//! oracle   only when flags bit 2 is set (version 7):
//!          n_counts:u32, then n_counts times: marker:u32 calls:u64
//! frames   only when flags bit 3 is set (version 8): see [`frames`]
//! threads  only when flags bit 4 is set (version 9): see [`threads`]
//! ```
//!
//! `inclusive_ms` is the node's time with the clock's own cost taken out:
//! the sum of its timed calls, as measured. Flag bit 0: some calls were too
//! short to time, and their time is in the parent's. Bit 1 (time estimated
//! from a sample of the calls) was written by earlier runtimes, which
//! multiplied a timed call to stand for calls not timed; it is still read.
//! `timed_calls` is how many calls the time is of.
//!
//! `tier` 0: the function's calls are nodes, timed when calls are timed
//! (`calls` is 0); 1: counted only, `calls` in all, with no node, its time
//! in its callers'. Function flag bit 0: an `async fn`, whose node's calls
//! are futures created and whose time is its polls'; bit 1: its name was
//! given by hand, and rustc's (from the marker) only matches frames; bit 2:
//! a test, entered at the root.
//! `marker` is the function table slot of the function's name marker (see
//! `wasmprof_core::site::Marker`), or `u32::MAX`; version 4 had no marker.
//!
//! A future record describes the futures of one async call path (`node`):
//! their calls are the node's, `pending_ms` is the CPU time of those still
//! pending, and latency runs from a future's first poll to its completion.
//!
//! The oracle section holds a second count of each instrumented function's
//! calls, made by counters that share nothing with the tree or the count
//! sites (`--verify-counts`), keyed by the function's marker slot.
//!
//! `flags` bit 0: calls were timed; bit 1: memory was recorded (version 6);
//! bit 2: the oracle's counts follow (version 7). A node's `flags`: bit 0, some calls
//! too short to time; bit 2, a call that never returned (cut off the stack
//! after a panic that JavaScript caught). `current` is the innermost node still
//! running (0 when none is); `overflow` the overflow node or `u32::MAX`.
//! Node 0 is the root, with parent and function `u32::MAX`.

/// The bits of the header's `flags`: how calls were recorded, and which of
/// the optional sections follow the futures.
pub mod header_flags {
    /// Calls were timed (else counted only).
    pub const TIMED: u32 = 1;
    /// The memory section follows (version 6).
    pub const MEMORY: u32 = 1 << 1;
    /// The oracle's counts follow (version 7).
    pub const ORACLE: u32 = 1 << 2;
    /// The page frames follow (version 8).
    pub const FRAMES: u32 = 1 << 3;
    /// The threads follow (version 9).
    pub const THREADS: u32 = 1 << 4;
}

/// The bits of a node's `flags` (and of a thread's share of a node).
pub mod node_flags {
    /// Some calls were too short to time; their time is in the parent's.
    pub const PARTLY_TIMED: u32 = 1;
    /// The time was estimated from a sample of the calls: written by
    /// earlier runtimes only, and still read.
    pub const SAMPLED: u32 = 1 << 1;
    /// One of its calls never returned.
    pub const NEVER_RETURNED: u32 = 1 << 2;
}

/// The bits of a function's `flags`.
pub mod function_flags {
    /// An `async fn`: its node's calls are futures created.
    pub const ASYNC: u32 = 1;
    /// Its name was given in the attribute.
    pub const NAME_GIVEN: u32 = 1 << 1;
    /// A test (`#[wasmprof::instrument(test)]`).
    pub const TEST: u32 = 1 << 2;
}

pub use node_flags::NEVER_RETURNED;

pub const MAGIC: &[u8; 4] = b"WPRF";
pub const VERSION: u32 = 10;

pub mod animation_frames;
pub mod memory;
pub mod threads;
mod window;
pub use animation_frames::{FrameNode, SnapshotFrame, SnapshotFrames};
pub use memory::{FailedAlloc, MemoryGrow, PathMemory, SnapshotMemory};
pub use threads::{SnapshotThread, ThreadNode, ThreadRead};
pub use window::WindowError;

/// The oldest version [`Snapshot::decode`] reads.
const OLDEST_VERSION: u32 = 4;
const HEADER_LEN: usize = 4 * 9 + 8;

/// How a function is instrumented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Its calls are nodes of the tree: counted, timed, with their callees.
    Full,
    /// Its calls are counted, nothing more: no node, no time of its own
    /// (it is its callers' self time), callers not tracked.
    Counted,
}

/// A node's index in the snapshot.
pub type NodeId = u32;
/// The root node: the host, above every call.
pub const ROOT: NodeId = 0;
/// The root's function.
pub const NO_FUNCTION: u32 = u32::MAX;
/// The overflow node's function: calls on paths past the tree's capacity.
pub const OVERFLOW_FUNCTION: u32 = u32::MAX - 1;

/// A decoded snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub timed: bool,
    pub functions: Vec<SnapshotFunction>,
    pub nodes: Vec<SnapshotNode>,
    /// Innermost node still running; 0 (the root) when none is.
    pub current: NodeId,
    pub overflow: Option<NodeId>,
    pub cap: u32,
    /// What one clock read costs (ms), measured at start-up; 0 if untimed.
    pub clock_cost: f64,
    /// The futures of async functions, one record per call path.
    pub futures: Vec<SnapshotFuture>,
    /// Memory per call path, when the build recorded it (`--memory`).
    pub memory: Option<SnapshotMemory>,
    /// The oracle's counts, when the build has it (`--verify-counts`).
    pub oracle: Option<Vec<OracleCount>>,
    /// The animation frames a page host marked, when there were any.
    pub frames: Option<SnapshotFrames>,
    /// Each thread's share of the nodes, when more than one thread recorded
    /// calls (version 9).
    pub threads: Option<Vec<SnapshotThread>>,
}

/// The oracle's count of one function's calls: see [`Snapshot::oracle`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OracleCount {
    /// The function table slot of the function's name marker, the one its
    /// [`SnapshotFunction::marker`] names.
    pub marker: u32,
    pub calls: u64,
}

/// What the futures of one async call path did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SnapshotFuture {
    pub node: u32,
    pub polls: u64,
    pub completions: u64,
    /// Dropped before completing.
    pub cancellations: u64,
    /// CPU time (ms) of the futures still pending.
    pub pending_ms: f64,
    /// Completed futures whose latency was measured (0 untimed).
    pub latency_count: u64,
    pub latency_total_ms: f64,
    pub latency_median_ms: f64,
    pub latency_max_ms: f64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotFunction {
    pub name: String,
    pub file: String,
    pub line: u32,
    pub tier: Tier,
    /// An `async fn`.
    pub is_async: bool,
    /// For a counted function, its calls (it has no node); else 0.
    pub calls: u64,
    /// The function table slot of its name marker: the module's name
    /// section names the function there as rustc does.
    pub marker: Option<u32>,
    /// Its name was given by hand and is kept; rustc's only matches frames.
    pub name_given: bool,
    /// A test, entered at the root.
    pub is_test: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SnapshotNode {
    pub parent: u32,
    pub function: u32,
    pub calls: u64,
    /// How many calls the time stands for.
    pub timed_calls: u64,
    /// [`node_flags`].
    pub flags: u32,
    /// Raw time of the timed calls, in milliseconds.
    pub inclusive: f64,
}

/// How a node's time was obtained.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeTiming {
    /// Some calls were too short to time; their time is in the parent's.
    pub partly_timed: bool,
    /// The time is estimated from a sample of the calls.
    pub sampled: bool,
}

/// Why bytes are not a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecodeError {}
impl Snapshot {
    /// Function names on the path from the root to `node`, outermost first.
    pub fn path_names(&self, node: usize) -> Vec<String> {
        let mut names = Vec::new();
        let mut at = node;
        while at != ROOT as usize && at < self.nodes.len() {
            let n = &self.nodes[at];
            names.push(match n.function {
                OVERFLOW_FUNCTION => "<overflow>".to_owned(),
                f => self.functions[f as usize].name.clone(),
            });
            at = n.parent as usize;
        }
        names.reverse();
        names
    }

    /// Inclusive time of every node in milliseconds, never negative (clock
    /// jitter could make a total so), with what [`NodeTiming`] says of it.
    pub fn inclusive_times(&self) -> Vec<(f64, NodeTiming)> {
        self.nodes
            .iter()
            .map(|node| {
                let timing = NodeTiming {
                    partly_timed: self.timed && node.flags & node_flags::PARTLY_TIMED != 0,
                    sampled: self.timed && node.flags & node_flags::SAMPLED != 0,
                };
                (node.inclusive.max(0.0), timing)
            })
            .collect()
    }

    /// Names of the calls still running, outermost first.
    pub fn open_path(&self) -> Vec<String> {
        self.path_names(self.current as usize)
    }

    /// The bytes a host copies out of linear memory.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + self.nodes.len() * 24);
        out.extend_from_slice(MAGIC);
        for word in [
            0, // total length, patched below
            VERSION,
            flag(self.timed, header_flags::TIMED)
                | flag(self.memory.is_some(), header_flags::MEMORY)
                | flag(self.oracle.is_some(), header_flags::ORACLE)
                | flag(self.frames.is_some(), header_flags::FRAMES)
                | flag(self.threads.is_some(), header_flags::THREADS),
            self.functions.len() as u32,
            self.nodes.len() as u32,
            self.current,
            self.overflow.unwrap_or(u32::MAX),
            self.cap,
        ] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(&self.clock_cost.to_le_bytes());
        for f in &self.functions {
            for text in [&f.name, &f.file] {
                out.extend_from_slice(&(text.len() as u32).to_le_bytes());
                out.extend_from_slice(text.as_bytes());
            }
            out.extend_from_slice(&f.line.to_le_bytes());
            let tier: u32 = match f.tier {
                Tier::Full => 0,
                Tier::Counted => 1,
            };
            out.extend_from_slice(&tier.to_le_bytes());
            let flags = flag(f.is_async, function_flags::ASYNC)
                | flag(f.name_given, function_flags::NAME_GIVEN)
                | flag(f.is_test, function_flags::TEST);
            out.extend_from_slice(&flags.to_le_bytes());
            out.extend_from_slice(&f.marker.unwrap_or(u32::MAX).to_le_bytes());
            out.extend_from_slice(&f.calls.to_le_bytes());
        }
        for n in &self.nodes {
            out.extend_from_slice(&n.parent.to_le_bytes());
            out.extend_from_slice(&n.function.to_le_bytes());
            out.extend_from_slice(&n.flags.to_le_bytes());
            out.extend_from_slice(&n.calls.to_le_bytes());
            out.extend_from_slice(&n.timed_calls.to_le_bytes());
            out.extend_from_slice(&n.inclusive.to_le_bytes());
        }
        out.extend_from_slice(&(self.futures.len() as u32).to_le_bytes());
        for f in &self.futures {
            out.extend_from_slice(&f.node.to_le_bytes());
            for word in [f.polls, f.completions, f.cancellations] {
                out.extend_from_slice(&word.to_le_bytes());
            }
            out.extend_from_slice(&f.pending_ms.to_le_bytes());
            out.extend_from_slice(&f.latency_count.to_le_bytes());
            for ms in [f.latency_total_ms, f.latency_median_ms, f.latency_max_ms] {
                out.extend_from_slice(&ms.to_le_bytes());
            }
        }
        if let Some(memory) = &self.memory {
            memory.encode(&mut out);
        }
        if let Some(oracle) = &self.oracle {
            out.extend_from_slice(&(oracle.len() as u32).to_le_bytes());
            for count in oracle {
                out.extend_from_slice(&count.marker.to_le_bytes());
                out.extend_from_slice(&count.calls.to_le_bytes());
            }
        }
        if let Some(frames) = &self.frames {
            frames.encode(&mut out);
        }
        if let Some(threads) = &self.threads {
            threads::encode(threads, &mut out);
        }
        let total = out.len() as u32;
        out[4..8].copy_from_slice(&total.to_le_bytes());
        out
    }

    /// Reads bytes written by [`Snapshot::encode`], checking every length and
    /// index so that corrupt input is an error, never a panic.
    pub fn decode(bytes: &[u8]) -> Result<Snapshot, DecodeError> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(4)? != MAGIC {
            return Err(DecodeError(
                "not a wasmprof snapshot (no WPRF magic)".into(),
            ));
        }
        let total = r.u32()? as usize;
        if total != bytes.len() {
            return Err(DecodeError(format!(
                "snapshot is {} bytes but says it is {total} (truncated?)",
                bytes.len()
            )));
        }
        let version = r.u32()?;
        if !(OLDEST_VERSION..=VERSION).contains(&version) {
            return Err(DecodeError(format!(
                "snapshot version {version}; this wasmprof reads versions \
                 {OLDEST_VERSION} to {VERSION}"
            )));
        }
        let flags = r.u32()?;
        let n_functions = r.u32()? as usize;
        let n_nodes = r.u32()? as usize;
        let current = r.u32()?;
        let overflow = match r.u32()? {
            u32::MAX => None,
            n => Some(n),
        };
        let cap = r.u32()?;
        let clock_cost = f64::from_bits(r.u64()?);
        let mut functions = Vec::with_capacity(n_functions.min(bytes.len()));
        for _ in 0..n_functions {
            functions.push(r.function(version)?);
        }
        let mut nodes = Vec::with_capacity(n_nodes.min(bytes.len() / 36));
        for index in 0..n_nodes {
            nodes.push(r.node(index, n_functions)?);
        }
        let n_futures = r.u32()? as usize;
        let mut futures = Vec::with_capacity(n_futures.min(bytes.len() / 68));
        for _ in 0..n_futures {
            futures.push(r.future(nodes.len())?);
        }
        let memory = if flags & header_flags::MEMORY != 0 {
            Some(SnapshotMemory::decode(&mut r, nodes.len())?)
        } else {
            None
        };
        let oracle = if flags & header_flags::ORACLE != 0 {
            let n = r.u32()? as usize;
            let mut counts = Vec::with_capacity(n.min(r.remaining() / 12));
            for _ in 0..n {
                counts.push(OracleCount {
                    marker: r.u32()?,
                    calls: r.u64()?,
                });
            }
            Some(counts)
        } else {
            None
        };
        let frames = if flags & header_flags::FRAMES != 0 {
            Some(SnapshotFrames::decode(&mut r, nodes.len())?)
        } else {
            None
        };
        let threads = if flags & header_flags::THREADS != 0 {
            Some(threads::decode(&mut r, nodes.len(), version)?)
        } else {
            None
        };
        if r.at != bytes.len() {
            return Err(DecodeError("snapshot has trailing bytes".into()));
        }
        if !nodes.is_empty() && current as usize >= nodes.len() {
            return Err(DecodeError("snapshot's current node does not exist".into()));
        }
        Ok(Snapshot {
            timed: flags & header_flags::TIMED != 0,
            functions,
            nodes,
            current,
            overflow,
            cap,
            clock_cost,
            futures,
            memory,
            oracle,
            frames,
            threads,
        })
    }
}

/// `bit` if `on`, else 0.
fn flag(on: bool, bit: u32) -> u32 {
    if on { bit } else { 0 }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// The records of the snapshot, each read and checked.
impl Reader<'_> {
    fn function(&mut self, version: u32) -> Result<SnapshotFunction, DecodeError> {
        let name = self.string()?;
        let file = self.string()?;
        let line = self.u32()?;
        let tier = match self.u32()? {
            0 => Tier::Full,
            1 => Tier::Counted,
            other => {
                return Err(DecodeError(format!(
                    "snapshot function {name} has an unknown tier {other}"
                )));
            }
        };
        let flags = self.u32()?;
        let marker = match version {
            4 => None,
            _ => Some(self.u32()?).filter(|&slot| slot != u32::MAX),
        };
        Ok(SnapshotFunction {
            name,
            file,
            line,
            tier,
            is_async: flags & function_flags::ASYNC != 0,
            calls: self.u64()?,
            marker,
            name_given: flags & function_flags::NAME_GIVEN != 0,
            is_test: flags & function_flags::TEST != 0,
        })
    }

    /// Node `index`: its parent comes before it, and its function exists.
    fn node(&mut self, index: usize, n_functions: usize) -> Result<SnapshotNode, DecodeError> {
        let node = SnapshotNode {
            parent: self.u32()?,
            function: self.u32()?,
            flags: self.u32()?,
            calls: self.u64()?,
            timed_calls: self.u64()?,
            inclusive: f64::from_bits(self.u64()?),
        };
        let root = index == 0;
        let parent_ok = if root {
            node.parent == u32::MAX
        } else {
            (node.parent as usize) < index
        };
        let function_ok = match node.function {
            NO_FUNCTION => root,
            OVERFLOW_FUNCTION => !root,
            f => !root && (f as usize) < n_functions,
        };
        if !parent_ok || !function_ok {
            return Err(DecodeError(format!(
                "snapshot node {index} is inconsistent"
            )));
        }
        Ok(node)
    }

    /// A future record, of a node other than the root.
    fn future(&mut self, n_nodes: usize) -> Result<SnapshotFuture, DecodeError> {
        let future = SnapshotFuture {
            node: self.u32()?,
            polls: self.u64()?,
            completions: self.u64()?,
            cancellations: self.u64()?,
            pending_ms: self.f64()?,
            latency_count: self.u64()?,
            latency_total_ms: self.f64()?,
            latency_median_ms: self.f64()?,
            latency_max_ms: self.f64()?,
        };
        if future.node == ROOT || future.node as usize >= n_nodes {
            return Err(DecodeError(format!(
                "snapshot future record names node {}, which is not an async call",
                future.node
            )));
        }
        Ok(future)
    }
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len());
        let end = end.ok_or_else(|| DecodeError("snapshot is truncated".into()))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn f64(&mut self) -> Result<f64, DecodeError> {
        self.u64().map(f64::from_bits)
    }
    fn string(&mut self) -> Result<String, DecodeError> {
        let len = self.u32()? as usize;
        String::from_utf8(self.take(len)?.to_vec())
            .map_err(|_| DecodeError("snapshot has a name that is not UTF-8".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Snapshot {
        Snapshot {
            timed: true,
            functions: vec![SnapshotFunction {
                name: "a::b".into(),
                file: "src/lib.rs".into(),
                line: 7,
                tier: Tier::Full,
                is_async: true,
                calls: 0,
                marker: Some(12),
                name_given: true,
                is_test: true,
            }],
            nodes: vec![
                SnapshotNode {
                    parent: u32::MAX,
                    function: NO_FUNCTION,
                    calls: 0,
                    timed_calls: 0,
                    flags: 0,
                    inclusive: 0.0,
                },
                SnapshotNode {
                    parent: 0,
                    function: 0,
                    calls: 3,
                    timed_calls: 3,
                    flags: 0,
                    inclusive: 1.5,
                },
            ],
            current: 1,
            overflow: None,
            cap: 100,
            clock_cost: 0.0,
            futures: vec![SnapshotFuture {
                node: 1,
                polls: 7,
                completions: 2,
                cancellations: 1,
                pending_ms: 0.25,
                latency_count: 2,
                latency_total_ms: 30.0,
                latency_median_ms: 15.0,
                latency_max_ms: 20.0,
            }],
            memory: None,
            oracle: None,
            frames: None,
            threads: None,
        }
    }

    fn with_memory() -> Snapshot {
        Snapshot {
            memory: Some(SnapshotMemory {
                first_pages: 17,
                pages: 19,
                live_blocks: 1,
                live_bytes: 400,
                peak_blocks: 2,
                peak_bytes: 1400,
                runtime_bytes: 64,
                failed: Some(FailedAlloc {
                    node: 1,
                    bytes: 1 << 31,
                }),
                paths: vec![PathMemory {
                    node: 1,
                    allocs: 2,
                    alloc_bytes: 1400,
                    frees: 1,
                    freed_bytes: 1000,
                    reallocs: 0,
                    live_blocks: 1,
                    live_bytes: 400,
                    peak_blocks: 2,
                    peak_bytes: 1400,
                    grows: 1,
                    grown_pages: 2,
                }],
                grows: vec![MemoryGrow {
                    node: 1,
                    pages_before: 17,
                    pages_after: 19,
                    request: 1000,
                }],
                grows_dropped: 0,
            }),
            ..sample()
        }
    }

    #[test]
    fn memory_round_trips_and_its_truncations_are_errors() {
        let bytes = with_memory().encode();
        assert_eq!(Snapshot::decode(&bytes).unwrap(), with_memory());
        for len in 0..bytes.len() {
            assert!(Snapshot::decode(&bytes[..len]).is_err(), "len {len}");
        }
    }

    #[test]
    fn a_memory_record_of_a_node_that_does_not_exist_is_rejected() {
        let mut s = with_memory();
        s.memory.as_mut().unwrap().paths[0].node = 9;
        let error = Snapshot::decode(&s.encode()).unwrap_err();
        assert!(error.0.contains("node 9"), "{error}");
    }

    #[test]
    fn timing_flags_are_read_and_times_never_negative() {
        let mut s = sample();
        s.nodes[1] = SnapshotNode {
            parent: 0,
            function: 0,
            calls: 2,
            timed_calls: 2,
            flags: 0,
            inclusive: -0.001,
        };
        s.nodes.push(SnapshotNode {
            parent: 1,
            function: 0,
            calls: 1000,
            timed_calls: 400,
            flags: 3,
            inclusive: 2.0,
        });
        let e = Snapshot::decode(&s.encode()).unwrap().inclusive_times();
        assert_eq!(e[1], (0.0, NodeTiming::default()));
        let both = NodeTiming {
            partly_timed: true,
            sampled: true,
        };
        assert_eq!(e[2], (2.0, both));
    }

    #[test]
    fn the_oracle_s_counts_round_trip_and_their_truncations_are_errors() {
        let s = Snapshot {
            oracle: Some(vec![
                OracleCount {
                    marker: 12,
                    calls: 3,
                },
                OracleCount {
                    marker: 40,
                    calls: u64::MAX,
                },
            ]),
            frames: None,
            ..with_memory()
        };
        let bytes = s.encode();
        assert_eq!(Snapshot::decode(&bytes).unwrap(), s);
        for len in 0..bytes.len() {
            assert!(Snapshot::decode(&bytes[..len]).is_err(), "len {len}");
        }
        let empty = Snapshot {
            oracle: Some(Vec::new()),
            frames: None,
            ..sample()
        };
        assert_eq!(Snapshot::decode(&empty.encode()).unwrap(), empty);
    }

    #[test]
    fn frames_round_trip_and_their_truncations_and_bad_nodes_are_errors() {
        let s = Snapshot {
            frames: Some(SnapshotFrames {
                first_start_ms: 100.0,
                last_start_ms: 1100.5,
                durations_ms: vec![16.5, 2.25, 40.0],
                worst: vec![SnapshotFrame {
                    index: 2,
                    start_ms: 1100.5,
                    duration_ms: 40.0,
                    nodes: vec![FrameNode {
                        node: 1,
                        calls: 40,
                        timed_calls: 40,
                        inclusive_ms: 39.5,
                    }],
                }],
            }),
            ..with_memory()
        };
        let bytes = s.encode();
        assert_eq!(Snapshot::decode(&bytes).unwrap(), s);
        for len in 0..bytes.len() {
            assert!(Snapshot::decode(&bytes[..len]).is_err(), "len {len}");
        }
        let mut bad = s.clone();
        bad.frames.as_mut().unwrap().worst[0].nodes[0].node = 99;
        let error = Snapshot::decode(&bad.encode()).unwrap_err();
        assert!(error.0.contains("node 99"), "{error:?}");
    }

    #[test]
    fn threads_round_trip_and_their_truncations_and_bad_nodes_are_errors() {
        let thread = |name: &str, calls| SnapshotThread {
            name: name.into(),
            read: crate::ThreadRead::Answered,
            nodes: vec![ThreadNode {
                node: 1,
                flags: 0,
                calls,
                timed_calls: calls,
                inclusive: 2.5,
            }],
        };
        let s = Snapshot {
            threads: Some(vec![thread("main", 1), thread("worker-0", 3)]),
            ..with_memory()
        };
        let bytes = s.encode();
        assert_eq!(Snapshot::decode(&bytes).unwrap(), s);
        for len in 0..bytes.len() {
            assert!(Snapshot::decode(&bytes[..len]).is_err(), "len {len}");
        }
        for node in [0, 99] {
            let mut bad = s.clone();
            bad.threads.as_mut().unwrap()[1].nodes[0].node = node;
            let error = Snapshot::decode(&bad.encode()).unwrap_err();
            assert!(
                error.0.contains(&format!("worker-0 names node {node}")),
                "{error:?}"
            );
        }
    }

    #[test]
    fn how_each_thread_was_read_round_trips_and_version_9_reads_as_answered() {
        let thread = |name: &str, read| SnapshotThread {
            name: name.into(),
            read,
            nodes: vec![ThreadNode {
                node: 1,
                flags: 0,
                calls: 1,
                timed_calls: 1,
                inclusive: 1.0,
            }],
        };
        let s = Snapshot {
            threads: Some(vec![
                thread("main", ThreadRead::Answered),
                thread("idle", ThreadRead::WhereItStood),
                thread("trapped", ThreadRead::MidRecord),
            ]),
            ..sample()
        };
        let bytes = s.encode();
        assert_eq!(Snapshot::decode(&bytes).unwrap(), s);
        // Each thread's `read` follows its name: a bad one is an error...
        let at = |name: &str| {
            let pattern = [&(name.len() as u32).to_le_bytes()[..], name.as_bytes()].concat();
            bytes
                .windows(pattern.len())
                .position(|w| w == pattern)
                .unwrap()
                + pattern.len()
        };
        let mut bad = bytes.clone();
        let idle = at("idle");
        bad[idle..idle + 4].copy_from_slice(&7u32.to_le_bytes());
        let error = Snapshot::decode(&bad).unwrap_err();
        assert!(
            error.0.contains("idle was read in an unknown way (7)"),
            "{error:?}"
        );
        // ...and version 9 had none: every thread reads as answered.
        let mut old = bytes.clone();
        for name in ["trapped", "idle", "main"] {
            let at = at(name);
            old.drain(at..at + 4);
        }
        let total = old.len() as u32;
        old[4..8].copy_from_slice(&total.to_le_bytes());
        old[8..12].copy_from_slice(&9u32.to_le_bytes());
        let read = Snapshot::decode(&old).unwrap();
        let reads: Vec<ThreadRead> = read.threads.unwrap().iter().map(|t| t.read).collect();
        assert_eq!(reads, [ThreadRead::Answered; 3]);
    }

    #[test]
    fn encode_decode_round_trip() {
        assert_eq!(Snapshot::decode(&sample().encode()).unwrap(), sample());
    }

    #[test]
    fn a_version_4_snapshot_reads_without_markers() {
        let mut bytes = sample().encode();
        let function = &sample().functions[0];
        // The marker follows name, file, line, tier and flags.
        let marker_at = HEADER_LEN + 4 + function.name.len() + 4 + function.file.len() + 12;
        bytes.drain(marker_at..marker_at + 4);
        let total = bytes.len() as u32;
        bytes[4..8].copy_from_slice(&total.to_le_bytes());
        bytes[8..12].copy_from_slice(&4u32.to_le_bytes());
        let read = Snapshot::decode(&bytes).unwrap();
        assert_eq!(read.functions[0].marker, None);
        assert_eq!(read.functions[0].name, function.name);
        assert_eq!(read.nodes, sample().nodes);
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let bytes = sample().encode();
        for len in 0..bytes.len() {
            assert!(Snapshot::decode(&bytes[..len]).is_err(), "len {len}");
        }
    }

    #[test]
    fn bad_indices_are_rejected() {
        let mut s = sample();
        s.nodes[1].function = 5;
        assert!(Snapshot::decode(&s.encode()).is_err());
        let mut s = sample();
        s.nodes[1].parent = 1;
        assert!(Snapshot::decode(&s.encode()).is_err());
        let mut s = sample();
        s.futures[0].node = 2;
        assert!(Snapshot::decode(&s.encode()).is_err());
    }
}
