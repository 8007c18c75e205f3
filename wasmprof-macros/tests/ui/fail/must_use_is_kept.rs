// Attributes after `#[wasmprof::instrument]` are kept: `#[must_use]` still
// warns (denied here) at the call.
#![deny(unused_must_use)]

#[wasmprof::instrument]
#[must_use]
fn important() -> u32 {
    1
}

fn main() {
    important();
}
