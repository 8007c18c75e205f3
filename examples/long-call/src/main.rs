//! The WASI program: `long-call long` (the default), `long-call counted` or
//! `long-call figure-6.3`.

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
        other => {
            eprintln!("unknown program `{other}`: give `long`, `counted` or `figure-6.3`");
            std::process::exit(2);
        }
    }
}
