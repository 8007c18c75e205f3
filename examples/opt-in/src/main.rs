//! `[package.metadata.wasmprof] instrument = "all"` instruments this crate
//! in every `cargo wasmprof` build, restricted by the manifest's patterns.

mod engine;
mod ui;

fn main() {
    let engine = engine::Engine::default();
    let total = engine::run(5) + engine.fire() + engine.idle();
    ui::show(total);
}
