//! An egui app on eframe's web runner, with a render loop it ends itself:
//! each frame lays out [`ROWS`] rows through [`row`]; after [`FRAMES`]
//! frames it logs how many rows it laid out (its own count, to hold the
//! profile's against), stops asking for repaints and tells a wasmprof host
//! it is done (`wasmprof::exit`), unless [`repaint_forever`] was called
//! (`--invoke repaint_forever`): then it draws every frame for as long as
//! the page is open, for frame rates.

use std::sync::atomic::{AtomicBool, Ordering};

use eframe::egui;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Rows laid out per frame.
pub const ROWS: u32 = 40;
/// Frames the app asks for.
pub const FRAMES: u32 = 60;

#[wasm_bindgen(start)]
pub fn start() -> Result<(), JsValue> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    // The app makes its own canvas, as many do.
    let canvas: web_sys::HtmlCanvasElement = document.create_element("canvas")?.dyn_into()?;
    canvas.set_width(640);
    canvas.set_height(480);
    document.body().ok_or("no body")?.append_child(&canvas)?;
    wasm_bindgen_futures::spawn_local(async move {
        let started = eframe::WebRunner::new()
            .start(
                canvas,
                eframe::WebOptions::default(),
                Box::new(|_| Ok(Box::new(Rows::default()))),
            )
            .await;
        if let Err(error) = started {
            web_sys::console::error_1(&error);
        }
    });
    Ok(())
}

/// Set by [`repaint_forever`].
static FOREVER: AtomicBool = AtomicBool::new(false);

/// Keeps the app drawing after its [`FRAMES`] frames: a render loop that
/// never ends, as a game's or a live view's does.
#[wasm_bindgen]
pub fn repaint_forever() {
    FOREVER.store(true, Ordering::Relaxed);
}

/// The app: frames drawn and rows laid out, by its own count.
#[derive(Default)]
struct Rows {
    frames: u32,
    rows: u64,
}

impl eframe::App for Rows {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let forever = FOREVER.load(Ordering::Relaxed);
        if self.frames >= FRAMES && !forever {
            return;
        }
        egui::CentralPanel::default().show(ui, |ui| {
            for i in 0..ROWS {
                self.rows += row(ui, i, self.frames);
            }
        });
        self.frames += 1;
        if self.frames < FRAMES || forever {
            ui.ctx().request_repaint();
        }
        if self.frames == FRAMES {
            web_sys::console::log_1(
                &format!("egui-rows: {} frames, {} rows", self.frames, self.rows).into(),
            );
            if !forever {
                // Done: a wasmprof host ends the run when this frame's
                // callback returns (an ordinary build compiles it to
                // nothing, and the page stays as it is).
                wasmprof::exit(0);
            }
        }
    }
}

/// One row: a label and a progress bar.
#[wasmprof::instrument]
fn row(ui: &mut egui::Ui, i: u32, frame: u32) -> u64 {
    ui.horizontal(|ui| {
        ui.label(format!("row {i}"));
        ui.add(egui::ProgressBar::new(((i + frame) % ROWS) as f32 / ROWS as f32));
    });
    1
}
