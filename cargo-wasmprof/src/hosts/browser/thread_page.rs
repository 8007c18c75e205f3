//! What the generated page serves beside itself for a program with threads
//! on web workers (`LoadAs::BindgenThreads`): the worker that runs it, and
//! the module's JS as workers can load it.
//!
//! A page resolves the bindings' `import … from "prof"` through its import
//! map, which module workers do not have: the bindings are served with the
//! specifier spelt as a path. wasm-bindgen-rayon's worker script loads the
//! bindings as `import('../../..')`, the package's directory, which a
//! bundler resolves and a plain server answers with the page: it is served
//! with the bindings' own path.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};

const THREAD_HOST_JS: &str = include_str!("../../js/thread-host.js");

/// Where the generated `prof` module is served.
pub(super) const PROF_PATH: &str = "/__wasmprof/prof.js";

/// Adds the worker script and the rewritten module files to `generated`,
/// for the bindings `js` in `module_dir`.
pub(super) fn add_files(
    generated: &mut HashMap<String, Vec<u8>>,
    module_dir: &Path,
    js: &Path,
) -> Result<()> {
    generated.insert(
        "/__wasmprof/thread-host.js".to_owned(),
        THREAD_HOST_JS.as_bytes().to_vec(),
    );
    let name = js
        .file_name()
        .and_then(|n| n.to_str())
        .context("the bindings' file name is not UTF-8")?;
    let bindings =
        std::fs::read_to_string(js).with_context(|| format!("could not read {}", js.display()))?;
    generated.insert(format!("/{name}"), prof_by_path(&bindings).into_bytes());
    let snippets = module_dir.join("snippets");
    if snippets.is_dir() {
        crate::build::dir_walk::each_file(&snippets, &snippets, &mut |file, _| {
            let Ok(text) = std::fs::read_to_string(file) else {
                return Ok(());
            };
            let Some(rewritten) = package_by_path(&text, name) else {
                return Ok(());
            };
            let relative = file.strip_prefix(module_dir).unwrap_or(file);
            let url = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            generated.insert(format!("/{url}"), rewritten.into_bytes());
            Ok(())
        })?;
    }
    Ok(())
}

/// The bindings with `from "prof"` spelt as the path it is served at.
fn prof_by_path(bindings: &str) -> String {
    bindings
        .replace("from \"prof\"", &format!("from \"{PROF_PATH}\""))
        .replace("from 'prof'", &format!("from '{PROF_PATH}'"))
}

/// Put before a pool worker's script: its output, and a trap (a panic,
/// built with `panic = "abort"` as threads need), go to the page on the
/// channel page-host.js reads; its parent, the program's worker, is
/// blocked waiting for the pool. The bindings import the same script (for
/// the function that starts the pool) in the page and the program's
/// worker, where it must do nothing: only a worker started with the
/// script as its own (`self.location`) is one of the pool's.
const POOL_WORKER_JS: &str = "// wasmprof: a pool worker's output and trap go to the page.\n\
if (typeof WorkerGlobalScope !== 'undefined' && self.location.href === import.meta.url) {\n\
  const channel = new BroadcastChannel('wasmprof');\n\
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {\n\
    const original = console[level].bind(console);\n\
    console[level] = function wasmprofRelayed(...values) {\n\
      original(...values);\n\
      channel.postMessage({ type: 'wasmprof_console', level, text: values.map(String).join(' ') });\n\
    };\n\
  }\n\
  const failed = (reason) => channel.postMessage({\n\
    type: 'wasmprof_pool_failed', message: String((reason && reason.message) || reason) });\n\
  self.addEventListener('unhandledrejection', (event) => failed(event.reason));\n\
  self.addEventListener('error', (event) => failed(event.message));\n\
}\n";

/// A pool's worker script (it imports its package's directory), made to
/// import the bindings `name` instead, and to tell the page what it prints
/// and of a trap; `None` for another snippet.
fn package_by_path(snippet: &str, name: &str) -> Option<String> {
    const PACKAGE: [&str; 2] = ["import('../../..')", "import(\"../../..\")"];
    PACKAGE.iter().any(|p| snippet.contains(p)).then(|| {
        let by_path = PACKAGE.iter().fold(snippet.to_owned(), |text, p| {
            text.replace(p, &format!("import('/{name}')"))
        });
        format!("{POOL_WORKER_JS}{}", rooted(&by_path))
    })
}

/// The pool's start with each worker kept reachable from the moment it
/// is made: wasm-bindgen-rayon keeps them (against Firefox's bug 1702191,
/// which collects a worker sharing the memory that nothing refers to)
/// only once all of them have said they are ready, and until then a
/// worker is referred to by the promise that waits for it alone.
fn rooted(helpers: &str) -> String {
    const SEND_INIT: &str = "worker.postMessage(workerInit);";
    helpers.replacen(
        SEND_INIT,
        &format!("(globalThis.__wasmprofPoolWorkers ||= []).push(worker); {SEND_INIT}"),
        1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prof_import_is_spelt_as_a_path_workers_can_load() {
        let bindings = "import * as import1 from \"prof\"\nconst x = 'prof';\n";
        assert_eq!(
            prof_by_path(bindings),
            "import * as import1 from \"/__wasmprof/prof.js\"\nconst x = 'prof';\n"
        );
    }

    #[test]
    fn the_pool_s_worker_script_loads_the_bindings_by_their_path() {
        let helpers = "const pkg = await import('../../..');\nawait pkg.default(init);";
        let served = package_by_path(helpers, "app.js").unwrap();
        assert!(
            served.ends_with("const pkg = await import('/app.js');\nawait pkg.default(init);"),
            "{served}"
        );
        assert!(served.contains("wasmprof_pool_failed"), "{served}");
        assert!(package_by_path("export const x = 1;", "app.js").is_none());
    }

    #[test]
    fn each_worker_of_the_pool_is_kept_reachable_from_its_start() {
        let helpers = "const pkg = await import('../../..');\n\
                       const worker = new Worker(url, { type: 'module' });\n\
                       worker.postMessage(workerInit);\n";
        let served = package_by_path(helpers, "app.js").unwrap();
        assert!(
            served.contains(
                "(globalThis.__wasmprofPoolWorkers ||= []).push(worker); \
                 worker.postMessage(workerInit);"
            ),
            "{served}"
        );
    }
}
