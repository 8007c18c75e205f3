// A half-written body still expands: the syntax error is the only error,
// and the function still exists for its callers.
#[wasmprof::instrument]
fn half(x: u32) -> u32 {
    let y = x +;
    y
}

fn main() {
    half(1);
}
