//! `cargo wasmprof run --serve`: the instrumented app served for a person
//! to use in a browser of their own (Firefox, Safari, a phone with
//! `--bind`). The page carries a "Save profile" button that sends the
//! profile back; each one is saved as a profile file and named in the
//! terminal. Ctrl-C ends it.

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use super::build_module_for;
use crate::build::options::BuildOptions;
use crate::build::options::HostKind;
use crate::build::{ModuleKind, Workspace};
use crate::hosts::browser::window::profile_of_window;
use crate::hosts::browser::{new_token, page, server};
use crate::hosts::host::HostResult;
use crate::hosts::{files, interrupt};
use crate::launch::{host_config, run_context, save_profile};
use crate::run::options::{RunOptions, ServeOptions};
use crate::terminal;
use wasmprof_profile::profile::Window;

pub(super) fn serve(
    options: &RunOptions,
    serve: ServeOptions,
    workspace: &Workspace,
    command_line: Vec<String>,
) -> Result<i32> {
    let host_options = &options.host;
    if host_options.timeout.is_some() || host_options.until_exit || host_options.sample {
        terminal::warning(
            "--timeout, --until-exit and --sample do not apply to --serve, which runs until Ctrl-C \
             in a browser wasmprof does not drive",
        );
    }
    // The page is for a browser, whatever --host says.
    let build_options = BuildOptions {
        host: HostKind::Browser,
        ..options.build.clone()
    };
    let units = workspace.units(&build_options.cargo)?;
    if units.iter().any(|u| u.kind == ModuleKind::Wasi) {
        anyhow::bail!(
            "--serve serves a page, and a WASI binary cannot run in one: use --host node"
        );
    }
    let (module, entry) = build_module_for(&build_options, host_options, workspace)?;
    let target_dir = workspace.target_dir(&build_options.cargo);
    let run_dir = files::new_run_dir(&target_dir, &module);
    let mut config = host_config(&module, host_options, &run_dir)?;
    files::copy_module_into(&mut config, &run_dir.join("module"))?;
    let token = new_token();
    let page = page::served_page(
        &config,
        host_options.page.as_deref(),
        &run_dir,
        &token,
        true,
    )?;
    let ip = serve.bind.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let server = server::Server::start(ip, page.files)?;
    if !ip.is_loopback() {
        terminal::warning(&format!(
            "listening on {ip}: other machines on the network can load this page (saving a \
             profile still needs the token in the page)"
        ));
    }
    let shown = if ip.is_unspecified() {
        format!(
            "http://<this machine's address>:{}{}",
            server.addr().port(),
            page.start_path
        )
    } else {
        format!("http://{}{}", server.addr(), page.start_path)
    };
    interrupt::catch_ctrl_c();
    terminal::status(
        "Serving",
        &format!(
            "{shown} ({entry}); open it in a browser and use the app. \"Save profile\" saves \
             everything since the page loaded; \"Start recording\", then \"Stop and save\", \
             saves only what ran in between (wasmprof.save(), wasmprof.start() and \
             wasmprof.stop() in its console do the same). Ctrl-C stops."
        ),
    );
    let mut saved = 0;
    while !interrupt::interrupted() {
        let Ok(upload) = server.uploads.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        let window = match upload.window.map(|w| window_of_upload(&upload.path, w)) {
            None => None,
            Some(Ok(window)) => Some(window),
            Some(Err(e)) => {
                terminal::warning(&format!("a recorded window could not be read: {e:#}"));
                let _ = std::fs::remove_file(&upload.path);
                continue;
            }
        };
        let host = upload
            .user_agent
            .as_deref()
            .map(|ua| format!("browser {ua}"))
            .unwrap_or_else(|| "browser".into());
        let result = HostResult {
            timer_resolution_nanos: upload.resolution_nanos,
            snapshot: true,
            window,
            ..HostResult::started(host)
        };
        let context = run_context(&module, command_line.clone(), entry.clone())?;
        match save_profile(
            &module,
            &result,
            &upload.path,
            None,
            &target_dir,
            context,
            options.top,
        ) {
            Ok(Some(_)) => saved += 1,
            Ok(None) => {}
            Err(e) => terminal::warning(&format!("an upload could not be saved: {e:#}")),
        }
        let _ = std::fs::remove_file(&upload.path);
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&run_dir);
    terminal::status(
        "Stopped",
        &format!(
            "serving; {saved} profile{} saved",
            if saved == 1 { "" } else { "s" }
        ),
    );
    Ok(0)
}

/// Rewrites an upload of a window recorded on the page (its opening and
/// closing snapshots, one after the other) as the window's own snapshot.
fn window_of_upload(path: &Path, uploaded: server::UploadedWindow) -> Result<Window> {
    let bytes = std::fs::read(path)?;
    let (opening, closing) = bytes.split_at(uploaded.opening_len);
    let window = Window {
        start_nanos: (uploaded.start_ms * 1e6) as u64,
        end_nanos: (uploaded.end_ms * 1e6) as u64,
    };
    let snapshot = profile_of_window(Some(opening), closing, &window)?;
    std::fs::write(path, snapshot)?;
    Ok(window)
}
