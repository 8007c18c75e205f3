//! A directory module (`text/mod.rs`) with a child (`text/words.rs`).

mod words;

pub fn count_words(sentence: &str) -> usize {
    // A function inside a function is part of it, not instrumented.
    fn is_separator(c: char) -> bool {
        c == ' '
    }
    let mut count = 0;
    for word in words::split(sentence, is_separator) {
        if words::is_word(word) {
            count += 1;
        }
    }
    count
}
