struct S;

#[wasmprof::instrument]
impl S {
    #[wasmprof::skip(all)]
    fn f(&self) {}
}

fn main() {
    S.f();
}
