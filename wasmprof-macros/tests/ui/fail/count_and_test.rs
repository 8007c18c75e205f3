#[wasmprof::instrument(test, count)]
fn a_test() {}

#[wasmprof::instrument(count, count)]
fn twice() {}

fn main() {
    a_test();
    twice();
}
