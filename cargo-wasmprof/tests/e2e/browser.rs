//! The browser host in real headless Chromium, where it differs from
//! Firefox: the DevTools protocol (a hung page stopped, a browser killed,
//! Ctrl-C, driven over a port as on Windows), `--serve`, `bench`, the
//! failure paths of a page, and no Chromium left behind after any of them.
//! What every browser does alike is in `every_browser.rs`.

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use crate::support::browsers::Browser;
use crate::support::*;

fn require_browser() {
    assert!(
        browser_available(),
        "these tests need Chromium: `apt-get install chromium` (bash .ci/run does)"
    );
}

/// `cargo wasmprof run ARGS` in Chromium; checks that nothing of it is left.
fn in_browser(args: &[&str]) -> Run {
    Browser::Chromium.run(&[&["run"], args].concat())
}

#[test]
fn a_web_app_that_draws_on_a_canvas_is_refused_by_node() {
    let node = wasmprof(&["run", "-p", "image-kernels", "--release"]);
    assert_ne!(node.code(), Some(0), "{}", node.stderr);
    assert!(node.stderr.contains("needs a browser"), "{}", node.stderr);
}

#[test]
fn a_hung_page_is_ended_by_the_timeout_with_its_profile() {
    let started = Instant::now();
    let run = in_browser(&["-p", "faults", "--invoke", "spin", "--timeout", "3s"]);
    assert_eq!(run.code(), Some(124), "{}", run.stderr);
    assert!(run.stderr.contains("timed out"), "{}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(120));
    let profile = run.profile();
    assert!(!profile.run.complete);
    assert!(calls_of_path(&profile, &["faults::forever", "faults::tick"]) > 1000);
    assert!(profile.nodes.iter().any(|n| n.open));
}

#[test]
fn a_run_ended_by_the_grace_period_with_a_timer_pending_says_so() {
    // The page leaves a 60 s timer and goes quiet: no frame, no timer runs,
    // so the grace period ends the run, saying what it cut off.
    let run = in_browser(&[
        "-p",
        "image-kernels",
        "--release",
        "--invoke",
        "idle_with_timer",
        "--timeout",
        "60s",
        "--",
        "60",
    ]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("with 1 timer still pending"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--until-exit"), "{}", run.stderr);
    let profile = run.profile();
    assert!(!profile.run.complete);
    let reason = profile.run.incomplete_reason.as_deref().unwrap_or_default();
    assert!(reason.contains("1 timer"), "{reason}");
}

#[test]
fn a_wasi_binary_or_a_missing_browser_is_refused_before_building() {
    let run = wasmprof(&["run", "-p", "appendix-b", "--host", "browser"]);
    assert_ne!(run.code(), Some(0));
    assert!(run.stderr.contains("WASI"), "{}", run.stderr);
    assert!(!run.stderr.contains("Building"), "{}", run.stderr);

    let run = wasmprof(&[
        "run",
        "-p",
        "fib",
        "--host",
        "browser",
        "--browser",
        "/nonexistent/chromium",
    ]);
    assert_ne!(run.code(), Some(0));
    assert!(run.stderr.contains("no such executable"), "{}", run.stderr);
    assert!(!run.stderr.contains("Building"), "{}", run.stderr);

    // A browser named but not installed: every place looked at is said.
    let run = wasmprof(&["run", "-p", "fib", "--host", "browser", "--browser", "edge"]);
    assert_ne!(run.code(), Some(0));
    assert!(
        run.stderr
            .contains("--browser edge: not found. Looked at: /opt/microsoft/msedge"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("Building"), "{}", run.stderr);

    let run = wasmprof(&["run", "-p", "fib", "--browser-arg=--foo"]);
    assert_ne!(run.code(), Some(0));
    assert!(run.stderr.contains("--host browser"), "{}", run.stderr);
}

#[test]
fn runs_side_by_side_share_no_directory_port_or_profile() {
    require_browser();
    let children: Vec<_> = [
        &["run", "-p", "fib", "--release", "--host", "browser"][..],
        &["run", "-p", "fib", "--release", "--host", "browser"][..],
        &["run", "-p", "fib", "--release"][..],
    ]
    .iter()
    .map(|args| spawn_wasmprof(args))
    .collect();
    let mut profiles = Vec::new();
    for child in children {
        let pid = child.id();
        let run = Run::from_output(child.wait_with_output().unwrap());
        run.assert_success();
        assert_eq!(calls_by_function(&run.profile())["fib::fib"], 4_378_200);
        profiles.push(run.profile_path());
        assert_no_browser_left(pid);
    }
    profiles.sort();
    profiles.dedup();
    assert_eq!(profiles.len(), 3, "{profiles:?}");
}

/// `faults::spin` (a loop that never ends) running in a browser for two
/// seconds: the child and its process id.
fn spinning_in_the_browser() -> (std::process::Child, u32) {
    require_browser();
    let child = spawn_wasmprof(&[
        "run",
        "-p",
        "faults",
        "--host",
        "browser",
        "--invoke",
        "spin",
        "--timeout",
        "5m",
    ]);
    let pid = child.id();
    // A renderer, not just a browser process: until Debian's launcher
    // script has exec'd Chromium, the process to kill is the script, and
    // killing it tests a browser that did not start.
    wait_for(
        || {
            browser_processes_of(pid)
                .iter()
                .any(|&p| command_line(p).contains("--type=renderer"))
        },
        "the browser's renderer to start",
    );
    std::thread::sleep(Duration::from_secs(2));
    (child, pid)
}

fn command_line(pid: u32) -> String {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&bytes).replace('\0', " ")
}

#[test]
fn ctrl_c_ends_the_run_keeps_the_profile_and_closes_the_browser() {
    let (child, pid) = spinning_in_the_browser();
    // SAFETY: signalling a child of this test.
    unsafe { libc_kill(pid as i32, 2) };
    let run = Run::from_output(child.wait_with_output().unwrap());
    assert_eq!(run.code(), Some(130), "{}", run.stderr);
    assert!(run.stderr.contains("interrupted"), "{}", run.stderr);
    let profile = run.profile();
    assert!(!profile.run.complete);
    assert!(calls_of_path(&profile, &["faults::forever", "faults::tick"]) > 1000);
    assert_no_browser_left(pid);
}

#[test]
fn a_browser_that_dies_mid_run_ends_it_with_a_message() {
    let (child, pid) = spinning_in_the_browser();
    // The browser process itself is the one cargo-wasmprof started.
    let browser = *browser_processes_of(pid)
        .iter()
        .find(|&&p| parent_of(p) == Some(pid))
        .expect("the browser's main process");
    // SAFETY: signalling a process this test's child started.
    unsafe { libc_kill(browser as i32, 9) };
    let run = Run::from_output(child.wait_with_output().unwrap());
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("the browser went away"),
        "{}",
        run.stderr
    );
    assert_no_browser_left(pid);
}

#[test]
fn serve_saves_a_profile_when_a_person_presses_the_button() {
    use cargo_wasmprof::browsers_for_tests::{Chromium, ChromiumExe};
    use serde_json::json;
    require_browser();
    let mut child = spawn_wasmprof(&["run", "-p", "image-kernels", "--release", "--serve"]);
    let pid = child.id();
    let stderr = child.stderr.take().unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let mut said = String::new();
    let mut wait_for_line = |prefix: &str| -> String {
        let deadline = Instant::now() + Duration::from_secs(300);
        while Instant::now() < deadline {
            if let Ok(line) = lines.recv_timeout(Duration::from_secs(1)) {
                said.push_str(&line);
                said.push('\n');
                if line.trim_start().starts_with(prefix) {
                    return line;
                }
            }
        }
        panic!("no `{prefix}` line in:\n{said}");
    };
    let serving = wait_for_line("Serving");
    let url = serving
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap()
        .to_owned();

    // A person's browser: not one wasmprof launched.
    let chromium = Chromium::launch(&ChromiumExe::find().unwrap(), &[], false).unwrap();
    let cdp = &chromium.cdp;
    let wait = Duration::from_secs(30);
    let target = cdp
        .call(None, "Target.createTarget", json!({ "url": url }), wait)
        .unwrap();
    let session = cdp
        .call(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target["targetId"], "flatten": true }),
            wait,
        )
        .unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    // While the page navigates, its context can vanish under a call: that
    // reads as "not yet".
    let evaluate = |expression: &str| {
        cdp.call(
            Some(&session),
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true }),
            wait,
        )
        .map(|reply| reply["result"]["value"].clone())
        .unwrap_or_default()
    };
    // The app has run once its second canvas shows the edges.
    wait_for(
        || {
            evaluate(
                "!!(window.__wasmprofHost && __wasmprofHost.hasInstance() && document.getElementById('wasmprof-save') && document.getElementById('edges'))",
            ) == json!(true)
        },
        "the app and its overlay",
    );
    let click = |id: &str| {
        let rect = evaluate(&format!(
            "(() => {{ const r = document.getElementById('{id}').getBoundingClientRect(); \
             return {{ x: r.x + r.width / 2, y: r.y + r.height / 2 }}; }})()"
        ));
        for kind in ["mousePressed", "mouseReleased"] {
            cdp.call(
                Some(&session),
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": rect["x"], "y": rect["y"], "button": "left", "clickCount": 1 }),
                wait,
            )
            .unwrap();
        }
    };
    click("wasmprof-save");
    let saved = wait_for_line("Profile");
    // The page says so once the server has answered.
    wait_for(
        || {
            evaluate("document.getElementById('wasmprof-status').textContent")
                .as_str()
                .is_some_and(|status| status.starts_with("profile saved"))
        },
        "the page to say the profile was saved",
    );

    // A window recorded with the page's buttons: five animation frames,
    // started from the console while it is open, and nothing of the
    // start-up before it.
    click("wasmprof-record");
    wait_for(
        || {
            evaluate("document.getElementById('wasmprof-record').textContent")
                == json!("Stop and save")
        },
        "the recording to start",
    );
    evaluate("__wasmprofHost.lastExports().animate(5, 0)");
    wait_for(
        || evaluate("__wasmprofHost.exitCode()") == json!(0),
        "the five frames",
    );
    click("wasmprof-record");
    let saved_window = wait_for_line("Profile");
    drop(chromium);

    // SAFETY: signalling a child of this test.
    unsafe { libc_kill(pid as i32, 2) };
    let rest: Vec<String> = lines.iter().collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{}", rest.join("\n"));
    assert!(
        rest.iter().any(|l| l.contains("2 profiles saved")),
        "{}",
        rest.join("\n")
    );
    let read_saved = |line: &str| {
        let path = line
            .trim_start()
            .strip_prefix("Profile ")
            .unwrap()
            .split(" (")
            .next()
            .unwrap();
        read_profile(std::path::Path::new(path)).unwrap()
    };
    let profile = read_saved(&saved);
    assert!(
        profile.run.host.starts_with("browser Mozilla/5.0"),
        "{}",
        profile.run.host
    );
    assert_eq!(profile.run.window, None);
    let calls = calls_by_function(&profile);
    assert_eq!(calls["image_kernels::luminance"], 64_000);
    assert_eq!(calls["image_kernels::convolve_at"], 3 * 318 * 198);

    let window = read_saved(&saved_window);
    let span = window.run.window.expect("the recorded window");
    assert!(span.start_nanos < span.end_nanos, "{span:?}");
    let calls = calls_by_function(&window);
    assert_eq!(calls.get("image_kernels::draw_frame"), Some(&5));
    assert_eq!(
        calls.get("image_kernels::luminance").copied().unwrap_or(0),
        0,
        "start-up is not in the window"
    );
    assert_eq!(window.frames.as_ref().map(|f| f.count), Some(5));
}

#[test]
fn bench_in_the_browser_prints_the_side_by_side_table() {
    require_browser();
    let (run, pid) = wasmprof_with_pid(&[
        "bench",
        "-p",
        "fib",
        "--release",
        "--host",
        "browser",
        "--invoke",
        "fib_js",
        "-n",
        "2",
        // The table is what is tested, not its precision: no rounds
        // added while the machine is noisy (they took half a minute).
        "--max-runs",
        "2",
        "--",
        "25",
    ]);
    run.assert_success();
    assert!(run.stdout.contains("headless Chromium"), "{}", run.stdout);
    for row in ["plain", "--timer none", "--timer host"] {
        assert!(
            run.stdout.lines().any(|l| l.starts_with(row)),
            "{row}:\n{}",
            run.stdout
        );
    }
    assert_no_browser_left(pid);
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(") ")
        .next()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn wait_for(mut ready: impl FnMut() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while !ready() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, signal: i32) -> i32;
}

#[test]
fn an_unhandled_rejection_ends_the_run_as_an_error_with_its_message() {
    let run = in_browser(&[
        "-p",
        "image-kernels",
        "--release",
        "--invoke",
        "reject_later",
    ]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("Uncaught (in promise) Error: rejected on purpose"),
        "{}",
        run.stderr
    );
    // What ran before is kept.
    assert_eq!(
        calls_by_function(&run.profile())["image_kernels::checked_step"],
        1
    );
}

#[test]
fn a_page_that_never_loads_the_module_is_told_so() {
    let dir = std::env::temp_dir().join(format!("wasmprof-empty-page-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("index.html"),
        "<!doctype html><html><head><title>no module</title></head><body>nothing</body></html>",
    )
    .unwrap();
    let run = in_browser(&[
        "-p",
        "image-kernels",
        "--release",
        "--page",
        dir.to_str().unwrap(),
    ]);
    // Refused before the browser starts: nothing of the page was relayed.
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("no file of the page loads this crate's module"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("image_kernels.js"), "{}", run.stderr);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn serving_beyond_loopback_says_so_and_ctrl_c_stops_it_cleanly() {
    let mut child = spawn_wasmprof(&[
        "run",
        "-p",
        "fib",
        "--release",
        "--serve",
        "--bind",
        "0.0.0.0",
    ]);
    let pid = child.id();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines().map_while(Result::ok);
    let mut said = String::new();
    let serving = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("no Serving line in:\n{said}"));
        said.push_str(&line);
        said.push('\n');
        if line.trim_start().starts_with("Serving") {
            break line;
        }
    };
    assert!(
        said.contains("other machines on the network can load this page"),
        "{said}"
    );
    assert!(serving.contains("<this machine's address>"), "{serving}");
    // SAFETY: signalling a child of this test.
    unsafe { libc_kill(pid as i32, 2) };
    let rest: Vec<String> = lines.collect();
    assert_eq!(child.wait().unwrap().code(), Some(0), "{}", rest.join("\n"));
    assert!(
        rest.iter().any(|l| l.contains("0 profiles saved")),
        "{}",
        rest.join("\n")
    );
}

#[test]
fn a_module_that_fails_to_compile_ends_the_run_with_the_engines_message() {
    let dir = std::env::temp_dir().join(format!("wasmprof-broken-page-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("pkg")).unwrap();
    std::fs::write(
        dir.join("pkg").join("broken.wasm"),
        b"\0asm\x01\0\0\0garbage",
    )
    .unwrap();
    std::fs::write(
        dir.join("index.html"),
        "<!doctype html><html><head><title>broken</title></head><body>\
         <script type=\"module\">import init from './pkg/image_kernels.js'; \
         await init({ module_or_path: './pkg/broken.wasm' });</script></body></html>",
    )
    .unwrap();
    let run = in_browser(&[
        "-p",
        "image-kernels",
        "--release",
        "--page",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("CompileError"), "{}", run.stderr);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn chromium_driven_over_a_port_as_on_windows_counts_the_same() {
    // Windows has no inherited pipes for the DevTools protocol: there the
    // browser opens a port and wasmprof connects a websocket. Forced here.
    require_browser();
    let child = spawn_wasmprof_with_env(
        &["run", "-p", "fib", "--release", "--host", "browser"],
        &[("WASMPROF_CHROMIUM_TRANSPORT", "port")],
    );
    let pid = child.id();
    let run = Run::from_output(child.wait_with_output().unwrap());
    run.assert_success();
    assert_eq!(calls_by_function(&run.profile())["fib::fib"], 4_378_200);
    assert_no_browser_left(pid);
}

/// `--headed` shows the browser's window: without a display it is refused
/// before anything is built, saying how to get one; other hosts refuse it.
#[test]
fn headed_without_a_display_is_refused_with_how_to_get_one() {
    let run = wasmprof_with_stdin(
        &["run", "-p", "fib", "--host", "browser", "--headed"],
        b"",
        &[("DISPLAY", ""), ("WAYLAND_DISPLAY", "")],
    );
    assert_ne!(run.code(), Some(0), "{}", run.stderr);
    assert!(run.stderr.contains("no display"), "{}", run.stderr);
    assert!(run.stderr.contains("xvfb-run"), "{}", run.stderr);
    assert!(!run.stderr.contains("Building"), "{}", run.stderr);
    let run = wasmprof(&["run", "-p", "fib", "--host", "node", "--headed"]);
    assert!(
        run.stderr.contains("--headed is for the browser host"),
        "{}",
        run.stderr
    );
}
