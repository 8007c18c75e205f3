//! Excluded as a whole by `exclude = ["engine::cache", ...]`.

pub fn lookup(n: u32) -> u64 {
    let hit = n as u64;
    hit * 2
}
