//! A build that failed, and whether wasmprof's rewrite is to blame.
//!
//! cargo's errors point into the rewritten crate's own source (the copies'
//! paths are mapped back), so a compile error that crate-wide
//! instrumentation caused reads like a bug of that crate. The errors' crate
//! and positions are read from cargo's standard error as it is passed
//! through; when the crate was rewritten, the error names the instrumented
//! functions the positions fall in and how to leave them out.

use std::path::{Path, PathBuf};

use crate::rewrite::Planned;

/// What cargo's standard error said about the failure.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Diagnostics {
    /// `error: could not compile `NAME``: the packages that failed.
    pub failed_packages: Vec<String>,
    /// Where the errors (not the warnings) are: file and line.
    pub error_locations: Vec<(PathBuf, usize)>,
    /// Whether the lines since the last header belong to an error.
    in_error: bool,
}

/// At most this many positions are kept: the first errors explain the rest.
const MAX_LOCATIONS: usize = 64;

impl Diagnostics {
    /// Reads one line of cargo's (rendered) standard error.
    pub(crate) fn scan(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("error: could not compile `") {
            if let Some((name, _)) = rest.split_once('`')
                && !self.failed_packages.iter().any(|p| p == name)
            {
                self.failed_packages.push(name.to_owned());
            }
            self.in_error = false;
            return;
        }
        if line.starts_with("error") {
            self.in_error = true;
        } else if line.starts_with("warning") {
            self.in_error = false;
        }
        let Some(location) = line.trim_start().strip_prefix("--> ") else {
            return;
        };
        if !self.in_error || self.error_locations.len() >= MAX_LOCATIONS {
            return;
        }
        // `path:line:column`; the path may itself hold colons.
        let mut parts = location.rsplitn(3, ':');
        let (Some(_column), Some(line), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            return;
        };
        if let Ok(line) = line.parse() {
            self.error_locations.push((PathBuf::from(path), line));
        }
    }
}

/// `cargo build` failed for `package`.
#[derive(Debug, thiserror::Error)]
#[error("cargo build failed for `{package}` (see the errors above)")]
pub(crate) struct BuildFailed {
    pub package: String,
    pub diagnostics: Diagnostics,
}

/// What to tell the user when the failed packages include crates that were
/// rewritten (`rewritten`: their names; `functions`: what was instrumented
/// in them, by crate name); `None` when the rewrite is not involved.
pub(crate) fn explain(
    failed: &BuildFailed,
    rewritten: &[String],
    functions: &[(String, Planned)],
) -> Option<String> {
    let same = |a: &str, b: &str| a.replace('-', "_") == b.replace('-', "_");
    let culprits: Vec<&String> = failed
        .diagnostics
        .failed_packages
        .iter()
        .filter(|name| rewritten.iter().any(|r| same(r, name)))
        .collect();
    if culprits.is_empty() {
        return None;
    }
    let mut found: Vec<(&str, &Planned)> = Vec::new();
    for (file, line) in &failed.diagnostics.error_locations {
        if let Some((krate, planned)) = enclosing_function(functions, file, *line)
            && !found.iter().any(|(_, p)| std::ptr::eq(*p, planned))
        {
            found.push((krate, planned));
        }
    }
    let names = culprits
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut text = format!(
        "{names} failed to compile instrumented crate-wide by wasmprof. If it builds without \
         wasmprof, the errors above come from wasmprof's rewrite, not from its own code."
    );
    if found.is_empty() {
        text.push_str(&format!(
            "\nBuild without crate-wide instrumentation of {names}, or leave its modules out \
             with --exclude-path CRATE::MODULE."
        ));
    } else {
        text.push_str("\nThe errors are in these instrumented functions:");
        for (krate, planned) in &found {
            text.push_str(&format!(
                "\n  {krate}::{} ({}:{})",
                planned.path,
                planned.file.display(),
                planned.line
            ));
        }
        let exclude = found
            .iter()
            .map(|(krate, planned)| format!("--exclude-path {krate}::{}", planned.path))
            .collect::<Vec<_>>()
            .join(" ");
        text.push_str(&format!("\nLeave them out with: {exclude}"));
    }
    text.push_str(
        "\nPlease report it: every function that compiles plainly should compile instrumented.",
    );
    Some(text)
}

/// The instrumented function whose text holds `file:line`: the nearest one
/// that starts at or before it in that file.
fn enclosing_function<'a>(
    functions: &'a [(String, Planned)],
    file: &Path,
    line: usize,
) -> Option<(&'a str, &'a Planned)> {
    functions
        .iter()
        .filter(|(_, p)| p.first_line <= line && same_file(&p.file, file))
        .max_by_key(|(_, p)| p.first_line)
        .map(|(krate, p)| (krate.as_str(), p))
}

/// cargo prints a workspace crate's path relative to the workspace, and a
/// dependency's in full.
fn same_file(planned: &Path, reported: &Path) -> bool {
    planned == reported || (reported.is_relative() && planned.ends_with(reported))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::PlannedKind;

    /// Rendered the way cargo prints a failed dependency (yew 0.21 before
    /// wasmprof let Yew's `#[hook]` expand first).
    const STDERR: &str = "\
   Compiling yew v0.21.0
warning: unused import: `Foo`
  --> /reg/yew-0.21.0/src/lib.rs:3:5
error[E0614]: type `impl functional::hooks::Hook<Output = Rc<T>>` cannot be dereferenced
  --> /reg/yew-0.21.0/src/functional/hooks/use_callback.rs:72:5
   |
72 |     (*callback).clone()
   |     ^^^^^^^^^^^
error[E0599]: no method named `clone` found
  --> /reg/yew-0.21.0/src/functional/hooks/use_callback.rs:75:9
error: could not compile `yew` (lib) due to 17 previous errors
";

    fn planned(path: &str, file: &str, line: usize) -> (String, Planned) {
        (
            "yew".into(),
            Planned {
                file: file.into(),
                line,
                first_line: line,
                path: path.into(),
                kind: PlannedKind::Function,
                counted: false,
            },
        )
    }

    fn failure() -> BuildFailed {
        let mut diagnostics = Diagnostics::default();
        for line in STDERR.lines() {
            diagnostics.scan(line);
        }
        BuildFailed {
            package: "app".into(),
            diagnostics,
        }
    }

    #[test]
    fn an_error_on_a_function_s_attribute_is_that_function_s() {
        // dioxus-core 0.6.3: `fc_to_builder` at 110, then at 118 the
        // attribute of `component_called_as_function`, named at 119.
        let file = "/reg/dioxus-core-0.6.3/src/properties.rs";
        let mut earlier = planned("properties::fc_to_builder", file, 110).1;
        earlier.first_line = 110;
        let mut attributed = planned("properties::component_called_as_function", file, 119).1;
        attributed.first_line = 118;
        let functions = [
            ("dioxus-core".to_owned(), earlier),
            ("dioxus-core".to_owned(), attributed),
        ];
        let found = enclosing_function(&functions, Path::new(file), 118).unwrap();
        assert_eq!(found.1.path, "properties::component_called_as_function");
    }

    #[test]
    fn errors_are_read_with_their_positions_and_warnings_are_not() {
        let failed = failure();
        assert_eq!(failed.diagnostics.failed_packages, ["yew"]);
        assert_eq!(
            failed.diagnostics.error_locations,
            [
                (
                    PathBuf::from("/reg/yew-0.21.0/src/functional/hooks/use_callback.rs"),
                    72
                ),
                (
                    PathBuf::from("/reg/yew-0.21.0/src/functional/hooks/use_callback.rs"),
                    75
                ),
            ]
        );
    }

    #[test]
    fn a_rewritten_crate_s_errors_name_the_function_and_how_to_leave_it_out() {
        let functions = [
            planned(
                "functional::hooks::use_callback::use_callback",
                "/reg/yew-0.21.0/src/functional/hooks/use_callback.rs",
                60,
            ),
            planned(
                "functional::hooks::use_callback::other",
                "/reg/yew-0.21.0/src/functional/hooks/use_callback.rs",
                90,
            ),
        ];
        let text = explain(&failure(), &["yew".into()], &functions).unwrap();
        assert!(
            text.contains("`yew` failed to compile instrumented crate-wide"),
            "{text}"
        );
        assert!(
            text.contains("yew::functional::hooks::use_callback::use_callback (/reg/"),
            "{text}"
        );
        assert!(!text.contains("::other"), "{text}");
        assert!(
            text.contains("--exclude-path yew::functional::hooks::use_callback::use_callback"),
            "{text}"
        );
    }

    #[test]
    fn a_failure_outside_the_rewritten_crates_is_not_blamed_on_the_rewrite() {
        assert_eq!(explain(&failure(), &["semver".into()], &[]), None);
    }
}
