//! Evaluates a Rhai script (recursion, loops, strings, maps and closures)
//! with the `rhai` engine from crates.io, and prints what it computed. No
//! wasmprof annotation anywhere: the point is `cargo wasmprof run
//! --instrument-all --instrument-crate rhai`, whose output must be the
//! plain build's, with every function of rhai counted exactly.

use rhai::{Engine, INT};

/// The script: each part exercises another side of the engine.
const SCRIPT: &str = r#"
    // Recursion: every call of `fib` is a script function call.
    fn fib(n) { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }
    let total = fib(ROUNDS);

    // Loops and strings.
    let text = "";
    for i in 0..400 {
        text += `${i % 10}`;
        if text.len > 60 { text = text.sub_string(30); }
    }
    let words = [];
    for w in "the quick brown fox jumps over the lazy dog".split(' ') {
        words.push(w.to_upper());
    }

    // Maps.
    let counts = #{};
    for c in text.chars() {
        let key = `${c}`;
        counts[key] = (counts[key] ?? 0) + 1;
    }
    let keys = counts.keys();
    keys.sort();

    // Closures.
    let scale = 3;
    let times = |x| x * scale;
    let mapped = [1, 2, 3, 4, 5].map(times);
    let sum = mapped.reduce(|acc, x| acc + x, 0);

    `${total} ${words.len()} ${keys.len()} ${sum} ${text.len}`
"#;

/// The argument of the script's `fib` unless the first argument says otherwise.
const ROUNDS: INT = 20;

fn main() {
    let rounds = match std::env::args().nth(1) {
        Some(text) => text.parse().expect("the argument is a whole number"),
        None => ROUNDS,
    };
    // rhai hashes with ahash, whose keys are random: drawn at every run by
    // default (`ahash/runtime-rng`), else at every compilation
    // (`ahash/compile-time-rng`). Its string interner keeps a string
    // depending on those hashes, and so calls `ImmutableString::from` more
    // or less often: a fixed seed makes every run of every build do the
    // same work, which lets builds be compared call for call.
    rhai::config::hashing::set_hashing_seed(Some([1, 2, 3, 4])).expect("the seed is set once");
    let mut engine = Engine::new();
    // The same depth in debug and release builds (rhai allows less
    // recursion in a debug build unless told).
    engine.set_max_call_levels(64);
    let script = SCRIPT.replace("ROUNDS", &rounds.to_string());
    let result: String = engine.eval(&script).expect("the script runs");
    println!("rhai: {result}");
}
