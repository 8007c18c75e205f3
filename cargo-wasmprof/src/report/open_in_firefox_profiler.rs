//! `report --format firefox --open`: the file served on the loopback
//! address for the Firefox Profiler, which opens a profile from a URL
//! (`https://profiler.firefox.com/from-url/…`), as samply does it.
//!
//! The server answers one path, the file's, under a token nobody else
//! knows, only to requests addressed to it by its own address (a name
//! rebound to 127.0.0.1 carries another `Host`), and lets only the
//! profiler's origin read the answer. It serves until Ctrl-C.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;

use anyhow::{Context, Result};

use crate::hosts::browser::new_token;
use crate::hosts::browser::server::http::{Bound, Reply, Request};

/// The Firefox Profiler's origin, the one that may read the file.
const PROFILER: &str = "https://profiler.firefox.com";

/// Serves `file` until Ctrl-C, after printing the link that opens it.
pub(super) fn serve(file: &Path) -> Result<()> {
    let bytes =
        std::fs::read(file).with_context(|| format!("could not read {}", file.display()))?;
    let name = file.file_name().map_or_else(
        || "profile.json".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let bound = Bound::new(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))?;
    let addr = bound.addr()?;
    let path = format!("/{}/{}", new_token(), percent_encoded(&name));
    let url = format!("http://{addr}{path}");
    let served = {
        let path = path.clone();
        let host = addr.to_string();
        let (fetched, heard) = mpsc::channel::<()>();
        let handle = move |request: &mut Request| {
            let reply = answer(request, &path, &host, &bytes);
            if reply.status == 200 {
                let _ = fetched.send(());
            }
            reply
        };
        (bound.serve(Arc::new(handle))?, heard)
    };
    let (stop, stopped) = mpsc::channel();
    ctrlc::set_handler(move || {
        let _ = stop.send(());
    })
    .context("could not listen for Ctrl-C")?;
    crate::terminal::status(
        "Serving",
        &format!(
            "{} for the Firefox Profiler: open {PROFILER}/from-url/{}/ (Ctrl-C stops)",
            file.display(),
            percent_encoded(&url)
        ),
    );
    let (_listener, fetched) = served;
    loop {
        if stopped
            .recv_timeout(std::time::Duration::from_millis(200))
            .is_ok()
        {
            return Ok(());
        }
        while fetched.try_recv().is_ok() {
            crate::terminal::status("Served", &format!("{name} to the Firefox Profiler"));
        }
    }
}

/// The file for a `GET` of its path, addressed to this server; nothing
/// else.
fn answer(request: &Request, path: &str, host: &str, bytes: &[u8]) -> Reply {
    if request.header("Host") != Some(host) {
        return Reply::new(421, "text/plain", b"misdirected request".to_vec());
    }
    if request.method != "GET" || request.target != path {
        return Reply::new(404, "text/plain", b"not found".to_vec());
    }
    let mut reply = Reply::new(200, "application/json", bytes.to_vec());
    reply
        .headers
        .push(("Access-Control-Allow-Origin", PROFILER.to_owned()));
    reply
}

/// `text` with everything but RFC 3986's unreserved characters
/// percent-encoded, as a URL inside a URL's path must be.
fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_inside_the_profiler_s_url_is_encoded_whole() {
        assert_eq!(
            percent_encoded("http://127.0.0.1:4000/a b/p.json"),
            "http%3A%2F%2F127.0.0.1%3A4000%2Fa%20b%2Fp.json"
        );
    }
}
