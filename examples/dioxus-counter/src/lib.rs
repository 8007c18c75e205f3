//! A Dioxus web app: five counters, each a `#[component]` with a signal,
//! whose effect logs the count once it is mounted. dioxus-web's own JS
//! comes as snippet modules, which the page fetches at once: the run used
//! to hang on them now and then.

use dioxus::prelude::*;
use wasm_bindgen::prelude::*;

/// The button's text.
#[wasmprof::instrument]
fn label(count: u32) -> String {
    format!("clicked {count} times")
}

#[wasmprof::instrument]
#[component]
fn Counter(start: u32) -> Element {
    let count = use_signal(|| start);
    let text = label(count());
    use_effect(move || {
        web_sys::console::log_1(&format!("counter {}", count()).into());
    });
    rsx! {
        button {
            onclick: move |_| {
                let mut count = count;
                count += 1;
            },
            "{text}"
        }
    }
}

#[component]
fn App() -> Element {
    rsx! {
        for start in 0..5u32 {
            Counter { start }
        }
    }
}

#[wasm_bindgen(start)]
pub fn start() {
    dioxus::launch(App);
}
