//! speedscope, the app its npm package ships (pinned in
//! `cargo-wasmprof/tests/viewers/package.json`, installed by `.ci/run`), driven as a
//! person uses it: "Browse" for a file, then the Sandwich view's table.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::shown::{Row, shown};
use super::{PageProbe, repo_root};

fn app() -> PathBuf {
    let app = repo_root()
        .join("cargo-wasmprof/tests/viewers/node_modules/speedscope/dist/release/index.html");
    assert!(
        app.exists(),
        "speedscope's app is not installed: run `npm ci --prefix cargo-wasmprof/tests/viewers` (.ci/run does)"
    );
    app
}

const SANDWICH: &str = "(() => { \
       const tab = Array.from(document.querySelectorAll('div')).find(d => d.textContent === '🥪Sandwich'); \
       if (!tab) return null; tab.click(); \
       const rows = Array.from(document.querySelectorAll('table tr')).slice(1) \
         .map(tr => Array.from(tr.cells).map(td => td.textContent)) \
         .filter(cells => /^[0-9.,]+ *(ms|µs|μs|ns|s)/.test(cells[0] || '')); \
       return rows.length ? rows : null; })()";

/// Imports `file` in speedscope and returns the Sandwich view's rows (a
/// file of several profiles also has the table of profiles, whose first
/// column is a number, not a time),
/// with the name of the importer speedscope chose.
pub(crate) fn sandwich_rows(file: &Path) -> (String, Vec<Row>) {
    let url = format!("file://{}", app().display());
    let mut page = PageProbe::open_sized(&url, Some((1400, 900)));
    page.choose_file("document.querySelector('input[type=file]')", file);
    let rows = page.wait_for(
        SANDWICH,
        "speedscope's Sandwich table",
        Duration::from_secs(60),
    );
    let importer = page
        .console
        .iter()
        .find_map(|line| line.strip_prefix("Importing as "))
        .unwrap_or("")
        .to_owned();
    assert!(page.errors.is_empty(), "speedscope: {:?}", page.errors);
    let rows = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|row| Row {
            total_time: shown(row[0].as_str().unwrap()),
            self_time: shown(row[1].as_str().unwrap()),
            name: row[2].as_str().unwrap().to_owned(),
        })
        .collect();
    (importer, rows)
}
