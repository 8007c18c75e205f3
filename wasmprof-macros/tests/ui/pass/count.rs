//! `count`: the count-only tier, on a function, an impl block, and a method
//! of a fully instrumented impl block (as crate-wide instrumentation writes
//! it), whose name still carries its type.
#![deny(warnings)]

#[wasmprof::instrument(count)]
fn tiny(x: u32) -> u32 {
    x + 1
}

pub struct Meter(u32);

#[wasmprof::instrument]
impl Meter {
    fn read(&self) -> u32 {
        let mut total = 0;
        for _ in 0..3 {
            total += self.value();
        }
        total
    }

    #[wasmprof::instrument(count)]
    fn value(&self) -> u32 {
        self.0
    }

    #[wasmprof::instrument(count, name = "make")]
    fn new(n: u32) -> Meter {
        Meter(n)
    }
}

#[wasmprof::instrument(count)]
impl Default for Meter {
    fn default() -> Meter {
        Meter(1)
    }
}

pub fn main() {
    let meter = Meter::new(tiny(1));
    assert_eq!(meter.read(), 6);
    assert_eq!(Meter::default().0, 1);
    assert_eq!(tiny(tiny(0)), 2);
}
