//! Which packages to build and what kind of WebAssembly module each makes,
//! read from `cargo metadata` rather than from manifests by hand.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use cargo_metadata::{Metadata, MetadataCommand, Package, TargetKind};

use crate::build::options::CargoOptions;

/// How a module is loaded and entered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ModuleKind {
    /// A `cdylib` using wasm-bindgen: run through the wasm-bindgen CLI.
    Bindgen,
    /// A `cdylib` without wasm-bindgen: entered with `--invoke`.
    Plain,
    /// A binary for WASI: entered at `main`.
    Wasi,
}

impl ModuleKind {
    pub(crate) fn default_target(self) -> &'static str {
        match self {
            ModuleKind::Bindgen | ModuleKind::Plain => "wasm32-unknown-unknown",
            ModuleKind::Wasi => "wasm32-wasip1",
        }
    }
}

/// One package to build, and which of its targets.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    pub package: String,
    pub manifest_path: PathBuf,
    pub kind: ModuleKind,
    /// `Some(name)` for a binary, `None` for the library.
    pub bin: Option<String>,
    /// The resolved `wasm-bindgen` version, for `Bindgen` units.
    pub bindgen_version: Option<String>,
}

/// The workspace as cargo sees it.
pub(crate) struct Workspace {
    pub metadata: Metadata,
}

impl Workspace {
    pub(crate) fn load(cargo: &CargoOptions) -> Result<Self> {
        let mut command = MetadataCommand::new();
        if let Some(path) = &cargo.manifest_path {
            command.manifest_path(path);
        }
        let mut other = Vec::new();
        if cargo.locked {
            other.push("--locked".to_owned());
        }
        if cargo.offline {
            other.push("--offline".to_owned());
        }
        command.other_options(other);
        let metadata = command.exec().map_err(|e| match e {
            cargo_metadata::Error::CargoMetadata { stderr } => {
                anyhow::anyhow!("`cargo metadata` failed:\n{}", stderr.trim_end())
            }
            other => anyhow::Error::new(other).context("could not run `cargo metadata`"),
        })?;
        Ok(Workspace { metadata })
    }

    /// The target directory (`--target-dir`, else cargo's).
    pub(crate) fn target_dir(&self, cargo: &CargoOptions) -> PathBuf {
        cargo
            .target_dir
            .clone()
            .unwrap_or_else(|| self.metadata.target_directory.clone().into_std_path_buf())
    }

    /// The packages cargo would build for these flags.
    pub(crate) fn selected_packages(&self, cargo: &CargoOptions) -> Result<Vec<&Package>> {
        let members: Vec<&Package> = self.metadata.workspace_packages();
        if !cargo.package.is_empty() {
            return cargo
                .package
                .iter()
                .map(|spec| {
                    let (name, version) = spec.split_once('@').unwrap_or((spec, ""));
                    self.metadata
                        .packages
                        .iter()
                        .find(|p| {
                            p.name.as_str() == name
                                && (version.is_empty() || p.version.to_string() == version)
                        })
                        .with_context(|| {
                            let names: Vec<&str> =
                                members.iter().map(|p| p.name.as_str()).collect();
                            format!(
                                "package `{spec}` is not in this workspace (members: {})",
                                names.join(", ")
                            )
                        })
                })
                .collect();
        }
        if cargo.workspace {
            return Ok(members
                .into_iter()
                .filter(|p| !cargo.exclude.iter().any(|e| e == p.name.as_str()))
                .collect());
        }
        if let Some(root) = self.metadata.root_package() {
            return Ok(vec![root]);
        }
        let defaults = self.metadata.workspace_default_packages();
        if defaults.is_empty() {
            bail!("this is a virtual workspace: choose a package with -p NAME or use --workspace");
        }
        Ok(defaults)
    }

    /// What to build of each selected package. A package chosen by name that
    /// cannot become a module is an error; with `--workspace` it is skipped.
    pub(crate) fn units(&self, cargo: &CargoOptions) -> Result<Vec<Unit>> {
        let explicit = !cargo.workspace;
        let mut units = Vec::new();
        for package in self.selected_packages(cargo)? {
            match self.unit_for(package, cargo.bin.as_deref()) {
                Ok(unit) => units.push(unit),
                Err(e) if explicit => return Err(e),
                Err(e) => crate::terminal::note(&format!("skipping {}: {e:#}", package.name)),
            }
        }
        if units.is_empty() {
            bail!("no package in the selection can be built to a WebAssembly module");
        }
        Ok(units)
    }

    fn unit_for(&self, package: &Package, bin: Option<&str>) -> Result<Unit> {
        let cdylib = package
            .targets
            .iter()
            .any(|t| t.kind.contains(&TargetKind::CDyLib));
        let bins: Vec<&str> = package
            .targets
            .iter()
            .filter(|t| t.kind.contains(&TargetKind::Bin))
            .map(|t| t.name.as_str())
            .collect();
        let unit = |kind, bin: Option<&str>| Unit {
            package: package.name.to_string(),
            manifest_path: package.manifest_path.clone().into_std_path_buf(),
            kind,
            bin: bin.map(str::to_owned),
            bindgen_version: self.bindgen_version(package),
        };
        if let Some(wanted) = bin {
            if !bins.contains(&wanted) {
                bail!(
                    "package `{}` has no binary `{wanted}` (binaries: {})",
                    package.name,
                    if bins.is_empty() {
                        "none".to_owned()
                    } else {
                        bins.join(", ")
                    }
                );
            }
            return Ok(unit(ModuleKind::Wasi, Some(wanted)));
        }
        if cdylib {
            let kind = if self.bindgen_version(package).is_some() {
                ModuleKind::Bindgen
            } else {
                ModuleKind::Plain
            };
            return Ok(unit(kind, None));
        }
        // `default-run` chooses among several, as for `cargo run`.
        let default_run = package
            .default_run
            .as_deref()
            .filter(|name| bins.contains(name));
        if let Some(name) = default_run {
            return Ok(unit(ModuleKind::Wasi, Some(name)));
        }
        match bins.as_slice() {
            [only] => Ok(unit(ModuleKind::Wasi, Some(only))),
            [] => bail!(
                "package `{}` is not a wasm-capable library: its library is not a cdylib.\n\
                 Add to its Cargo.toml:\n\n    [lib]\n    crate-type = [\"cdylib\", \"rlib\"]\n\n\
                 or give it a binary (src/main.rs), which is built for wasm32-wasip1",
                package.name
            ),
            many => bail!(
                "package `{}` has several binaries ({}): choose one with --bin NAME, or name \
                 one in its Cargo.toml as `default-run`",
                package.name,
                many.join(", ")
            ),
        }
    }

    /// The version of `wasm-bindgen` the package resolves to, if it uses it.
    fn bindgen_version(&self, package: &Package) -> Option<String> {
        let resolve = self.metadata.resolve.as_ref()?;
        let node = resolve.nodes.iter().find(|n| n.id == package.id)?;
        node.deps.iter().find_map(|dep| {
            let dep_package = self.metadata.packages.iter().find(|p| p.id == dep.pkg)?;
            (dep_package.name.as_str() == "wasm-bindgen").then(|| dep_package.version.to_string())
        })
    }
}
