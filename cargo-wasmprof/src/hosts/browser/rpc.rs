//! A JSON command connection to a browser, for the two protocols wasmprof
//! speaks, which share its shape (a command carries an id, its reply the
//! same id, events come unasked): the Chrome DevTools protocol, over
//! Chromium's `--remote-debugging-pipe` (messages ended by a NUL byte on the
//! browser's file descriptors 3 and 4), and WebDriver BiDi, over the
//! websocket Firefox serves on the loopback address.
//!
//! Why our own client rather than a CDP or BiDi crate: the messages stay
//! untyped JSON, so every domain (the Profiler, for sampling) is reachable
//! as the browser of the day speaks it; there is no message size limit to
//! lift for `Profiler.stop` or a large snapshot; the typed CDP crates
//! compile a multi-megabyte generated protocol file for the dozen methods
//! wasmprof sends, and the BiDi ones need geckodriver and an async runtime.
//! The websocket itself is tungstenite's.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use serde_json::{Value, json};

/// An event the browser sent, with the session it came from.
#[derive(Debug, Clone)]
pub struct Event {
    pub method: String,
    pub params: Value,
    pub session: Option<String>,
}

/// The method of the event sent when the browser closed the connection.
pub const DISCONNECTED: &str = "wasmprof.disconnected";

type Reply = std::result::Result<Value, String>;
type Pending = Arc<Mutex<HashMap<u64, Sender<Reply>>>>;

/// One connection to a browser.
pub struct Rpc {
    writer: Mutex<Box<dyn MessageSink>>,
    next_id: AtomicU64,
    pending: Pending,
    events: Receiver<Event>,
}

/// A command sent, whose reply can be waited for later.
pub struct Call {
    method: String,
    reply: Receiver<Reply>,
}

impl Call {
    /// Waits up to `timeout` for the reply.
    pub fn wait(&self, timeout: Duration) -> Result<Value> {
        match self.reply.recv_timeout(timeout) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(message)) => bail!("{} failed: {message}", self.method),
            Err(RecvTimeoutError::Timeout) => {
                bail!(
                    "the browser did not answer {} within {timeout:?}",
                    self.method
                )
            }
            Err(RecvTimeoutError::Disconnected) => {
                bail!(
                    "the browser closed the connection before answering {}",
                    self.method
                )
            }
        }
    }

    /// The reply if it has come, without waiting.
    pub fn ready(&self) -> Option<Result<Value>> {
        match self.reply.try_recv() {
            Ok(Ok(value)) => Some(Ok(value)),
            Ok(Err(message)) => Some(Err(anyhow!("{} failed: {message}", self.method))),
            Err(mpsc::TryRecvError::Empty) => None,
            Err(mpsc::TryRecvError::Disconnected) => Some(Err(anyhow!(
                "the browser closed the connection before answering {}",
                self.method
            ))),
        }
    }
}

impl Rpc {
    /// Speaks the protocol over a pipe, `reader`/`writer`, each message
    /// ended by a NUL byte; a thread reads replies and events until the
    /// browser closes its end.
    pub fn new(reader: impl Read + Send + 'static, writer: impl Write + Send + 'static) -> Rpc {
        let source = NulEnded(BufReader::with_capacity(1 << 20, reader));
        Rpc::over(source, NulEndedSink(writer))
    }

    /// Speaks the protocol over the websocket at `url` (`ws://127.0.0.1:…`).
    pub fn websocket(url: &str, timeout: Duration) -> Result<Rpc> {
        let address = url
            .strip_prefix("ws://")
            .and_then(|rest| rest.split('/').next())
            .ok_or_else(|| anyhow!("{url} is not a ws:// address"))?;
        let address: std::net::SocketAddr = address
            .parse()
            .map_err(|e| anyhow!("{url}: the browser's address is not an IP address ({e})"))?;
        let stream = std::net::TcpStream::connect_timeout(&address, timeout)
            .map_err(|e| anyhow!("could not connect to {url}: {e}"))?;
        stream.set_nodelay(true).ok();
        // Firefox sends each reply in one frame, however large (a snapshot
        // of tens of megabytes): no limit of tungstenite's may refuse it.
        let config = tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(None)
            .max_frame_size(None);
        let writing = stream
            .try_clone()
            .map_err(|e| anyhow!("could not share the connection to {url}: {e}"))?;
        let (socket, _) = tungstenite::client::client_with_config(url, stream, Some(config))
            .map_err(|e| anyhow!("the websocket handshake with {url} failed: {e}"))?;
        // The handshake is done: a second socket object over the same
        // stream writes while the reader thread reads.
        let sink = tungstenite::WebSocket::from_raw_socket(
            writing,
            tungstenite::protocol::Role::Client,
            Some(config),
        );
        Ok(Rpc::over(WebSocketSource(socket), WebSocketSink(sink)))
    }

    fn over(source: impl MessageSource, sink: impl MessageSink) -> Rpc {
        let pending: Pending = Arc::default();
        let (events_tx, events) = mpsc::channel();
        let read_pending = Arc::clone(&pending);
        std::thread::Builder::new()
            .name("wasmprof-browser-protocol".into())
            .spawn(move || read_messages(source, &read_pending, &events_tx))
            .expect("spawn the browser protocol's reader thread");
        Rpc {
            writer: Mutex::new(Box::new(sink)),
            next_id: AtomicU64::new(1),
            pending,
            events,
        }
    }

    /// Sends a command to the browser (`session` None) or to a page.
    pub fn send(&self, session: Option<&str>, method: &str, params: Value) -> Result<Call> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let (tx, reply) = mpsc::channel();
        self.pending.lock().unwrap().insert(id, tx);
        let bytes = serde_json::to_vec(&message)?;
        self.writer
            .lock()
            .unwrap()
            .send(bytes)
            .map_err(|e| anyhow!("could not send {method} to the browser: {e}"))?;
        Ok(Call {
            method: method.to_owned(),
            reply,
        })
    }

    /// Sends a command and waits up to `timeout` for its reply.
    pub fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value> {
        self.send(session, method, params)?.wait(timeout)
    }

    /// The next event, waiting up to `timeout`; `None` if none came.
    pub fn next_event(&self, timeout: Duration) -> Option<Event> {
        match self.events.recv_timeout(timeout) {
            Ok(event) => Some(event),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Event {
                method: DISCONNECTED.into(),
                params: Value::Null,
                session: None,
            }),
        }
    }
}

/// Where messages come from: one whole JSON message at a time, `None`
/// once the browser has closed the connection.
trait MessageSource: Send + 'static {
    fn next_message(&mut self) -> Option<Vec<u8>>;
}

/// Where messages go.
trait MessageSink: Send + 'static {
    fn send(&mut self, message: Vec<u8>) -> std::io::Result<()>;
}

/// The pipe's messages, each ended by a NUL byte.
struct NulEnded<R>(BufReader<R>);

impl<R: Read + Send + 'static> MessageSource for NulEnded<R> {
    fn next_message(&mut self) -> Option<Vec<u8>> {
        let mut buffer = Vec::new();
        match self.0.read_until(0, &mut buffer) {
            Ok(0) | Err(_) => None,
            Ok(_) => {
                if buffer.last() == Some(&0) {
                    buffer.pop();
                }
                Some(buffer)
            }
        }
    }
}

struct NulEndedSink<W>(W);

impl<W: Write + Send + 'static> MessageSink for NulEndedSink<W> {
    fn send(&mut self, mut message: Vec<u8>) -> std::io::Result<()> {
        message.push(0);
        self.0.write_all(&message)?;
        self.0.flush()
    }
}

type Socket = tungstenite::WebSocket<std::net::TcpStream>;

/// A websocket's text (and binary) messages; pings are answered by
/// tungstenite as it reads.
struct WebSocketSource(Socket);

impl MessageSource for WebSocketSource {
    fn next_message(&mut self) -> Option<Vec<u8>> {
        loop {
            match self.0.read() {
                Ok(tungstenite::Message::Text(text)) => return Some(text.as_bytes().to_vec()),
                Ok(tungstenite::Message::Binary(bytes)) => return Some(bytes.to_vec()),
                Ok(_) => continue,
                Err(_) => return None,
            }
        }
    }
}

struct WebSocketSink(Socket);

impl MessageSink for WebSocketSink {
    fn send(&mut self, message: Vec<u8>) -> std::io::Result<()> {
        let text = String::from_utf8(message).map_err(std::io::Error::other)?;
        self.0
            .send(tungstenite::Message::text(text))
            .map_err(std::io::Error::other)
    }
}

fn read_messages(mut source: impl MessageSource, pending: &Pending, events: &Sender<Event>) {
    while let Some(bytes) = source.next_message() {
        let Ok(message) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        if let Some(id) = message.get("id").and_then(Value::as_u64) {
            let reply = match message.get("error") {
                Some(error) => Err(error_text(error, &message)),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            if let Some(tx) = pending.lock().unwrap().remove(&id) {
                let _ = tx.send(reply);
            }
        } else if let Some(method) = message.get("method").and_then(Value::as_str) {
            let _ = events.send(Event {
                method: method.to_owned(),
                params: message.get("params").cloned().unwrap_or(Value::Null),
                session: message
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            });
        }
    }
    // Whoever waits for a reply learns that none will come.
    pending.lock().unwrap().clear();
    let _ = events.send(Event {
        method: DISCONNECTED.into(),
        params: Value::Null,
        session: None,
    });
}

/// An error reply's words: CDP's `{"error": {"message": …}}`, or BiDi's
/// `{"error": "invalid argument", "message": …}`.
fn error_text(error: &Value, message: &Value) -> String {
    match error {
        Value::String(kind) => match message.get("message").and_then(Value::as_str) {
            Some(text) if !text.is_empty() => format!("{kind}: {text}"),
            _ => kind.clone(),
        },
        _ => error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("unknown error")
            .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A browser stand-in on the far side of two pipes.
    #[test]
    fn replies_find_their_callers_and_events_arrive_in_order() {
        let (to_browser_r, to_browser_w) = std::io::pipe().unwrap();
        let (from_browser_r, mut from_browser_w) = std::io::pipe().unwrap();
        let cdp = Rpc::new(from_browser_r, to_browser_w);
        let call = cdp
            .send(Some("S"), "Runtime.evaluate", json!({"expression": "1"}))
            .unwrap();
        let mut sent = Vec::new();
        BufReader::new(to_browser_r)
            .read_until(0, &mut sent)
            .unwrap();
        let sent: Value = serde_json::from_slice(&sent[..sent.len() - 1]).unwrap();
        assert_eq!(sent["method"], "Runtime.evaluate");
        assert_eq!(sent["sessionId"], "S");
        let id = sent["id"].as_u64().unwrap();
        from_browser_w
            .write_all(b"{\"method\":\"A\",\"params\":{}}\0{\"method\":\"B\",\"params\":{},\"sessionId\":\"S\"}\0")
            .unwrap();
        from_browser_w
            .write_all(format!("{{\"id\":{id},\"result\":{{\"v\":2}}}}\0").as_bytes())
            .unwrap();
        assert_eq!(call.wait(Duration::from_secs(5)).unwrap()["v"], 2);
        assert_eq!(cdp.next_event(Duration::from_secs(5)).unwrap().method, "A");
        let b = cdp.next_event(Duration::from_secs(5)).unwrap();
        assert_eq!((b.method.as_str(), b.session.as_deref()), ("B", Some("S")));
        drop(from_browser_w);
        assert_eq!(
            cdp.next_event(Duration::from_secs(5)).unwrap().method,
            DISCONNECTED
        );
        let late = cdp.send(None, "Browser.close", json!({}));
        // Written into a pipe nobody reads: the call exists, its answer never comes.
        if let Ok(late) = late {
            assert!(late.wait(Duration::from_millis(50)).is_err());
        }
    }

    #[test]
    fn an_error_reply_names_the_method() {
        let (_to_browser_r, to_browser_w) = std::io::pipe().unwrap();
        let (from_browser_r, mut from_browser_w) = std::io::pipe().unwrap();
        let cdp = Rpc::new(from_browser_r, to_browser_w);
        let call = cdp.send(None, "Nope.method", json!({})).unwrap();
        from_browser_w
            .write_all(b"{\"id\":1,\"error\":{\"code\":-32601,\"message\":\"'Nope.method' wasn't found\"}}\0")
            .unwrap();
        let error = call.wait(Duration::from_secs(5)).unwrap_err().to_string();
        assert!(error.contains("Nope.method failed"), "{error}");
    }

    #[test]
    fn a_bidi_error_reply_says_its_kind_and_message() {
        let (_to_browser_r, to_browser_w) = std::io::pipe().unwrap();
        let (from_browser_r, mut from_browser_w) = std::io::pipe().unwrap();
        let rpc = Rpc::new(from_browser_r, to_browser_w);
        let call = rpc.send(None, "script.evaluate", json!({})).unwrap();
        from_browser_w
            .write_all(b"{\"type\":\"error\",\"id\":1,\"error\":\"invalid argument\",\"message\":\"Expected awaitPromise\"}\0")
            .unwrap();
        let error = call.wait(Duration::from_secs(5)).unwrap_err().to_string();
        assert!(
            error.contains("script.evaluate failed: invalid argument: Expected awaitPromise"),
            "{error}"
        );
    }
}
