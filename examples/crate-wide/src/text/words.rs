pub fn split(text: &str, separator: fn(char) -> bool) -> Vec<&str> {
    let parts: Vec<&str> = text.split(separator).collect();
    parts
}

pub fn is_word(word: &str) -> bool {
    let empty = word.is_empty();
    !empty
}
