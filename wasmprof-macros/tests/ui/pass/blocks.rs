//! The attribute on an impl block, a trait and an inline module, with
//! `#[wasmprof::skip]` opting items out.
#![deny(warnings, missing_docs)]

use std::fmt::Display;

/// A stack.
pub struct Stack<T>(Vec<T>);

#[wasmprof::instrument]
impl<T: Clone> Stack<T> {
    #![allow(clippy::new_without_default)]

    /// Docs stay.
    pub fn new() -> Self {
        Stack(Vec::new())
    }

    /// Pushes.
    pub fn push(&mut self, x: T) {
        self.0.push(x);
    }

    /// Left alone.
    #[wasmprof::skip]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Has an attribute of its own.
    #[wasmprof::instrument(name = "peek_top")]
    pub fn peek(&self) -> Option<T> {
        self.0.last().cloned()
    }

    /// Const functions are left as they are.
    pub const fn capacity_hint() -> usize {
        8
    }

    /// An associated constant.
    pub const LIMIT: usize = 100;
}

/// Something that speaks.
#[wasmprof::instrument]
pub trait Speak {
    /// Required.
    fn word(&self) -> String;

    /// Provided.
    fn twice(&self) -> String {
        format!("{0} {0}", self.word())
    }
}

/// Prints.
pub trait Print {
    /// Prints.
    fn print(&self) -> String;
}

#[wasmprof::instrument]
impl<T: Display> Print for T {
    fn print(&self) -> String {
        self.to_string()
    }
}

/// A module.
#[wasmprof::instrument]
pub mod shapes {
    //! Inner docs stay.
    #![allow(clippy::excessive_precision)]

    use super::Speak;

    /// A circle.
    pub struct Circle(pub f64);

    impl Circle {
        /// Its area.
        pub fn area(&self) -> f64 {
            3.14159 * self.0 * self.0
        }
    }

    impl Speak for Circle {
        fn word(&self) -> String {
            "round".to_owned()
        }
    }

    /// A free function.
    pub fn unit() -> Circle {
        Circle(1.0)
    }

    /// Skipped.
    #[wasmprof::skip]
    pub fn skipped() -> u32 {
        1
    }

    /// Async functions are left as they are in a block.
    pub async fn later() -> u32 {
        2
    }

    /// Nested.
    pub mod nested {
        /// Deep.
        pub fn deep() -> u32 {
            fn in_body() -> u32 {
                3
            }
            in_body()
        }
    }

    /// Skipped as a whole.
    #[wasmprof::skip]
    pub mod skipped_module {
        /// Not instrumented.
        pub fn untouched() -> u32 {
            4
        }
    }
}

/// Runs the checks; also called by tests/instrumented/app.rs with
/// instrumentation on.
pub fn main() {
    let mut s = Stack::new();
    s.push(1);
    assert_eq!(s.len(), 1);
    assert_eq!(s.peek(), Some(1));
    assert_eq!(Stack::<u8>::capacity_hint() + Stack::<u8>::LIMIT, 108);
    assert_eq!(3.print(), "3");
    let c = shapes::unit();
    assert!(c.area() > 3.0);
    assert_eq!(c.twice(), "round round");
    assert_eq!(shapes::skipped(), 1);
    drop(shapes::later());
    assert_eq!(shapes::nested::deep(), 3);
    assert_eq!(shapes::skipped_module::untouched(), 4);
}
