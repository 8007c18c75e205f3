//! The local HTTP server a page is loaded from. It is reachable by every
//! process on the machine and, through DNS rebinding, by any web page the
//! person has open, so it lets no one else in:
//!
//! - it serves only this run's files: the page's directory, the files wasmprof
//!   generates (`/__wasmprof/…`) and the module files it substitutes; a path
//!   with `..`, an encoded separator or a symbolic link is refused;
//! - it answers only requests whose `Host` is the address it is bound to
//!   (a rebound name carries the attacker's host name);
//! - it takes a profile upload only with the run's token, which only its own
//!   page knows, up to a size bound, and writes it under a name it chooses;
//! - it stops with the run.
//!
//! Every response is cross-origin isolated (COOP and COEP), so that
//! `performance.now()` has its fine resolution, and allows the JS
//! Self-Profiling API (`Document-Policy: js-profiling`).

pub(crate) mod http;
mod integrity;

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::net::{IpAddr, SocketAddr};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};

use http::{Reply, Request};

/// Where the page sends a profile.
pub(crate) const UPLOAD_PATH: &str = "/__wasmprof/profile";
/// The header that carries the run's token.
pub(crate) const TOKEN_HEADER: &str = "X-Wasmprof-Token";
/// The largest profile accepted (a tree of a million nodes is about 40 MiB).
pub(crate) const MAX_UPLOAD_BYTES: u64 = 256 << 20;

/// What a server serves.
pub(crate) struct ServedFiles {
    /// The directory files are served from.
    pub root: PathBuf,
    /// Files wasmprof generates, by URL path (`/__wasmprof/host-api.js`).
    pub generated: HashMap<String, Vec<u8>>,
    /// Requests a substitute claims get its file instead: the instrumented
    /// build in place of the page's own module files.
    pub substitutes: Vec<Substitute>,
    /// Inserted at the start of every HTML page's `<head>`.
    pub inject_into_html: Option<String>,
    /// The secret a profile upload must carry.
    pub token: String,
    /// Where uploads are written, as `snapshot-N.bin`.
    pub upload_dir: PathBuf,
}

/// The file to serve in place of a requested path (already checked to
/// have no `..`), if this substitute claims it.
pub(crate) struct Substitute(pub Box<SubstituteFn>);

/// See [`Substitute`].
pub(crate) type SubstituteFn = dyn Fn(&str) -> Option<PathBuf> + Send + Sync;

/// A profile the page sent back.
#[derive(Debug)]
pub(crate) struct Upload {
    pub path: PathBuf,
    /// The browser's `navigator.userAgent`, as the page reported it.
    pub user_agent: Option<String>,
    /// The clock's resolution the page measured, in nanoseconds.
    pub resolution_nanos: Option<f64>,
    /// Set when the page recorded a window (its "Start recording" button):
    /// the file then holds the opening snapshot followed by the closing one.
    pub window: Option<UploadedWindow>,
}

/// A window recorded on the page, as its `X-Wasmprof-Window` header gives
/// it: `START_MS:END_MS:OPENING_BYTES`, times from the page's load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct UploadedWindow {
    pub start_ms: f64,
    pub end_ms: f64,
    /// How many of the file's bytes are the opening snapshot.
    pub opening_len: usize,
}

impl UploadedWindow {
    pub(crate) const HEADER: &'static str = "X-Wasmprof-Window";

    fn parse(value: &str, body_len: usize) -> Option<UploadedWindow> {
        let mut parts = value.split(':');
        let start_ms: f64 = parts.next()?.trim().parse().ok()?;
        let end_ms: f64 = parts.next()?.trim().parse().ok()?;
        let opening_len: usize = parts.next()?.trim().parse().ok()?;
        let sane = parts.next().is_none()
            && start_ms.is_finite()
            && end_ms.is_finite()
            && 0.0 <= start_ms
            && start_ms <= end_ms
            && opening_len <= body_len;
        sane.then_some(UploadedWindow {
            start_ms,
            end_ms,
            opening_len,
        })
    }
}

/// A running server; dropping it stops it.
pub(crate) struct Server {
    listener: http::Listener,
    pub uploads: Receiver<Upload>,
}

impl Server {
    /// Binds `ip` on a port the system chooses, and serves `files`.
    pub(crate) fn start(ip: IpAddr, files: ServedFiles) -> Result<Server> {
        let root = files
            .root
            .canonicalize()
            .with_context(|| format!("cannot serve {}", files.root.display()))?;
        let files = ServedFiles { root, ..files };
        let (uploads_tx, uploads) = mpsc::channel();
        let bound = http::Bound::new(SocketAddr::new(ip, 0))?;
        let handler = Handler {
            files,
            addr: bound.addr()?,
            uploads: Mutex::new(uploads_tx),
            saved: AtomicU32::new(0),
        };
        let listener = bound.serve(Arc::new(move |request: &mut Request| {
            handler.handle(request)
        }))?;
        Ok(Server { listener, uploads })
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.listener.addr()
    }
}

struct Handler {
    files: ServedFiles,
    /// The server's own address.
    addr: SocketAddr,
    uploads: Mutex<Sender<Upload>>,
    saved: AtomicU32,
}

impl Handler {
    fn handle(&self, request: &mut Request) -> Reply {
        with_isolation_headers(self.reply(request))
    }

    fn reply(&self, request: &mut Request) -> Reply {
        if !self.host_is_ours(request) {
            return refusal(421, "this server answers only requests for its own address");
        }
        let path = match request_path(&request.target) {
            Ok(path) => path,
            Err(why) => return refusal(400, why),
        };
        match (request.method.as_str(), path.as_str()) {
            ("POST", UPLOAD_PATH) => self.upload(request),
            ("GET" | "HEAD", _) => self.file(&path),
            _ => refusal(405, "only GET, and POST of a profile"),
        }
    }

    /// `Host` must name the bound address: an IP literal and our port
    /// (or `localhost` when bound to loopback). A page on a rebound domain
    /// sends its own name.
    fn host_is_ours(&self, request: &Request) -> bool {
        let Some(host) = request.header("Host") else {
            return false;
        };
        let addr = self.addr;
        let port = addr.port();
        let (name, given_port) = match host.rsplit_once(':') {
            Some((name, p)) => (name, p.parse::<u16>().ok()),
            None => (host, None),
        };
        if given_port != Some(port) {
            return false;
        }
        let name = name.trim_start_matches('[').trim_end_matches(']');
        match name.parse::<IpAddr>() {
            Ok(ip) => ip == addr.ip() || addr.ip().is_unspecified(),
            Err(_) => name.eq_ignore_ascii_case("localhost") && addr.ip().is_loopback(),
        }
    }

    fn file(&self, path: &str) -> Reply {
        if let Some(bytes) = self.files.generated.get(path) {
            return ok(bytes.clone(), content_type(path));
        }
        let path = if path.ends_with('/') {
            format!("{path}index.html")
        } else {
            path.to_owned()
        };
        if let Some(file) = self.files.substitutes.iter().find_map(|s| (s.0)(&path)) {
            return match std::fs::read(&file) {
                Ok(bytes) => ok(bytes, content_type(&path)),
                Err(_) => refusal(404, "the instrumented build has no such file"),
            };
        }
        let Some(file) = self.resolve(&path) else {
            if path == "/favicon.ico" {
                // Browsers ask for one; a 404 would be relayed as an error.
                return ok(Vec::new(), "image/x-icon");
            }
            return refusal(404, "no such file in this run");
        };
        let file = if file.is_dir() {
            match self.resolve(&format!("{path}/index.html")) {
                Some(index) => index,
                None => return refusal(404, "no such file in this run"),
            }
        } else {
            file
        };
        let Ok(bytes) = std::fs::read(&file) else {
            return refusal(404, "no such file in this run");
        };
        let kind = content_type(&path);
        match (&self.files.inject_into_html, kind) {
            (Some(snippet), "text/html; charset=utf-8") => {
                let html = integrity::recompute(&String::from_utf8_lossy(&bytes), |path| {
                    self.files.substitutes.iter().find_map(|s| (s.0)(path))
                });
                ok(inject(&html, snippet).into_bytes(), kind)
            }
            _ => ok(bytes, kind),
        }
    }

    /// The file under the root for a URL path, if it is a regular file or
    /// directory reached without a symbolic link.
    fn resolve(&self, path: &str) -> Option<PathBuf> {
        let relative = Path::new(path.trim_start_matches('/'));
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
        {
            return None;
        }
        let joined = self.files.root.join(relative);
        // A symbolic link anywhere on the way makes the two differ.
        let real = joined.canonicalize().ok()?;
        (real == joined && real.starts_with(&self.files.root)).then_some(real)
    }

    fn upload(&self, request: &mut Request) -> Reply {
        let token = request.header(TOKEN_HEADER).unwrap_or_default();
        if !constant_time_eq(token.as_bytes(), self.files.token.as_bytes()) {
            return refusal(403, "a profile is accepted only from this run's own page");
        }
        match request.content_length {
            Some(n) if n > MAX_UPLOAD_BYTES => {
                return refusal(413, "the profile is larger than wasmprof accepts");
            }
            None => return refusal(411, "a profile upload needs a Content-Length"),
            _ => {}
        }
        let user_agent = request.header("X-Wasmprof-User-Agent").map(str::to_owned);
        let resolution_nanos = request
            .header("X-Wasmprof-Resolution")
            .and_then(|r| r.parse().ok());
        let mut bytes = Vec::new();
        if (&mut request.body)
            .take(MAX_UPLOAD_BYTES + 1)
            .read_to_end(&mut bytes)
            .is_err()
            || bytes.len() as u64 > MAX_UPLOAD_BYTES
        {
            return refusal(413, "the profile is larger than wasmprof accepts");
        }
        let window = match request.header(UploadedWindow::HEADER) {
            None => None,
            Some(value) => match UploadedWindow::parse(value, bytes.len()) {
                Some(window) => Some(window),
                None => {
                    return refusal(
                        400,
                        "the recorded window's header is not START_MS:END_MS:OPENING_BYTES",
                    );
                }
            },
        };
        let path = match self.save(&bytes) {
            Ok(path) => path,
            Err(e) => return refusal(500, &format!("could not save the profile: {e:#}")),
        };
        let uploads = self.uploads.lock().unwrap_or_else(|e| e.into_inner());
        let _ = uploads.send(Upload {
            path,
            user_agent,
            resolution_nanos,
            window,
        });
        ok(b"{\"saved\":true}".to_vec(), "application/json")
    }

    /// Writes an upload under a name of the server's choosing, never over
    /// another file.
    fn save(&self, bytes: &[u8]) -> Result<PathBuf> {
        std::fs::create_dir_all(&self.files.upload_dir)?;
        loop {
            let n = self.saved.fetch_add(1, Ordering::Relaxed);
            let path = self.files.upload_dir.join(format!("snapshot-{n}.bin"));
            match File::options().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    std::io::Write::write_all(&mut file, bytes)?;
                    return Ok(path);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// The decoded path of a request URL, or why it is refused: encoded
/// separators, NUL, backslashes and `..` segments never name a file here.
fn request_path(url: &str) -> std::result::Result<String, &'static str> {
    let raw = url.split(['?', '#']).next().unwrap_or_default();
    if !raw.starts_with('/') {
        return Err("the request path must start with /");
    }
    let lower = raw.to_ascii_lowercase();
    if ["%2f", "%5c", "%00", "%2e"]
        .iter()
        .any(|e| lower.contains(e))
        || raw.contains('\\')
    {
        return Err("encoded separators and dots are not accepted in paths");
    }
    let decoded = percent_decode(raw).ok_or("the path is not valid percent-encoded UTF-8")?;
    if decoded
        .split('/')
        .any(|segment| segment == ".." || segment == ".")
        || decoded.contains('\0')
    {
        return Err("paths may not contain . or .. segments");
    }
    Ok(decoded)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Puts `snippet` first in the page's `<head>` (or first in the page if it
/// has none), so the host API exists before any of the page's scripts.
pub(crate) fn inject(html: &str, snippet: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let at = lower
        .find("<head")
        .and_then(|start| lower[start..].find('>').map(|end| start + end + 1))
        .or_else(|| {
            lower
                .find("<html")
                .and_then(|start| lower[start..].find('>').map(|end| start + end + 1))
        })
        .unwrap_or(0);
    format!("{}{snippet}{}", &html[..at], &html[at..])
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn content_type(path: &str) -> &'static str {
    if path.ends_with('/') {
        return "text/html; charset=utf-8";
    }
    match path.rsplit('.').next().unwrap_or_default() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "json" => "application/json",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn ok(bytes: Vec<u8>, kind: &str) -> Reply {
    Reply::new(200, kind, bytes)
}

fn refusal(code: u16, why: &str) -> Reply {
    Reply::new(
        code,
        "text/plain; charset=utf-8",
        format!("{why}\n").into_bytes(),
    )
}

fn with_isolation_headers(mut reply: Reply) -> Reply {
    for (name, value) in [
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Embedder-Policy", "require-corp"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
        ("Document-Policy", "js-profiling"),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
    ] {
        reply.headers.push((name, value.to_owned()));
    }
    reply
}

#[cfg(test)]
mod tests;
