//! A web app, the kind wasmprof's browser host exists for: it draws a scene
//! on a canvas, reads the pixels back with `getImageData`, runs the
//! thesis's image kernels on them (grayscale, a 3×3 box blur, Sobel edges,
//! a threshold) and puts the result on a second canvas. It needs `document`
//! and a canvas, so it cannot run in Node.
//!
//! ```sh
//! cargo wasmprof run -p image-kernels --release --host browser
//! cargo wasmprof run -p image-kernels --release --page image-kernels/www   # its own page
//! cargo wasmprof run -p image-kernels --release --serve                    # in your browser
//! ```
//!
//! The counts are exact and known: for a `WIDTH`×`HEIGHT` image,
//! `luminance` runs once per pixel, `convolve_at` three times per interior
//! pixel (blur, Sobel x, Sobel y) and `threshold` once.

use wasm_bindgen::prelude::*;
use wasm_bindgen::Clamped;
use web_sys::{CanvasRenderingContext2d, Document, HtmlCanvasElement};

pub const WIDTH: u32 = 320;
pub const HEIGHT: u32 = 200;

/// A grayscale image, one byte a pixel.
pub struct Gray {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
}

/// A 3×3 convolution kernel and the divisor its sum is scaled by.
pub struct Kernel {
    weights: [i32; 9],
    divisor: i32,
}

pub const BOX_BLUR: Kernel = Kernel {
    weights: [1, 1, 1, 1, 1, 1, 1, 1, 1],
    divisor: 9,
};
pub const SOBEL_X: Kernel = Kernel {
    weights: [-1, 0, 1, -2, 0, 2, -1, 0, 1],
    divisor: 1,
};
pub const SOBEL_Y: Kernel = Kernel {
    weights: [-1, -2, -1, 0, 0, 0, 1, 2, 1],
    divisor: 1,
};

#[wasm_bindgen(start)]
pub fn start() -> Result<(), JsValue> {
    install_panic_hook();
    let document = document()?;
    let source = canvas(&document, "source")?;
    let context = context_2d(&source)?;
    draw_scene(&context);
    let rgba = context
        .get_image_data(0.0, 0.0, f64::from(WIDTH), f64::from(HEIGHT))?
        .data()
        .0;
    let gray = grayscale(&rgba, WIDTH as usize, HEIGHT as usize);
    let blurred = convolve(&gray, &BOX_BLUR);
    let edges = sobel(&blurred);
    let (mask, edge_pixels) = threshold(&edges, 96);
    let shown = canvas(&document, "edges")?;
    put_gray(&context_2d(&shown)?, &mask)?;
    web_sys::console::log_1(
        &format!(
            "image-kernels: {} pixels, {edge_pixels} on an edge",
            WIDTH * HEIGHT
        )
        .into(),
    );
    Ok(())
}

/// Concentric rings and bars: edges in every direction.
#[wasmprof::instrument]
pub fn draw_scene(context: &CanvasRenderingContext2d) {
    context.set_fill_style_str("#203040");
    context.fill_rect(0.0, 0.0, f64::from(WIDTH), f64::from(HEIGHT));
    for ring in 0..8 {
        let shade = 40 + ring * 25;
        context.set_fill_style_str(&format!("rgb({shade}, {}, 200)", 255 - shade));
        context.begin_path();
        let _ = context.arc(
            160.0,
            100.0,
            90.0 - f64::from(ring) * 11.0,
            0.0,
            std::f64::consts::TAU,
        );
        context.fill();
    }
    for bar in 0..6 {
        context.set_fill_style_str(if bar % 2 == 0 { "#f0e0a0" } else { "#102010" });
        context.fill_rect(10.0 + f64::from(bar) * 12.0, 20.0, 8.0, 160.0);
    }
}

/// RGBA to one byte of luminance a pixel.
#[wasmprof::instrument]
pub fn grayscale(rgba: &[u8], width: usize, height: usize) -> Gray {
    let pixels = rgba
        .chunks_exact(4)
        .map(|p| luminance(p[0], p[1], p[2]))
        .collect();
    Gray {
        width,
        height,
        pixels,
    }
}

/// ITU-R BT.601 luma, in integers.
#[wasmprof::instrument]
#[inline(never)]
pub fn luminance(r: u8, g: u8, b: u8) -> u8 {
    ((299 * u32::from(r) + 587 * u32::from(g) + 114 * u32::from(b)) / 1000) as u8
}

/// The kernel applied to every interior pixel; the border stays black.
#[wasmprof::instrument]
pub fn convolve(image: &Gray, kernel: &Kernel) -> Gray {
    let mut out = vec![0u8; image.pixels.len()];
    for y in 1..image.height - 1 {
        for x in 1..image.width - 1 {
            let value = convolve_at(image, kernel, x, y) / kernel.divisor;
            out[y * image.width + x] = value.clamp(0, 255) as u8;
        }
    }
    Gray {
        width: image.width,
        height: image.height,
        pixels: out,
    }
}

/// One output pixel: the weighted sum of the 3×3 neighbourhood.
#[wasmprof::instrument]
#[inline(never)]
pub fn convolve_at(image: &Gray, kernel: &Kernel, x: usize, y: usize) -> i32 {
    let mut sum = 0;
    for dy in 0..3 {
        for dx in 0..3 {
            let pixel = image.pixels[(y + dy - 1) * image.width + (x + dx - 1)];
            sum += kernel.weights[dy * 3 + dx] * i32::from(pixel);
        }
    }
    sum
}

/// Gradient magnitude from the two Sobel kernels (|gx| + |gy|, halved).
#[wasmprof::instrument]
pub fn sobel(image: &Gray) -> Gray {
    let mut out = vec![0u8; image.pixels.len()];
    for y in 1..image.height - 1 {
        for x in 1..image.width - 1 {
            let gx = convolve_at(image, &SOBEL_X, x, y);
            let gy = convolve_at(image, &SOBEL_Y, x, y);
            out[y * image.width + x] = ((gx.abs() + gy.abs()) / 2).min(255) as u8;
        }
    }
    Gray {
        width: image.width,
        height: image.height,
        pixels: out,
    }
}

/// White where the image is at least `level`; and how many such pixels.
#[wasmprof::instrument]
pub fn threshold(image: &Gray, level: u8) -> (Gray, usize) {
    let pixels: Vec<u8> = image
        .pixels
        .iter()
        .map(|&p| if p >= level { 255 } else { 0 })
        .collect();
    let count = pixels.iter().filter(|&&p| p == 255).count();
    (
        Gray {
            width: image.width,
            height: image.height,
            pixels,
        },
        count,
    )
}

/// Shows a grayscale image on a canvas.
fn put_gray(context: &CanvasRenderingContext2d, image: &Gray) -> Result<(), JsValue> {
    let rgba: Vec<u8> = image
        .pixels
        .iter()
        .flat_map(|&p| [p, p, p, 255])
        .collect();
    let data = web_sys::ImageData::new_with_u8_clamped_array_and_sh(
        Clamped(&rgba),
        image.width as u32,
        image.height as u32,
    )?;
    context.put_image_data(&data, 0.0, 0.0)
}

fn document() -> Result<Document, JsValue> {
    web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| JsValue::from_str("image-kernels needs a browser: there is no `document`"))
}

/// The page's canvas of this id, made if the page has none.
fn canvas(document: &Document, id: &str) -> Result<HtmlCanvasElement, JsValue> {
    let element = match document.get_element_by_id(id) {
        Some(element) => element,
        None => {
            let element = document.create_element("canvas")?;
            element.set_id(id);
            document
                .body()
                .ok_or_else(|| JsValue::from_str("the page has no body"))?
                .append_child(&element)?;
            element
        }
    };
    let canvas: HtmlCanvasElement = element.dyn_into().map_err(JsValue::from)?;
    canvas.set_width(WIDTH);
    canvas.set_height(HEIGHT);
    Ok(canvas)
}

fn context_2d(canvas: &HtmlCanvasElement) -> Result<CanvasRenderingContext2d, JsValue> {
    canvas
        .get_context("2d")?
        .ok_or_else(|| JsValue::from_str("no 2d context"))?
        .dyn_into()
        .map_err(JsValue::from)
}

/// Panics reach the console with their message and location.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&format!("panicked: {info}").into());
    }));
}

// ---- Entry points for the browser host's tests ------------------------------

/// Writes one line at each console level, in order; returns how many.
#[wasm_bindgen]
pub fn chatter() -> u32 {
    web_sys::console::log_1(&"chatter 1 log".into());
    web_sys::console::info_1(&"chatter 2 info".into());
    web_sys::console::warn_1(&"chatter 3 warn".into());
    web_sys::console::error_1(&"chatter 4 error".into());
    web_sys::console::debug_1(&"chatter 5 debug".into());
    5
}

/// Panics after `steps` calls of an instrumented function.
#[wasm_bindgen]
pub fn boom(steps: u32) -> u32 {
    install_panic_hook();
    let mut total = 0;
    for i in 0..=steps {
        total += checked_step(i, steps);
    }
    total
}

#[wasmprof::instrument]
#[inline(never)]
fn checked_step(i: u32, limit: u32) -> u32 {
    if i == limit {
        panic!("step {i} of {limit} failed on purpose");
    }
    i
}

/// Draws `frames` animation frames, one per `requestAnimationFrame`, then
/// calls `wasmprof::exit(code)`: a program that goes on after its entry
/// point returns, for `--until-exit`.
#[wasm_bindgen]
pub fn animate(frames: u32, code: i32) {
    use std::cell::RefCell;
    use std::rc::Rc;
    /// The frame callback, which schedules itself again.
    type FrameCallback = Rc<RefCell<Option<Closure<dyn FnMut()>>>>;
    let window = web_sys::window().expect("a browser window");
    let callback: FrameCallback = Rc::default();
    let again = Rc::clone(&callback);
    let mut drawn = 0;
    *callback.borrow_mut() = Some(Closure::new(move || {
        draw_frame(drawn);
        drawn += 1;
        if drawn == frames {
            wasmprof::exit(code);
            return;
        }
        let window = web_sys::window().expect("a browser window");
        let next = again.borrow();
        let _ = window.request_animation_frame(next.as_ref().unwrap().as_ref().unchecked_ref());
    }));
    let first = callback.borrow();
    let _ = window.request_animation_frame(first.as_ref().unwrap().as_ref().unchecked_ref());
    // The closure lives as long as the page.
    std::mem::forget(Rc::clone(&callback));
}

#[wasmprof::instrument]
#[inline(never)]
fn draw_frame(n: u32) -> u32 {
    std::hint::black_box(n.wrapping_mul(2654435761))
}

#[wasm_bindgen(inline_js = "export function reject_soon(message) { \
    setTimeout(() => { Promise.reject(new Error(message)); }, 0); } \
    export function nothing_for(ms) { setTimeout(() => {}, ms); }")]
extern "C" {
    fn reject_soon(message: &str);
    fn nothing_for(ms: u32);
}

/// Leaves a timer of `seconds` scheduled and returns: a page that is
/// quiet with work still pending, which the grace period ends.
#[wasm_bindgen]
pub fn idle_with_timer(seconds: u32) -> u32 {
    nothing_for(seconds * 1000);
    checked_step(1, 0)
}

/// Leaves a promise rejected with nobody to handle it: the run ends as an
/// uncaught error, with the rejection on standard error.
#[wasm_bindgen]
pub fn reject_later() -> u32 {
    reject_soon("rejected on purpose");
    checked_step(1, 0)
}

/// `cargo wasmprof test -p image-kernels`: these run in Node (nothing here
/// needs a page); `tests/web.rs` runs in the browser.
#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn flat(width: usize, height: usize, value: u8) -> Gray {
        Gray {
            width,
            height,
            pixels: vec![value; width * height],
        }
    }

    #[wasm_bindgen_test]
    fn luminance_weighs_green_most() {
        // Shown with `-- --nocapture`, else only if the test fails.
        web_sys::console::log_1(&"luminance of pure red, green and blue".into());
        assert_eq!(luminance(255, 0, 0), 76);
        assert_eq!(luminance(0, 255, 0), 149);
        assert_eq!(luminance(0, 0, 255), 29);
    }

    #[wasm_bindgen_test]
    fn a_box_blur_keeps_a_flat_image_flat() {
        let blurred = convolve(&flat(8, 8, 90), &BOX_BLUR);
        // The 6×6 interior is blurred; the border stays black.
        assert_eq!(blurred.pixels.iter().filter(|&&p| p == 90).count(), 36);
    }

    /// An async test: the harness polls it; wasmprof records it as a test
    /// (at the root) and as an async function (its futures' figures).
    #[wasm_bindgen_test]
    async fn a_blur_after_an_await_keeps_a_flat_image_flat() {
        let settled = js_sys::Promise::resolve(&wasm_bindgen::JsValue::from(90));
        let value = wasm_bindgen_futures::JsFuture::from(settled).await.unwrap();
        let level = value.as_f64().unwrap() as u8;
        let blurred = convolve(&flat(8, 8, level), &BOX_BLUR);
        assert_eq!(blurred.pixels.iter().filter(|&&p| p == level).count(), 36);
    }

    #[wasm_bindgen_test]
    fn sobel_finds_no_edge_in_a_flat_image() {
        let edges = sobel(&flat(16, 16, 200));
        assert!(edges.pixels.iter().all(|&p| p == 0));
    }

    #[wasm_bindgen_test]
    fn threshold_counts_the_bright_pixels() {
        let rgba: Vec<u8> = (0..64u8).flat_map(|i| [i * 4, i * 4, i * 4, 255]).collect();
        let (_, bright) = threshold(&grayscale(&rgba, 8, 8), 128);
        assert_eq!(bright, 32);
    }

    /// Tests written by a `macro_rules!` macro, as registry crates often
    /// write them: the crate-wide rewrite never sees inside a macro, so
    /// they are tests in the profile only as the harness names them.
    macro_rules! grays_of_flat_colours {
        ($($name:ident: $rgb:expr => $gray:expr;)*) => {$(
            #[wasm_bindgen_test]
            fn $name() {
                let (r, g, b) = $rgb;
                let rgba: Vec<u8> = (0..16).flat_map(|_| [r, g, b, 255]).collect();
                let gray = grayscale(&rgba, 4, 4);
                assert!(gray.pixels.iter().all(|&p| p == $gray));
            }
        )*};
    }

    grays_of_flat_colours! {
        white_stays_white: (255u8, 255u8, 255u8) => 255;
        pure_green_is_a_middle_gray: (0u8, 255u8, 0u8) => 149;
    }

    #[wasm_bindgen_test]
    #[ignore = "never ends: `cargo wasmprof test -p image-kernels --timeout 2s -- --ignored hangs`"]
    fn hangs_on_purpose() {
        let image = flat(8, 8, 1);
        let mut bright = 0;
        while bright != usize::MAX {
            bright += threshold(std::hint::black_box(&image), 1).1;
        }
    }

    #[wasm_bindgen_test]
    #[ignore = "fails on purpose: `cargo wasmprof test -p image-kernels -- --ignored fails` shows a failure"]
    fn fails_on_purpose() {
        let (_, bright) = threshold(&flat(4, 4, 10), 5);
        assert_eq!(bright, 0, "every pixel is above 5");
    }
}
