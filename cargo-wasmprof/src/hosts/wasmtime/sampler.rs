//! wasmtime's sampler: the guest's stack, taken at every epoch tick.
//!
//! wasmtime has no sampling profiler of V8's kind, but its epoch
//! interruption gives the same thing: a thread ticks the engine's epoch
//! every `--sample-interval`, and the compiled code, which checks the
//! epoch at every function entry and loop back-edge, calls back into the
//! host on the guest's own thread, where the stack of wasm frames can be
//! read. The samples are written as a `.cpuprofile`, so that every reader
//! of the engines' samples (the hybrid, the timed run's coverage,
//! `report --input`) reads them as it reads V8's.
//!
//! Each frame is recorded with the instruction it was at, so that the
//! calls the compiler inlined there get their frames back from the
//! module's line tables when the samples are written (`line_tables.rs`).
//!
//! A threaded program's every thread is sampled, each at its own epoch
//! checks into samples of its own. A `.cpuprofile` has one thread, so the
//! threads' samples are written one thread after the other, each under a
//! frame that names it, `(thread N)`: what the file holds is the time of
//! all the threads together, as the instrumented profile's merged tree
//! holds their calls, and each thread's samples keep their own intervals,
//! which the readers of a timeline weigh them by.

use super::line_tables::InlinedCalls;
use crate::hosts::sampler_pace;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wasmtime::{FrameInfo, Store, UpdateDeadline, WasmBacktrace};

/// A frame's function: its module (where the module's code lies, unique
/// while the run lasts) and its index there. A component's core modules
/// number their functions each from 0.
type FunctionKey = (usize, u32);

/// A frame: its function, and the instruction it was at there (bytes into
/// the module), which tells apart the calls inlined into it.
type FrameKey = (FunctionKey, u32);

/// The stacks seen so far, as a `.cpuprofile`'s tree of frames.
#[derive(Clone)]
pub(crate) struct Samples {
    started: Instant,
    last: Instant,
    /// `(parent node, frame)` to node id; node 1 is the root.
    ids: HashMap<(u32, FrameKey), u32>,
    /// Each node's parent, name (in `names`) and instruction, by id (from
    /// 2; 1 is the root).
    nodes: Vec<(u32, u32, u32)>,
    /// Each function's name, asked for once: a function's frames at other
    /// instructions are other nodes.
    names: Vec<String>,
    name_ids: HashMap<FunctionKey, u32>,
    samples: Vec<u32>,
    deltas: Vec<u64>,
    /// The time of the threads appended after the first (`append`).
    appended_micros: u64,
}

impl Samples {
    pub(super) fn new() -> Samples {
        let now = Instant::now();
        Samples {
            started: now,
            last: now,
            ids: HashMap::new(),
            nodes: Vec::new(),
            names: Vec::new(),
            name_ids: HashMap::new(),
            samples: Vec::new(),
            deltas: Vec::new(),
            appended_micros: 0,
        }
    }

    /// Samples a thread's store records into, which the run reads at its
    /// end: a thread the run leaves behind (a pool's idle worker) keeps
    /// its store to itself.
    pub(super) fn new_shared() -> SharedSamples {
        Arc::new(Mutex::new(Samples::new()))
    }

    /// Appends `other`'s samples, another thread's, after these, its stacks
    /// under a frame named `thread`.
    fn append(&mut self, other: &Samples, thread: &str) {
        self.names.push(thread.to_owned());
        self.nodes.push((1, self.names.len() as u32 - 1, 0));
        let root = self.nodes.len() as u32 + 1;
        // Node ids: 1 is the root, `other`'s from 2, parents first.
        let mut renamed = vec![0, root];
        for &(parent, name, instruction) in &other.nodes {
            self.names.push(other.names[name as usize].clone());
            self.nodes.push((
                renamed[parent as usize],
                self.names.len() as u32 - 1,
                instruction,
            ));
            renamed.push(self.nodes.len() as u32 + 1);
        }
        self.samples
            .extend(other.samples.iter().map(|&s| renamed[s as usize]));
        self.deltas.extend_from_slice(&other.deltas);
        self.appended_micros += other.elapsed_micros();
    }

    /// The time from the sampler's start to its last sample.
    fn elapsed_micros(&self) -> u64 {
        self.last.duration_since(self.started).as_micros() as u64 + self.appended_micros
    }

    /// Records one sample of the guest's stack: each frame's function and
    /// instruction, and the function's name, asked for only the first time
    /// the function is seen (a sample allocates nothing once its stack is
    /// known).
    pub(super) fn record(&mut self, trace: &WasmBacktrace) {
        self.record_stack(trace.frames().iter().rev().map(|frame| {
            (frame_key(frame), || match frame.func_name() {
                Some(name) => name.to_owned(),
                None => format!("wasm-function[{}]", frame.func_index()),
            })
        }));
    }

    /// [`Samples::record`] of frames given `outermost_first`.
    fn record_stack<F: FnOnce() -> String>(
        &mut self,
        outermost_first: impl IntoIterator<Item = (FrameKey, F)>,
    ) {
        let now = Instant::now();
        let mut at = 1;
        for (frame, name) in outermost_first {
            at = match self.ids.get(&(at, frame)) {
                Some(&id) => id,
                None => {
                    let names = &mut self.names;
                    let name = *self.name_ids.entry(frame.0).or_insert_with(|| {
                        names.push(name());
                        names.len() as u32 - 1
                    });
                    self.nodes.push((at, name, frame.1));
                    let id = self.nodes.len() as u32 + 1;
                    self.ids.insert((at, frame), id);
                    id
                }
            };
        }
        self.samples.push(at);
        self.deltas
            .push(now.duration_since(self.last).as_micros() as u64);
        self.last = now;
    }

    /// The guest is about to run again after time outside it (between two
    /// requests): that time is no sample's.
    pub(super) fn resume(&mut self) {
        self.last = Instant::now();
    }

    /// The stacks with a frame below each frame for every call
    /// `inlined_at` its instruction (outermost first): each node's parent
    /// and name (ids from 2; 1 is the root), and each sample's node.
    fn with_inlined_calls(
        &self,
        mut inlined_at: impl FnMut(u32) -> Vec<String>,
    ) -> (Vec<(u32, String)>, Vec<u32>) {
        let mut nodes: Vec<(u32, String)> = Vec::new();
        let mut ids: HashMap<(u32, String), u32> = HashMap::new();
        let mut child = |parent: u32, name: String| -> u32 {
            *ids.entry((parent, name.clone())).or_insert_with(|| {
                nodes.push((parent, name));
                nodes.len() as u32 + 1
            })
        };
        // A node's parent comes before it: `renamed[id]` is ready for it.
        let mut renamed = vec![0, 1];
        for (parent, name, instruction) in &self.nodes {
            let name = self.names[*name as usize].clone();
            let mut id = child(renamed[*parent as usize], name);
            for callee in inlined_at(*instruction) {
                id = child(id, callee);
            }
            renamed.push(id);
        }
        let samples = self.samples.iter().map(|&s| renamed[s as usize]).collect();
        (nodes, samples)
    }

    /// The `.cpuprofile`, its wasm frames naming `module_url`. Times are
    /// microseconds from the sampler's start.
    pub(super) fn to_cpuprofile(&self, module_url: &str, inlined: Option<&InlinedCalls>) -> Value {
        // An instruction is on many paths: the tables are asked once.
        let mut asked: HashMap<u32, Vec<String>> = HashMap::new();
        let (nodes, samples) = self.with_inlined_calls(|instruction| match inlined {
            Some(inlined) => asked
                .entry(instruction)
                .or_insert_with(|| inlined.at(instruction as usize))
                .clone(),
            None => Vec::new(),
        });
        let frame = |name: &str, url: &str| {
            json!({
                "functionName": name,
                "scriptId": "0",
                "url": url,
                "lineNumber": -1,
                "columnNumber": -1,
            })
        };
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); nodes.len() + 2];
        for (index, (parent, _)) in nodes.iter().enumerate() {
            children[*parent as usize].push(index as u32 + 2);
        }
        let mut written = vec![json!({
            "id": 1,
            "callFrame": frame("(root)", ""),
            "children": children[1],
        })];
        for (index, (_, name)) in nodes.iter().enumerate() {
            let id = index as u32 + 2;
            written.push(json!({
                "id": id,
                "callFrame": frame(name, module_url),
                "children": children[id as usize],
            }));
        }
        let end = self.elapsed_micros();
        json!({
            "nodes": written,
            "startTime": 0,
            "endTime": end,
            "samples": samples,
            "timeDeltas": self.deltas,
        })
    }
}

/// Writes the samples as a `.cpuprofile` where the engine reads them
/// (`config.cpuprofile_out`), their frames naming the run's `.wasm`, with
/// the calls inlined where they were, when the module's line tables say.
pub(super) fn save(
    samples: &Samples,
    config: &crate::hosts::host::HostConfig,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let url = format!("file://{}", config.wasm.display());
    // A module or tables that cannot be read cost the inlined calls their
    // frames, not the samples. A component's core modules are inside it:
    // their frames stay as the build kept them.
    let module = std::fs::read(&config.wasm);
    let inlined = module
        .as_deref()
        .map_err(|e| anyhow::anyhow!("cannot read it: {e}"))
        .and_then(|module| match wasmparser::Parser::is_core_wasm(module) {
            true => InlinedCalls::read(module),
            false => Ok(None),
        });
    let inlined = inlined.unwrap_or_else(|error| {
        crate::terminal::warning(&format!(
            "{}: {error:#}; the samples are written without the calls the compiler \
             inlined, which are their callers' time",
            config.wasm.display()
        ));
        None
    });
    std::fs::write(
        &config.cpuprofile_out,
        samples.to_cpuprofile(&url, inlined.as_ref()).to_string(),
    )
    .with_context(|| format!("could not write {}", config.cpuprofile_out.display()))
}

fn frame_key(frame: &FrameInfo) -> FrameKey {
    let instruction = frame.module_offset().unwrap_or(0) as u32;
    (function_key(frame), instruction)
}

fn function_key(frame: &FrameInfo) -> FunctionKey {
    (
        frame.module().image_range().start as usize,
        frame.func_index(),
    )
}

/// Samples shared by the stores of one run (a handler's requests each have
/// a store of their own), or read at the end by another thread than the
/// one that records them.
pub(super) type SharedSamples = Arc<Mutex<Samples>>;

/// Writes a threaded run's samples: the main thread's, then each other
/// thread's, by its id, under a frame that names it.
pub(super) fn save_threads(
    main: &SharedSamples,
    threads: &[(i32, SharedSamples)],
    config: &crate::hosts::host::HostConfig,
) -> anyhow::Result<()> {
    let Ok(main) = main.lock() else {
        return Ok(());
    };
    if threads.is_empty() {
        return save(&main, config);
    }
    let mut all = main.clone();
    drop(main);
    for (id, samples) in threads {
        if let Ok(samples) = samples.lock()
            && !samples.samples.is_empty()
        {
            all.append(&samples, &format!("(thread {id})"));
        }
    }
    save(&all, config)
}

/// The samples of a sampled run (`config.sample_interval_micros`), shared
/// by its stores.
pub(super) fn new_shared(config: &crate::hosts::host::HostConfig) -> Option<SharedSamples> {
    config
        .sample_interval_micros
        .map(|_| Arc::new(Mutex::new(Samples::new())))
}

/// How often the epoch ticks in a sampled run: every tick samples each
/// thread that runs guest code, and the ticker slows while those threads
/// keep every core busy ([`sampler_pace`]).
#[derive(Clone)]
pub(super) struct Pace {
    interval: Duration,
    adapts: bool,
    cores: u32,
    /// Epoch checks that sampled since the ticker last looked: one per
    /// tick for each thread that ran guest code in between.
    sampled: Arc<AtomicU32>,
    /// The ticker slowed down at least once, which the run's summary says.
    slowed: Arc<AtomicBool>,
}

impl Pace {
    /// The pace of a run sampled every `interval_micros`; `adapts` unless
    /// the user chose the interval.
    pub(super) fn new(interval_micros: u32, adapts: bool) -> Pace {
        Pace {
            interval: Duration::from_micros(u64::from(interval_micros)),
            adapts,
            cores: sampler_pace::cores(),
            sampled: Arc::new(AtomicU32::new(0)),
            slowed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The pace of `config`'s run, if it is sampled.
    pub(super) fn of(config: &crate::hosts::host::HostConfig) -> Option<Pace> {
        config
            .sample_interval_micros
            .map(|micros| Pace::new(micros, !config.sample_interval_chosen))
    }

    /// A thread reached an epoch check and sampled.
    pub(super) fn sampled(&self) {
        self.sampled.fetch_add(1, Ordering::Relaxed);
    }

    /// How long until the next tick, from the threads that ran guest code
    /// since the last one.
    pub(super) fn next_tick(&self) -> Duration {
        let running = self.sampled.swap(0, Ordering::Relaxed);
        let next = sampler_pace::interval_for(self.interval, self.adapts, running, self.cores);
        if next != self.interval {
            self.slowed.store(true, Ordering::Relaxed);
        }
        next
    }

    /// The interval the ticker slowed to at some point of the run, if it
    /// did.
    pub(super) fn slowed_to(&self) -> Option<Duration> {
        self.slowed
            .load(Ordering::Relaxed)
            .then(|| self.interval.max(sampler_pace::BUSY_INTERVAL))
    }

    /// [`Pace::slowed_to`] in microseconds, as the run's result keeps it.
    pub(super) fn slowed_to_micros(pace: Option<&Pace>) -> Option<u64> {
        pace.and_then(Pace::slowed_to)
            .map(|interval| interval.as_micros() as u64)
    }
}

/// At every epoch tick of the store: its calls end with an interrupt once
/// `deadline` is past (`--timeout`), and else, if the run is sampled, the
/// guest's stack is recorded.
pub(super) fn watch<T: 'static>(
    store: &mut Store<T>,
    deadline: Instant,
    samples: Option<&SharedSamples>,
    pace: Option<&Pace>,
) {
    let samples = samples.cloned();
    let pace = pace.cloned();
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |context| {
        if Instant::now() >= deadline {
            return Ok(UpdateDeadline::Interrupt);
        }
        if let Some(mut samples) = samples.as_ref().and_then(|s| s.lock().ok()) {
            samples.record(&WasmBacktrace::capture(&context));
            if let Some(pace) = &pace {
                pace.sampled();
            }
        }
        Ok(UpdateDeadline::Continue(1))
    });
}

/// The guest runs again after time outside it (compiling, or the host's
/// work between two requests): that time is no sample's.
pub(super) fn resume(samples: Option<&SharedSamples>) {
    if let Some(mut samples) = samples.and_then(|s| s.lock().ok()) {
        samples.resume();
    }
}

/// Writes a sampled run's samples where the engine reads them.
pub(super) fn save_shared(
    samples: Option<&SharedSamples>,
    config: &crate::hosts::host::HostConfig,
) -> anyhow::Result<()> {
    match samples.map(|s| s.lock()) {
        Some(Ok(samples)) => save(&samples, config),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pace_counts_the_threads_that_sampled_since_the_last_tick() {
        let pace = Pace {
            interval: Duration::from_micros(100),
            adapts: true,
            cores: 2,
            sampled: Arc::new(AtomicU32::new(0)),
            slowed: Arc::new(AtomicBool::new(false)),
        };
        assert_eq!(pace.next_tick(), Duration::from_micros(100));
        assert_eq!(pace.slowed_to(), None);
        pace.sampled();
        pace.sampled();
        assert_eq!(pace.next_tick(), sampler_pace::BUSY_INTERVAL);
        assert_eq!(pace.slowed_to(), Some(sampler_pace::BUSY_INTERVAL));
        // Counted afresh for each tick.
        pace.sampled();
        assert_eq!(pace.next_tick(), Duration::from_micros(100));
        assert_eq!(pace.next_tick(), Duration::from_micros(100));
    }

    #[test]
    fn stacks_become_a_cpuprofile_the_readers_take() {
        let mut samples = Samples::new();
        for stack in [vec![0, 1, 2], vec![0, 1], vec![0, 1, 2]] {
            samples.record_stack(stack.into_iter().map(|f: u32| {
                (((0, f), 0), move || {
                    ["main", "run", "step"][f as usize].to_owned()
                })
            }));
        }
        assert_eq!(samples.samples.len(), 3);
        let text = samples.to_cpuprofile("file:///m.wasm", None).to_string();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.cpuprofile");
        std::fs::write(&path, text).unwrap();
        let read = wasmprof_profile::input::read(&path, &Default::default()).unwrap();
        let step = read
            .profile
            .nodes
            .iter()
            .enumerate()
            .find(|(i, _)| {
                let names: Vec<&str> = read
                    .profile
                    .stack(*i)
                    .iter()
                    .map(|&f| read.profile.functions[f].name.as_str())
                    .collect();
                names == ["main", "run", "step"]
            })
            .map(|(_, n)| n.samples);
        assert_eq!(step, Some(2));
    }

    #[test]
    fn calls_inlined_at_a_frame_s_instruction_become_frames_below_it() {
        let mut samples = Samples::new();
        // `run` at two instructions: in code inlined from `step` (at 10)
        // and in its own (at 20); then `step` itself, a frame of its own.
        for stack in [[(0, 0), (1, 10)], [(0, 0), (1, 20)], [(0, 0), (2, 30)]] {
            samples.record_stack(stack.into_iter().map(|(f, at): (u32, u32)| {
                (((0, f), at), move || {
                    ["main", "run", "step"][f as usize].to_owned()
                })
            }));
        }
        let (nodes, sampled) = samples.with_inlined_calls(|at| match at {
            10 => vec!["step".to_owned(), "decode".to_owned()],
            _ => Vec::new(),
        });
        let path = |mut id: u32| {
            let mut names = Vec::new();
            while id > 1 {
                let (parent, name) = &nodes[id as usize - 2];
                names.push(name.as_str());
                id = *parent;
            }
            names.reverse();
            names.join("/")
        };
        let paths: Vec<String> = sampled.into_iter().map(path).collect();
        assert_eq!(paths, ["main/run/step/decode", "main/run", "main/step"]);
        // `main` and `run` stay one node each, whatever their instructions.
        assert_eq!(nodes.len(), 5);
    }
}
