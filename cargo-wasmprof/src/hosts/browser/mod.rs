//! The browser host: the module and a page that runs it, served from
//! 127.0.0.1, opened in a headless browser: Chromium (or Chrome, or Edge)
//! driven through the DevTools protocol, or Firefox through WebDriver BiDi.
//! The page loads `host-api.js`, the same host API Node uses.

mod bidi_driver;
mod cdp_driver;
pub(crate) mod chromium;
mod console;
mod driver;
pub(crate) mod firefox;
mod gecko_sampler;
pub(crate) mod locate;
pub(crate) mod page;
mod page_message;
mod page_run;
pub(crate) mod rpc;
pub(crate) mod server;
mod thread_page;
pub(crate) mod window;

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, bail};

use super::files;
use super::host::{Captured, Host, HostConfig, HostResult};
use crate::build::ModuleKind;
use crate::hosts::options::HostOptions;
pub use chromium::{Chromium, ChromiumExe};
pub(crate) use firefox::{Firefox, FirefoxExe};

/// A headless browser, launched on first use and kept for the runs that
/// follow (a benchmark's), each in a page of its own.
pub(crate) struct Browser {
    exe: Exe,
    extra_args: Vec<String>,
    /// `--headed`: the browser's window shown.
    headed: bool,
    user_page: Option<PathBuf>,
    grace: Duration,
    running: Option<Running>,
}

/// The browser's executable.
enum Exe {
    Chromium(ChromiumExe),
    Firefox(FirefoxExe),
}

/// The browser, launched.
enum Running {
    Chromium(Chromium),
    Firefox(Firefox),
}

impl Browser {
    /// Finds the browser the flags name (nothing is launched yet).
    pub(crate) fn locate(args: &HostOptions) -> Result<Browser> {
        if args.node.is_some() || !args.node_arg.is_empty() {
            bail!("--node and --node-arg are for the Node host, not --host browser");
        }
        if args.page.is_some() && args.invoke.is_some() {
            bail!("--page runs your page as it is; --invoke is for the generated page");
        }
        let wanted = args.browser.as_deref().map(Path::to_string_lossy);
        let found = locate::locate(wanted.as_deref(), &locate::Probe::system())?;
        let exe = match found.family {
            locate::Family::Chromium => Exe::Chromium(ChromiumExe::at(found.path)?),
            locate::Family::Firefox => Exe::Firefox(FirefoxExe::at(found.path)?),
        };
        if let Some(page) = &args.page
            && !page.exists()
        {
            bail!(
                "--page {}: no such file or directory; give a directory with an index.html \
                     (trunk's dist/, wasm-pack's www/) or an HTML file",
                page.display()
            );
        }
        if args.headed {
            check_display()?;
        }
        Ok(Browser {
            exe,
            extra_args: args.browser_arg.clone(),
            headed: args.headed,
            user_page: args.page.clone(),
            grace: args.grace,
            running: None,
        })
    }

    fn running(&mut self) -> Result<&Running> {
        if self.running.is_none() {
            super::interrupt::catch_ctrl_c();
            self.running = Some(match &self.exe {
                Exe::Chromium(exe) => {
                    Running::Chromium(Chromium::launch(exe, &self.extra_args, self.headed)?)
                }
                Exe::Firefox(exe) => {
                    Running::Firefox(Firefox::launch(exe, &self.extra_args, self.headed)?)
                }
            });
        }
        Ok(self.running.as_ref().expect("launched above"))
    }
}

/// `--headed` needs a screen to show the window on: on Linux and the
/// BSDs, an X or Wayland display (macOS and Windows always have one).
fn check_display() -> Result<()> {
    let unix_desktop = cfg!(unix) && !cfg!(target_os = "macos");
    let display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()));
    if unix_desktop && !display {
        bail!(
            "--headed shows the browser's window, and there is no display to show it on \
             (neither DISPLAY nor WAYLAND_DISPLAY is set): run under a virtual one, \
             `xvfb-run cargo wasmprof run --headed …` (Debian's xvfb), or leave --headed out"
        );
    }
    Ok(())
}

impl Host for Browser {
    fn describe(&self) -> String {
        let how = if self.headed { "" } else { "headless " };
        match &self.exe {
            Exe::Chromium(exe) => format!("{how}Chromium {}", exe.short_version()),
            Exe::Firefox(exe) => format!("{how}Firefox {}", exe.short_version()),
        }
    }

    /// Chromium's sampler is reached through the DevTools protocol,
    /// Firefox's from the browser's own window over WebDriver BiDi.
    fn samples(&self) -> bool {
        true
    }

    /// A wasm-bindgen program's threads on web workers: its own, or a
    /// pool's (wasm-bindgen-rayon).
    fn threads(&self) -> bool {
        true
    }

    fn check_kind(&self, kind: ModuleKind) -> Result<()> {
        match kind {
            ModuleKind::Wasi => bail!(
                "a WASI binary cannot run in the browser, which has no WASI: run it with \
                 --host node (the default)"
            ),
            ModuleKind::Plain if self.user_page.is_some() => bail!(
                "--page needs a wasm-bindgen crate: a page loads its module through the JS \
                 wasm-bindgen generates"
            ),
            _ => Ok(()),
        }
    }

    fn run(
        &mut self,
        config: &HostConfig,
        run_dir: &Path,
        capture: bool,
    ) -> Result<(Option<HostResult>, Captured)> {
        let mut config = config.clone();
        files::copy_module_into(&mut config, &run_dir.join("module"))?;
        let token = new_token();
        let page = page::served_page(&config, self.user_page.as_deref(), run_dir, &token, false)?;
        let server = server::Server::start(IpAddr::V4(Ipv4Addr::LOCALHOST), page.files)?;
        let url = format!("http://{}{}", server.addr(), page.start_path);
        let grace = self.grace;
        let result = {
            let mut cdp_page;
            let mut bidi_page;
            let driver: &mut dyn driver::PageDriver = match self.running()? {
                Running::Chromium(chromium) => {
                    cdp_page = cdp_driver::CdpPage::new(chromium);
                    &mut cdp_page
                }
                Running::Firefox(firefox) => {
                    bidi_page = bidi_driver::BidiPage::new(firefox);
                    &mut bidi_page
                }
            };
            let result = page_run::PageRun {
                driver,
                url: &url,
                config: &config,
                grace,
            }
            .run(capture);
            (result, driver.browser_spent())
        };
        let (result, spent) = result;
        if spent {
            self.running = None;
        }
        drop(server);
        match result {
            Ok(done) => Ok((Some(done.0), done.1)),
            Err(e) => {
                // The browser is in an unknown state: the next run starts a new one.
                self.running = None;
                Err(e)
            }
        }
    }
}

/// A secret for the page's uploads: 128 bits from the system's generator.
pub(crate) fn new_token() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_err()
    {
        // No /dev/urandom: time and address bits, still unguessable enough
        // for a server that lives as long as one run.
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
            ^ (&bytes as *const _ as usize as u128);
        bytes = seed.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
