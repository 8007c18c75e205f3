// The body keeps its spans: a type error points into the user's code, not
// at the attribute.
#[wasmprof::instrument]
fn wrong_type() -> u32 {
    "text"
}

#[wasmprof::instrument]
fn unknown_name(x: u32) -> u32 {
    x + y
}

fn main() {
    wrong_type();
    unknown_name(1);
}
