//! Parses generated Rust source with `syn` `ROUNDS` times and prints what
//! it found. No wasmprof annotation anywhere: the point is `cargo wasmprof
//! bench --instrument-all --instrument-crate syn`, a large registry crate
//! instrumented crate-wide, whose output must be the plain build's.
//!
//! A parser is the call-heavy shape: many small functions (the token
//! cursor, `peek`, one `parse` per syntax node) called millions of times.

use syn::visit::{self, Visit};

/// How many times the source is parsed, unless the first argument says
/// otherwise (the benchmarks run it longer).
const ROUNDS: usize = 2;

/// Modules in the generated source.
const MODULES: usize = 40;

/// Deterministic Rust source: per module a struct, an enum, a trait, an
/// impl with methods whose bodies hold loops, matches, closures and
/// arithmetic.
fn source(modules: usize) -> String {
    let mut text = String::new();
    for m in 0..modules {
        text.push_str(&format!(
            "pub mod m{m} {{
    use std::collections::HashMap;

    #[derive(Debug, Clone, PartialEq)]
    pub struct Point{m}<T: Copy + Into<f64>> {{
        pub x: T,
        pub y: T,
        tags: Vec<&'static str>,
    }}

    pub enum Shape{m} {{
        Circle {{ r: f64 }},
        Rect(f64, f64),
        Empty,
    }}

    pub trait Area{m} {{
        fn area(&self) -> f64;
        fn scaled(&self, k: f64) -> f64 {{ self.area() * k * {m}.0 }}
    }}

    impl Area{m} for Shape{m} {{
        fn area(&self) -> f64 {{
            match self {{
                Shape{m}::Circle {{ r }} => 3.14159 * r * r,
                Shape{m}::Rect(w, h) if *w > 0.0 => w * h,
                Shape{m}::Rect(..) | Shape{m}::Empty => 0.0,
            }}
        }}
    }}

    impl<T: Copy + Into<f64>> Point{m}<T> {{
        pub fn norm(&self) -> f64 {{
            let (x, y): (f64, f64) = (self.x.into(), self.y.into());
            (x * x + y * y).sqrt()
        }}

        pub fn histogram(&self, words: &[&str]) -> HashMap<usize, u32> {{
            let mut counts = HashMap::new();
            for (i, word) in words.iter().enumerate().filter(|(i, _)| i % {k} != 0) {{
                *counts.entry(word.len() + i).or_insert(0) += 1;
            }}
            let mut n = 0u32;
            while n < {m} {{
                n += if n % 2 == 0 {{ 1 }} else {{ 2 }};
            }}
            counts
        }}
    }}
}}

",
            k = m % 3 + 2
        ));
    }
    text
}

/// What the walk counts.
#[derive(Default)]
struct Counts {
    items: usize,
    functions: usize,
    expressions: usize,
    patterns: usize,
}

impl<'ast> Visit<'ast> for Counts {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        self.items += 1;
        visit::visit_item(self, item);
    }

    fn visit_signature(&mut self, signature: &'ast syn::Signature) {
        self.functions += 1;
        visit::visit_signature(self, signature);
    }

    fn visit_expr(&mut self, expr: &'ast syn::Expr) {
        self.expressions += 1;
        visit::visit_expr(self, expr);
    }

    fn visit_pat(&mut self, pat: &'ast syn::Pat) {
        self.patterns += 1;
        visit::visit_pat(self, pat);
    }
}

fn main() {
    let rounds = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(ROUNDS);
    let text = source(MODULES);
    let mut counts = Counts::default();
    for _ in 0..rounds {
        let file = syn::parse_file(&text).expect("the generated source parses");
        counts.visit_file(&file);
    }
    println!(
        "syn-parse: {rounds} rounds of {} bytes: {} items, {} functions, {} expressions, {} patterns",
        text.len(),
        counts.items,
        counts.functions,
        counts.expressions,
        counts.patterns
    );
}
