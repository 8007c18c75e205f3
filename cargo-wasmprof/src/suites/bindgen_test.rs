//! wasm-bindgen-test binaries: which tests to run (as
//! wasm-bindgen-test-runner decides, from the module's `__wbgt_` exports and
//! the harness's arguments), bindings without the start function, and the
//! run in Node or the browser (`js/bindgen-test.js` drives the harness).

use std::path::Path;

use anyhow::{Context, Result, bail};
use clap::Parser;

use super::binary::{Binary, check_host, test_config};
use super::session::Session;
use crate::build::bindgen;
use crate::build::options::HostKind;
use crate::hosts::host::{BindgenTests, HostConfig, HostResult};
use crate::hosts::select;
use wasmprof_profile::wasm_info::WasmInfo;

/// The harness's arguments, as wasm-bindgen-test-runner takes them (and
/// the ones cargo or a user may add for libtest, accepted and ignored).
#[derive(Debug, Parser)]
#[command(name = "wasm-bindgen-test", no_binary_name = true)]
pub(crate) struct HarnessArgs {
    /// Run ignored tests too
    #[arg(long, conflicts_with = "ignored")]
    include_ignored: bool,
    /// Run only ignored tests
    #[arg(long)]
    ignored: bool,
    /// Match filters exactly, not as substrings
    #[arg(long)]
    exact: bool,
    /// Skip tests whose names contain FILTER (repeatable)
    #[arg(long, value_name = "FILTER")]
    skip: Vec<String>,
    /// List the tests instead of running them
    #[arg(long)]
    list: bool,
    /// Show the tests' console output as it happens
    #[arg(long)]
    nocapture: bool,
    /// Run benchmarks: not supported
    #[arg(long)]
    bench: bool,
    /// libtest's output format (the harness has one)
    #[arg(long, value_name = "FORMAT")]
    format: Option<String>,
    #[arg(short, long, hide = true)]
    quiet: bool,
    #[arg(long, hide = true)]
    show_output: bool,
    #[arg(long, value_name = "N", hide = true)]
    test_threads: Option<String>,
    #[arg(long, value_name = "WHEN", hide = true)]
    color: Option<String>,
    /// Run only tests whose names contain FILTER
    filter: Option<String>,
}

/// One test of the binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Test {
    /// `module::test`, as the harness prints it.
    pub name: String,
    /// `__wbgt_…`.
    pub export: String,
    pub ignored: bool,
}

/// The binary's tests, from its exports: `__wbgt_{modifiers}_{crate::path}`,
/// a `$` among the modifiers for `#[ignore]`.
pub(crate) fn tests_of(info: &WasmInfo) -> Vec<Test> {
    info.function_exports
        .iter()
        .filter_map(|export| {
            let rest = export.strip_prefix("__wbgt_")?;
            let (modifiers, _) = rest.split_once('_')?;
            let (_, name) = export.split_once("::")?;
            Some(Test {
                name: name.to_owned(),
                export: export.clone(),
                ignored: modifiers.contains('$'),
            })
        })
        .collect()
}

/// The tests the arguments select, and how many they left out.
pub(crate) fn select(tests: &[Test], args: &HarnessArgs) -> (Vec<Test>, usize) {
    let matches = |name: &str, pattern: &str| {
        if args.exact {
            name == pattern
        } else {
            name.contains(pattern)
        }
    };
    let mut chosen = Vec::new();
    let mut filtered = 0;
    for test in tests {
        let kept = args
            .filter
            .as_deref()
            .is_none_or(|f| matches(&test.name, f))
            && !args.skip.iter().any(|s| matches(&test.name, s))
            && (!args.ignored || test.ignored);
        if kept {
            chosen.push(test.clone());
        } else {
            filtered += 1;
        }
    }
    (chosen, filtered)
}

/// Runs the binary's selected tests; `None` when there was nothing to run
/// (`--list`, no test selected), the harness's line printed as the runner
/// prints it.
pub(crate) fn run(
    session: &Session,
    wasm: &Path,
    info: &WasmInfo,
    harness_args: &[String],
    run_dir: &Path,
) -> Result<Option<(HostResult, HostConfig)>> {
    let args = HarnessArgs::try_parse_from(harness_args).map_err(|e| {
        anyhow::anyhow!(
            "the arguments for the wasm-bindgen-test harness are not right: {}",
            e.render().to_string().trim_end()
        )
    })?;
    if args.bench {
        bail!("wasm-bindgen-test benchmarks (--bench) are not supported by `cargo wasmprof test`");
    }
    let all = tests_of(info);
    let (chosen, filtered) = select(&all, &args);
    if args.list {
        for test in &chosen {
            println!("{}: test", test.name);
        }
        return Ok(None);
    }
    if chosen.is_empty() {
        println!("no tests to run!");
        return Ok(None);
    }
    let kind = host_for(session.host, info, wasm)?;
    let mut host = select::select(kind, &session.host_args)?;
    let version = info.bindgen_version.as_deref().with_context(|| {
        format!(
            "{} carries no wasm-bindgen version: was it built with wasm-bindgen?",
            wasm.display()
        )
    })?;
    let cli = bindgen::find_or_install(version, session.offline)?;
    let (js, bindgen_wasm) =
        bindgen::generate(&cli, wasm, &run_dir.join("bindings"), kind_target(kind))?;
    without_user_start(&bindgen_wasm)?;
    let config = HostConfig {
        js: Some(js),
        test: Some(BindgenTests {
            tests: chosen.iter().map(|t| t.export.clone()).collect(),
            // libtest's meaning: `--ignored` runs the ignored tests (only
            // them, as `select` chose).
            include_ignored: args.include_ignored || args.ignored,
            filtered,
            nocapture: args.nocapture,
        }),
        ..test_config(
            crate::hosts::host::LoadAs::BindgenTest,
            &bindgen_wasm,
            run_dir,
            session,
        )
    };
    let (result, _) = crate::launch::launch(host.as_mut(), &config, run_dir, false)?;
    Ok(Some((result, config)))
}

/// `--host`, else where the binary is configured to run: the browser for
/// `wasm_bindgen_test_configure!(run_in_browser)`, else Node.
fn host_for(chosen: Option<HostKind>, info: &WasmInfo, wasm: &Path) -> Result<HostKind> {
    if let Some(kind) = chosen {
        check_host(kind, Binary::BindgenTest, &wasm.display().to_string())?;
        return Ok(kind);
    }
    Ok(match info.bindgen_test_mode.as_deref() {
        None => HostKind::Node,
        Some(mode) if mode.contains(&0x01) => HostKind::Browser,
        Some(mode) if mode.contains(&0x05) => HostKind::Node,
        Some(_) => bail!(
            "{} is configured to run its tests in a worker (run_in_dedicated_worker, \
             run_in_shared_worker or run_in_service_worker), which `cargo wasmprof test` does \
             not do: configure run_in_browser, or pass --host node or --host browser",
            wasm.display()
        ),
    })
}

fn kind_target(kind: HostKind) -> &'static str {
    match kind {
        HostKind::Browser => "web",
        HostKind::Node | HostKind::Wasmtime => "nodejs",
    }
}

/// A test run must not call the crate's `#[wasm_bindgen(start)]` function
/// (wasm-bindgen-test-runner generates its bindings without it), but must
/// run the rest of `__wbindgen_start`, wasm-bindgen's own set-up. The CLI
/// has no flag for that, so the module's `__wbindgen_start` is patched: its
/// calls of exported functions (the user's start; the set-up is imported
/// from the bindings) become `nop`s of the same length, and nothing else
/// in the module moves.
fn without_user_start(wasm: &Path) -> Result<()> {
    let mut bytes =
        std::fs::read(wasm).with_context(|| format!("could not read {}", wasm.display()))?;
    let patched = user_start_calls(&bytes).with_context(|| {
        format!(
            "cannot read {} to leave its start function out",
            wasm.display()
        )
    })?;
    if patched.is_empty() {
        return Ok(());
    }
    for range in patched {
        bytes[range].fill(0x01);
    }
    std::fs::write(wasm, bytes).with_context(|| format!("could not write {}", wasm.display()))
}

/// The byte ranges of the user's start calls in `__wbindgen_start`.
fn user_start_calls(bytes: &[u8]) -> Result<Vec<std::ops::Range<usize>>> {
    use wasmparser::{ExternalKind, Operator, Parser, Payload, TypeRef};
    let mut imported_functions = 0u32;
    let mut exported: std::collections::HashMap<u32, Vec<String>> = Default::default();
    let mut code_index = 0u32;
    let mut found = Vec::new();
    for payload in Parser::new(0).parse_all(bytes) {
        match payload? {
            Payload::ImportSection(imports) => {
                for import in imports.into_imports() {
                    if matches!(import?.ty, TypeRef::Func(_) | TypeRef::FuncExact(_)) {
                        imported_functions += 1;
                    }
                }
            }
            Payload::ExportSection(exports) => {
                for export in exports {
                    let export = export?;
                    if export.kind == ExternalKind::Func {
                        exported
                            .entry(export.index)
                            .or_default()
                            .push(export.name.to_owned());
                    }
                }
            }
            Payload::CodeSectionEntry(body) => {
                let index = imported_functions + code_index;
                code_index += 1;
                let is_start = exported
                    .get(&index)
                    .is_some_and(|names| names.iter().any(|n| n == "__wbindgen_start"));
                if !is_start {
                    continue;
                }
                let mut operators = body.get_operators_reader()?.into_iter_with_offsets();
                let mut current = operators.next().transpose()?;
                while let Some((operator, offset)) = current {
                    let next = operators.next().transpose()?;
                    match operator {
                        Operator::Call { function_index } => {
                            let user = exported.get(&function_index).is_some_and(|names| {
                                names.iter().any(|n| !n.starts_with("__wbindgen"))
                            });
                            if user {
                                let end = next.as_ref().map(|(_, o)| *o).unwrap_or(offset + 1);
                                found.push(offset..end);
                            }
                        }
                        Operator::End => {}
                        other => anyhow::bail!(
                            "its `__wbindgen_start` does more than call functions ({other:?}): \
                             wasmprof does not know how to leave the start function out"
                        ),
                    }
                    current = next;
                }
            }
            _ => {}
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(exports: &[&str]) -> WasmInfo {
        WasmInfo {
            function_exports: exports.iter().map(|e| e.to_string()).collect(),
            ..Default::default()
        }
    }

    fn args(list: &[&str]) -> HarnessArgs {
        HarnessArgs::try_parse_from(list).unwrap()
    }

    #[test]
    fn tests_come_from_the_exports_with_their_ignore_flag() {
        let tests = tests_of(&info(&[
            "__wbgt_fits_0_kernels::tests::fits",
            "__wbgt_$slow_1_kernels::tests::slow",
            "__wbindgen_malloc",
            "start",
        ]));
        assert_eq!(
            tests,
            [
                Test {
                    name: "tests::fits".into(),
                    export: "__wbgt_fits_0_kernels::tests::fits".into(),
                    ignored: false
                },
                Test {
                    name: "tests::slow".into(),
                    export: "__wbgt_$slow_1_kernels::tests::slow".into(),
                    ignored: true
                },
            ]
        );
    }

    #[test]
    fn filters_select_as_the_runner_does() {
        let tests = tests_of(&info(&[
            "__wbgt_a_0_k::tests::gray",
            "__wbgt_b_1_k::tests::grayscale",
            "__wbgt_$c_2_k::tests::slow",
        ]));
        let names = |(chosen, filtered): (Vec<Test>, usize)| {
            (
                chosen.into_iter().map(|t| t.name).collect::<Vec<_>>(),
                filtered,
            )
        };
        assert_eq!(names(select(&tests, &args(&[]))).1, 0);
        assert_eq!(
            names(select(&tests, &args(&["gray"]))),
            (vec!["tests::gray".into(), "tests::grayscale".into()], 1)
        );
        assert_eq!(
            names(select(&tests, &args(&["--exact", "tests::gray"]))),
            (vec!["tests::gray".into()], 2)
        );
        assert_eq!(
            names(select(&tests, &args(&["--skip", "scale", "--quiet"]))),
            (vec!["tests::gray".into(), "tests::slow".into()], 1)
        );
        assert_eq!(
            names(select(&tests, &args(&["--ignored"]))),
            (vec!["tests::slow".into()], 2)
        );
        assert!(HarnessArgs::try_parse_from(["--no-such-flag"]).is_err());
    }
}
