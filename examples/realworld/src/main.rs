//! Renders a generated Markdown document to HTML with `pulldown-cmark`,
//! compresses the HTML with `miniz_oxide` and inflates it again, `ROUNDS`
//! times, and prints what it made. No wasmprof annotation anywhere: the
//! point is `cargo wasmprof run --instrument-all --instrument-crate
//! pulldown-cmark --instrument-crate miniz_oxide`, whose output must be
//! byte-identical to the plain build's.
//!
//! Each round calls `pulldown_cmark::html::push_html`,
//! `miniz_oxide::deflate::compress_to_vec` and
//! `miniz_oxide::inflate::decompress_to_vec` exactly once.

use pulldown_cmark::{html, Options, Parser};

/// How many times the whole pipeline runs, unless the first argument says
/// otherwise (the overhead benchmark runs it longer).
pub const ROUNDS: usize = 12;

/// A deterministic document with headings, lists, emphasis, links, code and tables.
fn document(sections: usize) -> String {
    let mut text = String::new();
    for s in 0..sections {
        text.push_str(&format!("## Section {s}\n\nSome *emphasis*, some **strong** text and a [link](https://example.com/{s}).\n\n"));
        for i in 0..5 {
            text.push_str(&format!("- item {i} of section {s} with `code {i}`\n"));
        }
        text.push_str("\n```rust\nfn main() { println!(\"hello\"); }\n```\n\n");
        text.push_str("| a | b |\n|---|---|\n| 1 | 2 |\n\n> a quote, with _more_ emphasis\n\n");
    }
    text
}

fn render(markdown: &str) -> String {
    let parser = Parser::new_ext(markdown, Options::ENABLE_TABLES);
    let mut out = String::with_capacity(markdown.len() * 2);
    html::push_html(&mut out, parser);
    out
}

/// FNV-1a, to print a fingerprint of the bytes instead of the bytes.
fn fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

fn main() {
    let rounds = match std::env::args().nth(1) {
        Some(text) => text.parse().expect("the argument is a number of rounds"),
        None => ROUNDS,
    };
    let markdown = document(150);
    let mut total = 0usize;
    for round in 0..rounds {
        let html = render(&markdown);
        let compressed = miniz_oxide::deflate::compress_to_vec(html.as_bytes(), 6);
        let inflated = miniz_oxide::inflate::decompress_to_vec(&compressed).expect("inflate");
        assert_eq!(inflated, html.as_bytes(), "round {round} round-trips");
        total += compressed.len();
        if round == 0 {
            println!(
                "markdown {} bytes -> html {} bytes (fingerprint {:016x}) -> deflate {} bytes",
                markdown.len(),
                html.len(),
                fingerprint(html.as_bytes()),
                compressed.len()
            );
        }
    }
    println!("{rounds} rounds, {total} compressed bytes in all");
}
