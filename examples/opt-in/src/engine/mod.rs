//! Included by `include = ["engine", ...]`.

mod cache;

pub fn run(n: u32) -> u64 {
    let mut total = 0;
    for i in 0..n {
        total += step(i);
        trace(i);
    }
    total + cache::lookup(n) + quiet()
}

fn step(i: u32) -> u64 {
    let x = i as u64;
    x * 3
}

/// Excluded by `*::trace`.
fn trace(i: u32) {
    let _ = i;
}

/// Left out by its own attribute.
#[wasmprof::skip]
fn quiet() -> u64 {
    let q = 7;
    q
}

#[derive(Default)]
pub struct Engine {
    power: u64,
}

impl Engine {
    pub fn fire(&self) -> u64 {
        let p = self.power;
        p + 1
    }

    #[wasmprof::skip]
    pub fn idle(&self) -> u64 {
        let p = self.power;
        p
    }
}
