//! A Leptos client-side app: five counters, each a `#[component]` with a
//! signal, a memo derived from it and an effect that logs both. Once they
//! are mounted, every button is clicked three times; Leptos's fine-grained
//! reactivity then reruns the memo, the effect and the button's text, and
//! never the component.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The button's text.
#[wasmprof::instrument]
fn label(count: u32) -> String {
    format!("clicked {count} times")
}

/// Our attribute above Leptos's: the component keeps the name written here.
#[wasmprof::instrument]
#[component]
fn Counter(start: u32) -> impl IntoView {
    let (count, set_count) = signal(start);
    let doubled = Memo::new(move |_| count.get() * 2);
    Effect::new(move |_| {
        web_sys::console::log_1(
            &format!(
                "counter {start}: {} (doubled {})",
                count.get(),
                doubled.get()
            )
            .into(),
        );
    });
    view! {
        <button on:click=move |_| set_count.update(|c| *c += 1)>
            {move || label(count.get())}
        </button>
    }
}

#[component]
fn App() -> impl IntoView {
    view! { {(0..5u32).map(|start| view! { <Counter start=start /> }).collect_view()} }
}

/// Clicks every counter's button three times, as a user would.
#[wasmprof::instrument]
fn click_every_counter() {
    let document = web_sys::window().and_then(|w| w.document());
    let Some(buttons) = document.and_then(|d| d.query_selector_all("button").ok()) else {
        return;
    };
    for _ in 0..3 {
        for i in 0..buttons.length() {
            if let Some(button) = buttons
                .item(i)
                .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok())
            {
                button.click();
            }
        }
    }
}

#[wasm_bindgen(start)]
#[wasmprof::instrument]
pub fn start() {
    leptos::mount::mount_to_body(App);
    // Effects run in a microtask after mounting: click after them.
    wasm_bindgen_futures::spawn_local(async {
        click_every_counter();
    });
}
