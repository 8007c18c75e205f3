//! Which functions are too small to be worth a guard.
//!
//! A guard costs a few nanoseconds; an accessor such as `fn get(self) ->
//! usize { self.0 }` costs less than one, and a parser calls millions of
//! them. Instrumenting those multiplies the run time and tells the user
//! nothing they could act on: their time is their caller's anyway. So, as
//! LLVM's XRay does with machine instructions (200, or any loop), a
//! crate-wide rewrite leaves out a function whose body is small *and*
//! cannot run long by itself: no loop and no call to itself. What a small
//! function calls still counts where it is instrumented, and the small
//! function's own time is its caller's self time.
//!
//! Size is counted in syntax nodes (expressions and statements) of the body
//! as written, closures included and nested items not: a measure the user
//! can check by reading the function, which is also what they tune with
//! `--min-size`.

use syn::visit::Visit;
use syn::{Attribute, Block, Expr, Ident, Item, Stmt};

/// Default `--min-size`: about a dozen lines of ordinary code. On the
/// `realworld` example (pulldown-cmark and miniz_oxide) it keeps 86 of 205
/// functions and 15 % of the calls, every function with a loop among them.
pub(crate) const DEFAULT_MIN_SIZE: usize = 40;

/// What the rewrite needs to know of a function body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Size {
    /// Expressions and statements in the body.
    pub nodes: usize,
    /// It has a `loop`, `while` or `for`.
    pub loops: bool,
    /// It calls a function of its own name (`f(..)`, `Self::f(..)`,
    /// `self.f(..)`): recursion is a loop too.
    pub recursive: bool,
}

impl Size {
    /// Measures the body of the function `name`.
    pub(crate) fn measure(name: &Ident, body: &Block) -> Size {
        let mut counter = Counter {
            name,
            size: Size {
                nodes: 0,
                loops: false,
                recursive: false,
            },
        };
        for stmt in &body.stmts {
            counter.visit_stmt(stmt);
        }
        counter.size
    }

    /// Whether a guard is worth its cost here: the body can run long
    /// (a loop, recursion) or is at least `min_size` nodes.
    pub(crate) fn worth_a_guard(&self, min_size: usize) -> bool {
        self.loops || self.recursive || self.nodes >= min_size
    }
}

/// Whether the host calls this function directly (`main`, an export): it is
/// where the profile starts, so it is always instrumented, however small.
pub(crate) fn is_entry(name: &Ident, attrs: &[Attribute]) -> bool {
    name == "main"
        || attrs.iter().any(|attr| {
            let path = attr.path();
            path.is_ident("wasm_bindgen")
                || path.is_ident("no_mangle")
                || path.is_ident("export_name")
                || path.segments.last().is_some_and(|s| s.ident == "wasm_bindgen")
                // `#[unsafe(no_mangle)]` (edition 2024).
                || (path.is_ident("unsafe") && {
                    let inner = attr.meta.require_list().map(|l| l.tokens.to_string());
                    inner.is_ok_and(|t| t.starts_with("no_mangle") || t.starts_with("export_name"))
                })
        })
}

struct Counter<'a> {
    name: &'a Ident,
    size: Size,
}

impl<'ast> Visit<'ast> for Counter<'_> {
    fn visit_stmt(&mut self, stmt: &'ast Stmt) {
        if !matches!(stmt, Stmt::Item(_)) {
            self.size.nodes += 1;
        }
        syn::visit::visit_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'ast Expr) {
        self.size.nodes += 1;
        match expr {
            Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => self.size.loops = true,
            Expr::Call(call) => {
                if let Expr::Path(callee) = &*call.func {
                    // `f(..)` or `Self::f(..)`; `Other::f(..)` is another function.
                    let segments: Vec<&Ident> =
                        callee.path.segments.iter().map(|s| &s.ident).collect();
                    let itself = match segments[..] {
                        [f] => f == self.name,
                        [owner, f] => owner == "Self" && f == self.name,
                        _ => false,
                    };
                    self.size.recursive |= itself;
                }
            }
            Expr::MethodCall(call) => {
                let on_self = matches!(&*call.receiver, Expr::Path(p) if p.path.is_ident("self"));
                if on_self && call.method == *self.name {
                    self.size.recursive = true;
                }
            }
            _ => {}
        }
        syn::visit::visit_expr(self, expr);
    }

    /// A nested function is measured on its own, if at all.
    fn visit_item(&mut self, _: &'ast Item) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measure(source: &str) -> Size {
        let function: syn::ItemFn = syn::parse_str(source).unwrap();
        Size::measure(&function.sig.ident, &function.block)
    }

    #[test]
    fn an_accessor_is_tiny_and_a_loop_is_not() {
        let get = measure("fn get(self) -> usize { self.0.get() }");
        assert_eq!(get.nodes, 4, "{get:?}");
        assert!(!get.worth_a_guard(DEFAULT_MIN_SIZE));
        let sum = measure("fn sum(v: &[u32]) -> u32 { let mut s = 0; for x in v { s += x; } s }");
        assert!(sum.loops);
        assert!(sum.worth_a_guard(DEFAULT_MIN_SIZE));
        let spin = measure("fn spin() { loop {} }");
        assert!(spin.worth_a_guard(DEFAULT_MIN_SIZE));
    }

    #[test]
    fn recursion_counts_as_a_loop_whichever_way_it_is_written() {
        for source in [
            "fn fib(n: u32) -> u32 { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }",
            "fn fib(n: u32) -> u32 { if n < 2 { n } else { Self::fib(n - 1) } }",
            "fn fib(&self, n: u32) -> u32 { if n < 2 { n } else { self.fib(n - 1) } }",
        ] {
            let size = measure(source);
            assert!(size.recursive, "{source}");
            assert!(size.worth_a_guard(DEFAULT_MIN_SIZE), "{source}");
        }
        let other = measure("fn f(x: &Thing) -> u32 { x.f() }");
        assert!(
            !other.recursive,
            "a method of another value is not recursion"
        );
        let constructor =
            measure("fn new(i: usize) -> Self { Index(NonZeroUsize::new(i).unwrap()) }");
        assert!(
            !constructor.recursive,
            "another type's `new` is not recursion"
        );
    }

    #[test]
    fn nested_items_are_not_counted_but_closures_are() {
        let with_item = measure("fn f() { fn g() { loop {} } g() }");
        assert!(!with_item.loops, "{with_item:?}");
        assert_eq!(with_item.nodes, 3, "{with_item:?}");
        let with_closure =
            measure("fn f(v: &[u8]) -> usize { v.iter().filter(|b| **b == 0).count() }");
        assert!(with_closure.nodes > 8, "{with_closure:?}");
    }

    #[test]
    fn size_is_compared_with_the_threshold() {
        let size = measure("fn f(a: u32) -> u32 { let b = a + 1; b * 2 }");
        assert!(size.worth_a_guard(0));
        assert!(size.worth_a_guard(size.nodes));
        assert!(!size.worth_a_guard(size.nodes + 1));
    }

    #[test]
    fn entries_are_recognised_by_name_or_export_attribute() {
        let entry = |source: &str| {
            let function: syn::ItemFn = syn::parse_str(source).unwrap();
            is_entry(&function.sig.ident, &function.attrs)
        };
        assert!(entry("fn main() {}"));
        assert!(entry("#[wasm_bindgen] pub fn run() {}"));
        assert!(entry(
            "#[wasm_bindgen::prelude::wasm_bindgen(start)] pub fn run() {}"
        ));
        assert!(entry("#[no_mangle] pub extern \"C\" fn run() {}"));
        assert!(entry("#[unsafe(no_mangle)] pub extern \"C\" fn run() {}"));
        assert!(!entry("#[inline] fn helper() {}"));
    }
}
