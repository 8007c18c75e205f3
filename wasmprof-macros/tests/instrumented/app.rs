//! Built and tested by `tests/instrumented.rs` with
//! `WASMPROF_INSTRUMENT=host`, so that every `#[wasmprof::instrument]` here
//! really records calls: one test per behaviour of the attribute.
//!
//! The tests check that the functions behave as written, that each call is
//! counted exactly under the right name, and that each function's line is
//! the line of its `fn` — marked here by a `// next line: name` comment
//! just above it. One test also runs every UI pass test with
//! instrumentation on. Tests run one at a time, and each checks the
//! difference between a snapshot before and one after what it calls.
#![deny(warnings)]

use std::collections::BTreeMap;
use std::num::ParseIntError;

use wasmprof::snapshot::{take, Snapshot};

#[path = "../ui/pass/arguments.rs"]
mod pass_arguments;
#[path = "../ui/pass/async_fns.rs"]
mod pass_async_fns;
#[path = "../ui/pass/async_trait.rs"]
mod pass_async_trait;
#[path = "../ui/pass/blocks.rs"]
mod pass_blocks;
#[path = "../ui/pass/count.rs"]
mod pass_count;
#[path = "../ui/pass/control_flow.rs"]
mod pass_control_flow;
#[path = "../ui/pass/free_functions.rs"]
mod pass_free_functions;
#[path = "../ui/pass/generics.rs"]
mod pass_generics;
#[path = "../ui/pass/methods.rs"]
mod pass_methods;
#[path = "../ui/pass/unsafe_extern.rs"]
mod pass_unsafe_extern;

mod reexport {
    pub use wasmprof;
}

#[wasmprof::instrument]
/// Documented, with the attribute above the doc: the line is still the
/// line of the `fn`.
#[inline(never)]
// next line: fixture::leaf
fn leaf(x: u32) -> u32 {
    x + 1
}

#[wasmprof::instrument]
// next line: fixture::outer
fn outer() -> u32 {
    (0..5).map(leaf).sum()
}

#[wasmprof::instrument]
// next line: fixture::is_wanted
fn is_wanted(x: u32) -> bool {
    x > 10
}

#[wasmprof::instrument]
// next line: fixture::find
fn find(xs: &[u32]) -> Option<u32> {
    for &x in xs {
        if is_wanted(x) {
            return Some(x);
        }
    }
    None
}

#[wasmprof::instrument]
// next line: fixture::parse_one
fn parse_one(part: &str) -> Result<u32, ParseIntError> {
    part.trim().parse()
}

#[wasmprof::instrument]
// next line: fixture::parse_all
fn parse_all(input: &str) -> Result<Vec<u32>, ParseIntError> {
    let mut out = Vec::new();
    for part in input.split(',') {
        out.push(parse_one(part)?);
    }
    Ok(out)
}

#[wasmprof::instrument]
// next line: fixture::largest
fn largest<T>(xs: &[T]) -> Option<&T>
where
    T: PartialOrd,
{
    let mut best = xs.first()?;
    for x in xs {
        if x > best {
            best = x;
        }
    }
    Some(best)
}

#[wasmprof::instrument]
// next line: fixture::fib
fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    fib(n - 1) + fib(n - 2)
}

#[wasmprof::instrument]
// next line: fixture::may_panic
fn may_panic(fail: bool) -> u32 {
    if fail {
        panic!("expected panic, caught by the fixture");
    }
    1
}

#[wasmprof::instrument(name = "renamed")]
// next line: fixture::renamed
fn original_name() -> u32 {
    2
}

#[wasmprof::instrument(crate = reexport::wasmprof)]
// next line: fixture::through_reexport
fn through_reexport() -> u32 {
    3
}

#[wasmprof::instrument]
// next line: fixture::read
unsafe fn read(p: *const u32) -> u32 {
    unsafe { *p }
}

#[wasmprof::instrument]
// next line: fixture::callback
extern "C" fn callback(x: i32) -> i32 {
    x * 3
}

#[wasmprof::instrument]
// next line: fixture::hoisted
fn hoisted() -> u32 {
    #![allow(unused_variables)]
    let unused = 1;
    4
}

#[wasmprof::instrument]
// next line: fixture::make_adder
fn make_adder(k: u32) -> impl Fn(u32) -> u32 {
    move |x| x + k
}

#[derive(Debug, Default, PartialEq)]
struct Counter {
    n: u32,
}

impl Counter {
    #[wasmprof::instrument]
    // next line: fixture::Counter::new
    fn new() -> Self {
        Counter { n: 0 }
    }

    /// Neither a receiver nor `Self`: named by its module.
    #[wasmprof::instrument]
    // next line: fixture::with
    fn with(n: u32) -> Counter {
        Counter { n }
    }

    #[wasmprof::instrument]
    // next line: fixture::Counter::from_body
    fn from_body(n: u32) -> Counter {
        Self { n }
    }

    #[wasmprof::instrument]
    // next line: fixture::Counter::get
    fn get(&self) -> u32 {
        self.n
    }

    #[wasmprof::instrument]
    // next line: fixture::Counter::bump
    fn bump(&mut self) {
        self.n += 1;
    }

    #[wasmprof::instrument]
    // next line: fixture::Counter::into_inner
    fn into_inner(self) -> u32 {
        self.n
    }

    #[wasmprof::instrument]
    // next line: fixture::Counter::boxed
    fn boxed(self: Box<Self>) -> u32 {
        self.n
    }

    #[wasmprof::instrument(name = "custom")]
    // next line: fixture::Counter::custom
    fn renamed_method(&self) -> u32 {
        self.n
    }
}

struct Stack<T>(Vec<T>);

#[wasmprof::instrument]
impl<T> Stack<T> {
    // next line: fixture::Stack::empty
    fn empty() -> Stack<T> {
        Stack(Vec::new())
    }

    // next line: fixture::Stack::push
    fn push(&mut self, x: T) {
        self.0.push(x);
    }

    // next line: fixture::Stack::pop
    fn pop(&mut self) -> Option<T> {
        self.0.pop()
    }

    #[wasmprof::skip]
    fn len(&self) -> usize {
        self.0.len()
    }

    const fn limit() -> usize {
        64
    }
}

trait Print {
    fn print(&self) -> String;
}

#[wasmprof::instrument]
impl<T: std::fmt::Display> Print for T {
    // next line: fixture::Print::print
    fn print(&self) -> String {
        format!("<{self}>")
    }
}

#[wasmprof::instrument]
mod shapes {
    pub trait Shape {
        fn area(&self) -> f64;

        // next line: fixture::shapes::Shape::describe
        fn describe(&self) -> String {
            format!("area {}", self.area())
        }
    }

    pub struct Circle(pub f64);
    pub struct Square(pub f64);

    impl Shape for Circle {
        // next line: fixture::shapes::Circle::area
        fn area(&self) -> f64 {
            3.0 * self.0 * self.0
        }
    }

    impl Shape for Square {
        // next line: fixture::shapes::Square::area
        fn area(&self) -> f64 {
            self.0 * self.0
        }
    }

    // next line: fixture::shapes::unit_square
    pub fn unit_square() -> Square {
        Square(1.0)
    }

    #[wasmprof::skip]
    pub fn skipped() -> u32 {
        5
    }

    pub mod nested {
        // next line: fixture::shapes::nested::deep
        pub fn deep() -> u32 {
            fn not_instrumented() -> u32 {
                6
            }
            not_instrumented()
        }
    }
}

/// Calls of the node at exactly `path`.
fn calls(snapshot: &Snapshot, path: &[&str]) -> u64 {
    snapshot
        .nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| snapshot.path_names(*i) == path)
        .map(|(_, node)| node.calls)
        .sum()
}

/// Calls of `name` on every path.
fn total_calls(snapshot: &Snapshot, name: &str) -> u64 {
    let Some(id) = snapshot.functions.iter().position(|f| f.name == name) else {
        return 0;
    };
    snapshot
        .nodes
        .iter()
        .filter(|node| node.function as usize == id)
        .map(|node| node.calls)
        .sum()
}

/// Runs `f` and checks how many calls it added on each path, and that no
/// call is left open; returns what `f` returned.
fn counts<R>(f: impl FnOnce() -> R, want: &[(&[&str], u64)]) -> R {
    assert!(wasmprof::ENABLED, "build with WASMPROF_INSTRUMENT=host");
    let before = take();
    let result = f();
    let after = take();
    for (path, calls_wanted) in want {
        let got = calls(&after, path) - calls(&before, path);
        assert_eq!(got, *calls_wanted, "calls of {path:?}");
    }
    assert_eq!(after.open_path(), Vec::<String>::new(), "open path afterwards");
    result
}

#[test]
fn instrumentation_is_on() {
    assert!(wasmprof::ENABLED, "build with WASMPROF_INSTRUMENT=host");
}

#[test]
fn a_free_function_is_counted_and_returns_what_it_returns() {
    let r = counts(|| [leaf(1), leaf(2), leaf(3)], &[(&["fixture::leaf"], 3)]);
    assert_eq!(r, [2, 3, 4]);
}

#[test]
fn a_call_inside_another_is_under_it() {
    let r = counts(
        outer,
        &[
            (&["fixture::outer"], 1),
            (&["fixture::outer", "fixture::leaf"], 5),
            (&["fixture::leaf"], 0),
        ],
    );
    assert_eq!(r, 15);
}

#[test]
fn an_early_return_ends_the_call() {
    let r = counts(
        || (find(&[1, 20, 30]), find(&[1, 2])),
        &[
            (&["fixture::find"], 2),
            (&["fixture::find", "fixture::is_wanted"], 4),
        ],
    );
    assert_eq!(r, (Some(20), None));
}

#[test]
fn the_question_mark_ends_the_call() {
    let r = counts(
        || (parse_all("1, 2, x, 4"), parse_all("5,6")),
        &[
            (&["fixture::parse_all"], 2),
            (&["fixture::parse_all", "fixture::parse_one"], 5),
        ],
    );
    assert!(r.0.is_err(), "{:?}", r.0);
    assert_eq!(r.1, Ok(vec![5, 6]));
}

#[test]
fn a_generic_function_has_one_site_for_every_instantiation() {
    let r = counts(
        || {
            (
                largest(&[1, 9, 3]).copied(),
                largest(&["b", "a"]).copied(),
                largest::<f64>(&[]),
            )
        },
        &[(&["fixture::largest"], 3)],
    );
    assert_eq!(r, (Some(9), Some("b"), None));
}

#[test]
fn recursion_is_counted_at_every_depth() {
    let before = take();
    let r = fib(10);
    let after = take();
    assert_eq!(r, 55);
    assert_eq!(
        total_calls(&after, "fixture::fib") - total_calls(&before, "fixture::fib"),
        177
    );
    assert_eq!(
        calls(&after, &["fixture::fib", "fixture::fib"]) - calls(&before, &["fixture::fib", "fixture::fib"]),
        2
    );
}

#[test]
fn a_panic_unwinding_through_a_call_ends_it() {
    let r = counts(
        || {
            let hook = std::panic::take_hook();
            std::panic::set_hook(Box::new(|_| {}));
            let r = std::panic::catch_unwind(|| may_panic(true));
            std::panic::set_hook(hook);
            (r.is_err(), may_panic(false))
        },
        &[(&["fixture::may_panic"], 2)],
    );
    assert_eq!(r, (true, 1));
}

#[test]
fn renamed_reexported_unsafe_extern_and_impl_trait_functions_are_counted() {
    let x = 7;
    let r = counts(
        || {
            let adder = make_adder(10);
            (
                original_name(),
                through_reexport(),
                // SAFETY: `x` is a live u32.
                unsafe { read(&x) },
                callback(2),
                hoisted(),
                adder(1) + adder(2),
            )
        },
        &[
            (&["fixture::renamed"], 1),
            (&["fixture::through_reexport"], 1),
            (&["fixture::read"], 1),
            (&["fixture::callback"], 1),
            (&["fixture::hoisted"], 1),
            // The closure it returns is not the function.
            (&["fixture::make_adder"], 1),
        ],
    );
    assert_eq!(r, (2, 3, 7, 6, 4, 23));
}

#[test]
fn methods_of_every_receiver_are_named_by_their_type() {
    let r = counts(
        || {
            let mut counter = Counter::new();
            counter.bump();
            counter.bump();
            let got = counter.get();
            let custom = counter.renamed_method();
            let boxed = Box::new(Counter::with(4)).boxed();
            let from_body = Counter::from_body(5).into_inner();
            (got, custom, boxed, from_body)
        },
        &[
            (&["fixture::Counter::new"], 1),
            (&["fixture::Counter::bump"], 2),
            (&["fixture::Counter::get"], 1),
            (&["fixture::Counter::custom"], 1),
            (&["fixture::with"], 1),
            (&["fixture::Counter::boxed"], 1),
            (&["fixture::Counter::from_body"], 1),
            (&["fixture::Counter::into_inner"], 1),
        ],
    );
    assert_eq!(r, (2, 2, 4, 5));
}

#[test]
fn an_impl_block_of_a_generic_type_is_instrumented_but_skip_and_const() {
    let r = counts(
        || {
            let mut numbers = Stack::empty();
            numbers.push(1u32);
            numbers.push(2);
            let mut words = Stack::empty();
            words.push("w".to_owned());
            (
                numbers.pop(),
                numbers.len(),
                words.pop(),
                Stack::<u8>::limit(),
            )
        },
        &[
            (&["fixture::Stack::empty"], 2),
            (&["fixture::Stack::push"], 3),
            (&["fixture::Stack::pop"], 2),
        ],
    );
    assert_eq!(r, (Some(2), 1, Some("w".to_owned()), 64));
    let snapshot = take();
    for skipped in ["fixture::Stack::len", "fixture::Stack::limit"] {
        assert!(
            !snapshot.functions.iter().any(|f| f.name == skipped),
            "{skipped} should not be instrumented"
        );
    }
}

#[test]
fn a_blanket_impl_is_named_by_its_trait() {
    let r = counts(
        || (1.print(), "a".print()),
        &[(&["fixture::Print::print"], 2)],
    );
    assert_eq!(r, ("<1>".to_owned(), "<a>".to_owned()));
}

#[test]
fn a_module_s_trait_impls_and_default_methods_are_instrumented() {
    let r = counts(
        || {
            use shapes::Shape;
            let circle = shapes::Circle(1.0);
            let square = shapes::unit_square();
            (
                circle.describe(),
                square.describe(),
                shapes::skipped(),
                shapes::nested::deep(),
            )
        },
        &[
            (&["fixture::shapes::unit_square"], 1),
            (&["fixture::shapes::Shape::describe"], 2),
            (
                &[
                    "fixture::shapes::Shape::describe",
                    "fixture::shapes::Circle::area",
                ],
                1,
            ),
            (
                &[
                    "fixture::shapes::Shape::describe",
                    "fixture::shapes::Square::area",
                ],
                1,
            ),
            (&["fixture::shapes::nested::deep"], 1),
        ],
    );
    assert_eq!(r, ("area 3".to_owned(), "area 1".to_owned(), 5, 6));
    let snapshot = take();
    for skipped in [
        "fixture::shapes::skipped",
        "fixture::not_instrumented",
        "fixture::shapes::nested::not_instrumented",
    ] {
        assert!(
            !snapshot.functions.iter().any(|f| f.name == skipped),
            "{skipped} should not be instrumented"
        );
    }
}

/// The UI pass tests' `main`s, with instrumentation on; their panics are
/// expected and kept quiet.
fn run_the_ui_pass_tests() {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    pass_arguments::main();
    pass_async_fns::main();
    pass_async_trait::main();
    pass_blocks::main();
    pass_control_flow::main();
    pass_count::main();
    pass_free_functions::main();
    pass_generics::main();
    pass_methods::main();
    pass_unsafe_extern::main();
    std::panic::set_hook(hook);
}

/// Calls of a counted function, which has a counter and no node.
fn counted_calls(snapshot: &Snapshot, name: &str) -> u64 {
    snapshot
        .functions
        .iter()
        .find(|f| f.name == name)
        .map_or(0, |f| f.calls)
}

/// The polls, completions and cancellations of `name`'s futures.
fn futures(snapshot: &Snapshot, name: &str) -> (u64, u64, u64) {
    let function = snapshot.functions.iter().position(|f| f.name == name);
    snapshot
        .futures
        .iter()
        .filter(|f| Some(snapshot.nodes[f.node as usize].function as usize) == function)
        .fold((0, 0, 0), |(p, c, x), f| {
            (p + f.polls, c + f.completions, x + f.cancellations)
        })
}

#[test]
fn the_ui_pass_tests_run_instrumented_and_are_recorded() {
    let before = take();
    run_the_ui_pass_tests();
    let snapshot = take();
    assert_eq!(snapshot.open_path(), Vec::<String>::new(), "open path at the end");
    for expected in [
        "fixture::pass_arguments::custom",
        "fixture::pass_arguments::both",
        "fixture::pass_arguments::S::custom_method",
        "fixture::pass_blocks::Stack::push",
        "fixture::pass_blocks::Speak::twice",
        "fixture::pass_blocks::Print::print",
        "fixture::pass_blocks::shapes::Circle::area",
        "fixture::pass_blocks::shapes::Circle::word",
        "fixture::pass_blocks::shapes::nested::deep",
        "fixture::pass_free_functions::match",
        "fixture::pass_generics::Pair::describe",
        "fixture::pass_methods::Counter::boxed",
        "fixture::pass_methods::Counter::counted",
        "fixture::pass_methods::Square::area",
        "fixture::pass_methods::Counter::default",
        "fixture::pass_methods::Wrapper::cloned",
        "fixture::pass_methods::Words::next_word",
        "fixture::pass_methods::Shape::loud_name",
        "fixture::pass_unsafe_extern::exported",
    ] {
        assert!(
            total_calls(&snapshot, expected) > total_calls(&before, expected),
            "{expected} was not recorded"
        );
    }
    for skipped in [
        "fixture::pass_blocks::Stack::len",
        "fixture::pass_blocks::shapes::skipped",
        "fixture::pass_blocks::shapes::skipped_module::untouched",
    ] {
        assert!(
            !snapshot.functions.iter().any(|f| f.name == skipped),
            "{skipped} should not be instrumented"
        );
    }
    // Counted functions: exact calls, no node, named like the others.
    for (name, want) in [
        ("fixture::pass_count::tiny", 3),
        ("fixture::pass_count::Meter::value", 3),
        ("fixture::pass_count::Meter::make", 1),
        ("fixture::pass_count::Meter::default", 1),
    ] {
        let function = snapshot.functions.iter().find(|f| f.name == name);
        let function = function.unwrap_or_else(|| panic!("{name} was not recorded"));
        assert_eq!(function.tier, wasmprof::snapshot::Tier::Counted, "{name} tier");
        assert_eq!(
            counted_calls(&snapshot, name) - counted_calls(&before, name),
            want,
            "{name} calls"
        );
        assert_eq!(total_calls(&snapshot, name), 0, "{name} nodes");
    }
    let read = "fixture::pass_count::Meter::read";
    assert_eq!(
        total_calls(&snapshot, read) - total_calls(&before, read),
        1,
        "Meter::read, fully instrumented"
    );
    // Async functions: a node per future created, under the caller, each
    // polled once (nothing in them waits) and completed.
    for (name, calls, is_async) in [
        ("run", 1, true),
        ("load", 1, true),
        ("parse", 2, true),
        ("widen", 1, true),
        ("shown", 1, true),
        ("Store::total", 1, true),
        ("Store::into_inner", 1, true),
        ("Store::fetch", 1, true),
        ("Doubled::base", 1, true),
        ("later", 1, false),
        ("../pass_async_trait::Source::fetch", 2, true),
        ("../pass_async_trait::Described::describe", 1, true),
    ] {
        let name = match name.strip_prefix("../") {
            Some(other) => format!("fixture::{other}"),
            None => format!("fixture::pass_async_fns::{name}"),
        };
        assert_eq!(
            total_calls(&snapshot, &name) - total_calls(&before, &name),
            calls,
            "{name} calls"
        );
        let function = snapshot.functions.iter().find(|f| f.name == name);
        assert_eq!(function.map(|f| f.is_async), Some(is_async), "{name} is async");
        let (polls, completions, cancellations) = futures(&snapshot, &name);
        let (polls_before, completions_before, cancellations_before) = futures(&before, &name);
        let want = if is_async { (calls, calls, 0) } else { (0, 0, 0) };
        assert_eq!(
            (
                polls - polls_before,
                completions - completions_before,
                cancellations - cancellations_before
            ),
            want,
            "{name} polls, completions, cancellations"
        );
    }
}

/// Every recorded function's line is the line of its `fn` in its file;
/// those of this file are exactly the lines marked by a `// next line: name`
/// comment just above. Every function here is called first, in this test's
/// thread, so that each is recorded.
#[test]
fn every_function_is_named_at_the_line_of_its_fn() {
    a_free_function_is_counted_and_returns_what_it_returns();
    a_call_inside_another_is_under_it();
    an_early_return_ends_the_call();
    the_question_mark_ends_the_call();
    a_generic_function_has_one_site_for_every_instantiation();
    recursion_is_counted_at_every_depth();
    a_panic_unwinding_through_a_call_ends_it();
    renamed_reexported_unsafe_extern_and_impl_trait_functions_are_counted();
    methods_of_every_receiver_are_named_by_their_type();
    an_impl_block_of_a_generic_type_is_instrumented_but_skip_and_const();
    a_blanket_impl_is_named_by_its_trait();
    a_module_s_trait_impls_and_default_methods_are_instrumented();
    run_the_ui_pass_tests();
    let snapshot = take();

    let this_file = include_str!("app.rs");
    let lines: Vec<&str> = this_file.lines().collect();
    let mut marked = BTreeMap::new();
    for (at, text) in lines.iter().enumerate() {
        if let Some(name) = text.trim_start().strip_prefix("// next line: ") {
            let next = lines.get(at + 1).copied().unwrap_or_default();
            assert!(next.contains("fn "), "marker of {name} is not above a fn");
            // Line numbers count from 1: the next line's index plus one.
            marked.insert(name.to_owned(), at as u32 + 2);
        }
    }
    let mut seen = BTreeMap::new();
    let mut sources = BTreeMap::new();
    for function in &snapshot.functions {
        let source = sources
            .entry(function.file.clone())
            .or_insert_with(|| std::fs::read_to_string(&function.file).unwrap_or_default());
        let text = source
            .lines()
            .nth(function.line as usize - 1)
            .unwrap_or_default();
        assert!(
            text.contains("fn "),
            "{} at {}:{} is not on its `fn` line: {text:?}",
            function.name,
            function.file,
            function.line
        );
        if function.file.ends_with("app.rs") {
            seen.insert(function.name.clone(), function.line);
        }
    }
    assert_eq!(seen, marked, "functions of app.rs and their lines");
}
