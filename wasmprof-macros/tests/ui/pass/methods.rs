//! Methods of inherent and trait impls, with every kind of receiver.
#![deny(warnings)]

use std::rc::Rc;

#[derive(Clone, Debug, PartialEq)]
struct Counter {
    n: u32,
}

impl Counter {
    #[wasmprof::instrument]
    fn new() -> Self {
        Counter { n: 0 }
    }

    #[wasmprof::instrument]
    fn with(n: u32) -> Counter {
        Counter { n }
    }

    #[wasmprof::instrument]
    fn from_body(n: u32) -> Counter {
        Self { n }
    }

    #[wasmprof::instrument]
    fn get(&self) -> u32 {
        self.n
    }

    #[wasmprof::instrument]
    fn bump(&mut self) -> &mut Self {
        self.n += 1;
        self
    }

    #[wasmprof::instrument]
    fn into_inner(self) -> u32 {
        self.n
    }

    #[wasmprof::instrument]
    fn boxed(self: Box<Self>) -> u32 {
        self.n
    }

    #[wasmprof::instrument]
    fn counted(self: Rc<Self>) -> usize {
        Rc::strong_count(&self)
    }

    #[wasmprof::instrument]
    fn with_lifetime<'a>(&'a self, other: &'a Counter) -> &'a Counter {
        if self.n >= other.n {
            self
        } else {
            other
        }
    }
}

trait Shape {
    fn area(&self) -> f64;
    fn name(&self) -> String;

    #[wasmprof::instrument]
    fn describe(&self) -> String {
        format!("{} of area {}", self.name(), self.area())
    }
}

struct Square(f64);

impl Shape for Square {
    #[wasmprof::instrument]
    fn area(&self) -> f64 {
        self.0 * self.0
    }

    #[wasmprof::instrument]
    fn name(&self) -> String {
        "square".to_owned()
    }
}

impl Default for Counter {
    #[wasmprof::instrument]
    fn default() -> Self {
        Counter::with(7)
    }
}

struct Wrapper<T>(T);

impl<T: Clone + Default> Wrapper<T> {
    #[wasmprof::instrument]
    fn cloned(&self) -> T {
        self.0.clone()
    }

    #[wasmprof::instrument]
    fn reset(&mut self) -> T {
        std::mem::take(&mut self.0)
    }
}

struct Words<'a> {
    rest: &'a str,
}

impl<'a> Words<'a> {
    #[wasmprof::instrument]
    fn next_word(&mut self) -> Option<&'a str> {
        let text = self.rest.trim_start();
        if text.is_empty() {
            return None;
        }
        let end = text.find(' ').unwrap_or(text.len());
        self.rest = &text[end..];
        Some(&text[..end])
    }
}

impl dyn Shape {
    #[wasmprof::instrument]
    fn loud_name(&self) -> String {
        self.name().to_uppercase()
    }
}

/// Runs the checks; also called by tests/instrumented/app.rs with
/// instrumentation on.
pub fn main() {
    let mut c = Counter::new();
    c.bump().bump();
    assert_eq!(c.get(), 2);
    assert_eq!(Counter::with(3).into_inner(), 3);
    assert_eq!(Counter::from_body(4), Counter { n: 4 });
    assert_eq!(Box::new(c.clone()).boxed(), 2);
    assert_eq!(Rc::new(c.clone()).counted(), 1);
    assert_eq!(c.with_lifetime(&Counter::default()).n, 7);
    let s = Square(2.0);
    assert_eq!(s.describe(), "square of area 4");
    let mut words = Words { rest: "a bc" };
    assert_eq!(words.next_word(), Some("a"));
    assert_eq!(words.next_word(), Some("bc"));
    assert_eq!(words.next_word(), None);
    let shape: &dyn Shape = &s;
    assert_eq!(shape.loud_name(), "SQUARE");
    let mut w = Wrapper(vec![1, 2]);
    assert_eq!(w.cloned(), vec![1, 2]);
    assert_eq!(w.reset(), vec![1, 2]);
    assert!(w.0.is_empty());
}
