//! Threads a program starts itself: wasm_thread's `spawn` makes a web
//! worker per thread, each instantiating the module on the shared memory,
//! and `join_async` waits for them without blocking the page (whose thread
//! may not block). Thread `t` calls `worker` once and `work` 100 + t times;
//! the program counts its own calls, to hold the profile against.
//!
//! `cargo wasmprof run --host browser --invoke spread -- 3`

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use wasm_bindgen::prelude::*;
use wasm_thread as thread;

static WORKERS: AtomicU64 = AtomicU64::new(0);
static WORKS: AtomicU64 = AtomicU64::new(0);

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console)]
    fn log(text: &str);
}

#[wasmprof::instrument]
fn work(i: u64) -> u64 {
    WORKS.fetch_add(1, Relaxed);
    let mut x = i;
    for _ in 0..1_000 {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
    }
    x
}

#[wasmprof::instrument]
fn worker(calls: u64) -> u64 {
    WORKERS.fetch_add(1, Relaxed);
    (0..calls).map(work).fold(0, |a, b| a ^ b)
}

/// Spawns `threads` threads and waits for them all.
#[wasm_bindgen]
pub async fn spread(threads: u32) -> String {
    let handles: Vec<_> = (0..u64::from(threads))
        .map(|t| thread::spawn(move || worker(100 + t)))
        .collect();
    let mut hash = 0;
    for handle in handles {
        hash ^= handle.join_async().await.expect("a thread panicked");
    }
    let text = format!(
        "own-workers: {threads} threads, {} worker, {} work, hash {hash:x}",
        WORKERS.load(Relaxed),
        WORKS.load(Relaxed)
    );
    log(&text);
    text
}
