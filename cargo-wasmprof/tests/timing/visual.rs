//! The pictures and comparisons of `cargo wasmprof report`, on real runs of
//! the examples, looked at in real headless Chromium: the HTML report and
//! the SVGs load from `file://` with no error and no network request, the
//! table sorts, the call graph navigates, the flame graph zooms and
//! searches; a 100,000-node profile stays responsive; `--diff` finds a
//! deliberate regression and `--fail-if-slower` fails on it only.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::support::*;
use serde_json::json;

/// One instrumented run of appendix B, shared by the tests here.
fn appendix_b_profile() -> &'static Path {
    static PROFILE: OnceLock<PathBuf> = OnceLock::new();
    PROFILE.get_or_init(|| {
        let run = wasmprof(&["run", "-p", "appendix-b", "--release"]);
        run.assert_success();
        run.profile_path()
    })
}

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// `cargo wasmprof report --input PROFILE ARGS -o OUT`.
fn report_to(profile: &Path, args: &[&str], out: &Path) -> Run {
    let mut all = vec!["report", "--input", profile.to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", out.to_str().unwrap()]);
    wasmprof(&all)
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

#[test]
fn the_html_report_sorts_filters_navigates_and_zooms_offline() {
    let _alone = timing::alone();
    let dir = scratch();
    let page = dir.path().join("report.html");
    report_to(appendix_b_profile(), &["--format", "html"], &page).assert_success();
    let mut probe = PageProbe::open(&file_url(&page));
    assert!(probe.errors.is_empty(), "{:?}", probe.errors);
    // Sorted by self time, most first.
    let first = |probe: &mut PageProbe| {
        probe.eval("document.querySelector('#functions tbody tr td:nth-child(5) a').textContent")
    };
    let most = probe
        .eval("__wasmprofReport.data.functions.slice().sort((a, b) => b.self - a.self)[0].name");
    assert_eq!(first(&mut probe), most);
    // A click on "calls" sorts by calls, most first; another, fewest first.
    probe.eval("document.querySelector('th[data-key=calls]').click()");
    assert_eq!(first(&mut probe), "appendix_b::add");
    probe.eval("document.querySelector('th[data-key=calls]').click()");
    assert_ne!(first(&mut probe), "appendix_b::add");
    // Ties keep name order under a descending sort too: the functions
    // called once, by calls, most first.
    let once = probe.eval(
        "const t = document.querySelector('th[data-key=calls]'); t.click(); \
         Array.from(document.querySelectorAll('#functions tbody tr')) \
           .filter(tr => tr.cells[3].textContent === '1').map(tr => tr.cells[4].textContent)",
    );
    let once: Vec<&str> = once
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let mut sorted = once.clone();
    sorted.sort_unstable();
    assert!(once.len() >= 4, "{once:?}");
    assert_eq!(once, sorted);
    // Places sort by file, then line as a number.
    let order = probe.eval(
        "__wasmprofReport.compare({file: 'src/main.rs', line: 22}, {file: 'src/main.rs', line: 107}, 'place') < 0 && \
         __wasmprofReport.compare({file: 'src/a.rs', line: 900}, {file: 'src/main.rs', line: 1}, 'place') < 0",
    );
    assert_eq!(order, true);
    // One call is "1 call".
    let facts = probe.eval(
        "__wasmprofReport.show(__wasmprofReport.data.functions.find(f => f.name === 'appendix_b::main').id); \
         document.querySelector('#focus p').textContent",
    );
    assert!(facts.as_str().unwrap().starts_with("1 call ·"), "{facts}");
    // The filter keeps the four f_main_* functions.
    let rows = probe.eval(
        "const f = document.getElementById('filter'); f.value = 'f_main'; \
         f.dispatchEvent(new Event('input')); \
         document.querySelectorAll('#functions tbody tr').length",
    );
    assert_eq!(rows, 4);
    // A function's link opens it in the call graph, with its callers and
    // their exact calls; a caller's link moves there.
    let focused = probe.eval(
        "location.hash = '#f=' + __wasmprofReport.data.functions.find(f => f.name === 'appendix_b::f_quarter').id; \
         new Promise(r => setTimeout(() => r(document.getElementById('focused').textContent), 100))",
    );
    assert_eq!(focused, "appendix_b::f_quarter");
    let callers = probe.eval(
        "Array.from(document.querySelectorAll('#focus table')[0].querySelectorAll('tr.arc')).map(tr => \
         tr.cells[0].textContent + ' ' + tr.cells[3].textContent).sort().join(', ')",
    );
    assert_eq!(
        callers,
        "1 appendix_b::main, 2 appendix_b::f_half_2, 4 appendix_b::f_main_4"
    );
    let moved = probe.eval(
        "Array.from(document.querySelectorAll('#focus a.fn')).find(a => a.textContent === 'appendix_b::f_main_4').click(); \
         new Promise(r => setTimeout(() => r(document.getElementById('focused').textContent), 100))",
    );
    assert_eq!(moved, "appendix_b::f_main_4");
    // The flame graph zooms on a click: f_main_1 then fills the width.
    let width = probe.eval(
        "const g = Array.from(document.querySelectorAll('g.f')).find(g => g.querySelector('title').textContent.startsWith('appendix_b::f_main_1 ')); \
         g.dispatchEvent(new MouseEvent('click', {bubbles: true})); \
         Number(g.querySelector('rect').getAttribute('width'))",
    );
    assert!((width.as_f64().unwrap() - 1180.0).abs() < 1.0, "{width}");
    // Ctrl-F in the page is the browser's find, in the filter box or not:
    // the graph's search prompt is for the graph opened on its own.
    let prompts = probe.eval(
        "let prompts = 0; window.prompt = () => { prompts += 1; return null; }; \
         const box = document.getElementById('filter'); box.focus(); \
         box.dispatchEvent(new KeyboardEvent('keydown', {key: 'f', ctrlKey: true, bubbles: true})); \
         document.body.dispatchEvent(new KeyboardEvent('keydown', {key: 'f', ctrlKey: true, bubbles: true})); \
         prompts",
    );
    assert_eq!(prompts, 0);
    assert!(probe.errors.is_empty(), "{:?}", probe.errors);
    assert!(
        probe.network_requests().is_empty(),
        "{:?}",
        probe.network_requests()
    );
}

#[test]
fn the_flame_graph_svg_zooms_and_searches_on_its_own() {
    let _alone = timing::alone();
    let dir = scratch();
    let svg = dir.path().join("flame.svg");
    report_to(appendix_b_profile(), &["--format", "flamegraph"], &svg).assert_success();
    let mut probe = PageProbe::open(&file_url(&svg));
    assert!(probe.errors.is_empty(), "{:?}", probe.errors);
    // Hovering tells the exact calls.
    let title = probe.eval(
        "Array.from(document.querySelectorAll('g.f title')).map(t => t.textContent).find(t => t.startsWith('appendix_b::f_half_2 '))",
    );
    assert!(
        title.as_str().unwrap().contains("; 1 calls; measured)"),
        "{title}"
    );
    // Search sums the matching frames once: f_quarter's share of the run.
    let matched = probe.eval(
        "__wasmprofFlame.search('f_quarter$'); document.getElementById('matched').textContent",
    );
    let share: f64 = matched
        .as_str()
        .unwrap()
        .trim_start_matches("Matched: ")
        .split('%')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((20.0..45.0).contains(&share), "{matched}");
    let width = probe.eval(
        "const g = Array.from(document.querySelectorAll('g.f')).find(g => g.querySelector('title').textContent.startsWith('appendix_b::f_main_2 ')); \
         g.dispatchEvent(new MouseEvent('click', {bubbles: true})); \
         [Number(g.querySelector('rect').getAttribute('width')), document.getElementById('reset').classList.contains('hidden')]",
    );
    assert!((width[0].as_f64().unwrap() - 1180.0).abs() < 1.0, "{width}");
    assert_eq!(width[1], false, "the reset button shows");
    // The search stays on through the zoom, and its share of the zoomed
    // frame counts only what lies inside it: f_main_2 calls no f_quarter.
    let matched = probe.eval("document.getElementById('matched').textContent");
    assert!(
        matched
            .as_str()
            .unwrap()
            .ends_with(", 0.0% of the zoomed frame"),
        "{matched}"
    );
    // f_main_4 calls f_quarter, which is most of it.
    let matched = probe.eval(
        "const g4 = Array.from(document.querySelectorAll('g.f')).find(g => g.getAttribute('data-n') === 'appendix_b::f_main_4'); \
         __wasmprofFlame.zoom(g4); document.getElementById('matched').textContent",
    );
    let inside: f64 = matched
        .as_str()
        .unwrap()
        .split(", ")
        .nth(1)
        .unwrap()
        .split('%')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((50.0..=100.0).contains(&inside), "{matched}");
    // After a zoom and a reset, each label is the frame's name, its
    // function's own name (or the start of it), or nothing: never the tail
    // of a long name.
    let labels = probe.eval(
        "__wasmprofFlame.unzoom(); Array.from(document.querySelectorAll('g.f:not(.hidden)')).map(g => \
         [g.getAttribute('data-n'), g.querySelector('text').textContent])",
    );
    for pair in labels.as_array().unwrap() {
        let (name, label) = (pair[0].as_str().unwrap(), pair[1].as_str().unwrap());
        let own = name.rsplit("::").next().unwrap();
        let fits = label.is_empty()
            || label == name
            || label == own
            || label
                .strip_suffix("..")
                .is_some_and(|start| own.starts_with(start) && start.len() >= 3);
        assert!(fits, "{name}: {label:?}");
    }
    // A long hover line stops short of the "Matched:" text.
    let gap = probe.eval(
        "__wasmprofFlame.showDetails('x'.repeat(400)); \
         const d = document.getElementById('details').getBBox(); \
         const m = document.getElementById('matched').getBBox(); m.x - (d.x + d.width)",
    );
    assert!(gap.as_f64().unwrap() > 0.0, "{gap}");
    assert!(probe.errors.is_empty(), "{:?}", probe.errors);
    assert!(probe.network_requests().is_empty());
}

#[test]
fn a_profile_of_100_000_nodes_stays_responsive() {
    let _alone = timing::alone();
    use wasmprof_profile::profile::{Function, Node};
    let mut profile = read_profile(appendix_b_profile()).unwrap();
    // 1,000 functions, each called under 99 different callers' paths.
    profile.functions = (0..1000)
        .map(|i| {
            Function::at(
                format!("big::module{}::function{i}", i % 17),
                "big/src/lib.rs",
                i + 1,
            )
        })
        .collect();
    profile.nodes = vec![Node::root()];
    let mut parent = 0;
    for n in 1..100_000usize {
        let function = n % 1000;
        if n % 100 == 1 {
            parent = 0;
        }
        profile.nodes.push(Node {
            parent: Some(parent),
            function: Some(function),
            calls: (n % 7 + 1) as u64,
            // Less time the deeper in its chain: a node holds its child.
            inclusive_nanos: 1e6 / (1.0 + ((n - 1) % 100) as f64),
            ..Node::root()
        });
        parent = n;
    }
    let dir = scratch();
    let input = dir.path().join("big.wasmprof.json");
    wasmprof_profile::profile::write_profile(&profile, &input).unwrap();
    let page = dir.path().join("big.html");
    report_to(&input, &["--format", "html"], &page).assert_success();
    let mut probe = PageProbe::open(&file_url(&page));
    assert!(probe.errors.is_empty(), "{:?}", probe.errors);
    let loaded = probe
        .eval("performance.getEntriesByType('navigation')[0].loadEventEnd")
        .as_f64()
        .unwrap();
    let sort = probe
        .eval(
            "(t => (document.querySelector('th[data-key=name]').click(), performance.now() - t))\
             (performance.now())",
        )
        .as_f64()
        .unwrap();
    let zoom = probe
        .eval(
            "(t => (document.querySelector('g.f + g.f')\
             .dispatchEvent(new MouseEvent('click', {bubbles: true})), performance.now() - t))\
             (performance.now())",
        )
        .as_f64()
        .unwrap();
    eprintln!(
        "100,000 nodes: loaded in {loaded:.0} ms, sorted in {sort:.0} ms, zoomed in {zoom:.0} ms"
    );
    // Generous bounds for a shared 2-core machine; the numbers are printed.
    assert!(loaded < 10_000.0, "{loaded} ms to load");
    assert!(sort < 2_000.0, "{sort} ms to sort");
    assert!(zoom < 2_000.0, "{zoom} ms to zoom");
}

#[test]
fn diff_finds_the_slowed_function_and_fail_if_slower_fails_only_on_it() {
    let _alone = timing::alone();
    // In turn, so that a busy moment of the machine slows each side alike.
    // The slow build in a target directory of its own: the other tests
    // here run appendix-b too, and must not pick up its module.
    let slow_dir = examples_dir().join("target/slow-quarter");
    let slow_dir = slow_dir.to_str().unwrap().to_owned();
    let run = |features: &[&str]| -> PathBuf {
        let mut args = vec!["run", "-p", "appendix-b", "--release"];
        args.extend_from_slice(features);
        let run = wasmprof(&args);
        run.assert_success();
        run.profile_path()
    };
    let (mut base, mut same, mut slow) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        base.push(run(&[]));
        same.push(run(&[]));
        slow.push(run(&[
            "--features",
            "slow-quarter",
            "--target-dir",
            &slow_dir,
        ]));
    }
    let compare = |new: &[PathBuf], base: &[PathBuf], extra: &[&str]| -> Run {
        let mut args = vec!["report".to_owned()];
        for p in new {
            args.extend(["--input".to_owned(), p.display().to_string()]);
        }
        for p in base {
            args.extend(["--diff".to_owned(), p.display().to_string()]);
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        wasmprof(&args)
    };
    let run = compare(&slow, &base, &[]);
    run.assert_success();
    let first = run.stdout.lines().nth(3).unwrap();
    assert!(first.ends_with("appendix_b::f_quarter"), "{}", run.stdout);
    // The same calls: only time changed.
    assert!(first.contains("21  "), "{first}");
    let run = compare(
        &slow,
        &base,
        &[
            "--fail-if-slower",
            "30",
            "--function",
            "appendix_b::f_quarter",
        ],
    );
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("appendix_b::f_quarter got slower by"),
        "{}",
        run.stderr
    );
    let run = compare(&same, &base, &["--fail-if-slower", "30"]);
    assert_eq!(run.code(), Some(0), "{}\n{}", run.stdout, run.stderr);
    let run = compare(
        &same,
        &base,
        &[
            "--fail-if-slower",
            "30",
            "--function",
            "appendix_b::f_quarter",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}\n{}", run.stdout, run.stderr);

    // The differential flame graph colours f_quarter red, and opens clean.
    let dir = scratch();
    let svg = dir.path().join("diff.svg");
    let mut args = vec!["report".to_owned()];
    for p in &slow {
        args.extend(["--input".to_owned(), p.display().to_string()]);
    }
    for p in &base {
        args.extend(["--diff".to_owned(), p.display().to_string()]);
    }
    args.extend(["--format", "flamegraph", "-o"].map(String::from));
    args.push(svg.display().to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    wasmprof(&args).assert_success();
    let mut probe = PageProbe::open(&file_url(&svg));
    let fill = probe.eval(
        "Array.from(document.querySelectorAll('g.f')).find(g => g.querySelector('title').textContent.startsWith('appendix_b::f_quarter ')).querySelector('rect').getAttribute('fill')",
    );
    let fill = fill.as_str().unwrap();
    assert!(fill.starts_with("rgb(255,"), "red for slower: {fill}");
    assert!(probe.errors.is_empty(), "{:?}", probe.errors);

    // pprof: the pair go tool pprof -diff_base reads.
    let new = dir.path().join("new.pb.gz");
    let mut args = vec!["report".to_owned()];
    for p in &slow {
        args.extend(["--input".to_owned(), p.display().to_string()]);
    }
    for p in &base {
        args.extend(["--diff".to_owned(), p.display().to_string()]);
    }
    args.extend(["--format", "pprof", "-o"].map(String::from));
    args.push(new.display().to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = wasmprof(&args);
    run.assert_success();
    assert!(
        run.stderr.contains("go tool pprof -diff_base"),
        "{}",
        run.stderr
    );
    let base = dir.path().join("new.base.pb.gz");
    let top = go_pprof(&[
        "-top",
        "-diff_base",
        base.to_str().unwrap(),
        new.to_str().unwrap(),
    ]);
    let first = top
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .nth(1)
        .unwrap();
    assert!(first.contains("appendix_b::f_quarter"), "{top}");
}

#[test]
fn an_engine_profile_becomes_a_flame_chart_in_time_order() {
    let _alone = timing::alone();
    let run = wasmprof(&["run", "-p", "appendix-b", "--release", "--sample"]);
    run.assert_success();
    let samples = run.profile().run.samples_file.expect("a .cpuprofile");
    let dir = scratch();
    let svg = dir.path().join("chart.svg");
    report_to(
        Path::new(&samples),
        &["--format", "flamechart", "--hide-idle"],
        &svg,
    )
    .assert_success();
    let mut probe = PageProbe::open(&file_url(&svg));
    assert!(probe.errors.is_empty(), "{:?}", probe.errors);
    // The program's main is on the chart, and boxes follow each other in
    // time without overlapping within a row.
    let overlap = probe.eval(
        "const rows = {}; let bad = 0; \
         document.querySelectorAll('g.f').forEach(g => { const d = g.dataset.d, x = +g.dataset.x, w = +g.dataset.w; \
           (rows[d] = rows[d] || []).push([x, x + w]); }); \
         Object.values(rows).forEach(r => { r.sort((a, b) => a[0] - b[0]); \
           for (let i = 1; i < r.length; i++) if (r[i][0] < r[i - 1][1] - 1e-3) bad++; }); bad",
    );
    assert_eq!(overlap, 0);
    let has_main = probe.eval(
        "Array.from(document.querySelectorAll('g.f title')).some(t => t.textContent.includes('appendix_b::main'))",
    );
    assert_eq!(has_main, true);
    // A time ruler, from 0, redrawn for a zoomed window.
    let ticks =
        probe.eval("Array.from(document.querySelectorAll('#ruler text')).map(t => t.textContent)");
    let ticks: Vec<&str> = ticks
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(ticks.len() >= 5, "{ticks:?}");
    assert_eq!(ticks[0], "0 ns");
    let zoomed_first = probe.eval(
        "const wide = Array.from(document.querySelectorAll('g.f')).filter(g => +g.dataset.x > 0) \
           .sort((a, b) => b.dataset.w - a.dataset.w)[0]; __wasmprofFlame.zoom(wide); \
         document.querySelector('#ruler text').textContent",
    );
    assert_ne!(zoomed_first, "0 ns");
    // The same samples as an HTML report: named after the file, counted
    // in samples, no invented exit status, no empty values dressed up.
    let page = dir.path().join("samples.html");
    report_to(Path::new(&samples), &["--format", "html"], &page).assert_success();
    let mut probe = PageProbe::open(&file_url(&page));
    assert!(probe.errors.is_empty(), "{:?}", probe.errors);
    let file_name = Path::new(&samples).file_name().unwrap().to_str().unwrap();
    let facts = probe.eval(
        "[document.title, !!document.querySelector('th[data-key=samples]'), \
          !!document.querySelector('th[data-key=calls]'), \
          Array.from(document.querySelectorAll('#meta td:first-child')).map(td => td.textContent), \
          Array.from(document.querySelectorAll('td')).map(td => td.textContent) \
            .filter(t => t === '0.00 ns' || t.startsWith(':') || t === '-').length, \
          Array.from(document.querySelectorAll('#functions tbody tr td:nth-child(4)')) \
            .map(td => Number(td.textContent)).reduce((a, b) => a + b, 0)]",
    );
    assert_eq!(facts[0], format!("wasmprof: {file_name}"), "{facts}");
    assert_eq!(
        (&facts[1], &facts[2]),
        (&json!(true), &json!(false)),
        "{facts}"
    );
    assert!(
        !facts[3]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k == "exit status"),
        "{facts}"
    );
    assert_eq!(facts[4], 0, "{facts}");
    assert!(
        facts[5].as_f64().unwrap() > 0.0,
        "samples in the table: {facts}"
    );
    // An instrumented profile has no time order: said clearly, and not as
    // if writing the file had failed.
    let run = report_to(appendix_b_profile(), &["--format", "flamechart"], &svg);
    assert_ne!(run.code(), Some(0));
    assert!(run.stderr.contains("--format flamegraph"), "{}", run.stderr);
    assert!(!run.stderr.contains("could not write"), "{}", run.stderr);
}
