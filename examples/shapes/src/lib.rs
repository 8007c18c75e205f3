//! Dynamic dispatch and closures, in a module without wasm-bindgen.
//!
//! `cargo wasmprof run -p shapes --invoke run` calls [`run`]. Each shape's
//! `area` is reached through a `Box<dyn Shape>`; the report names them as
//! rustc does, `<shapes::Circle as shapes::Shape>::area` and so on, with
//! exact counts per caller. Closures
//! count as part of the function that contains them.

/// Anything with an area.
pub trait Shape {
    fn area(&self) -> f64;

    /// A default method. (Not instrumented: the site of a default method is
    /// shared by every implementing type, so its name could only be the
    /// first one's.)
    fn describe(&self) -> u32 {
        (self.area() * 10.0) as u32
    }
}

pub struct Circle {
    pub radius: f64,
}

pub struct Square {
    pub side: f64,
}

impl Shape for Circle {
    #[wasmprof::instrument]
    fn area(&self) -> f64 {
        std::f64::consts::PI * self.radius * self.radius
    }
}

impl Shape for Square {
    #[wasmprof::instrument]
    fn area(&self) -> f64 {
        self.side * self.side
    }
}

impl Circle {
    #[wasmprof::instrument]
    pub fn new(radius: f64) -> Self {
        Circle { radius }
    }
}

/// Builds `n` shapes, alternating circles and squares.
#[wasmprof::instrument]
pub fn make_shapes(n: u32) -> Vec<Box<dyn Shape>> {
    (0..n)
        .map(|i| -> Box<dyn Shape> {
            if i % 2 == 0 {
                Box::new(Circle::new(i as f64))
            } else {
                Box::new(Square { side: i as f64 })
            }
        })
        .collect()
}

/// Sums the areas through a closure that calls through the trait object.
#[wasmprof::instrument]
pub fn total_area(shapes: &[Box<dyn Shape>]) -> f64 {
    let area_of = |shape: &Box<dyn Shape>| shape.area();
    shapes.iter().map(area_of).sum()
}

/// A generic in-place quicksort (Lomuto partition).
#[wasmprof::instrument]
pub fn quicksort<T: PartialOrd + Copy>(items: &mut [T]) {
    if items.len() <= 1 {
        return;
    }
    let pivot = partition(items);
    let (left, right) = items.split_at_mut(pivot);
    quicksort(left);
    quicksort(&mut right[1..]);
}

#[wasmprof::instrument]
fn partition<T: PartialOrd + Copy>(items: &mut [T]) -> usize {
    let last = items.len() - 1;
    let pivot = items[last];
    let mut store = 0;
    for i in 0..last {
        if items[i] < pivot {
            items.swap(i, store);
            store += 1;
        }
    }
    items.swap(store, last);
    store
}

/// A deterministic pseudo-random sequence (xorshift), so runs are alike.
fn numbers(n: u32, mut seed: u32) -> Vec<u32> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        })
        .collect()
}

/// The example's workload: 100 shapes, their areas summed, 10 descriptions.
#[no_mangle]
pub extern "C" fn run() -> f64 {
    let shapes = make_shapes(100);
    let described: u32 = shapes.iter().take(10).map(|s| s.describe()).sum();
    total_area(&shapes) + described as f64
}

/// Sorts `n` pseudo-random numbers; returns 1 if the result is sorted.
#[no_mangle]
pub extern "C" fn sort(n: u32) -> u32 {
    let mut items = numbers(n, 2463534242);
    quicksort(&mut items);
    items.windows(2).all(|w| w[0] <= w[1]) as u32
}
