//! `wordcount [FILE]`: counts the lines and words of FILE, or of standard
//! input without one (or with `-`). Words shorter than `$WORDCOUNT_MIN_LEN`
//! (default 1) are left out. A WASI program that touches files, so it needs
//! its host to preopen them:
//!
//! ```sh
//! cargo wasmprof run -p wordcount -- wordcount/poem.txt      # the current directory is preopened
//! cargo wasmprof run -p wordcount --env WORDCOUNT_MIN_LEN=4 -- wordcount/poem.txt
//! cat wordcount/poem.txt | cargo wasmprof run -p wordcount
//! ```

use std::io::Read;
use std::process::ExitCode;

#[wasmprof::instrument]
fn count_line(line: &str, min_len: usize) -> usize {
    line.split_whitespace()
        .filter(|word| is_word(word, min_len))
        .count()
}

#[wasmprof::instrument]
#[inline(never)]
fn is_word(word: &str, min_len: usize) -> bool {
    word.chars().filter(|c| c.is_alphanumeric()).count() >= min_len
}

#[wasmprof::instrument]
fn count(text: &str, min_len: usize) -> (usize, usize) {
    let mut lines = 0;
    let mut words = 0;
    for line in text.lines() {
        lines += 1;
        words += count_line(line, min_len);
    }
    (lines, words)
}

#[wasmprof::instrument]
fn read_input(path: Option<&str>) -> Result<String, String> {
    let mut text = String::new();
    match path {
        None | Some("-") => std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read standard input: {e}"))?,
        Some(path) => std::fs::File::open(path)
            .and_then(|mut file| file.read_to_string(&mut text))
            .map_err(|e| format!("cannot read {path}: {e}"))?,
    };
    Ok(text)
}

#[wasmprof::instrument]
fn main() -> ExitCode {
    let path = std::env::args().nth(1);
    let min_len = std::env::var("WORDCOUNT_MIN_LEN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    match read_input(path.as_deref()) {
        Ok(text) => {
            let (lines, words) = count(&text, min_len);
            println!("wordcount: {lines} lines, {words} words of at least {min_len} letters");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("wordcount: {message}");
            ExitCode::from(2)
        }
    }
}
