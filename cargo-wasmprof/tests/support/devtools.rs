//! Chrome DevTools' own Performance panel, driven as a person uses it:
//! Chromium serves its DevTools front end at `devtools://devtools/bundled/`;
//! the test opens it in a tab, chooses a `.cpuprofile` in the panel's
//! "Load profile" file input, clicks the "Bottom-up" tab and reads the rows
//! it shows.

use std::path::Path;
use std::time::{Duration, Instant};

use super::PageProbe;
use super::shown::{Row, shown};

const FRONT_END: &str = "devtools://devtools/bundled/inspector.html";

/// Loading a large profile takes DevTools a few seconds.
const LOAD_TIMEOUT: Duration = Duration::from_secs(60);

/// Helpers in the front end's page: the panel's elements live in shadow
/// roots, out of `querySelector`'s reach.
const HELPERS: &str = "window.__deep = (pred) => { const out = []; \
       const walk = (root) => { for (const el of root.querySelectorAll('*')) { \
         if (pred(el)) out.push(el); if (el.shadowRoot) walk(el.shadowRoot); } }; \
       walk(document); return out; }; \
     window.__center = (el) => { if (!el) return null; const r = el.getBoundingClientRect(); \
       return r.width > 0 ? [r.x + r.width / 2, r.y + r.height / 2] : null; }; true";

/// The front end opened outside a real DevTools window shows a screencast
/// of a page beside the panels; its toolbar button closes it, so that the
/// panel has the window's width.
const SCREENCAST_BUTTON: &str = "__center(__deep(e => e.tagName === 'BUTTON' && \
     e.getAttribute('aria-label') === 'Toggle screencast')[0])";
/// While the screencast is there, the main toolbar starts right of it.
const SCREENCAST_SHOWN: &str = "(() => { const at = __center(__deep(e => e.tagName === 'BUTTON' && \
     e.getAttribute('aria-label') === 'Toggle screencast')[0]); \
     return at && at[0] > innerWidth / 2; })()";

/// The Performance panel, as its tab in the main toolbar opens it.
const PERFORMANCE_PANEL: &str = "(async () => { \
       const UI = await import('./ui/legacy/legacy.js'); \
       await UI.ViewManager.ViewManager.instance().showView('timeline'); \
       const Timeline = await import('./panels/timeline/timeline.js'); \
       window.__panel = Timeline.TimelinePanel.TimelinePanel.instance(); return true; })()";

const BOTTOM_UP_TAB: &str =
    "__center(__panel.flameChart.detailsView.tabbedPane.tabsById.get('bottom-up')?.tabElement)";

/// The rows' cells as the panel renders them: self, total, activity.
const BOTTOM_UP_ROWS: &str = "(() => { \
       const view = __panel.flameChart.detailsView.rangeDetailViews.get('bottom-up'); \
       const rows = view.dataGrid.rootNode().children.map(n => { const c = n.element().children; \
         return [c[2].querySelector('.activity-name').textContent, \
                 c[0].querySelector('span').textContent, c[1].querySelector('span').textContent]; }); \
       return rows.length ? rows : null; })()";

/// Closes the screencast with its toolbar button, as a person would. A
/// click before the front end is ready is lost, and a second click while
/// the first is still being laid out opens it again: so each click is
/// waited out, and the screencast counts as closed once two looks a
/// second apart agree.
fn close_screencast(page: &mut PageProbe) {
    let deadline = Instant::now() + LOAD_TIMEOUT;
    let shown = |page: &mut PageProbe| page.eval(SCREENCAST_SHOWN) == true;
    let a_second = "new Promise(r => setTimeout(r, 1000))";
    loop {
        assert!(Instant::now() < deadline, "the screencast would not close");
        if !shown(page) {
            page.eval(a_second);
            if !shown(page) {
                return;
            }
            continue;
        }
        let at = page.eval(SCREENCAST_BUTTON);
        let Some(at) = at.as_array() else { continue };
        page.click_at(at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
        let waited_out = Instant::now() + Duration::from_secs(10);
        while shown(page) && Instant::now() < waited_out {
            page.eval("new Promise(r => setTimeout(r, 200))");
        }
    }
}

/// Loads `cpuprofile` in DevTools' Performance panel and returns its
/// Bottom-up rows, top-level only (one per function).
pub(crate) fn bottom_up_rows(cpuprofile: &Path) -> Vec<Row> {
    let mut page = PageProbe::open_sized(FRONT_END, Some((1400, 900)));
    page.eval(HELPERS);
    page.wait_for(SCREENCAST_BUTTON, "the screencast button", LOAD_TIMEOUT);
    close_screencast(&mut page);
    page.eval(PERFORMANCE_PANEL);
    // The front end may lay out its screencast after its toolbar: look
    // again once the panel is there.
    close_screencast(&mut page);
    // The tab shows once the profile is loaded; a click on it before
    // shows nothing, so click again until the rows come.
    let deadline = Instant::now() + LOAD_TIMEOUT;
    page.choose_file("__panel.fileSelectorElement", cpuprofile);
    let rows_a_second_later =
        format!("new Promise(r => setTimeout(() => r({BOTTOM_UP_ROWS}), 1000))");
    let rows = loop {
        if Instant::now() > deadline {
            let shot = std::env::temp_dir().join("wasmprof-devtools-failure.png");
            std::fs::write(&shot, page.screenshot()).unwrap();
            panic!(
                "no Bottom-up rows within {LOAD_TIMEOUT:?}; what DevTools showed: {}",
                shot.display()
            );
        }
        let tab = page.eval(&format!(
            "new Promise(r => setTimeout(() => r({BOTTOM_UP_TAB}), 500))"
        ));
        let Some(tab) = tab.as_array() else {
            continue;
        };
        page.click_at(tab[0].as_f64().unwrap(), tab[1].as_f64().unwrap());
        let rows = page.eval(&rows_a_second_later);
        // The grid may still be filling: the rows count once two reads a
        // second apart agree.
        if rows.is_array() && page.eval(&rows_a_second_later) == rows {
            break rows;
        }
    };
    assert!(page.errors.is_empty(), "DevTools: {:?}", page.errors);
    rows.as_array()
        .unwrap()
        .iter()
        .map(|row| Row {
            name: row[0].as_str().unwrap().to_owned(),
            self_time: shown(row[1].as_str().unwrap()),
            total_time: shown(row[2].as_str().unwrap()),
        })
        .collect()
}
