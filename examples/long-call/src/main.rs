//! The WASI program: `long-call long` (the default), `long-call counted` or
//! `long-call figure-6.3`; built for `wasm32-wasip1-threads`, also
//! `long-on-a-worker` and `counted-on-a-worker`, the same calls made on a
//! thread of their own.

use std::sync::OnceLock;
use std::time::Instant;

fn now() -> f64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
}

#[cfg_attr(feature = "annotated", wasmprof::instrument)]
fn main() {
    match std::env::args().nth(1).as_deref().unwrap_or("long") {
        "long" => {
            let (sum, long_ms) = long_call::run_steps(now);
            println!("long call: {long_ms:.3} ms (checksum {sum})");
        }
        "counted" => {
            let (sum, long_ms) = long_call::run_sorts(now);
            println!("long call: {long_ms:.3} ms (checksum {sum})");
        }
        "figure-6.3" => println!("checksum {}", long_call::figure_6_3()),
        "long-on-a-worker" => on_a_worker(|| long_call::run_steps(now)),
        "counted-on-a-worker" => on_a_worker(|| long_call::run_sorts(now)),
        other => {
            eprintln!(
                "unknown program `{other}`: give `long`, `counted`, `figure-6.3`, \
                 `long-on-a-worker` or `counted-on-a-worker`"
            );
            std::process::exit(2);
        }
    }
}

/// Runs `calls` on a thread named `worker`, and prints its long call.
fn on_a_worker(calls: fn() -> (u64, f64)) {
    let worker = std::thread::Builder::new()
        .name("worker".to_owned())
        .spawn(calls);
    let Ok(worker) = worker else {
        eprintln!("no thread could start: build for wasm32-wasip1-threads");
        std::process::exit(2);
    };
    let (sum, long_ms) = worker.join().expect("the worker");
    println!("long call: {long_ms:.3} ms on a worker (checksum {sum})");
}
