//! HTTP/1.1 framing for the page server: one thread per connection, each
//! serving its requests in turn for as long as the browser keeps it open.
//!
//! A browser opens several connections at once and keeps them alive for
//! later requests. A pool of a few threads that each hold a connection can
//! leave a new connection's request unread while every thread waits on an
//! idle one (tiny_http did: about one Dioxus page load in three hung). A
//! thread per connection cannot. The request line and headers are parsed
//! by `httparse`; bodies are read only as far as `Content-Length` says.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};

/// The longest request head (request line and headers) accepted.
const MAX_HEAD_BYTES: usize = 64 << 10;
/// Headers per request.
const MAX_HEADERS: usize = 64;
/// How often an idle connection looks whether the server is stopping.
const IDLE_CHECK: Duration = Duration::from_millis(250);

/// One request: its head, and its body still to be read.
pub(crate) struct Request<'a> {
    pub method: String,
    /// The request target as sent (`/pkg/app.js?v=1`).
    pub target: String,
    headers: Vec<(String, String)>,
    /// `Content-Length`, if given.
    pub content_length: Option<u64>,
    /// The body: at most `content_length` bytes of the connection.
    pub body: &'a mut dyn Read,
}

impl Request<'_> {
    /// The value of the first header named `name`, any case.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A complete response.
pub(crate) struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub(crate) fn new(status: u16, content_type: &str, body: Vec<u8>) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type", content_type.to_owned())],
            body,
        }
    }
}

/// What answers requests; called from every connection's thread.
pub(crate) type Handle = dyn Fn(&mut Request) -> Reply + Send + Sync;

/// A bound socket, not yet serving: its address is known before the
/// handler that needs it is made.
pub(crate) struct Bound(TcpListener);

impl Bound {
    pub(crate) fn new(addr: SocketAddr) -> Result<Bound> {
        TcpListener::bind(addr)
            .map(Bound)
            .with_context(|| format!("could not listen on {addr}"))
    }

    pub(crate) fn addr(&self) -> Result<SocketAddr> {
        self.0.local_addr().context("the server has no address")
    }

    /// Accepts connections, each served on a thread of its own, until the
    /// returned listener is dropped.
    pub(crate) fn serve(self, handle: Arc<Handle>) -> Result<Listener> {
        let addr = self.addr()?;
        let listener = self.0;
        let stopping = Arc::new(AtomicBool::new(false));
        let accepting = Arc::clone(&stopping);
        let thread = std::thread::Builder::new()
            .name("wasmprof-http".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if accepting.load(Ordering::Acquire) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let handle = Arc::clone(&handle);
                    let stopping = Arc::clone(&accepting);
                    let _ = std::thread::Builder::new()
                        .name("wasmprof-http-connection".into())
                        .spawn(move || serve_connection(stream, &*handle, &stopping));
                }
            })
            .context("could not start the server thread")?;
        Ok(Listener {
            addr,
            stopping,
            thread: Some(thread),
        })
    }
}

/// Accepts connections until dropped.
pub(crate) struct Listener {
    addr: SocketAddr,
    stopping: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::Release);
        // Wakes the accepting thread, which then sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Serves one connection's requests in turn until the client closes it,
/// asks to, sends something that is not HTTP, or the server stops.
fn serve_connection(stream: TcpStream, handle: &Handle, stopping: &AtomicBool) {
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let head = match read_head(&mut reader, stopping) {
            Ok(Some(head)) => head,
            Ok(None) => return,
            Err(reply) => {
                let _ = write_reply(&mut writer, &reply, false, false);
                return;
            }
        };
        let Parsed {
            method,
            target,
            headers,
            keep_alive,
        } = match parse_head(&head) {
            Ok(parsed) => parsed,
            Err(reply) => {
                let _ = write_reply(&mut writer, &reply, false, false);
                return;
            }
        };
        let content_length = match content_length(&headers) {
            Ok(length) => length,
            Err(reply) => {
                let _ = write_reply(&mut writer, &reply, false, false);
                return;
            }
        };
        let mut body = (&mut reader).take(content_length.unwrap_or(0));
        let mut request = Request {
            method,
            target,
            headers,
            content_length,
            body: &mut body,
        };
        let reply = handle(&mut request);
        let head_only = request.method == "HEAD";
        // A body the handler did not read (a refused upload) is never
        // waited for: the connection closes instead.
        let unread = body.limit();
        let keep_alive = keep_alive && unread == 0;
        if write_reply(&mut writer, &reply, keep_alive, head_only).is_err() || !keep_alive {
            if unread > 0 {
                close_after_unread_body(&writer, &mut reader);
            }
            return;
        }
    }
}

/// Closes a connection whose request body was left unread, so that the
/// client reads the reply: closed with bytes still unread, a socket is
/// reset, and the reset can reach the client before the reply does (a
/// refused upload's test failed so, now and then). The server's side is
/// shut first, then what the client still sends is read and dropped, for
/// a moment and a bounded amount.
fn close_after_unread_body(writer: &TcpStream, reader: &mut BufReader<TcpStream>) {
    const DRAIN_BYTES: u64 = 1 << 20;
    let _ = writer.shutdown(std::net::Shutdown::Write);
    let _ = reader
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(500)));
    let _ = std::io::copy(&mut reader.take(DRAIN_BYTES), &mut std::io::sink());
}

/// The bytes of the next request's head, `None` when the client closed the
/// connection (or the server stops) between requests.
fn read_head(
    reader: &mut BufReader<TcpStream>,
    stopping: &AtomicBool,
) -> std::result::Result<Option<Vec<u8>>, Reply> {
    let _ = reader.get_ref().set_read_timeout(Some(IDLE_CHECK));
    let mut head = Vec::new();
    loop {
        if stopping.load(Ordering::Acquire) {
            return Ok(None);
        }
        let before = head.len();
        // Never more than the limit, however long a line is.
        let room = (MAX_HEAD_BYTES + 1).saturating_sub(head.len()) as u64;
        match reader.by_ref().take(room).read_until(b'\n', &mut head) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) if is_timeout(&e) => {
                if head.len() == before {
                    continue;
                }
            }
            Err(_) => return Ok(None),
        }
        if head.len() > MAX_HEAD_BYTES {
            return Err(Reply::new(
                431,
                "text/plain; charset=utf-8",
                b"the request head is too large\n".to_vec(),
            ));
        }
        // Empty lines before a request are allowed (RFC 9112, 2.2).
        if head == b"\r\n" || head == b"\n" {
            head.clear();
            continue;
        }
        if head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") {
            let _ = reader.get_ref().set_read_timeout(None);
            return Ok(Some(head));
        }
    }
}

fn is_timeout(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

struct Parsed {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    keep_alive: bool,
}

fn parse_head(head: &[u8]) -> std::result::Result<Parsed, Reply> {
    let bad = |why: &str| Reply::new(400, "text/plain; charset=utf-8", format!("{why}\n").into());
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut slots);
    match parsed.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(bad("the request head is incomplete")),
        Err(e) => return Err(bad(&format!("not an HTTP request: {e}"))),
    }
    let headers: Vec<(String, String)> = parsed
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_owned(),
                String::from_utf8_lossy(h.value).trim().to_owned(),
            )
        })
        .collect();
    let connection = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Connection"))
        .map(|(_, v)| v.to_ascii_lowercase());
    // HTTP/1.1 keeps the connection unless told not to; 1.0 only if told to.
    let keep_alive = match (parsed.version, connection.as_deref()) {
        (_, Some(value)) if value.contains("close") => false,
        (Some(1), _) => true,
        (_, Some(value)) => value.contains("keep-alive"),
        _ => false,
    };
    Ok(Parsed {
        method: parsed.method.unwrap_or_default().to_owned(),
        target: parsed.path.unwrap_or_default().to_owned(),
        headers,
        keep_alive,
    })
}

/// The body's length, or the answer to a body whose length is not given
/// plainly (chunked bodies are not taken: the page always sends a length).
fn content_length(headers: &[(String, String)]) -> std::result::Result<Option<u64>, Reply> {
    let refuse = |code: u16, why: &str| {
        Reply::new(code, "text/plain; charset=utf-8", format!("{why}\n").into())
    };
    if headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("Transfer-Encoding"))
    {
        return Err(refuse(411, "a request body needs a Content-Length"));
    }
    let mut lengths = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("Content-Length"))
        .map(|(_, v)| v.parse::<u64>());
    match (lengths.next(), lengths.next()) {
        (None, _) => Ok(None),
        (Some(Ok(length)), None) => Ok(Some(length)),
        _ => Err(refuse(400, "the Content-Length is not one number")),
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        411 => "Length Required",
        413 => "Content Too Large",
        421 => "Misdirected Request",
        431 => "Request Header Fields Too Large",
        _ => "Internal Server Error",
    }
}

fn write_reply(
    writer: &mut TcpStream,
    reply: &Reply,
    keep_alive: bool,
    head_only: bool,
) -> std::io::Result<()> {
    let mut out = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("Content-Length: {}\r\n", reply.body.len()));
    out.push_str(if keep_alive {
        "Connection: keep-alive\r\n\r\n"
    } else {
        "Connection: close\r\n\r\n"
    });
    let mut bytes = out.into_bytes();
    if !head_only {
        bytes.extend_from_slice(&reply.body);
    }
    writer.write_all(&bytes)?;
    writer.flush()
}
