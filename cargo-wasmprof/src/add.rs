//! `cargo wasmprof add`: the one dependency line the attribute needs,
//! written into the package's manifest as `cargo add` would write it (the
//! manifest's formatting and comments kept, through `toml_edit`), but
//! pointing at the runtime that matches this installation of the tool.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use cargo_metadata::{MetadataCommand, Package};
use toml_edit::{DocumentMut, InlineTable, Item, Table, TableLike, Value};

use crate::cli::AddArgs;
use crate::terminal;

/// The runtime's package, imported by programs as `wasmprof`.
const RUNTIME_PACKAGE: &str = "wasmprof-rt";
/// The name programs use for it.
const RUNTIME_NAME: &str = "wasmprof";

/// Where the dependency line points. Not the rewrite's `RuntimeSource`:
/// that one pins an exact version (or a git commit) in a copied manifest,
/// while this is the user's own line, written as `cargo add` writes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RuntimeDependency {
    /// The runtime beside this tool's sources: an installation from a
    /// checkout or a `cargo install --path` (the runtime is not on crates.io
    /// yet), the same one the crate-wide rewrite uses.
    Path(PathBuf),
    /// The registry's runtime of this tool's version.
    Registry(String),
}

impl RuntimeDependency {
    /// The one this installation carries.
    pub(crate) fn for_this_tool() -> RuntimeDependency {
        match crate::rewrite::plan::bundled_runtime() {
            Some(dir) => RuntimeDependency::Path(dir),
            None => RuntimeDependency::Registry(env!("CARGO_PKG_VERSION").to_owned()),
        }
    }
}

/// Writes the dependency into the selected package's manifest.
pub(crate) fn add(args: &AddArgs) -> Result<i32> {
    let package = selected_package(args)?;
    let manifest = package.manifest_path.as_std_path();
    let text = std::fs::read_to_string(manifest)
        .with_context(|| format!("could not read {}", manifest.display()))?;
    let dependency = RuntimeDependency::for_this_tool();
    let (edited, line) = with_runtime(&text, &dependency)
        .with_context(|| format!("{} was left as it was", manifest.display()))?;
    if args.dry_run {
        terminal::status(
            "Would add",
            &format!("to the dependencies of {}:", package.name),
        );
    } else {
        std::fs::write(manifest, edited)
            .with_context(|| format!("could not write {}", manifest.display()))?;
        terminal::status(
            "Adding",
            &format!(
                "{RUNTIME_NAME} ({RUNTIME_PACKAGE}) to the dependencies of {}, in {}:",
                package.name,
                manifest.display()
            ),
        );
    }
    println!("{line}");
    if let RuntimeDependency::Path(_) = dependency {
        terminal::note(
            "the runtime is not on crates.io yet: the line points at the copy this \
             cargo-wasmprof was installed from, so keep that directory (or run `cargo wasmprof \
             add` again after installing from elsewhere)",
        );
    }
    Ok(0)
}

/// The package whose manifest is edited: `-p NAME`, else the one in the
/// current directory (or `--manifest-path`), else the workspace's only one.
fn selected_package(args: &AddArgs) -> Result<Package> {
    let mut command = MetadataCommand::new();
    command.no_deps();
    if let Some(path) = &args.manifest_path {
        command.manifest_path(path);
    }
    let metadata = command
        .exec()
        .context("`cargo metadata` failed: is there a Cargo.toml here or above?")?;
    let members = metadata.workspace_packages();
    if let Some(name) = &args.package {
        return members
            .iter()
            .find(|p| p.name.as_str() == name)
            .map(|p| (*p).clone())
            .with_context(|| {
                format!(
                    "no package named `{name}` in this workspace; its packages: {}",
                    names(&members)
                )
            });
    }
    let here = match &args.manifest_path {
        Some(path) => std::path::absolute(path)
            .context("the manifest path cannot be made absolute")?
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        None => std::env::current_dir().context("the current directory is unreadable")?,
    };
    let mut within: Vec<&&Package> = members
        .iter()
        .filter(|p| {
            p.manifest_path
                .parent()
                .is_some_and(|dir| here.starts_with(dir.as_std_path()))
        })
        .collect();
    // The innermost package around the current directory.
    within.sort_by_key(|p| std::cmp::Reverse(p.manifest_path.as_str().len()));
    match (within.first(), members.as_slice()) {
        (Some(package), _) => Ok((**package).clone()),
        (None, [only]) => Ok((*only).clone()),
        (None, _) => bail!(
            "this workspace has several packages; choose one with -p NAME: {}",
            names(&members)
        ),
    }
}

fn names(packages: &[&Package]) -> String {
    packages
        .iter()
        .map(|p| p.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The manifest `text` with the runtime added to `[dependencies]` as
/// `wasmprof`, and the line written; an error, with what to do, when the
/// runtime is already there or the name is taken.
pub(crate) fn with_runtime(text: &str, dependency: &RuntimeDependency) -> Result<(String, String)> {
    let mut document: DocumentMut = text.parse().context("the manifest is not valid TOML")?;
    refuse_conflicts(&document)?;
    let dependencies = document
        .entry("dependencies")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_like_mut()
        .context("`dependencies` in the manifest is not a table")?;
    let mut line = InlineTable::new();
    line.insert("package", Value::from(RUNTIME_PACKAGE));
    match dependency {
        RuntimeDependency::Path(dir) => {
            line.insert("path", Value::from(dir.to_string_lossy().as_ref()));
        }
        RuntimeDependency::Registry(version) => {
            line.insert("version", Value::from(version.as_str()));
        }
    }
    line.fmt();
    let written = format!("{RUNTIME_NAME} = {line}");
    dependencies.insert(RUNTIME_NAME, Item::Value(Value::InlineTable(line)));
    Ok((document.to_string(), written))
}

/// Every dependency table of the manifest, by the name a user reads it
/// under: `dependencies`, `target.'cfg(…)'.dev-dependencies`, …
fn dependency_tables(document: &DocumentMut) -> Vec<(String, &dyn TableLike)> {
    const KINDS: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];
    fn kinds<'a>(prefix: &str, parent: &'a dyn TableLike) -> Vec<(String, &'a dyn TableLike)> {
        KINDS
            .iter()
            .filter_map(|kind| {
                let table = parent.get(kind).and_then(Item::as_table_like)?;
                Some((format!("{prefix}{kind}"), table))
            })
            .collect()
    }
    let mut tables = kinds("", document.as_table());
    if let Some(targets) = document.get("target").and_then(Item::as_table_like) {
        for (platform, item) in targets.iter() {
            if let Some(target) = item.as_table_like() {
                tables.extend(kinds(&format!("target.'{platform}'."), target));
            }
        }
    }
    tables
}

/// The manifest already has the runtime, or something else under its name.
fn refuse_conflicts(document: &DocumentMut) -> Result<()> {
    for (table, dependencies) in dependency_tables(document) {
        for (key, item) in dependencies.iter() {
            let package = item
                .as_table_like()
                .and_then(|t| t.get("package"))
                .and_then(Item::as_str)
                .unwrap_or(key);
            if package == RUNTIME_PACKAGE {
                bail!(
                    "the package already depends on the runtime, as `{key}` in [{table}]: nothing \
                     to add{}",
                    if key == RUNTIME_NAME {
                        String::new()
                    } else {
                        format!(
                            " (the attribute is then `#[{}::instrument]`)",
                            key.replace('-', "_")
                        )
                    }
                );
            }
            if key == RUNTIME_NAME && (table == "dependencies" || table.ends_with(".dependencies"))
            {
                bail!(
                    "[{table}] already has a `{RUNTIME_NAME}` that is not wasmprof's runtime but \
                     the package `{package}`{}. Remove or rename that line, then run `cargo \
                     wasmprof add` again",
                    if package == RUNTIME_NAME {
                        " (on crates.io, `wasmprof` is an unrelated wasmtime profiler)"
                    } else {
                        ""
                    }
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> RuntimeDependency {
        RuntimeDependency::Registry("0.1.0".to_owned())
    }

    /// The error that refuses to add the runtime to `text`.
    fn refusal(text: &str) -> String {
        with_runtime(text, &registry()).unwrap_err().to_string()
    }

    #[test]
    fn the_line_is_added_and_the_rest_of_the_manifest_kept_as_written() {
        let text = "[package]\nname = \"demo\"   # my demo\nversion = \"0.1.0\"\n\n\
                    [dependencies]\n# parsing\nserde = { version = \"1\", features = [\"derive\"] }\n";
        let (edited, line) = with_runtime(text, &registry()).unwrap();
        assert_eq!(
            line,
            "wasmprof = { package = \"wasmprof-rt\", version = \"0.1.0\" }"
        );
        assert_eq!(edited, format!("{text}{line}\n"));
    }

    #[test]
    fn a_manifest_without_dependencies_gets_the_table() {
        let text = "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n";
        let dir = RuntimeDependency::Path(PathBuf::from("/opt/wasmprof/wasmprof-rt"));
        let (edited, _) = with_runtime(text, &dir).unwrap();
        assert_eq!(
            edited,
            format!(
                "{text}\n[dependencies]\nwasmprof = {{ package = \"wasmprof-rt\", path = \
                 \"/opt/wasmprof/wasmprof-rt\" }}\n"
            )
        );
    }

    #[test]
    fn the_runtime_is_not_added_twice_under_any_name() {
        for line in [
            "wasmprof = { package = \"wasmprof-rt\", version = \"0.1\" }",
            "wasmprof-rt = \"0.1\"",
            "prof = { package = \"wasmprof-rt\", path = \"../wasmprof-rt\" }",
        ] {
            let text = format!("[package]\nname = \"demo\"\n\n[dependencies]\n{line}\n");
            let error = refusal(&text);
            assert!(error.contains("already depends on the runtime"), "{error}");
        }
        let text = "[package]\nname = \"demo\"\n\n[dependencies]\nprof = { package = \
                    \"wasmprof-rt\", version = \"0.1\" }\n";
        let error = refusal(text);
        assert!(error.contains("`#[prof::instrument]`"), "{error}");
    }

    #[test]
    fn a_runtime_for_one_platform_only_counts_as_there() {
        let text = "[package]\nname = \"demo\"\n\n[target.'cfg(target_family = \"wasm\")'.\
                    dependencies]\nwasmprof = { package = \"wasmprof-rt\", version = \"0.1\" }\n";
        let error = refusal(text);
        assert!(
            error.contains("in [target.'cfg(target_family = \"wasm\")'.dependencies]"),
            "{error}"
        );
    }

    #[test]
    fn another_package_named_wasmprof_is_named_as_the_conflict() {
        let text = "[package]\nname = \"demo\"\n\n[dependencies]\nwasmprof = \"0.3\"\n";
        let error = refusal(text);
        assert!(
            error.contains("not wasmprof's runtime but the package `wasmprof`")
                && error.contains("unrelated wasmtime profiler"),
            "{error}"
        );
        let text = "[package]\nname = \"demo\"\n\n[dependencies]\nwasmprof = { package = \
                    \"my-prof\", version = \"1\" }\n";
        let error = refusal(text);
        assert!(error.contains("the package `my-prof`"), "{error}");
    }

    #[test]
    fn a_manifest_that_is_not_toml_is_refused() {
        assert!(with_runtime("[package\nname =", &registry()).is_err());
    }
}
