//! The whole pipeline on a real canvas: needs a page, so it runs in the
//! browser (`cargo wasmprof test -p image-kernels --test web`).

use image_kernels::{draw_scene, grayscale, threshold, HEIGHT, WIDTH};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

wasm_bindgen_test_configure!(run_in_browser);

fn canvas_context() -> CanvasRenderingContext2d {
    let document = web_sys::window().unwrap().document().unwrap();
    let canvas: HtmlCanvasElement = document
        .create_element("canvas")
        .unwrap()
        .dyn_into()
        .unwrap();
    canvas.set_width(WIDTH);
    canvas.set_height(HEIGHT);
    canvas
        .get_context("2d")
        .unwrap()
        .unwrap()
        .dyn_into()
        .unwrap()
}

#[wasm_bindgen_test]
fn the_scene_has_bright_and_dark_parts() {
    let context = canvas_context();
    draw_scene(&context);
    let data = context
        .get_image_data(0.0, 0.0, f64::from(WIDTH), f64::from(HEIGHT))
        .unwrap()
        .data();
    let gray = grayscale(&data, WIDTH as usize, HEIGHT as usize);
    let (_, bright) = threshold(&gray, 128);
    let pixels = (WIDTH * HEIGHT) as usize;
    assert!(bright > pixels / 20 && bright < pixels, "{bright} bright pixels");
}

#[wasm_bindgen_test]
fn a_blank_canvas_is_dark() {
    let context = canvas_context();
    let data = context
        .get_image_data(0.0, 0.0, 4.0, 4.0)
        .unwrap()
        .data();
    let (_, bright) = threshold(&grayscale(&data, 4, 4), 1);
    assert_eq!(bright, 0);
}
