//! `examples/memory`'s workload, run by a wasm-bindgen start function.

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console)]
    fn log(message: &str);
}

#[wasm_bindgen(start)]
pub fn start() {
    log(&format!("memory: {}", memory::workload()));
}
