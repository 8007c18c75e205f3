//! Caps linear memory at 64 MiB, so that `memory oom` runs out of it at
//! once in every host, instead of after gigabytes.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_FAMILY").is_ok_and(|f| f.contains("wasm")) {
        println!("cargo::rustc-link-arg-bins=--max-memory=67108864");
    }
}
