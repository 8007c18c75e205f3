//! What the browser loads: the generated page that runs the module, or the
//! user's own page (`--page`) with the host API injected and the
//! instrumented module in place of its own; and, under `--serve`, the
//! overlay that saves the profile.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::json;

use super::server::{ServedFiles, Substitute};
use crate::hosts::files::HOST_API_JS;
use crate::hosts::host::{HostConfig, LoadAs};
use wasmprof_profile::html_text::{escape, script_json};

const PAGE_HOST_JS: &str = include_str!("../../js/page-host.js");
const PAGE_THREADS_JS: &str = include_str!("../../js/page-threads.js");
const PAGE_WATCH_JS: &str = include_str!("../../js/page-watch.js");
const SAVE_OVERLAY_JS: &str = include_str!("../../js/save-overlay.js");
/// What `import … from "prof"` resolves to: through the page's import map,
/// or by its path (`thread_page.rs`). A worker without the host API (a
/// thread pool's) reads its own clock: only durations are taken from it.
/// The clock is held, not looked up on the global at each call, which
/// costs twice as much (about 160 ns against 70 in Chromium 156, a worker
/// as the page), and a timed call reads it twice.
const PROF_MODULE_JS: &str = "const clock = performance;\n\
const api = globalThis.__wasmprofHostApi ?? {\n\
  getTime: () => clock.now(),\n\
  exit: (code) => postMessage({ type: 'wasmprof_exit', code }),\n\
  clearResults() {}, addArcData() {}, setArcData() {}, printResults() {},\n\
};\n\
export const getTime = api.getTime;\n\
export const exit = api.exit;\n\
export const clearResults = api.clearResults;\n\
export const addArcData = api.addArcData;\n\
export const setArcData = api.setArcData;\n\
export const printResults = api.printResults;\n";

/// The files ready to serve, and the path the browser opens first.
pub(crate) struct ServedPage {
    pub files: ServedFiles,
    pub start_path: String,
}

/// Builds what one run serves: the module (already copied to
/// `module_dir`) behind the generated page, or behind the user's page.
pub(crate) fn served_page(
    config: &HostConfig,
    user_page: Option<&Path>,
    run_dir: &Path,
    token: &str,
    with_overlay: bool,
) -> Result<ServedPage> {
    let module_dir = config
        .wasm
        .parent()
        .context("the module has no directory")?
        .to_path_buf();
    let mut generated = HashMap::from([
        (
            "/__wasmprof/host-api.js".to_owned(),
            HOST_API_JS.as_bytes().to_vec(),
        ),
        (
            super::thread_page::PROF_PATH.to_owned(),
            PROF_MODULE_JS.as_bytes().to_vec(),
        ),
        (
            "/__wasmprof/page-host.js".to_owned(),
            PAGE_HOST_JS.as_bytes().to_vec(),
        ),
        (
            "/__wasmprof/page-threads.js".to_owned(),
            PAGE_THREADS_JS.as_bytes().to_vec(),
        ),
        (
            "/__wasmprof/bindgen-test.js".to_owned(),
            crate::hosts::files::BINDGEN_TEST_JS.as_bytes().to_vec(),
        ),
        (
            "/__wasmprof/page-watch.js".to_owned(),
            PAGE_WATCH_JS.as_bytes().to_vec(),
        ),
        (
            "/__wasmprof/save-overlay.js".to_owned(),
            SAVE_OVERLAY_JS.as_bytes().to_vec(),
        ),
    ]);
    let upload_dir = run_dir.join("uploads");
    match user_page {
        None => {
            let file_url = |path: &Path| -> Result<String> {
                Ok(format!(
                    "/{}",
                    path.file_name()
                        .and_then(|n| n.to_str())
                        .context("a module file name is not UTF-8")?
                ))
            };
            let page_config = json!({
                "kind": config.kind,
                "jsUrl": config.js.as_deref().map(file_url).transpose()?,
                "wasmUrl": file_url(&config.wasm)?,
                "invoke": config.invoke,
                "args": config.args,
                "test": config.test,
                "token": token,
            });
            if config.kind == LoadAs::BindgenThreads {
                let js = config
                    .js
                    .as_deref()
                    .context("a wasm-bindgen module has its JS")?;
                super::thread_page::add_files(&mut generated, &module_dir, js)?;
            }
            let mut head = head_snippet(&page_config, false, with_overlay);
            // A wasm-bindgen-test harness writes its report into #output.
            let body = if config.test.is_some() {
                head.push_str("<script src=\"/__wasmprof/bindgen-test.js\"></script>\n");
                "<pre id=\"output\" hidden></pre>\n"
            } else {
                ""
            };
            let title = config
                .wasm
                .file_stem()
                .and_then(|s| s.to_str())
                .map(|s| s.trim_end_matches("_bg"))
                .unwrap_or("module");
            let html = format!(
                "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
                 <title>wasmprof: {}</title>\n{head}</head>\n<body>\n{body}\
                 <script type=\"module\" src=\"/__wasmprof/page-host.js\"></script>\n\
                 </body>\n</html>\n",
                escape(title)
            );
            generated.insert("/".to_owned(), html.clone().into_bytes());
            generated.insert("/index.html".to_owned(), html.into_bytes());
            Ok(ServedPage {
                files: ServedFiles {
                    root: module_dir,
                    generated,
                    substitutes: Vec::new(),
                    inject_into_html: None,
                    token: token.to_owned(),
                    upload_dir,
                },
                start_path: "/".into(),
            })
        }
        Some(page) => {
            if config.kind == LoadAs::BindgenThreads {
                bail!(
                    "--page {}: a program whose threads run on web workers (its memory is \
                     shared) runs only from the generated page for now; run it without \
                     --page, with --invoke naming the function that does the parallel work",
                    page.display()
                );
            }
            let (root, start_path) = user_root(page)?;
            let stem = config
                .js
                .as_deref()
                .and_then(Path::file_stem)
                .and_then(|s| s.to_str())
                .unwrap_or("NAME");
            loads_the_module(page, &root, stem)?;
            let page_config = json!({
                "kind": config.kind,
                "token": token,
                "moduleNames": format!("{stem}.js and {stem}_bg.wasm, or trunk's {stem}-HASH.js"),
            });
            Ok(ServedPage {
                files: ServedFiles {
                    root,
                    generated,
                    substitutes: substitutes(config)?,
                    inject_into_html: Some(head_snippet(&page_config, true, with_overlay)),
                    token: token.to_owned(),
                    upload_dir,
                },
                start_path,
            })
        }
    }
}

/// The directory to serve and the page to open, for `--page DIR_OR_HTML`.
fn user_root(page: &Path) -> Result<(PathBuf, String)> {
    let meta = std::fs::metadata(page).with_context(|| {
        format!(
            "--page {}: no such file or directory; give a directory with an index.html \
             (trunk's dist/, wasm-pack's www/) or an HTML file",
            page.display()
        )
    })?;
    if meta.is_dir() {
        if !page.join("index.html").is_file() {
            bail!(
                "--page {}: the directory has no index.html; name the page's HTML file instead",
                page.display()
            );
        }
        return Ok((page.to_path_buf(), "/".into()));
    }
    let name = page
        .file_name()
        .and_then(|n| n.to_str())
        .context("--page: the file name is not UTF-8")?;
    if !(name.ends_with(".html") || name.ends_with(".htm")) {
        bail!("--page {}: not an HTML file or a directory", page.display());
    }
    let dir = page
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok((dir.to_path_buf(), format!("/{name}")))
}

/// The page's own copies of the module files are answered with the
/// instrumented build: `NAME.js` and `NAME_bg.wasm` as wasm-pack names
/// them, `NAME-HASH.js` and `NAME-HASH_bg.wasm` as trunk does, and the
/// `snippets/` (inline JS) beside them.
fn substitutes(config: &HostConfig) -> Result<Vec<Substitute>> {
    let Some(js) = config.js.clone() else {
        bail!(
            "--page needs a wasm-bindgen crate: a page loads its module through the JS \
             wasm-bindgen generates"
        );
    };
    let stem = js
        .file_stem()
        .and_then(|s| s.to_str())
        .context("the generated JS has no name")?
        .to_owned();
    let wasm = config.wasm.clone();
    let module_dir = js
        .parent()
        .context("the generated JS has no directory")?
        .to_path_buf();
    Ok(vec![Substitute(Box::new(move |path: &str| {
        let name = path.rsplit('/').next().unwrap_or_default();
        if names_the_module(name, &stem, "_bg.wasm") {
            return Some(wasm.clone());
        }
        if names_the_module(name, &stem, ".js") {
            return Some(js.clone());
        }
        // `…/snippets/<crate>-<hash>/inline0.js`: the server has already
        // refused paths with `..`, so this stays inside the module's directory.
        let at = path.find("/snippets/")?;
        let snippet = module_dir.join(&path[at + 1..]);
        snippet.is_file().then_some(snippet)
    }))])
}

/// A page none of whose files name the module's JS or wasm would load
/// another build (or none) and be waited on in vain: it is refused before
/// the browser starts, naming the wasm-bindgen modules it does load.
fn loads_the_module(page: &Path, root: &Path, stem: &str) -> Result<()> {
    let mut others = std::collections::BTreeSet::new();
    for text in page_texts(root) {
        for name in file_names_in(&text) {
            if names_the_module(name, stem, ".js") || names_the_module(name, stem, "_bg.wasm") {
                return Ok(());
            }
            if name.ends_with("_bg.wasm") {
                others.insert(name.to_owned());
            }
        }
    }
    let loads = if others.is_empty() {
        "no wasm-bindgen module".to_owned()
    } else {
        others.into_iter().collect::<Vec<_>>().join(", ")
    };
    bail!(
        "--page {}: no file of the page loads this crate's module ({stem}.js or {stem}_bg.wasm, \
         or trunk's {}-HASH.js); it names {loads}. Build the page from this package (trunk \
         build, wasm-pack build --target web), or choose the page's package with -p",
        page.display(),
        stem.replace('_', "-"),
    )
}

/// The HTML and JS under the page's root, a few levels deep, as text.
fn page_texts(root: &Path) -> Vec<String> {
    const MAX_FILES: usize = 2000;
    const MAX_BYTES: u64 = 8 << 20;
    let mut texts = Vec::new();
    let mut dirs = vec![(root.to_path_buf(), 0)];
    let mut seen = 0;
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_FILES {
                return texts;
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if depth < 4 && entry.file_name() != "node_modules" {
                    dirs.push((path, depth + 1));
                }
                continue;
            }
            let wanted = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "html" | "htm" | "js" | "mjs"));
            let small = entry.metadata().is_ok_and(|m| m.len() <= MAX_BYTES);
            if wanted
                && small
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                texts.push(text);
            }
        }
    }
    texts
}

/// The file names (last path segment) of `.js` and `.wasm` references in
/// a text: `/yew-todo-812e.js`, `./pkg/app_bg.wasm`.
fn file_names_in(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || "_.-".contains(c)))
        .filter(|word| word.ends_with(".js") || word.ends_with(".wasm"))
}

/// `app.js`, `app-5f3a9c.js` for stem `app` and suffix `.js`. trunk names
/// the files after the package (`yew-todo-812eb89a30114937.js`) where
/// wasm-bindgen's stem has underscores (`yew_todo`): either spelling names
/// the module.
fn names_the_module(name: &str, stem: &str, suffix: &str) -> bool {
    let Some(middle) = name.strip_suffix(suffix) else {
        return false;
    };
    let Some(rest) = middle.get(..stem.len()) else {
        return false;
    };
    let same_stem = rest
        .chars()
        .zip(stem.chars())
        .all(|(a, b)| a == b || (a == '-' && b == '_'));
    if !same_stem {
        return false;
    }
    let hash = &middle[stem.len()..];
    hash.is_empty()
        || hash
            .strip_prefix('-')
            .is_some_and(|hash| !hash.is_empty() && hash.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The scripts that go first in the page's head: the host API, the run's
/// configuration, the import map for `prof`, and what watches (user page)
/// or saves (`--serve`).
fn head_snippet(config: &serde_json::Value, watch: bool, overlay: bool) -> String {
    let mut snippet = format!(
        "<script src=\"/__wasmprof/host-api.js\"></script>\n\
         <script>__wasmprofHost.config = {};</script>\n\
         <script type=\"importmap\">{{\"imports\":{{\"prof\":\"/__wasmprof/prof.js\"}}}}</script>\n",
        script_json(config)
    );
    if watch {
        snippet.push_str("<script src=\"/__wasmprof/page-watch.js\"></script>\n");
    }
    if overlay {
        snippet.push_str("<script src=\"/__wasmprof/save-overlay.js\"></script>\n");
    }
    snippet
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wasm_pack_and_trunk_names_are_the_modules_files() {
        assert!(names_the_module("app.js", "app", ".js"));
        assert!(names_the_module("app_bg.wasm", "app", "_bg.wasm"));
        assert!(names_the_module("app-9a3f01bc.js", "app", ".js"));
        assert!(names_the_module("app-9a3f01bc_bg.wasm", "app", "_bg.wasm"));
        assert!(!names_the_module("app-extra.js", "app", ".js"));
        assert!(!names_the_module("app2.js", "app", ".js"));
        assert!(!names_the_module("application.js", "app", ".js"));
        assert!(!names_the_module("app-.js", "app", ".js"));
        assert!(names_the_module(
            "yew-todo-812eb89a30114937.js",
            "yew_todo",
            ".js"
        ));
        assert!(names_the_module(
            "yew-todo-812eb89a30114937_bg.wasm",
            "yew_todo",
            "_bg.wasm"
        ));
        assert!(names_the_module("yew_todo_bg.wasm", "yew_todo", "_bg.wasm"));
        assert!(!names_the_module("yew-todo.js", "yew-tod", ".js"));
    }

    #[test]
    fn a_page_that_loads_another_module_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("index.html"),
            "<script type=module>import init from '/other-app-0a1b.js'; \
             init({ module_or_path: '/other-app-0a1b_bg.wasm' });</script>",
        )
        .unwrap();
        let error = loads_the_module(dir.path(), dir.path(), "yew_todo").unwrap_err();
        let message = format!("{error:#}");
        assert!(message.contains("other-app-0a1b_bg.wasm"), "{message}");
        assert!(message.contains("yew-todo-HASH.js"), "{message}");
        std::fs::create_dir(dir.path().join("pkg")).unwrap();
        std::fs::write(
            dir.path().join("pkg/main.js"),
            "import init from './yew-todo-812eb89a30114937.js';",
        )
        .unwrap();
        loads_the_module(dir.path(), dir.path(), "yew_todo").unwrap();
    }

    #[test]
    fn arguments_cannot_close_the_config_script() {
        let text = script_json(&json!({ "args": ["</script><script>alert(1)"] }));
        assert!(!text.contains("</script>"), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["args"][0], "</script><script>alert(1)");
    }

    #[test]
    fn a_page_directory_needs_an_index() {
        let dir = tempfile::tempdir().unwrap();
        let error = user_root(dir.path()).unwrap_err().to_string();
        assert!(error.contains("no index.html"), "{error}");
        std::fs::write(dir.path().join("app.html"), "<html></html>").unwrap();
        let (root, start) = user_root(&dir.path().join("app.html")).unwrap();
        assert_eq!((root.as_path(), start.as_str()), (dir.path(), "/app.html"));
        assert!(user_root(&dir.path().join("missing")).is_err());
    }
}
