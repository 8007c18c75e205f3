//! The browsers the host drives, named once for the tests that run in
//! each: how a run is started in one and how a test checks that nothing of
//! it is left.

use super::*;

/// A browser the host drives, and how a test checks that it is gone.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Browser {
    /// Debian's `chromium`, over the DevTools protocol.
    Chromium,
    /// Debian's `firefox-esr`, over WebDriver BiDi.
    Firefox,
}

impl Browser {
    /// `--browser`'s word for it, and how its profile names its host.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Browser::Chromium => "chromium",
            Browser::Firefox => "firefox",
        }
    }

    /// `cargo wasmprof ARGS` in this browser (its flags go before any
    /// `--`), with `env`; then checks that nothing of the browser is left.
    pub(crate) fn run_with_env(self, args: &[&str], env: &[(&str, &str)]) -> Run {
        match self {
            Browser::Chromium => assert!(
                browser_available(),
                "these tests need Chromium: `apt-get install chromium` (bash .ci/run does)"
            ),
            Browser::Firefox => assert!(
                firefox_available(),
                "these tests need Firefox 128 or newer: `apt-get install firefox-esr` (bash .ci/run does)"
            ),
        }
        let split = args.iter().position(|a| *a == "--").unwrap_or(args.len());
        let mut all: Vec<&str> = args[..split].to_vec();
        all.extend(["--host", "browser", "--browser", self.name()]);
        all.extend_from_slice(&args[split..]);
        let child = spawn_wasmprof_with_env(&all, env);
        let pid = child.id();
        let run = Run::from_output(child.wait_with_output().expect("cargo-wasmprof ends"));
        match self {
            Browser::Chromium => assert_no_browser_left(pid),
            Browser::Firefox => assert_no_firefox_left(pid),
        }
        run
    }

    pub(crate) fn run(self, args: &[&str]) -> Run {
        self.run_with_env(args, &[])
    }

    /// What the run says when the test hook kills the page under it:
    /// Chromium's hook crashes the page (the DevTools protocol's
    /// `Page.crash`), Firefox's ends the browser (BiDi has no such command).
    pub(crate) fn death_message(self) -> &'static str {
        match self {
            Browser::Chromium => "the page crashed",
            Browser::Firefox => "the browser went away",
        }
    }
}
