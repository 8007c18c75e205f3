#[wasmprof::instrument]
const fn zero() -> u32 {
    0
}

const ZERO: u32 = zero();

fn main() {
    assert_eq!(ZERO, zero());
}
