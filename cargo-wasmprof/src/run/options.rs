//! What `cargo wasmprof run` is asked for, as plain data: the command
//! line fills it in; the host's part is [`HostOptions`].

pub(crate) use crate::hosts::options::HostOptions;

/// What `cargo wasmprof run` is asked for: the build, the host, the
/// summary's length, and whether to serve the page for a browser of the
/// user's own instead of running it.
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    pub build: crate::build::options::BuildOptions,
    pub host: HostOptions,
    /// How many functions the summary after the run lists.
    pub top: usize,
    /// `--runs`: how many times the program runs after its one build.
    pub runs: u32,
    /// `--serve`, with the address to listen on (`--bind`).
    pub serve: Option<ServeOptions>,
}

/// `--serve`: where the page is served.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ServeOptions {
    /// `--bind`; loopback when not given.
    pub bind: Option<std::net::IpAddr>,
}
