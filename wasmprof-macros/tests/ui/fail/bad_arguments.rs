#[wasmprof::instrument(name = 42)]
fn number() {}

#[wasmprof::instrument(name = some_ident)]
fn ident() {}

#[wasmprof::instrument(name = "")]
fn empty() {}

#[wasmprof::instrument(name = "a", name = "b")]
fn twice() {}

#[wasmprof::instrument(name "a")]
fn no_equals() {}

#[wasmprof::instrument(name = "a" crate = ::wasmprof)]
fn no_comma() {}

#[wasmprof::instrument(crate = "wasmprof")]
fn string_path() {}

fn main() {
    number();
    ident();
    empty();
    twice();
    no_equals();
    no_comma();
    string_path();
}
