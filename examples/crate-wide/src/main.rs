//! A program without a single wasmprof annotation, and without wasmprof
//! among its dependencies. `cargo wasmprof run -p crate-wide
//! --instrument-all --min-size 0` instruments every function below anyway: free
//! functions, methods, trait default methods, generic and `impl Trait`
//! functions, in inline, file and `#[path]` modules.

mod geometry;
#[path = "support/numbers_impl.rs"]
mod numbers;
mod text;

use geometry::{Circle, Shape, Square};

/// Not instrumentable: evaluated at compile time.
const fn scale() -> f64 {
    2.0
}

extern "C" {
    /// Declared, never called: an extern block has no body to instrument.
    #[allow(dead_code)]
    fn host_only(x: i32) -> i32;
}

/// Functions written by a macro are left alone.
macro_rules! doubler {
    ($name:ident) => {
        fn $name(x: u32) -> u32 {
            x * 2
        }
    };
}
doubler!(double);

fn main() {
    let shapes: Vec<Box<dyn Shape>> = vec![
        Box::new(Circle::new(1.0)),
        Box::new(Square::new(2.0)),
        Box::new(Circle::new(3.0)),
    ];
    let area = total_area(&shapes) * scale();
    // The closure is part of `main`: `describe` is called from `main`.
    let described: Vec<String> = shapes.iter().map(|s| s.describe()).collect();
    let words = text::count_words("the quick brown fox jumps over the lazy dog");
    let fib = numbers::fib(10);
    let squares = sum_of(&[1u32, 2, 3, 4, 5], numbers::square);
    let evens: Vec<u32> = evens_below(10).collect();
    let mut small = 0;
    for i in 0..4 {
        small += tiny(i);
    }
    let newest = versions::newest(&["1.2.3", "1.10.0-beta.2", "0.9.9"]);
    println!(
        "crate-wide: area {area:.2}, {} described, {words} words, fib {fib}, squares {squares}, \
         evens {evens:?}, small {small}, double {}, {}, newest {newest}",
        described.len(),
        double(21),
        inline::banner(),
    );
}

fn total_area(shapes: &[Box<dyn Shape>]) -> f64 {
    let mut total = 0.0;
    for shape in shapes {
        total += shape.area();
    }
    total
}

/// Generic, with a closure: the calls the closure makes are this function's.
fn sum_of<T: Copy + Into<u64>>(values: &[T], f: fn(u64) -> u64) -> u64 {
    let total = values.iter().map(|&v| f(v.into())).sum();
    total
}

fn evens_below(n: u32) -> impl Iterator<Item = u32> {
    let limit = n;
    (0..limit).filter(|x| x % 2 == 0)
}

/// Small and without a loop: left out unless `--min-size 0`.
fn tiny(x: u32) -> u32 {
    x + 1
}

mod inline {
    pub fn banner() -> &'static str {
        let banner = "done";
        banner
    }
}

mod versions {
    /// Calls into the `semver` crate, instrumented with
    /// `--instrument-crate semver`.
    pub fn newest(texts: &[&str]) -> semver::Version {
        let mut versions: Vec<semver::Version> = texts
            .iter()
            .map(|text| semver::Version::parse(text).expect("a valid version"))
            .collect();
        versions.sort();
        versions.pop().expect("at least one version")
    }
}
