//! `wordcount [FILE]`: counts the lines and words of FILE, or of standard
//! input without one (or with `-`). Words shorter than `$WORDCOUNT_MIN_LEN`
//! (default 1) are left out; with `$WORDCOUNT_STRICT` set, a blank line
//! ends it with status 3. A WASI program that touches files, so it needs
//! its host to preopen them:
//!
//! ```sh
//! cargo wasmprof run -p wordcount -- wordcount/poem.txt      # the current directory is preopened
//! cargo wasmprof run -p wordcount --env WORDCOUNT_MIN_LEN=4 -- wordcount/poem.txt
//! cat wordcount/poem.txt | cargo wasmprof run -p wordcount
//! cargo wasmprof test -p wordcount                           # its tests, one profile
//! ```

use std::process::ExitCode;

use wordcount::{count, min_len_from_env, read_input};

#[wasmprof::instrument]
fn main() -> ExitCode {
    let path = std::env::args().nth(1);
    let min_len = min_len_from_env();
    let strict = std::env::var_os("WORDCOUNT_STRICT").is_some();
    match read_input(path.as_deref()) {
        Ok(text) => {
            let (lines, words) = count(&text, min_len, strict);
            println!("wordcount: {lines} lines, {words} words of at least {min_len} letters");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("wordcount: {message}");
            ExitCode::from(2)
        }
    }
}
