struct S;

#[wasmprof::instrument(name = "s")]
impl S {
    fn f(&self) {}
}

#[wasmprof::instrument(name = "m")]
mod m {
    pub fn g() {}
}

fn main() {
    S.f();
    m::g();
}
