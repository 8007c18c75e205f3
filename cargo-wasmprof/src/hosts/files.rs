//! The files of one run: the run's own directory, the module copied into
//! it, and the host scripts written beside it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{Context, Result};

use super::host::HostConfig;
use crate::build::{self, BuiltModule};

/// The host API every JavaScript host loads before the module.
pub(crate) const HOST_API_JS: &str = include_str!("../js/host-api.js");
/// The wasm-bindgen-test driver, shared by Node and the page.
pub(crate) const BINDGEN_TEST_JS: &str = include_str!("../js/bindgen-test.js");

/// A directory no other run uses, in this process or another: runs of the
/// same package side by side, or one after another in a benchmark, cannot
/// read or overwrite each other's files.
pub(crate) fn new_run_dir(target_dir: &Path, module: &BuiltModule) -> PathBuf {
    static RUNS: AtomicU32 = AtomicU32::new(0);
    build::wasmprof_dir(target_dir)
        .join(
            module
                .instrument
                .map_or("plain", crate::build::Instrument::as_str),
        )
        .join("run")
        .join(format!(
            "{}-{}-{}",
            module.unit.package,
            std::process::id(),
            RUNS.fetch_add(1, Ordering::Relaxed)
        ))
}

/// Writes `text` to `path`, creating its directory.
pub(crate) fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("could not create {}", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("could not write {}", path.display()))
}

/// Copies the module (with the JS wasm-bindgen generated beside it, and its
/// `snippets/`) into `dest`, and points `config` at the copies: the next
/// build of the same package rewrites the originals.
pub(crate) fn copy_module_into(config: &mut HostConfig, dest: &Path) -> Result<()> {
    std::fs::create_dir_all(dest)
        .with_context(|| format!("could not create {}", dest.display()))?;
    let source_dir = match &config.js {
        Some(js) => js.parent().context("generated JS has no directory")?,
        None => config.wasm.parent().context("module has no directory")?,
    };
    let moved = |path: &Path| -> Result<PathBuf> {
        let name = path.file_name().context("a module file has no name")?;
        Ok(dest.join(name))
    };
    if config.js.is_some() {
        copy_dir(source_dir, dest)?;
    } else {
        let to = moved(&config.wasm)?;
        std::fs::copy(&config.wasm, &to).with_context(|| {
            format!(
                "could not copy {} to {}",
                config.wasm.display(),
                to.display()
            )
        })?;
    }
    config.wasm = moved(&config.wasm)?;
    config.js = config.js.as_deref().map(moved).transpose()?;
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    crate::build::dir_walk::each_file(from, to, &mut |from, to| std::fs::copy(from, to).map(drop))
        .context("could not copy the module")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(wasm: PathBuf, js: Option<PathBuf>) -> HostConfig {
        HostConfig {
            kind: crate::hosts::host::LoadAs::Bindgen,
            wasm,
            js,
            invoke: None,
            args: vec![],
            argv: vec![],
            wasi: Default::default(),
            timeout_ms: 1,
            until_exit: false,
            window: None,
            sample_interval_micros: None,
            sample_interval_chosen: true,
            cpuprofile_out: "c".into(),
            snapshot_out: "s".into(),
            result_out: "r".into(),
            test: None,
            requests: None,
            harness_tests: false,
        }
    }

    #[test]
    fn a_bindgen_module_is_copied_with_its_js_and_snippets() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        write(&out.join("app.js"), "js").unwrap();
        write(&out.join("app_bg.wasm"), "wasm").unwrap();
        write(&out.join("snippets/x/inline0.js"), "snippet").unwrap();
        let mut c = config(out.join("app_bg.wasm"), Some(out.join("app.js")));
        let dest = dir.path().join("run/module");
        copy_module_into(&mut c, &dest).unwrap();
        assert_eq!(c.wasm, dest.join("app_bg.wasm"));
        assert_eq!(c.js, Some(dest.join("app.js")));
        assert_eq!(
            std::fs::read_to_string(dest.join("snippets/x/inline0.js")).unwrap(),
            "snippet"
        );
    }
}
