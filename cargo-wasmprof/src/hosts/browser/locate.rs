//! Finding the browser to run pages in, where each OS installs it.
//!
//! `--browser` (or `$WASMPROF_BROWSER`) names a browser (`chromium`,
//! `chrome`, `edge`, `firefox`) or an executable's path. Without it, the
//! first Chromium-family browser found is taken: Chromium, Chrome or Edge,
//! which give the engine's own sampler too. A named browser is looked for
//! at its standard places on this OS and on `PATH`; nothing is ever
//! downloaded. The search is pure over [`Probe`], so that every OS's
//! places are tested on any of them.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// The engines wasmprof can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// Chromium, Chrome, Edge: the DevTools protocol.
    Chromium,
    /// Firefox: WebDriver BiDi.
    Firefox,
}

/// A browser a user can ask for by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Name {
    Chromium,
    Chrome,
    Edge,
    Firefox,
}

impl Name {
    fn parse(text: &str) -> Option<Name> {
        Some(match text.to_ascii_lowercase().as_str() {
            "chromium" => Name::Chromium,
            "chrome" | "google-chrome" => Name::Chrome,
            "edge" | "msedge" | "microsoft-edge" => Name::Edge,
            "firefox" | "firefox-esr" => Name::Firefox,
            _ => return None,
        })
    }

    fn family(self) -> Family {
        match self {
            Name::Firefox => Family::Firefox,
            _ => Family::Chromium,
        }
    }
}

/// The operating systems whose places are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Os {
    Linux,
    Mac,
    Windows,
}

impl Os {
    pub(crate) fn current() -> Os {
        if cfg!(windows) {
            Os::Windows
        } else if cfg!(target_os = "macos") {
            Os::Mac
        } else {
            Os::Linux
        }
    }
}

/// What the search may look at: which files exist, `PATH`, the
/// environment. The real one is [`Probe::system`].
pub(crate) struct Probe<'a> {
    pub os: Os,
    pub path_dirs: Vec<PathBuf>,
    pub var: &'a dyn Fn(&str) -> Option<String>,
    pub is_file: &'a dyn Fn(&Path) -> bool,
}

impl Probe<'_> {
    /// This machine.
    pub(crate) fn system() -> Probe<'static> {
        Probe {
            os: Os::current(),
            path_dirs: std::env::var_os("PATH")
                .map(|path| std::env::split_paths(&path).collect())
                .unwrap_or_default(),
            var: &|name| std::env::var(name).ok(),
            is_file: &|path| path.is_file(),
        }
    }

    /// `name` in a directory of `PATH` (with `.exe` on Windows).
    fn on_path(&self, name: &str) -> Option<PathBuf> {
        let file = match self.os {
            Os::Windows if !name.ends_with(".exe") => format!("{name}.exe"),
            _ => name.to_owned(),
        };
        self.path_dirs
            .iter()
            .map(|dir| dir.join(&file))
            .find(|path| (self.is_file)(path))
    }
}

/// A browser executable found, and how to drive it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub path: PathBuf,
    pub family: Family,
}

/// Where `name` may be, in the order tried: the OS's standard places (as
/// strings with `%VAR%` and `~` to expand), then names on `PATH`.
fn places(os: Os, name: Name) -> (&'static [&'static str], &'static [&'static str]) {
    match (os, name) {
        (Os::Linux, Name::Chromium) => (&["/snap/bin/chromium"], &["chromium", "chromium-browser"]),
        (Os::Linux, Name::Chrome) => (
            &["/opt/google/chrome/chrome"],
            &["google-chrome", "google-chrome-stable"],
        ),
        (Os::Linux, Name::Edge) => (
            &["/opt/microsoft/msedge/msedge"],
            &["microsoft-edge", "microsoft-edge-stable"],
        ),
        (Os::Linux, Name::Firefox) => (
            &[
                "/usr/lib/firefox/firefox",
                "/usr/lib/firefox-esr/firefox-esr",
                "/snap/firefox/current/usr/lib/firefox/firefox",
            ],
            &["firefox", "firefox-esr"],
        ),
        (Os::Mac, Name::Chromium) => (
            &[
                "/Applications/Chromium.app/Contents/MacOS/Chromium",
                "~/Applications/Chromium.app/Contents/MacOS/Chromium",
            ],
            &["chromium"],
        ),
        (Os::Mac, Name::Chrome) => (
            &[
                "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
                "~/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
            ],
            &["google-chrome"],
        ),
        (Os::Mac, Name::Edge) => (
            &["/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge"],
            &[],
        ),
        (Os::Mac, Name::Firefox) => (
            &[
                "/Applications/Firefox.app/Contents/MacOS/firefox",
                "~/Applications/Firefox.app/Contents/MacOS/firefox",
            ],
            &["firefox"],
        ),
        (Os::Windows, Name::Chromium) => (
            &[
                r"%LOCALAPPDATA%\Chromium\Application\chrome.exe",
                r"%PROGRAMFILES%\Chromium\Application\chrome.exe",
            ],
            &["chromium"],
        ),
        (Os::Windows, Name::Chrome) => (
            &[
                r"%PROGRAMFILES%\Google\Chrome\Application\chrome.exe",
                r"%PROGRAMFILES(X86)%\Google\Chrome\Application\chrome.exe",
                r"%LOCALAPPDATA%\Google\Chrome\Application\chrome.exe",
            ],
            &["chrome"],
        ),
        (Os::Windows, Name::Edge) => (
            &[
                r"%PROGRAMFILES(X86)%\Microsoft\Edge\Application\msedge.exe",
                r"%PROGRAMFILES%\Microsoft\Edge\Application\msedge.exe",
                r"%LOCALAPPDATA%\Microsoft\Edge\Application\msedge.exe",
            ],
            &["msedge"],
        ),
        (Os::Windows, Name::Firefox) => (
            &[
                r"%PROGRAMFILES%\Mozilla Firefox\firefox.exe",
                r"%PROGRAMFILES(X86)%\Mozilla Firefox\firefox.exe",
                r"%LOCALAPPDATA%\Mozilla Firefox\firefox.exe",
            ],
            &["firefox"],
        ),
    }
}

/// The browsers tried when none is named, in order: on Linux, where
/// Chromium is the distributions' own, it first; elsewhere Chrome, the one
/// most people have.
fn default_order(os: Os) -> &'static [Name] {
    match os {
        Os::Linux => &[Name::Chromium, Name::Chrome, Name::Edge],
        Os::Mac | Os::Windows => &[Name::Chrome, Name::Chromium, Name::Edge],
    }
}

/// `%VAR%` and a leading `~` expanded; `None` when a variable is unset.
fn expand(place: &str, probe: &Probe) -> Option<PathBuf> {
    let mut text = String::new();
    let mut rest = place;
    if let Some(after) = rest.strip_prefix('~') {
        text.push_str(&(probe.var)("HOME")?);
        rest = after;
    }
    while let Some(start) = rest.find('%') {
        let end = start + 1 + rest[start + 1..].find('%')?;
        text.push_str(&rest[..start]);
        text.push_str(&(probe.var)(&rest[start + 1..end])?);
        rest = &rest[end + 1..];
    }
    text.push_str(rest);
    Some(PathBuf::from(text))
}

/// Every place `name` is looked for, as shown in an error.
fn looked_at(name: Name, probe: &Probe) -> Vec<String> {
    let (standard, on_path) = places(probe.os, name);
    standard
        .iter()
        .map(|place| {
            expand(place, probe)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| (*place).to_owned())
        })
        .chain(on_path.iter().map(|n| format!("{n} on PATH")))
        .collect()
}

/// The first place `name` is installed at.
fn find_name(name: Name, probe: &Probe) -> Option<Found> {
    let (standard, on_path) = places(probe.os, name);
    let path = standard
        .iter()
        .filter_map(|place| expand(place, probe))
        .find(|path| (probe.is_file)(path))
        .or_else(|| on_path.iter().find_map(|n| probe.on_path(n)))?;
    Some(Found {
        path,
        family: name.family(),
    })
}

/// The browser `wanted` names (`--browser`, else `$WASMPROF_BROWSER`), or
/// the first Chromium-family one installed. An executable given by path
/// is Firefox when its name says so; `version` (its `--version` line, when
/// it printed one) decides otherwise.
pub(crate) fn locate(wanted: Option<&str>, probe: &Probe) -> Result<Found> {
    let wanted = wanted
        .map(str::to_owned)
        .or_else(|| (probe.var)("WASMPROF_BROWSER").filter(|w| !w.is_empty()));
    let Some(wanted) = wanted else {
        let order = default_order(probe.os);
        if let Some(found) = order.iter().find_map(|&name| find_name(name, probe)) {
            return Ok(found);
        }
        let places: Vec<String> = order.iter().flat_map(|&n| looked_at(n, probe)).collect();
        bail!(
            "no browser found. Looked at: {}. Install Chromium, Chrome or Edge (on Debian: \
             `apt-get install chromium`), or name one with --browser (chromium, chrome, edge, \
             firefox, or a path) or $WASMPROF_BROWSER. wasmprof never downloads a browser.",
            places.join(", ")
        );
    };
    if let Some(name) = Name::parse(&wanted) {
        return match find_name(name, probe) {
            Some(found) => Ok(found),
            None => bail!(
                "--browser {wanted}: not found. Looked at: {}. Install it{}, or give its \
                 executable's path with --browser PATH",
                looked_at(name, probe).join(", "),
                match (probe.os, name) {
                    (Os::Linux, Name::Firefox) => " (on Debian: `apt-get install firefox-esr`)",
                    (Os::Linux, Name::Chromium) => " (on Debian: `apt-get install chromium`)",
                    _ => "",
                }
            ),
        };
    }
    let path = PathBuf::from(&wanted);
    let path = if path.components().count() == 1 {
        probe.on_path(&wanted).unwrap_or(path)
    } else {
        path
    };
    if !(probe.is_file)(&path) {
        bail!(
            "--browser {wanted}: no such executable. Give a browser's path, or a name: chromium, \
             chrome, edge or firefox"
        );
    }
    Ok(Found {
        family: family_of_path(&path),
        path,
    })
}

/// Firefox when the executable is called so (`firefox`, `firefox-esr`,
/// `firefox.exe`), else a Chromium-family browser.
fn family_of_path(path: &Path) -> Family {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if name.starts_with("firefox") {
        Family::Firefox
    } else {
        Family::Chromium
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeSet, HashMap};

    /// A machine of `os` with `files`, `PATH` = `path_dirs` and `vars`.
    fn find(
        os: Os,
        files: &[&str],
        path_dirs: &[&str],
        vars: &[(&str, &str)],
        wanted: Option<&str>,
    ) -> Result<Found> {
        let files: BTreeSet<PathBuf> = files.iter().map(PathBuf::from).collect();
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let var = |name: &str| vars.get(name).cloned();
        let is_file = |path: &Path| files.contains(path);
        let probe = Probe {
            os,
            path_dirs: path_dirs.iter().map(PathBuf::from).collect(),
            var: &var,
            is_file: &is_file,
        };
        locate(wanted, &probe)
    }

    fn path_of(found: Result<Found>) -> String {
        found.unwrap().path.display().to_string()
    }

    #[test]
    fn on_macos_chrome_is_found_in_applications_without_path() {
        let chrome = "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome";
        assert_eq!(path_of(find(Os::Mac, &[chrome], &[], &[], None)), chrome);
        let edge = "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge";
        assert_eq!(path_of(find(Os::Mac, &[edge], &[], &[], None)), edge);
        let mine = "/Users/me/Applications/Firefox.app/Contents/MacOS/firefox";
        let firefox = find(
            Os::Mac,
            &[mine],
            &[],
            &[("HOME", "/Users/me")],
            Some("firefox"),
        );
        assert_eq!(firefox.unwrap().family, Family::Firefox);
    }

    #[test]
    fn on_windows_the_program_folders_and_local_app_data_are_looked_at() {
        let vars = [
            ("PROGRAMFILES", r"C:\Program Files"),
            ("PROGRAMFILES(X86)", r"C:\Program Files (x86)"),
            ("LOCALAPPDATA", r"C:\Users\me\AppData\Local"),
        ];
        let edge = r"C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe";
        assert_eq!(path_of(find(Os::Windows, &[edge], &[], &vars, None)), edge);
        let chrome = r"C:\Users\me\AppData\Local\Google\Chrome\Application\chrome.exe";
        assert_eq!(
            path_of(find(Os::Windows, &[chrome, edge], &[], &vars, None)),
            chrome,
            "Chrome before Edge"
        );
        let firefox = r"C:\Program Files\Mozilla Firefox\firefox.exe";
        assert_eq!(
            path_of(find(Os::Windows, &[firefox], &[], &vars, Some("firefox"))),
            firefox
        );
        // On PATH, with the .exe Windows adds.
        let on_path = r"D:\tools/chrome.exe";
        assert_eq!(
            path_of(find(Os::Windows, &[on_path], &[r"D:\tools"], &vars, None)),
            on_path
        );
    }

    #[test]
    fn on_linux_path_comes_after_the_standard_places_and_chromium_first() {
        let found = find(
            Os::Linux,
            &["/usr/bin/chromium", "/opt/google/chrome/chrome"],
            &["/usr/bin"],
            &[],
            None,
        );
        assert_eq!(path_of(found), "/usr/bin/chromium");
        let esr = find(
            Os::Linux,
            &["/usr/bin/firefox-esr"],
            &["/usr/local/bin", "/usr/bin"],
            &[],
            Some("firefox"),
        )
        .unwrap();
        assert_eq!(
            (esr.path.to_str(), esr.family),
            (Some("/usr/bin/firefox-esr"), Family::Firefox)
        );
    }

    #[test]
    fn a_path_given_is_taken_and_its_family_known_by_its_name() {
        let found = find(
            Os::Linux,
            &["/opt/ff/firefox"],
            &[],
            &[],
            Some("/opt/ff/firefox"),
        )
        .unwrap();
        assert_eq!(found.family, Family::Firefox);
        let found = find(
            Os::Linux,
            &["/opt/x/chrome"],
            &[],
            &[],
            Some("/opt/x/chrome"),
        )
        .unwrap();
        assert_eq!(found.family, Family::Chromium);
        let env = find(
            Os::Linux,
            &["/usr/bin/firefox"],
            &["/usr/bin"],
            &[("WASMPROF_BROWSER", "firefox")],
            None,
        );
        assert_eq!(env.unwrap().family, Family::Firefox);
    }

    #[test]
    fn nothing_found_names_the_places_looked_at_and_the_flag() {
        let error = find(Os::Mac, &[], &["/usr/bin"], &[("HOME", "/Users/me")], None)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"),
            "{error}"
        );
        assert!(error.contains("--browser"), "{error}");
        let error = find(Os::Linux, &[], &["/usr/bin"], &[], Some("firefox"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("firefox-esr on PATH"), "{error}");
        assert!(error.contains("apt-get install firefox-esr"), "{error}");
        let error = find(Os::Linux, &[], &[], &[], Some("/no/such/browser"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("no such executable"), "{error}");
    }
}
