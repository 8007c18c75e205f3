//! Profiles in the Firefox Profiler's own ("processed") format: what its
//! "Download" saves (gzip-compressed), what a shared profile is, and what
//! wasmtime's guest profiler (`wasmtime run --profile=guest`) and samply
//! write. Read into the same per-thread `.cpuprofile`s as a Gecko profile
//! ([`super::gecko`]), so that both read alike.
//!
//! The format is columns (`{name: [...], length}`), and where they live
//! moved between versions, all of which the front-end still opens:
//!
//! - up to 55 (what `fxprof-processed-profile` 0.8 writes) each thread
//!   holds its tables and its strings (`thread.stringArray`);
//! - from 56 the strings are `shared.stringArray`; from 58 a function's
//!   file is `shared.sources.filename[func.source]`;
//! - from 60 the stack, frame and function tables are `shared`'s;
//! - from 66 a stack's caller is `i - stackTable.prefixOffset[i]` (0 at a
//!   root), not `stackTable.prefix[i]`;
//! - from 71 a frame's optional columns hold 0 unless its `flags` say
//!   they are set, and from 75 a function's do too (`isJS` is a flag).
//!
//! A profile with JavaScript in it is a browser's: its program frames are
//! JavaScript and wasm from a URL, wasm told by its subcategory ("Wasm
//! (ion)", …) since a profile downloaded with the default privacy settings
//! has its URLs replaced by `http://<URL>`; the rest is the browser's. A
//! profile without JavaScript (wasmtime's, samply's) is all the program's.

use serde_json::Value;

use super::gecko::{self, FrameKind, GeckoThread, SampleTables, ThreadInfo};

/// The oldest version read: what `fxprof-processed-profile` 0.8 writes.
pub const OLDEST_VERSION: u64 = 55;
/// The newest version read, the Firefox Profiler's at the time of writing.
pub const NEWEST_VERSION: u64 = 75;

/// What is wrong with a processed profile, for the reader's error.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// A version this reader does not know.
    Version(u64),
    /// Samples weighted in something other than samples (`tracing-ms`,
    /// `bytes`) or a time column that is not time.
    NotSampled(String),
    /// The file `--format firefox` wrote: its weights are calls and µs.
    WrittenByWasmprof,
    /// Its columns are not where its version puts them.
    Shape(String),
}

/// Its `meta.preprocessedProfileVersion`, for a processed profile.
pub fn version(profile: &Value) -> Option<u64> {
    profile["meta"]["preprocessedProfileVersion"].as_u64()
}

/// The samples of the threads that ran wasm, merged into one
/// `.cpuprofile` as [`gecko::program_samples`] merges a Gecko profile's;
/// `None` when no thread ran wasm.
pub fn program_samples(profile: &Value) -> Result<Option<Value>, Refusal> {
    Ok(gecko::merged_program_threads(threads(profile)?, false))
}

/// Every thread of `profile`, as a Gecko profile's are read.
pub fn threads(profile: &Value) -> Result<Vec<GeckoThread>, Refusal> {
    let version = version(profile).unwrap_or(0);
    if !(OLDEST_VERSION..=NEWEST_VERSION).contains(&version) {
        return Err(Refusal::Version(version));
    }
    let meta = &profile["meta"];
    if meta["product"]
        .as_str()
        .is_some_and(|p| p.ends_with("(wasmprof)"))
    {
        return Err(Refusal::WrittenByWasmprof);
    }
    if let Some(unit) = meta["sampleUnits"]["time"].as_str().filter(|u| *u != "ms") {
        return Err(Refusal::NotSampled(format!(
            "its samples are placed in {unit}, not in time"
        )));
    }
    let interval = meta["interval"]
        .as_f64()
        .filter(|i| *i > 0.0)
        .unwrap_or(1.0);
    let categories = Categories::of(meta);
    let threads = profile["threads"]
        .as_array()
        .ok_or_else(|| Refusal::Shape("it has no `threads` list".into()))?;
    let shared = &profile["shared"];
    fn tables_of<'a>(thread: &'a Value, shared: &'a Value, version: u64) -> &'a Value {
        if version >= 60 { shared } else { thread }
    }
    fn strings_of<'a>(thread: &'a Value, shared: &'a Value, version: u64) -> Option<&'a [Value]> {
        let holder = if version >= 56 { shared } else { thread };
        holder["stringArray"].as_array().map(Vec::as_slice)
    }
    // A browser's profile has JavaScript; wasmtime's and samply's do not.
    let browser = threads.iter().any(|thread| {
        Funcs::read(tables_of(thread, shared, version), version).is_ok_and(|f| f.any_js())
    });
    let mut out = Vec::with_capacity(threads.len());
    // From 60 every thread's frames are the shared table's: told once.
    let mut shared_frames: Option<Vec<FrameKind>> = None;
    for (index, thread) in threads.iter().enumerate() {
        let in_thread =
            |what: String| Refusal::Shape(format!("thread {index} ({}): {what}", thread["name"]));
        let strings = strings_of(thread, shared, version)
            .ok_or_else(|| in_thread("it has no strings".into()))?;
        let tables = ProcessedThread::read(thread, tables_of(thread, shared, version), version)
            .map_err(in_thread)?;
        let kinds = || tables.frame_kinds(strings, &shared["sources"], &categories, browser);
        let own_frames;
        let frames = if version >= 60 {
            shared_frames.get_or_insert_with(kinds)
        } else {
            own_frames = kinds();
            &own_frames
        };
        let info = ThreadInfo::of(thread, 0.0);
        out.push(gecko::to_cpuprofile(
            &tables,
            frames,
            info,
            0.0,
            interval,
            &categories.names,
        ));
    }
    Ok(out)
}

/// `meta.categories`: each one's name and its subcategories' names.
struct Categories {
    names: Vec<String>,
    subcategories: Vec<Vec<String>>,
}

impl Categories {
    fn of(meta: &Value) -> Categories {
        let all = meta["categories"].as_array().map_or(&[][..], Vec::as_slice);
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        Categories {
            names: all.iter().map(|c| text(&c["name"])).collect(),
            subcategories: all
                .iter()
                .map(|c| {
                    c["subcategories"]
                        .as_array()
                        .map(|s| s.iter().map(text).collect())
                        .unwrap_or_default()
                })
                .collect(),
        }
    }

    /// Whether a frame of this category and subcategory ran wasm.
    fn is_wasm(&self, category: usize, subcategory: usize) -> bool {
        self.subcategories
            .get(category)
            .and_then(|s| s.get(subcategory))
            .is_some_and(|name| name.starts_with("Wasm"))
    }
}

/// One column of a table: `table[name]`, `length` long.
fn column<'a>(table: &'a Value, name: &str, length: usize) -> Result<&'a [Value], String> {
    match table[name].as_array() {
        Some(cells) if cells.len() >= length => Ok(cells),
        Some(cells) => Err(format!(
            "its `{name}` column has {} rows, not {length}",
            cells.len()
        )),
        None => Err(format!("a table has no `{name}` column")),
    }
}

/// A table's row count: its `length`, or its `key` column's.
fn length(table: &Value, key: &str, what: &str) -> Result<usize, String> {
    match (table["length"].as_u64(), table[key].as_array()) {
        (Some(length), _) => Ok(length as usize),
        (None, Some(cells)) => Ok(cells.len()),
        (None, None) => Err(format!("it has no {what}")),
    }
}

fn index(cells: &[Value], row: usize) -> Option<usize> {
    cells.get(row)?.as_u64().map(|i| i as usize)
}

/// The functions table, as its version lays it out.
struct Funcs<'a> {
    version: u64,
    length: usize,
    name: &'a [Value],
    /// From 75; before, `is_js`.
    flags: Option<&'a [Value]>,
    is_js: Option<&'a [Value]>,
    /// Before 58, a string index; after, an index into `shared.sources`.
    file: &'a [Value],
    line: &'a [Value],
    column: &'a [Value],
    resource: &'a [Value],
    resource_name: &'a [Value],
}

/// Function flags from version 75.
const FUNC_IS_JS: u64 = 1;
const FUNC_HAS_RESOURCE: u64 = 4;
const FUNC_HAS_SOURCE: u64 = 8;
const FUNC_HAS_LINE: u64 = 16;
const FUNC_HAS_COLUMN: u64 = 32;
/// Frame flags from version 71.
const FRAME_HAS_CATEGORY: u64 = 4;

impl<'a> Funcs<'a> {
    fn read(tables: &'a Value, version: u64) -> Result<Funcs<'a>, String> {
        let table = &tables["funcTable"];
        let length = length(table, "name", "function table")?;
        let file_column = if version >= 58 { "source" } else { "fileName" };
        let optional = |name| column(table, name, length).unwrap_or(&[]);
        Ok(Funcs {
            version,
            length,
            name: column(table, "name", length)?,
            flags: (version >= 75)
                .then(|| column(table, "flags", length))
                .transpose()?,
            is_js: (version < 75)
                .then(|| column(table, "isJS", length))
                .transpose()?,
            file: optional(file_column),
            line: optional("lineNumber"),
            column: optional("columnNumber"),
            resource: optional("resource"),
            resource_name: tables["resourceTable"]["name"]
                .as_array()
                .map_or(&[][..], Vec::as_slice),
        })
    }

    fn flag(&self, func: usize, flag: u64) -> Option<bool> {
        Some(self.flags?.get(func)?.as_u64()? & flag != 0)
    }

    fn is_js(&self, func: usize) -> bool {
        match self.flags {
            Some(_) => self.flag(func, FUNC_IS_JS).unwrap_or(false),
            None => self
                .is_js
                .and_then(|c| c.get(func))
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }
    }

    fn any_js(&self) -> bool {
        (0..self.length).any(|f| self.is_js(f))
    }

    /// A column's number, `None` where it is unset (null, or its flag off
    /// from version 75).
    fn number(&self, cells: &[Value], func: usize, flag: u64) -> Option<i64> {
        if self.version >= 75 && self.flag(func, flag) != Some(true) {
            return None;
        }
        cells.get(func)?.as_i64()
    }

    /// The name of the function's resource: its library, or the module
    /// wasmtime's guest profiler named (`app.wasm`).
    fn resource_name(&self, func: usize, strings: &'a [Value]) -> Option<&'a str> {
        // Before 75, -1 is none, which is no index.
        let resource = self.number(self.resource, func, FUNC_HAS_RESOURCE)?;
        let name = self.resource_name.get(usize::try_from(resource).ok()?)?;
        strings.get(name.as_u64()? as usize)?.as_str()
    }

    /// The function's file: a URL for a browser's JavaScript and wasm.
    fn file(&self, func: usize, strings: &'a [Value], sources: &'a Value) -> Option<&'a str> {
        let at = self.number(self.file, func, FUNC_HAS_SOURCE)? as usize;
        let string = if self.version >= 58 {
            sources["filename"].as_array()?.get(at)?.as_u64()? as usize
        } else {
            at
        };
        strings.get(string)?.as_str()
    }
}

/// One thread's samples, with the stack and frame tables they index.
struct ProcessedThread<'a> {
    version: u64,
    tables: &'a Value,
    stack_length: usize,
    stack_frame: &'a [Value],
    /// `prefix` before 66, `prefixOffset` from it.
    stack_caller: &'a [Value],
    frame_length: usize,
    frame_func: &'a [Value],
    frame_category: &'a [Value],
    frame_subcategory: &'a [Value],
    frame_flags: &'a [Value],
    sample_length: usize,
    sample_stack: &'a [Value],
    sample_cpu: &'a [Value],
    sample_weight: &'a [Value],
    times: Vec<f64>,
}

impl<'a> ProcessedThread<'a> {
    fn read(
        thread: &'a Value,
        tables: &'a Value,
        version: u64,
    ) -> Result<ProcessedThread<'a>, String> {
        let stacks = &tables["stackTable"];
        let frames = &tables["frameTable"];
        let samples = &thread["samples"];
        let stack_length = length(stacks, "frame", "stack table")?;
        let frame_length = length(frames, "func", "frame table")?;
        let sample_length = length(samples, "stack", "samples table")?;
        match samples["weightType"].as_str() {
            None | Some("samples") => {}
            Some(other) => {
                return Err(format!(
                    "its samples are weighted in {other}: it is not a sampling profile"
                ));
            }
        }
        let caller = if version >= 66 {
            "prefixOffset"
        } else {
            "prefix"
        };
        let times: Vec<f64> = match (samples["time"].as_array(), samples["timeDeltas"].as_array()) {
            (Some(time), _) => time
                .iter()
                .map(|t| t.as_f64().unwrap_or(f64::NAN))
                .collect(),
            // Each time the one before plus its delta, from 0, as the
            // front-end sums them.
            (None, Some(deltas)) => deltas
                .iter()
                .scan(0.0, |at, delta| {
                    *at += delta.as_f64().unwrap_or(f64::NAN);
                    Some(*at)
                })
                .collect(),
            (None, None) => return Err("its samples have no `time` nor `timeDeltas`".into()),
        };
        if times.len() < sample_length {
            return Err(format!(
                "its samples have {} times for {sample_length} samples",
                times.len()
            ));
        }
        Ok(ProcessedThread {
            version,
            tables,
            stack_length,
            stack_frame: column(stacks, "frame", stack_length)?,
            stack_caller: column(stacks, caller, stack_length)?,
            frame_length,
            frame_func: column(frames, "func", frame_length)?,
            frame_category: column(frames, "category", frame_length).unwrap_or(&[]),
            frame_subcategory: column(frames, "subcategory", frame_length).unwrap_or(&[]),
            frame_flags: if version >= 71 {
                column(frames, "flags", frame_length)?
            } else {
                &[]
            },
            sample_length,
            sample_stack: column(samples, "stack", sample_length)?,
            sample_cpu: column(samples, "threadCPUDelta", sample_length).unwrap_or(&[]),
            sample_weight: column(samples, "weight", sample_length).unwrap_or(&[]),
            times,
        })
    }

    /// Frame `frame`'s category and subcategory, when it has one (a frame
    /// without takes its caller's, which the leaf's pseudo-frame needs
    /// not).
    fn category_pair(&self, frame: usize) -> Option<(usize, usize)> {
        if self.version >= 71 {
            let flags = self.frame_flags.get(frame)?.as_u64()?;
            if flags & FRAME_HAS_CATEGORY == 0 {
                return None;
            }
        }
        let category = index(self.frame_category, frame)?;
        Some((category, index(self.frame_subcategory, frame).unwrap_or(0)))
    }

    /// What each frame is (module documentation).
    fn frame_kinds(
        &self,
        strings: &[Value],
        sources: &Value,
        categories: &Categories,
        browser: bool,
    ) -> Vec<FrameKind> {
        let Ok(funcs) = Funcs::read(self.tables, self.version) else {
            return vec![FrameKind::Browser; self.frame_length];
        };
        (0..self.frame_length)
            .map(|frame| {
                let Some(func) = index(self.frame_func, frame).filter(|f| *f < funcs.length) else {
                    return FrameKind::Browser;
                };
                let name = index(funcs.name, func)
                    .and_then(|s| strings.get(s))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !browser {
                    // wasmtime's and samply's: every frame is the program's,
                    // and its resource (a `.wasm` for wasmtime's) its URL.
                    return FrameKind::Program {
                        name: name.to_owned(),
                        url: funcs
                            .resource_name(func, strings)
                            .unwrap_or_default()
                            .to_owned(),
                        line: -1,
                        column: -1,
                        wasm: true,
                    };
                }
                if !funcs.is_js(func) {
                    return FrameKind::Browser;
                }
                let Some(url) = funcs.file(func, strings, sources).filter(|u| is_url(u)) else {
                    return FrameKind::Browser;
                };
                let line = funcs.number(funcs.line, func, FUNC_HAS_LINE);
                let wasm = self
                    .category_pair(frame)
                    .is_some_and(|(c, s)| categories.is_wasm(c, s))
                    || url.ends_with(".wasm");
                if wasm {
                    // Gecko's `name (URL:offset)`: the offset is the line.
                    // A URL the download replaced (`http://<URL>`) no longer
                    // says wasm; `wasm://` does, as in V8's profiles.
                    let url = match url.ends_with(".wasm") {
                        true => url.to_owned(),
                        false => format!("wasm://{}", url.split_once("://").map_or(url, |u| u.1)),
                    };
                    return FrameKind::Program {
                        name: gecko::wasm_function_name(name).to_owned(),
                        url,
                        line: 0,
                        column: line.unwrap_or(0),
                        wasm: true,
                    };
                }
                let column = funcs.number(funcs.column, func, FUNC_HAS_COLUMN);
                FrameKind::Program {
                    name: if name.is_empty() { "(anonymous)" } else { name }.to_owned(),
                    url: url.to_owned(),
                    line: line.map_or(-1, |l| l - 1),
                    column: column.map_or(-1, |c| c - 1),
                    wasm: false,
                }
            })
            .collect()
    }
}

/// Whether a file is a page's script or module, not the browser's own
/// (`self-hosted`, `resource://`, `chrome://`).
fn is_url(file: &str) -> bool {
    ["http://", "https://", "file://", "blob:"]
        .iter()
        .any(|scheme| file.starts_with(scheme))
}

impl SampleTables for ProcessedThread<'_> {
    fn stack_count(&self) -> usize {
        self.stack_length
    }

    fn prefix(&self, stack: usize) -> Option<usize> {
        let cell = self.stack_caller.get(stack)?;
        if self.version >= 66 {
            let offset = cell.as_u64()? as usize;
            (offset != 0).then(|| stack.checked_sub(offset)).flatten()
        } else {
            cell.as_u64().map(|p| p as usize)
        }
    }

    fn frame(&self, stack: usize) -> Option<usize> {
        index(self.stack_frame, stack).filter(|f| *f < self.frame_length)
    }

    fn category(&self, frame: usize) -> Option<usize> {
        self.category_pair(frame).map(|(category, _)| category)
    }

    fn sample_count(&self) -> usize {
        self.sample_length
    }

    fn sample(&self, row: usize) -> Option<(Option<usize>, f64, Option<f64>)> {
        // A sample weighted 0 (or less, in a comparison) is no sample.
        if self
            .sample_weight
            .get(row)
            .and_then(Value::as_f64)
            .unwrap_or(1.0)
            <= 0.0
        {
            return None;
        }
        let time = self.times[row];
        if !time.is_finite() {
            return None;
        }
        Some((
            index(self.sample_stack, row).filter(|s| *s < self.stack_length),
            time,
            self.sample_cpu.get(row).and_then(Value::as_f64),
        ))
    }
}

#[cfg(test)]
mod tests;
