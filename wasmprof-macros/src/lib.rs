//! The attributes of wasmprof's runtime (the `wasmprof-rt` package, whose
//! library is `wasmprof`): use them through the runtime crate, as `#[wasmprof::instrument]` and `#[wasmprof::skip]`.
//!
//! The expansion calls `__instrument_body!`, a macro of the runtime: the
//! runtime crate knows whether `cargo wasmprof` switched instrumentation on,
//! so this crate stays the same in every build.

use proc_macro::TokenStream;

mod attr;
mod expand;

/// Counts and times every call of a function.
///
/// ```
/// #[wasmprof::instrument]
/// fn parse(input: &str) -> usize {
///     input.split(',').count()
/// }
/// # assert_eq!(parse("a,b"), 2);
/// ```
///
/// In an ordinary build the function stays as written. Built by
/// `cargo wasmprof`, each call enters a guard that is dropped on every way
/// out — the end of the body, `return`, `?`, a panic unwinding — so the
/// counts are exact and the times inclusive.
///
/// # Where it applies
///
/// - Free functions, and methods of inherent and trait impls, with any
///   receiver (`self`, `&self`, `&mut self`, `self: Box<Self>`, ...).
///   Generics, where clauses, `impl Trait`, `unsafe` and `extern "C"` are
///   kept as written, and so are doc comments and other attributes.
///   Inner attributes of the body (`#![allow(...)]`) stay attributes of the
///   function.
/// - An `impl` block, a trait or an inline module: every function in it
///   with a body, nested impls, traits and modules included. Put
///   `#[wasmprof::skip]` on an item to leave it out. `const fn` is left
///   out there, since it cannot be instrumented.
/// - `async fn`, anywhere the above are: the call is recorded when the
///   future is created, under its caller, and every poll of the future is
///   timed under that call, whoever polls it; the reports add polls,
///   completions, cancellations and latency. Under another attribute macro
///   that needs the `async fn` (`#[wasm_bindgen]`, `#[async_trait]` after
///   ours), the function stays `async` and its call is recorded at its
///   first poll. `count` cannot be used on it.
///
/// A `const fn` cannot call the runtime, so it is an error.
///
/// # Names
///
/// The reports name a function `crate::module::function` and a method
/// `crate::module::Type::method`, without generic arguments: the type comes
/// from `Self`. An annotated function is taken for a method when it has a
/// `self` receiver or uses `Self`; an associated function that does neither
/// (`fn new(x: u32) -> Point`) cannot know its type and is named by its
/// module, unless the whole impl block is annotated (or `name` is given).
/// Trait default methods and blanket impls (`impl<T: Bound> Trait for T`)
/// are shared by many types: annotate the trait or the impl block and they
/// are named `Trait::method`; annotated one by one, they take the name of
/// the first type that calls them.
///
/// The line is that of the function's name. For a function written by a
/// `macro_rules!` macro, it is the line in the macro's definition.
///
/// # Arguments
///
/// - `name = "text"`: the name in the reports instead of the function's own
///   (still prefixed by the module or type).
/// - `crate = path`: where the runtime is, for crates that re-export it:
///   `#[wasmprof::instrument(crate = my_crate::wasmprof)]`.
/// - `test`: the function is a test (`cargo wasmprof test` adds this to
///   each `#[test]` and `#[wasm_bindgen_test]`). It is recorded at the root
///   of the profile whatever calls a failed test before it left open, so
///   each test's calls are under a node of its own.
#[proc_macro_attribute]
pub fn instrument(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::instrument(args.into(), item.into()).into()
}

/// Leaves an item out of an instrumented impl block, trait or module.
///
/// ```
/// #[wasmprof::instrument]
/// impl Counter {
///     fn bump(&mut self) {
///         self.0 += 1;
///     }
///
///     /// Called too often to be worth timing.
///     #[wasmprof::skip]
///     fn get(&self) -> u32 {
///         self.0
///     }
/// }
/// # struct Counter(u32);
/// # let mut c = Counter(0);
/// # c.bump();
/// # assert_eq!(c.get(), 1);
/// ```
#[proc_macro_attribute]
pub fn skip(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::skip(args.into(), item.into()).into()
}
