//! Counting lines and words: the library behind the `wordcount` binary,
//! with the tests `cargo wasmprof test -p wordcount` runs.

use std::io::Read;

/// Words with fewer letters than this are not counted.
pub fn min_len_from_env() -> usize {
    std::env::var("WORDCOUNT_MIN_LEN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

#[wasmprof::instrument]
pub fn count_line(line: &str, min_len: usize) -> usize {
    line.split_whitespace()
        .filter(|word| is_word(word, min_len))
        .count()
}

#[wasmprof::instrument]
#[inline(never)]
pub fn is_word(word: &str, min_len: usize) -> bool {
    word.chars().filter(|c| c.is_alphanumeric()).count() >= min_len
}

/// Lines and words of `text`. With `strict`, a blank line ends the program
/// at once with status 3, from deep in the counting.
#[wasmprof::instrument]
pub fn count(text: &str, min_len: usize, strict: bool) -> (usize, usize) {
    let mut lines = 0;
    let mut words = 0;
    for line in text.lines() {
        lines += 1;
        if strict {
            reject_blank(line, lines);
        }
        words += count_line(line, min_len);
    }
    (lines, words)
}

#[wasmprof::instrument]
fn reject_blank(line: &str, number: usize) {
    if line.trim().is_empty() {
        eprintln!("wordcount: line {number} is blank (WORDCOUNT_STRICT)");
        std::process::exit(3);
    }
}

/// The text of `path`, or of standard input for `None` or `-`.
#[wasmprof::instrument]
pub fn read_input(path: Option<&str>) -> Result<String, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_words_and_lines() {
        assert_eq!(count("one two\nthree\n", 1, false), (2, 3));
    }

    #[test]
    fn short_words_are_left_out() {
        assert_eq!(count("a bb ccc dddd", 3, false), (1, 2));
    }

    #[test]
    fn punctuation_is_not_a_letter() {
        assert!(!is_word("--", 1));
        assert!(is_word("it's", 3));
    }

    #[test]
    fn counts_a_long_text() {
        let text = "the quick brown fox jumps over the lazy dog\n".repeat(2_000);
        assert_eq!(count(&text, 1, false), (2_000, 18_000));
    }

    #[test]
    fn reads_a_file_of_the_package() {
        // `cargo test` runs tests in the package's directory.
        let text = read_input(Some("poem.txt")).unwrap();
        assert_eq!(count(&text, 1, false), (4, 28));
    }

    #[test]
    #[ignore = "fails on purpose: `cargo wasmprof test -p wordcount -- --ignored fails` shows a failure"]
    fn fails_on_purpose() {
        assert_eq!(count("one two", 1, false), (1, 3), "two words, not three");
    }

    #[test]
    #[ignore = "never ends: `cargo wasmprof test -p wordcount --timeout 2s -- --ignored hangs`"]
    fn hangs_on_purpose() {
        let mut words = 0;
        loop {
            words += count_line(std::hint::black_box("still counting"), 1);
            if words == usize::MAX {
                break;
            }
        }
    }
}
