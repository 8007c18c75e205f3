//! Edits of the copied manifests, with `toml_edit` so that everything else
//! in them (comments, order, formatting) stays as the user wrote it.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, InlineTable, Item, Table, Value, value};

use super::modules::normalize;

/// Where the rewritten crates get the runtime from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RuntimeSource {
    /// A directory holding `wasmprof-rt`'s `Cargo.toml`.
    Path(PathBuf),
    /// An exact version from crates.io.
    Registry { version: String },
    /// A git repository at a commit.
    Git { url: String, rev: String },
}

impl RuntimeSource {
    /// The dependency entry for `package` (`wasmprof-rt`, or
    /// `wasmprof-core`, which sits beside it): `{ package = "…", ... }`.
    pub(crate) fn entry(&self, package: &str) -> InlineTable {
        let mut table = InlineTable::new();
        table.insert("package", package.into());
        match self {
            RuntimeSource::Path(path) => {
                let path = match path.parent() {
                    Some(parent) if package != "wasmprof-rt" => parent.join(package),
                    _ => path.clone(),
                };
                table.insert("path", path_string(&path).into());
            }
            RuntimeSource::Registry { version } => {
                table.insert("version", format!("={version}").into());
            }
            RuntimeSource::Git { url, rev } => {
                table.insert("git", url.as_str().into());
                table.insert("rev", rev.as_str().into());
            }
        }
        table
    }
}

fn path_string(path: &Path) -> String {
    path.display().to_string()
}

pub(crate) fn parse(text: &str, file: &Path) -> anyhow::Result<DocumentMut> {
    text.parse::<DocumentMut>()
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))
}

/// The dependency tables of a manifest: `[dependencies]` and its dev and
/// build kinds, also under `[target.'cfg'.*]`, `[workspace.dependencies]`,
/// every `[patch.*]` and `[replace]`.
fn dependency_tables(doc: &mut DocumentMut) -> Vec<&mut dyn toml_edit::TableLike> {
    const KINDS: &[&str] = &[
        "dependencies",
        "dev-dependencies",
        "dev_dependencies",
        "build-dependencies",
        "build_dependencies",
    ];
    let mut tables: Vec<&mut dyn toml_edit::TableLike> = Vec::new();
    for (key, item) in doc.as_table_mut().iter_mut() {
        match key.get() {
            k if KINDS.contains(&k) => {
                if let Some(t) = item.as_table_like_mut() {
                    tables.push(t);
                }
            }
            "target" => {
                if let Some(targets) = item.as_table_like_mut() {
                    for (_, target) in targets.iter_mut() {
                        if let Some(target) = target.as_table_like_mut() {
                            for (kind, deps) in target.iter_mut() {
                                if KINDS.contains(&kind.get())
                                    && let Some(t) = deps.as_table_like_mut()
                                {
                                    tables.push(t);
                                }
                            }
                        }
                    }
                }
            }
            "workspace" => {
                if let Some(ws) = item.as_table_like_mut()
                    && let Some(deps) = ws.get_mut("dependencies")
                    && let Some(t) = deps.as_table_like_mut()
                {
                    tables.push(t);
                }
            }
            "patch" => {
                if let Some(sources) = item.as_table_like_mut() {
                    for (_, source) in sources.iter_mut() {
                        if let Some(t) = source.as_table_like_mut() {
                            tables.push(t);
                        }
                    }
                }
            }
            "replace" => {
                if let Some(t) = item.as_table_like_mut() {
                    tables.push(t);
                }
            }
            _ => {}
        }
    }
    tables
}

/// Rewrites the `path` of every dependency (and of every target) that
/// `relocate` wants elsewhere: `relocate` gets the original absolute path
/// and returns the new one, or `None` to keep the path as written.
pub(crate) fn relocate_paths(
    doc: &mut DocumentMut,
    manifest_dir: &Path,
    relocate: &dyn Fn(&Path) -> Option<PathBuf>,
) {
    let fix = |item: &mut Item| {
        let Some(text) = item.as_str() else {
            return;
        };
        let absolute = normalize(&manifest_dir.join(text));
        if let Some(new) = relocate(&absolute) {
            *item = value(path_string(&new));
        }
    };
    for table in dependency_tables(doc) {
        for (_, dep) in table.iter_mut() {
            if let Some(dep) = dep.as_table_like_mut()
                && let Some(path) = dep.get_mut("path")
            {
                fix(path);
            }
        }
    }
    let root = doc.as_table_mut();
    if let Some(lib) = root.get_mut("lib").and_then(Item::as_table_like_mut)
        && let Some(path) = lib.get_mut("path")
    {
        fix(path);
    }
    if let Some(build) = root
        .get_mut("package")
        .and_then(Item::as_table_like_mut)
        .and_then(|p| p.get_mut("build"))
    {
        fix(build);
    }
    for kind in ["bin", "example", "test", "bench"] {
        if let Some(targets) = root.get_mut(kind).and_then(Item::as_array_of_tables_mut) {
            for target in targets.iter_mut() {
                if let Some(path) = target.get_mut("path") {
                    fix(path);
                }
            }
        }
    }
}

/// Adds `name = { package = "<package>", ... }` to `[dependencies]`.
pub(crate) fn add_runtime_dependency(
    doc: &mut DocumentMut,
    name: &str,
    package: &str,
    source: &RuntimeSource,
) {
    let root = doc.as_table_mut();
    if !root.contains_key("dependencies") {
        root.insert("dependencies", Item::Table(Table::new()));
    }
    let deps = root["dependencies"]
        .as_table_like_mut()
        .expect("dependencies is a table");
    deps.insert(name, Item::Value(Value::InlineTable(source.entry(package))));
}

/// `[patch.<source>] <name> = { path = "..." }`.
pub(crate) fn add_patch(doc: &mut DocumentMut, source: &str, name: &str, path: &Path) {
    let root = doc.as_table_mut();
    if !root.contains_key("patch") {
        let mut patch = Table::new();
        patch.set_implicit(true);
        root.insert("patch", Item::Table(patch));
    }
    let patch = root["patch"].as_table_like_mut().expect("patch is a table");
    if patch.get(source).is_none() {
        patch.insert(source, Item::Table(Table::new()));
    }
    let table = patch
        .get_mut(source)
        .and_then(Item::as_table_like_mut)
        .expect("patch source is a table");
    let mut entry = InlineTable::new();
    entry.insert("path", path_string(path).into());
    table.insert(name, Item::Value(Value::InlineTable(entry)));
}

/// Makes the manifest a workspace root of its own, if it is not one: a copy
/// under the user's target directory must not be taken for a member of the
/// user's workspace.
pub(crate) fn ensure_workspace(doc: &mut DocumentMut) {
    let root = doc.as_table_mut();
    if !root.contains_key("workspace") {
        root.insert("workspace", Item::Table(Table::new()));
    }
}

/// Adds `path` to `[workspace] exclude`.
pub(crate) fn exclude_from_workspace(doc: &mut DocumentMut, path: &str) {
    ensure_workspace(doc);
    let Some(workspace) = doc["workspace"].as_table_like_mut() else {
        return;
    };
    if workspace.get("exclude").is_none() {
        workspace.insert("exclude", value(toml_edit::Array::new()));
    }
    if let Some(exclude) = workspace.get_mut("exclude").and_then(Item::as_array_mut)
        && !exclude.iter().any(|v| v.as_str() == Some(path))
    {
        exclude.push(path);
    }
}

/// Whether a manifest inherits anything from its workspace
/// (`x.workspace = true`), which a copy on its own cannot resolve.
pub(crate) fn inherits_from_workspace(doc: &DocumentMut) -> bool {
    fn walk(item: &dyn toml_edit::TableLike) -> bool {
        item.iter().any(|(key, value)| {
            (key == "workspace" && value.as_bool() == Some(true))
                || value.as_table_like().is_some_and(walk)
        })
    }
    doc.as_table()
        .iter()
        .filter(|(key, _)| *key != "workspace")
        .any(|(_, item)| item.as_table_like().is_some_and(walk))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_are_made_absolute_and_the_rest_kept() {
        let mut doc = parse(
            r#"# a comment
[package]
name = "app"
build = "build.rs"

[dependencies]
inside = { path = "../lib" }   # kept
outside = { path = "../../shared" }
registry = "1"

[target.'cfg(unix)'.dependencies]
far = { path = "../../far" }

[dependencies.dotted]
path = "../../dotted"
"#,
            Path::new("Cargo.toml"),
        )
        .unwrap();
        relocate_paths(&mut doc, Path::new("/ws/app"), &|p| {
            (!p.starts_with("/ws")).then(|| p.to_path_buf())
        });
        let text = doc.to_string();
        assert!(text.starts_with("# a comment\n"), "{text}");
        assert!(
            text.contains(r#"inside = { path = "../lib" }   # kept"#),
            "{text}"
        );
        assert!(text.contains(r#"outside = { path = "/shared" }"#), "{text}");
        assert!(text.contains(r#"far = { path = "/far" }"#), "{text}");
        assert!(text.contains(r#"path = "/dotted""#), "{text}");
        assert!(text.contains(r#"build = "build.rs""#), "{text}");
    }

    #[test]
    fn runtime_patch_and_workspace() {
        let mut doc = parse("[package]\nname = \"x\"\n", Path::new("Cargo.toml")).unwrap();
        add_runtime_dependency(
            &mut doc,
            "wasmprof",
            "wasmprof-rt",
            &RuntimeSource::Registry {
                version: "0.1.0".into(),
            },
        );
        add_patch(&mut doc, "crates-io", "itoa", Path::new("/s/itoa"));
        ensure_workspace(&mut doc);
        exclude_from_workspace(&mut doc, ".deps");
        exclude_from_workspace(&mut doc, ".deps");
        let text = doc.to_string();
        assert!(
            text.contains(r#"wasmprof = { package = "wasmprof-rt", version = "=0.1.0" }"#),
            "{text}"
        );
        assert!(
            text.contains("[patch.crates-io]\nitoa = { path = \"/s/itoa\" }"),
            "{text}"
        );
        assert!(
            text.contains("[workspace]\nexclude = [\".deps\"]"),
            "{text}"
        );
        let reparsed: DocumentMut = text.parse().unwrap();
        assert!(!inherits_from_workspace(&reparsed));
        let inheriting: DocumentMut = "[package]\nversion.workspace = true\n".parse().unwrap();
        assert!(inherits_from_workspace(&inheriting));
    }
}
