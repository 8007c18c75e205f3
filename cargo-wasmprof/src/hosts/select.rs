//! Which host runs the module: the one the flags name, found (and its
//! flags checked) before anything is built.

use anyhow::Result;

use super::host::Host;
use super::options::HostOptions;
use crate::build::options::HostKind;

/// Finds the host the flags ask for, before anything is built.
pub(crate) fn select(kind: HostKind, args: &HostOptions) -> Result<Box<dyn Host>> {
    if kind != HostKind::Wasmtime && (args.requests.is_some() || args.path.is_some()) {
        anyhow::bail!(
            "--requests and --path serve an HTTP handler component (wasm32-wasip2), which only \
             --host wasmtime runs"
        );
    }
    Ok(match kind {
        HostKind::Node => Box::new(super::node::Node::locate(args)?),
        HostKind::Browser => Box::new(super::browser::Browser::locate(args)?),
        HostKind::Wasmtime => wasmtime(args)?,
    })
}

#[cfg(feature = "wasmtime")]
fn wasmtime(args: &HostOptions) -> Result<Box<dyn Host>> {
    let others = [
        (
            args.node.is_some() || !args.node_arg.is_empty(),
            "--node and --node-arg",
        ),
        (
            args.browser.is_some()
                || !args.browser_arg.is_empty()
                || args.page.is_some()
                || args.headed,
            "--browser, --browser-arg, --headed and --page",
        ),
        (
            args.duration.is_some() || args.after.is_some(),
            "--duration and --after (for --host browser)",
        ),
    ];
    if let Some((_, flags)) = others.iter().find(|(given, _)| *given) {
        anyhow::bail!("{flags} are not for --host wasmtime");
    }
    Ok(Box::new(super::wasmtime::Wasmtime::new()?))
}

#[cfg(not(feature = "wasmtime"))]
fn wasmtime(_: &HostOptions) -> Result<Box<dyn Host>> {
    anyhow::bail!(
        "this cargo-wasmprof was built without wasmtime: reinstall it with its default features"
    )
}
