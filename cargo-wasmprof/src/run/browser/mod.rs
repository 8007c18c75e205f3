//! The browser host: the module and a page that runs it, served from
//! 127.0.0.1, opened in headless Chromium driven through the DevTools
//! protocol. The page loads `host-api.js`, the same host API Node uses.

pub(crate) mod chromium;
mod cdp_driver;
mod console;
mod driver;
pub(crate) mod page;
mod page_message;
pub mod rpc;
pub(crate) mod server;
mod session;

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};

use super::files;
use super::host::{Captured, Host, HostConfig, HostResult};
use crate::build::ModuleKind;
use crate::run::options::HostOptions;
pub use chromium::{Chromium, ChromiumExe};

/// Headless Chromium, launched on first use and kept for the runs that
/// follow (a benchmark's), each in a page of its own.
pub struct Browser {
    exe: ChromiumExe,
    extra_args: Vec<String>,
    user_page: Option<PathBuf>,
    grace: Duration,
    chromium: Option<Chromium>,
}

impl Browser {
    /// Finds the browser the flags name (nothing is launched yet).
    pub fn locate(args: &HostOptions) -> Result<Browser> {
        if args.node.is_some() || !args.node_arg.is_empty() {
            bail!("--node and --node-arg are for the Node host, not --host browser");
        }
        if args.page.is_some() && args.invoke.is_some() {
            bail!("--page runs your page as it is; --invoke is for the generated page");
        }
        let exe = ChromiumExe::locate(args.browser.as_deref())?;
        if let Some(page) = &args.page {
            if !page.exists() {
                bail!(
                    "--page {}: no such file or directory; give a directory with an index.html \
                     (trunk's dist/, wasm-pack's www/) or an HTML file",
                    page.display()
                );
            }
        }
        Ok(Browser {
            exe,
            extra_args: args.browser_arg.clone(),
            user_page: args.page.clone(),
            grace: args.grace,
            chromium: None,
        })
    }

    fn chromium(&mut self) -> Result<&Chromium> {
        if self.chromium.is_none() {
            super::interrupt::catch_ctrl_c();
            self.chromium = Some(Chromium::launch(&self.exe, &self.extra_args)?);
        }
        Ok(self.chromium.as_ref().expect("launched above"))
    }
}

impl Host for Browser {
    fn describe(&self) -> String {
        format!("headless Chromium {}", self.exe.short_version())
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
            let chromium = self.chromium()?;
            let mut page = cdp_driver::CdpPage::new(chromium);
            session::PageRun {
                driver: &mut page,
                url: &url,
                config: &config,
                grace,
            }
            .run(capture)
        };
        drop(server);
        match result {
            Ok(done) => Ok((Some(done.0), done.1)),
            Err(e) => {
                // The browser is in an unknown state: the next run starts a new one.
                self.chromium = None;
                Err(e)
            }
        }
    }
}

/// A secret for the page's uploads: 128 bits from the system's generator.
pub fn new_token() -> String {
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
