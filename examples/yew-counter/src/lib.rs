//! A Yew app as Yew's own examples write one: function components with
//! `use_reducer` and `use_memo`, a custom `#[hook]`, and `#[wasmprof::instrument]` above
//! Yew's attributes (the order a user would write).
//!
//! On start it renders five counters, then clicks each button three times
//! from an effect; every render logs one line, so the console says exactly
//! what ran: 5 first renders, and 5 more once Yew has applied the clicks.

use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// How many counters, and how many clicks each gets.
const COUNTERS: u32 = 5;
const CLICKS: u32 = 3;

/// The button's text.
#[wasmprof::instrument]
fn label(start: u32, count: u32) -> String {
    format!("counter {start}: clicked {count} times")
}

/// A custom hook: the count, doubled, recomputed when the count changes.
#[wasmprof::instrument]
#[hook]
fn use_doubled(count: u32) -> u32 {
    *use_memo(count, |count| count * 2)
}

/// A counter's clicks: a reducer, so that clicks in a row all count.
#[derive(Default, PartialEq)]
struct Clicks(u32);

impl Reducible for Clicks {
    type Action = ();

    fn reduce(self: Rc<Self>, _: ()) -> Rc<Self> {
        Rc::new(Clicks(self.0 + 1))
    }
}

#[derive(Properties, PartialEq)]
pub struct CounterProps {
    pub start: u32,
}

#[wasmprof::instrument]
#[function_component]
fn Counter(props: &CounterProps) -> Html {
    let clicks = use_reducer(Clicks::default);
    let doubled = use_doubled(clicks.0);
    let onclick = {
        let dispatcher = clicks.dispatcher();
        Callback::from(move |_| dispatcher.dispatch(()))
    };
    let text = label(props.start, clicks.0);
    web_sys::console::log_1(&format!("{text} (doubled {doubled})").into());
    html! { <button class="counter" {onclick}>{ text }</button> }
}

#[function_component]
fn App() -> Html {
    use_effect_with((), |_| {
        click_every_counter();
    });
    html! {
        <div>{ for (0..COUNTERS).map(|start| html! { <Counter {start} /> }) }</div>
    }
}

/// What a person would do: click each button a few times.
fn click_every_counter() {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .expect("a document");
    let buttons = document
        .query_selector_all("button.counter")
        .expect("a valid selector");
    for _ in 0..CLICKS {
        for index in 0..buttons.length() {
            if let Some(button) = buttons
                .get(index)
                .and_then(|n| n.dyn_into::<web_sys::HtmlElement>().ok())
            {
                button.click();
            }
        }
    }
}

#[wasm_bindgen(start)]
pub fn start() {
    yew::Renderer::<App>::new().render();
}
