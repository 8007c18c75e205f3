//! Firefox's profiles, as the Gecko profiler writes them (`meta.version`
//! 34 in Firefox 153; what about:profiling saves, `MOZ_PROFILER_SHUTDOWN`
//! writes and `Services.profiler.getProfileDataAsync()` gives), turned
//! into a `.cpuprofile` so that everything that reads V8's samples reads
//! Firefox's.
//!
//! A Gecko profile is one table of samples per thread, in every process
//! (`processes[]`, recursively). A sample names a stack, a stack is a
//! frame and its prefix, a frame is a label in the thread's string table:
//!
//! - a wasm function: `module.wasm.name (URL:offset)`, the name from the
//!   module's name section (prefixed with the module's own name), the
//!   offset the function's in the module;
//! - a JavaScript function: `name (URL:line:column)[realm]`;
//! - everything else: the browser's own code (C++ labels, self-hosted
//!   JavaScript, the trampolines between wasm and JavaScript).
//!
//! The program's frames (wasm, and JavaScript loaded from a URL) are kept;
//! the browser's are left out of the stacks, so that a sample in the
//! browser's code called from the program is the program's caller's time,
//! as a V8 profile has it. A sample with no program frame at all is
//! `(idle)`, `(garbage collector)` or `(browser)`, by the category of its
//! innermost frame. A sample of a thread that used no CPU since the one
//! before is `(idle)` whatever its stack: a sleeping thread's samples
//! repeat the stack it fell asleep in.

use std::collections::HashMap;

use serde_json::{Value, json};

/// One thread of a Gecko profile, with its samples as a `.cpuprofile`.
#[derive(Debug, Clone)]
pub struct GeckoThread {
    /// `GeckoMain`, `DOM Worker`, …
    pub name: String,
    /// The process's name or type (`Isolated Web Content`, `tab`, …).
    pub process: String,
    /// The thread's id, as the profile gives it.
    pub tid: String,
    /// When the thread started, from the first process's start (ms).
    pub registered_ms: f64,
    /// Its samples whose stacks have a wasm frame.
    pub wasm_samples: usize,
    /// Its samples whose stacks have a frame of a script loaded from
    /// `origin` (or, without one, from any URL).
    pub program_samples: usize,
    /// Its samples, as a `.cpuprofile`.
    pub cpuprofile: Value,
}

/// Whether a JSON object is a profile as Gecko writes it: `meta.version`
/// and `threads`. A profile the Firefox Profiler has processed says
/// `meta.preprocessedProfileVersion`, and its tables are laid out
/// otherwise ([`is_processed`]).
pub fn is_gecko(profile: &Value) -> bool {
    profile["meta"]["version"].is_number()
        && profile["threads"].is_array()
        && !is_processed(profile)
}

/// Whether a JSON object is a profile the Firefox Profiler processed (the
/// front-end's "Download", or a profile shared from it).
pub fn is_processed(profile: &Value) -> bool {
    profile["meta"]["preprocessedProfileVersion"].is_number()
}

/// Every thread of `profile`, in every process, in the order the profile
/// lists them. `origin` (`http://127.0.0.1:41977`) says which scripts are
/// the program's; without it, any script loaded from a URL is.
pub fn threads(profile: &Value, origin: Option<&str>) -> Result<Vec<GeckoThread>, String> {
    let start = profile["meta"]["startTime"].as_f64().unwrap_or(0.0);
    let mut out = Vec::new();
    collect(profile, start, origin, &mut out, 0)?;
    Ok(out)
}

/// The samples of the program's threads, the threads that ran its code
/// (any wasm, or with `origin` its scripts), as one `.cpuprofile`: the
/// first main thread (`GeckoMain`) among them at the root, the others
/// under a frame each (`(worker 1)`, in the order they started). `None`
/// when no thread ran the program.
pub fn program_samples(profile: &Value, origin: Option<&str>) -> Result<Option<Value>, String> {
    Ok(merged_program_threads(
        threads(profile, origin)?,
        origin.is_some(),
    ))
}

/// The threads that ran the program (any wasm, or with `by_origin` a
/// script of its origin) merged into one `.cpuprofile`, as
/// [`program_samples`] says.
pub(super) fn merged_program_threads(threads: Vec<GeckoThread>, by_origin: bool) -> Option<Value> {
    let mut threads: Vec<GeckoThread> = threads
        .into_iter()
        .filter(|t| t.wasm_samples > 0 || (by_origin && t.program_samples > 0))
        .collect();
    if threads.is_empty() {
        return None;
    }
    threads.sort_by(|a, b| {
        let main = |t: &GeckoThread| t.name != "GeckoMain";
        main(a)
            .cmp(&main(b))
            .then(a.registered_ms.total_cmp(&b.registered_ms))
    });
    let mut threads = threads.into_iter();
    let first = threads.next().map(|t| t.cpuprofile).unwrap_or_default();
    let mut workers = 0;
    let others: Vec<(String, Value)> = threads
        .map(|t| {
            let name = if t.name == "GeckoMain" {
                format!("{} {}", t.process, t.tid)
            } else {
                workers += 1;
                format!("worker {workers}")
            };
            (name, t.cpuprofile)
        })
        .collect();
    let (merged, _) = super::threads::merged(first, &others);
    Some(merged)
}

/// How deep `processes[]` may nest: a profile is a tree of processes one
/// or two levels deep; a deeper one is not Gecko's.
const MAX_PROCESS_DEPTH: usize = 8;

fn collect(
    process: &Value,
    first_start: f64,
    origin: Option<&str>,
    out: &mut Vec<GeckoThread>,
    depth: usize,
) -> Result<(), String> {
    if depth > MAX_PROCESS_DEPTH {
        return Err("its processes nest deeper than a Gecko profile's".into());
    }
    let meta = &process["meta"];
    // Each process's times count from its own start.
    let offset = meta["startTime"].as_f64().unwrap_or(first_start) - first_start;
    let interval = meta["interval"]
        .as_f64()
        .filter(|i| *i > 0.0)
        .unwrap_or(1.0);
    let categories = category_names(meta);
    let threads = process["threads"]
        .as_array()
        .ok_or("a process has no `threads` list")?;
    for (index, thread) in threads.iter().enumerate() {
        let read = ThreadTables::read(thread)
            .map_err(|what| format!("thread {index} ({}): {what}", thread["name"]))?;
        out.push(read.convert(thread, offset, interval, &categories, origin));
    }
    if let Some(children) = process["processes"].as_array() {
        for child in children {
            collect(child, first_start, origin, out, depth + 1)?;
        }
    }
    Ok(())
}

/// Each category's name, by its index (`meta.categories`).
pub(super) fn category_names(meta: &Value) -> Vec<String> {
    meta["categories"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|c| c["name"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// A table as Gecko writes one: `{schema: {column: index}, data: [rows]}`,
/// a row's trailing empty cells left out.
struct Table<'a> {
    columns: HashMap<&'a str, usize>,
    rows: &'a [Value],
}

impl<'a> Table<'a> {
    fn read(table: &'a Value, what: &str) -> Result<Table<'a>, String> {
        let schema = table["schema"]
            .as_object()
            .ok_or_else(|| format!("its {what} has no schema"))?;
        let columns = schema
            .iter()
            .filter_map(|(name, index)| Some((name.as_str(), index.as_u64()? as usize)))
            .collect();
        let rows = table["data"]
            .as_array()
            .ok_or_else(|| format!("its {what} has no data"))?;
        Ok(Table { columns, rows })
    }

    fn has(&self, column: &str) -> bool {
        self.columns.contains_key(column)
    }

    fn cell(&self, row: usize, column: &str) -> &'a Value {
        static NULL: Value = Value::Null;
        match self.columns.get(column) {
            // A row past the table (an index in the file) is empty.
            Some(&index) => (self.rows.get(row))
                .and_then(|cells| cells.get(index))
                .unwrap_or(&NULL),
            None => &NULL,
        }
    }

    fn index(&self, row: usize, column: &str) -> Option<usize> {
        self.cell(row, column).as_u64().map(|i| i as usize)
    }
}

/// One thread's tables, as Gecko writes them.
struct ThreadTables<'a> {
    samples: Table<'a>,
    stacks: Table<'a>,
    frames: Table<'a>,
    strings: &'a [Value],
}

/// What a frame is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum FrameKind {
    /// The program's: wasm or a script's function.
    Program {
        name: String,
        url: String,
        /// 0-based, as in a `.cpuprofile` (0 for wasm).
        line: i64,
        /// 0-based; for wasm, the function's offset in the module.
        column: i64,
        wasm: bool,
    },
    /// The browser's own.
    Browser,
}

/// A thread's samples, stacks and frames, in whichever layout its file
/// keeps them: Gecko's tables here, the Firefox Profiler's columns in
/// [`super::processed`].
pub(super) trait SampleTables {
    /// How many stacks there are.
    fn stack_count(&self) -> usize;
    /// Stack `stack`'s caller's stack, `None` at a root.
    fn prefix(&self, stack: usize) -> Option<usize>;
    /// Stack `stack`'s innermost frame.
    fn frame(&self, stack: usize) -> Option<usize>;
    /// Frame `frame`'s category, by its index in `meta.categories`.
    fn category(&self, frame: usize) -> Option<usize>;
    /// How many samples there are.
    fn sample_count(&self) -> usize;
    /// Sample `row`: its stack, its time (ms) and the CPU time since the
    /// one before (`None` when unrecorded); `None` for a sample without a
    /// time.
    fn sample(&self, row: usize) -> Option<(Option<usize>, f64, Option<f64>)>;
}

impl SampleTables for ThreadTables<'_> {
    fn stack_count(&self) -> usize {
        self.stacks.rows.len()
    }

    fn prefix(&self, stack: usize) -> Option<usize> {
        self.stacks.index(stack, "prefix")
    }

    fn frame(&self, stack: usize) -> Option<usize> {
        self.stacks.index(stack, "frame")
    }

    fn category(&self, frame: usize) -> Option<usize> {
        (frame < self.frames.rows.len())
            .then(|| self.frames.index(frame, "category"))
            .flatten()
    }

    fn sample_count(&self) -> usize {
        self.samples.rows.len()
    }

    fn sample(&self, row: usize) -> Option<(Option<usize>, f64, Option<f64>)> {
        let time = self.samples.cell(row, "time").as_f64()?;
        Some((
            self.samples.index(row, "stack"),
            time,
            self.samples.cell(row, "threadCPUDelta").as_f64(),
        ))
    }
}

/// What names a thread, apart from its samples.
pub(super) struct ThreadInfo {
    pub name: String,
    pub process: String,
    pub tid: String,
    /// When it started, from the first process's start (ms).
    pub registered_ms: f64,
}

impl ThreadInfo {
    /// A thread's name, process and id, as both formats write them.
    pub(super) fn of(thread: &Value, offset_ms: f64) -> ThreadInfo {
        let text = |key: &str| match &thread[key] {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => String::new(),
        };
        let process = match text("processName") {
            name if name.is_empty() => text("processType"),
            name => name,
        };
        ThreadInfo {
            name: text("name"),
            process,
            tid: text("tid"),
            registered_ms: thread["registerTime"].as_f64().unwrap_or(0.0) + offset_ms,
        }
    }
}

impl<'a> ThreadTables<'a> {
    fn read(thread: &'a Value) -> Result<ThreadTables<'a>, String> {
        let tables = ThreadTables {
            samples: Table::read(&thread["samples"], "samples table")?,
            stacks: Table::read(&thread["stackTable"], "stack table")?,
            frames: Table::read(&thread["frameTable"], "frame table")?,
            strings: thread["stringTable"]
                .as_array()
                .ok_or("it has no string table")?,
        };
        for (table, columns) in [
            (&tables.samples, &["stack", "time"][..]),
            (&tables.stacks, &["prefix", "frame"][..]),
            (&tables.frames, &["location"][..]),
        ] {
            if let Some(missing) = columns.iter().find(|c| !table.has(c)) {
                return Err(format!("a table has no `{missing}` column"));
            }
        }
        Ok(tables)
    }

    fn convert(
        &self,
        thread: &Value,
        offset_ms: f64,
        interval_ms: f64,
        categories: &[String],
        origin: Option<&str>,
    ) -> GeckoThread {
        let frames: Vec<FrameKind> = (0..self.frames.rows.len())
            .map(|f| {
                let label = self
                    .frames
                    .index(f, "location")
                    .and_then(|s| self.strings.get(s))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                classify(label, origin)
            })
            .collect();
        let info = ThreadInfo::of(thread, offset_ms);
        to_cpuprofile(self, &frames, info, offset_ms, interval_ms, categories)
    }
}

/// A thread's samples as a `.cpuprofile`: each sample's program frames
/// make its stack, and a sample with none is `(idle)`, `(garbage
/// collector)` or `(browser)` (module documentation).
pub(super) fn to_cpuprofile(
    tables: &impl SampleTables,
    frames: &[FrameKind],
    info: ThreadInfo,
    offset_ms: f64,
    interval_ms: f64,
    categories: &[String],
) -> GeckoThread {
    let mut tree = CpuTree::new();
    let mut node_of: Vec<Option<u64>> = vec![None; tables.stack_count()];
    let mut wasm_of: Vec<bool> = vec![false; tables.stack_count()];
    let mut samples = Vec::with_capacity(tables.sample_count());
    let mut times = Vec::with_capacity(tables.sample_count());
    let (mut wasm_samples, mut program_samples) = (0, 0);
    for row in 0..tables.sample_count() {
        let Some((stack, time, cpu_delta)) = tables.sample(row) else {
            continue;
        };
        // A thread that used no CPU since the sample before was asleep:
        // Gecko repeats its last stack while it sleeps (in `Atomics.wait`,
        // say), which is not time in that stack.
        let asleep = cpu_delta == Some(0.0);
        let resolved = stack
            .filter(|_| !asleep)
            .and_then(|s| resolve(tables, s, frames, &mut tree, &mut node_of, &mut wasm_of));
        let node = match resolved {
            Some((node, wasm)) if node != CpuTree::ROOT => {
                program_samples += 1;
                wasm_samples += usize::from(wasm);
                node
            }
            _ => {
                let leaf = stack
                    .and_then(|s| tables.frame(s))
                    .and_then(|f| tables.category(f))
                    .and_then(|c| categories.get(c));
                tree.pseudo(match leaf.map(String::as_str) {
                    _ if asleep || stack.is_none() => "(idle)",
                    Some("Idle") => "(idle)",
                    Some("GC / CC") => "(garbage collector)",
                    _ => "(browser)",
                })
            }
        };
        samples.push(node);
        times.push(time + offset_ms);
    }
    let micros = |ms: f64| (ms * 1000.0).round();
    let start = times.first().map_or(0.0, |t| micros(*t));
    let end = times.last().map_or(0.0, |t| micros(*t + interval_ms));
    let mut last = start;
    let deltas: Vec<f64> = times
        .iter()
        .map(|t| {
            let at = micros(*t);
            let delta = at - last;
            last = at;
            delta
        })
        .collect();
    GeckoThread {
        name: info.name,
        process: info.process,
        tid: info.tid,
        registered_ms: info.registered_ms,
        wasm_samples,
        program_samples,
        cpuprofile: json!({
            "nodes": tree.nodes,
            "startTime": start,
            "endTime": end,
            "samples": samples,
            "timeDeltas": deltas,
        }),
    }
}

/// The node of stack `stack` (its program frames, outermost first), and
/// whether it has a wasm frame; `None` for a stack the tables do not hold
/// or whose prefixes go round.
fn resolve(
    tables: &impl SampleTables,
    stack: usize,
    frames: &[FrameKind],
    tree: &mut CpuTree,
    node_of: &mut [Option<u64>],
    wasm_of: &mut [bool],
) -> Option<(u64, bool)> {
    let mut chain = Vec::new();
    let mut at = Some(stack);
    let (mut node, mut wasm) = (CpuTree::ROOT, false);
    while let Some(s) = at {
        if let Some(known) = *node_of.get(s)? {
            (node, wasm) = (known, wasm_of[s]);
            break;
        }
        if chain.len() > node_of.len() {
            return None;
        }
        chain.push(s);
        at = tables.prefix(s);
    }
    for &s in chain.iter().rev() {
        let frame = tables.frame(s)?;
        if let Some(FrameKind::Program {
            name,
            url,
            line,
            column,
            wasm: is_wasm,
        }) = frames.get(frame)
        {
            node = tree.child(node, name, url, *line, *column);
            wasm |= is_wasm;
        }
        node_of[s] = Some(node);
        wasm_of[s] = wasm;
    }
    Some((node, wasm))
}

/// What the label of a frame says it is.
pub(super) fn classify(label: &str, origin: Option<&str>) -> FrameKind {
    // `name (URL:…)`, a script's with its realm after: `[14]`.
    let label = match label.rsplit_once('[') {
        Some((before, realm))
            if realm.ends_with(']')
                && realm[..realm.len() - 1].bytes().all(|b| b.is_ascii_digit()) =>
        {
            before
        }
        _ => label,
    };
    let Some((name, place)) = label
        .strip_suffix(')')
        .and_then(|l| l.rsplit_once(" ("))
        .or_else(|| Some(("", label.strip_prefix('(')?.strip_suffix(')')?)))
    else {
        return FrameKind::Browser;
    };
    let of_the_program = |url: &str| match origin {
        Some(origin) => url.starts_with(origin),
        None => ["http://", "https://", "file://", "blob:"]
            .iter()
            .any(|scheme| url.starts_with(scheme)),
    };
    let numbers: Vec<&str> = place.rsplitn(3, ':').collect();
    let number = |s: &str| s.parse::<i64>().ok();
    // `URL:offset`, the URL a wasm module's.
    if let [offset, url] = numbers[..2.min(numbers.len())] {
        let url_of_wasm = match numbers.get(2) {
            Some(rest) => format!("{rest}:{url}"),
            None => url.to_owned(),
        };
        match number(offset) {
            Some(offset) if is_wasm_url(&url_of_wasm) => {
                return FrameKind::Program {
                    name: wasm_function_name(name).to_owned(),
                    url: url_of_wasm,
                    line: 0,
                    column: offset,
                    wasm: true,
                };
            }
            _ => {}
        }
    }
    // `URL:line:column`, a script's.
    if let [column, line, url] = numbers[..] {
        match (number(line), number(column)) {
            (Some(line), Some(column)) if of_the_program(url) => {
                return FrameKind::Program {
                    name: if name.is_empty() { "(anonymous)" } else { name }.to_owned(),
                    url: url.to_owned(),
                    line: line - 1,
                    column: column - 1,
                    wasm: false,
                };
            }
            _ => {}
        }
    }
    FrameKind::Browser
}

fn is_wasm_url(url: &str) -> bool {
    url.contains("://") && (url.ends_with(".wasm") || url.starts_with("wasm://"))
}

/// A wasm frame's function name without the module's name Firefox puts
/// before it (`image_kernels.wasm.image_kernels::start::h47b1…`): rustc
/// names a module after its file, so the name ends at `.wasm.`.
pub(super) fn wasm_function_name(label: &str) -> &str {
    match label.split_once(".wasm.") {
        Some((module, name)) if !module.contains("::") && !module.contains('<') => name,
        _ => label,
    }
}

/// The nodes of a `.cpuprofile` as they grow.
struct CpuTree {
    nodes: Vec<Value>,
    children: HashMap<(u64, String, String, i64, i64), u64>,
}

impl CpuTree {
    const ROOT: u64 = 1;

    fn new() -> CpuTree {
        CpuTree {
            nodes: vec![node(Self::ROOT, "(root)", "", -1, -1)],
            children: HashMap::new(),
        }
    }

    fn child(&mut self, parent: u64, name: &str, url: &str, line: i64, column: i64) -> u64 {
        let key = (parent, name.to_owned(), url.to_owned(), line, column);
        if let Some(&id) = self.children.get(&key) {
            return id;
        }
        let id = self.nodes.len() as u64 + 1;
        self.nodes.push(node(id, name, url, line, column));
        if let Some(children) = self.nodes[parent as usize - 1]["children"].as_array_mut() {
            children.push(json!(id));
        }
        self.children.insert(key, id);
        id
    }

    /// A pseudo-frame under the root: `(idle)`, `(browser)`, …
    fn pseudo(&mut self, name: &str) -> u64 {
        self.child(Self::ROOT, name, "", -1, -1)
    }
}

fn node(id: u64, name: &str, url: &str, line: i64, column: i64) -> Value {
    json!({
        "id": id,
        "callFrame": {
            "functionName": name,
            "scriptId": "0",
            "url": url,
            "lineNumber": line,
            "columnNumber": column,
        },
        "children": [],
    })
}

#[cfg(test)]
pub(super) mod tests;
