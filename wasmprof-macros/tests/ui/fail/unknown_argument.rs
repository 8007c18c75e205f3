#[wasmprof::instrument(level = "debug")]
fn first() {}

#[wasmprof::instrument(name = "second", skip(x))]
fn second(x: u32) -> u32 {
    x
}

fn main() {
    first();
    second(1);
}
