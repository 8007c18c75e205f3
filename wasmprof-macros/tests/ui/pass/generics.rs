//! Generics, where clauses, const generics and `impl Trait`.
#![deny(warnings)]

use std::fmt::Debug;

#[wasmprof::instrument]
fn largest<T: PartialOrd + Copy>(xs: &[T]) -> Option<T> {
    let mut best = *xs.first()?;
    for &x in xs {
        if x > best {
            best = x;
        }
    }
    Some(best)
}

#[wasmprof::instrument]
fn joined<I, S>(items: I, separator: &str) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = String::new();
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        out.push_str(item.as_ref());
    }
    out
}

#[wasmprof::instrument]
fn sum_array<const N: usize>(xs: [u32; N]) -> u32 {
    xs.iter().sum()
}

#[wasmprof::instrument]
fn evens(limit: u32) -> impl Iterator<Item = u32> + Clone {
    (0..limit).filter(|x| x % 2 == 0)
}

#[wasmprof::instrument]
fn show_all(items: impl IntoIterator<Item = impl Debug>) -> Vec<String> {
    items.into_iter().map(|x| format!("{x:?}")).collect()
}

#[wasmprof::instrument]
fn longest<'a, 'b: 'a>(a: &'a str, b: &'b str) -> &'a str {
    if a.len() >= b.len() {
        a
    } else {
        b
    }
}

#[wasmprof::instrument]
fn apply<F>(f: F, x: u32) -> u32
where
    F: Fn(u32) -> u32,
    for<'a> &'a F: Copy,
{
    f(x)
}

#[wasmprof::instrument]
fn boxed_closure(k: u32) -> Box<dyn Fn(u32) -> u32> {
    Box::new(move |x| x * k)
}

struct Pair<A, B>(A, B);

impl<A: Debug, B> Pair<A, B>
where
    B: Debug + Clone,
{
    #[wasmprof::instrument]
    fn describe<C: Debug>(&self, extra: C) -> String
    where
        C: Clone,
    {
        format!("{:?} {:?} {:?}", self.0, self.1.clone(), extra)
    }
}

/// Runs the checks; also called by tests/instrumented/app.rs with
/// instrumentation on.
pub fn main() {
    assert_eq!(largest(&[3, 9, 2]), Some(9));
    assert_eq!(largest::<u8>(&[]), None);
    assert_eq!(joined(["a", "b"], ", "), "a, b");
    assert_eq!(sum_array([1, 2, 3]), 6);
    assert_eq!(evens(7).collect::<Vec<_>>(), [0, 2, 4, 6]);
    assert_eq!(show_all([1, 2]), ["1", "2"]);
    assert_eq!(longest("ab", "c"), "ab");
    assert_eq!(apply(|x| x + 1, 1), 2);
    assert_eq!(boxed_closure(3)(2), 6);
    assert_eq!(Pair(1, "b").describe('c'), "1 \"b\" 'c'");
}
