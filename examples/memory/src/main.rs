//! The workload as a WASI program; `memory oom` runs out of memory
//! instead, `memory churn [ROUNDS]` allocates in a loop for the bench.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("oom") => {
            println!("memory: asking for 128 MiB");
            println!("memory: got {}", memory::exhaust());
        }
        Some("churn") => {
            let rounds = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(100_000);
            println!("memory: churned {}", memory::churn(rounds));
        }
        _ => println!("memory: {}", memory::workload()),
    }
}
