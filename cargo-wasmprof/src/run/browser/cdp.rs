//! The Chrome DevTools protocol over `--remote-debugging-pipe`: JSON
//! messages, each ended by a NUL byte, written to the browser's file
//! descriptor 3 and read from its descriptor 4.
//!
//! Why our own client rather than a CDP crate: the pipe needs no port and no
//! websocket, so nothing else on the machine can reach the browser; the
//! messages stay untyped JSON, so every domain (the Profiler, for sampling)
//! is reachable as the browser of the day speaks it; and there is no message
//! size limit to lift for `Profiler.stop` or a large snapshot. The typed
//! crates compile a multi-megabyte generated protocol file for the dozen
//! methods wasmprof sends.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use serde_json::{json, Value};

/// An event the browser sent, with the session it came from.
#[derive(Debug, Clone)]
pub struct Event {
    pub method: String,
    pub params: Value,
    pub session: Option<String>,
}

/// The method of the event sent when the browser closed the pipe.
pub const DISCONNECTED: &str = "wasmprof.disconnected";

type Reply = std::result::Result<Value, String>;
type Pending = Arc<Mutex<HashMap<u64, Sender<Reply>>>>;

/// One connection to a browser.
pub struct Cdp {
    writer: Mutex<Box<dyn Write + Send>>,
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

impl Cdp {
    /// Speaks the protocol over `reader`/`writer`; a thread reads replies
    /// and events until the browser closes its end.
    pub fn new(reader: impl Read + Send + 'static, writer: impl Write + Send + 'static) -> Cdp {
        let pending: Pending = Arc::default();
        let (events_tx, events) = mpsc::channel();
        let read_pending = Arc::clone(&pending);
        std::thread::Builder::new()
            .name("wasmprof-cdp".into())
            .spawn(move || read_messages(reader, &read_pending, &events_tx))
            .expect("spawn the DevTools reader thread");
        Cdp {
            writer: Mutex::new(Box::new(writer)),
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
        let mut bytes = serde_json::to_vec(&message)?;
        bytes.push(0);
        let mut writer = self.writer.lock().unwrap();
        writer
            .write_all(&bytes)
            .and_then(|()| writer.flush())
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

fn read_messages(reader: impl Read, pending: &Pending, events: &Sender<Event>) {
    let mut reader = BufReader::with_capacity(1 << 20, reader);
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        match reader.read_until(0, &mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if buffer.last() == Some(&0) {
            buffer.pop();
        }
        let Ok(message) = serde_json::from_slice::<Value>(&buffer) else {
            continue;
        };
        if let Some(id) = message.get("id").and_then(Value::as_u64) {
            let reply = match message.get("error") {
                Some(error) => Err(error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_owned()),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A browser stand-in on the far side of two pipes.
    #[test]
    fn replies_find_their_callers_and_events_arrive_in_order() {
        let (to_browser_r, to_browser_w) = std::io::pipe().unwrap();
        let (from_browser_r, mut from_browser_w) = std::io::pipe().unwrap();
        let cdp = Cdp::new(from_browser_r, to_browser_w);
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
        let cdp = Cdp::new(from_browser_r, to_browser_w);
        let call = cdp.send(None, "Nope.method", json!({})).unwrap();
        from_browser_w
            .write_all(b"{\"id\":1,\"error\":{\"code\":-32601,\"message\":\"'Nope.method' wasn't found\"}}\0")
            .unwrap();
        let error = call.wait(Duration::from_secs(5)).unwrap_err().to_string();
        assert!(error.contains("Nope.method failed"), "{error}");
    }
}
