//! An HTTP handler built as a WASI 0.2 component: `cargo wasmprof run -p
//! http-handler --target wasm32-wasip2 --requests 100 --path /fib/15`.
//!
//! `GET /fib/N` answers `fib(N)`, computed with `2 * fib(N + 1) - 1` calls
//! of `fib`; any other path answers 404. `GET /panic` panics.

use std::io::Write as _;

use wasip2::http::types::{
    Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam,
};

wasip2::http::proxy::export!(Handler);

struct Handler;

/// The `n`th Fibonacci number, the slow way: many short calls.
#[wasmprof::instrument]
fn fib(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

/// The status and body for a request's path.
#[wasmprof::instrument]
fn route(path: &str) -> (u16, String) {
    if path == "/panic" {
        panic!("asked to panic by {path}");
    }
    match path.strip_prefix("/fib/").map(str::parse::<u32>) {
        Some(Ok(n)) if n <= 40 => (200, format!("fib({n}) = {}\n", fib(n))),
        _ => (404, format!("no route for {path}: try /fib/15\n")),
    }
}

impl wasip2::exports::http::incoming_handler::Guest for Handler {
    fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
        let path = request.path_with_query().unwrap_or_default();
        let (status, text) = route(&path);
        let response = OutgoingResponse::new(Fields::new());
        response.set_status_code(status).unwrap();
        let body = response.body().unwrap();
        ResponseOutparam::set(response_out, Ok(response));
        let mut out = body.write().unwrap();
        out.write_all(text.as_bytes()).unwrap();
        out.flush().unwrap();
        drop(out);
        OutgoingBody::finish(body, None).unwrap();
    }
}
