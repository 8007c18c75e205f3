//! Which functions cannot run long, and so need no frame of their own for
//! the engine's sampler: a sampled build lets the compiler inline them.
//!
//! A call runs long only through its own code looping or through code that
//! is not its own: a call, a macro (which may expand to either), an
//! overloaded operator, indexing, or the drop glue of a value it owns. A
//! body with none of these runs a bounded number of instructions whatever
//! its arguments, so none of its calls can be the long call among short
//! ones that only a sample would find. What this cannot see from tokens:
//! a field reached through a `Deref` impl, and a large array copied out of
//! a field; neither is what a short accessor does.

use proc_macro2::TokenStream;
use syn::visit::Visit;
use syn::{BinOp, Expr, FnArg, Item, Signature, Type};

/// Whether a call of the function may take more than a bounded number of
/// instructions. `primitive_self`: its `Self` is a type without drop glue
/// (a number, `bool`, `char`, a reference), which a by-value `self` needs.
/// A body that does not parse may.
pub(super) fn can_run_long(sig: &Signature, primitive_self: bool, body: &TokenStream) -> bool {
    if sig.asyncness.is_some() || sig.variadic.is_some() {
        return true;
    }
    let owns_drop_glue = sig.inputs.iter().any(|input| match input {
        FnArg::Receiver(receiver) => {
            receiver.reference.is_none()
                && !(receiver.colon_token.is_none() && primitive_self
                    || receiver.colon_token.is_some()
                        && has_no_drop_glue(&receiver.ty, primitive_self))
        }
        FnArg::Typed(typed) => !has_no_drop_glue(&typed.ty, primitive_self),
    });
    if owns_drop_glue {
        return true;
    }
    let Ok(stmts) = super::parse_statements(body) else {
        return true;
    };
    let mut finder = Unbounded(false);
    for stmt in &stmts {
        finder.visit_stmt(stmt);
    }
    finder.0
}

/// Whether dropping a value of the type runs no code: numbers, `bool`,
/// `char`, references, raw and function pointers, and tuples and arrays of
/// them. `Self` is one when `primitive_self` says so.
pub(super) fn has_no_drop_glue(ty: &Type, primitive_self: bool) -> bool {
    const PRIMITIVES: [&str; 17] = [
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64", "bool", "char", "str",
    ];
    match ty {
        Type::Reference(_) | Type::Ptr(_) | Type::BareFn(_) | Type::Never(_) => true,
        Type::Paren(inner) => has_no_drop_glue(&inner.elem, primitive_self),
        Type::Group(inner) => has_no_drop_glue(&inner.elem, primitive_self),
        Type::Array(array) => has_no_drop_glue(&array.elem, primitive_self),
        Type::Tuple(tuple) => tuple
            .elems
            .iter()
            .all(|elem| has_no_drop_glue(elem, primitive_self)),
        Type::Path(path) if path.qself.is_none() => {
            let Some(ident) = path.path.get_ident() else {
                return false;
            };
            if ident == "Self" {
                primitive_self
            } else {
                PRIMITIVES.iter().any(|p| ident == p)
            }
        }
        _ => false,
    }
}

/// Finds anything in a body through which a call could run long.
struct Unbounded(bool);

impl<'ast> Visit<'ast> for Unbounded {
    /// Items nested in the body are not its code.
    fn visit_item(&mut self, _: &'ast Item) {}

    fn visit_expr(&mut self, expr: &'ast Expr) {
        let unbounded = match expr {
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => true,
            Expr::Call(_) | Expr::MethodCall(_) | Expr::Macro(_) => true,
            Expr::Try(_) | Expr::Await(_) | Expr::Async(_) | Expr::Yield(_) => true,
            // `[x; N]` writes N values; tokens syn could not read may be
            // anything.
            Expr::Repeat(_) | Expr::Verbatim(_) => true,
            Expr::Index(_) | Expr::Unary(_) => !is_literal(expr),
            // `&&` and `||` cannot be overloaded; a comparison with a
            // literal is bounded by the literal, and a number added into a
            // place is a number's (a string appended may reallocate).
            Expr::Binary(binary) => match binary.op {
                BinOp::And(_) | BinOp::Or(_) => false,
                BinOp::Eq(_)
                | BinOp::Ne(_)
                | BinOp::Lt(_)
                | BinOp::Le(_)
                | BinOp::Gt(_)
                | BinOp::Ge(_) => !is_literal(&binary.left) && !is_literal(&binary.right),
                BinOp::AddAssign(_)
                | BinOp::SubAssign(_)
                | BinOp::MulAssign(_)
                | BinOp::BitAndAssign(_)
                | BinOp::BitOrAssign(_)
                | BinOp::BitXorAssign(_)
                | BinOp::ShlAssign(_)
                | BinOp::ShrAssign(_) => !is_number(&binary.right),
                _ => true,
            },
            // The old value of the place is dropped: a literal's place
            // holds a number.
            Expr::Assign(assign) => !is_literal(&assign.right),
            _ => false,
        };
        if unbounded {
            self.0 = true;
        } else {
            syn::visit::visit_expr(self, expr);
        }
    }

    fn visit_macro(&mut self, _: &'ast syn::Macro) {
        self.0 = true;
    }
}

/// A number literal, negated or in parentheses.
fn is_number(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(lit) => matches!(lit.lit, syn::Lit::Int(_) | syn::Lit::Float(_)),
        Expr::Paren(paren) => is_number(&paren.expr),
        Expr::Group(group) => is_number(&group.expr),
        Expr::Unary(unary) => matches!(unary.op, syn::UnOp::Neg(_)) && is_number(&unary.expr),
        _ => false,
    }
}

/// A literal, negated or in parentheses: its type is a number's, `bool`,
/// `char` or `&str`.
fn is_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(_) => true,
        Expr::Paren(paren) => is_literal(&paren.expr),
        Expr::Group(group) => is_literal(&group.expr),
        Expr::Unary(unary) => matches!(unary.op, syn::UnOp::Neg(_)) && is_literal(&unary.expr),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long(sig: &str, body: &str) -> bool {
        long_in(sig, false, body)
    }

    fn long_in(sig: &str, primitive_self: bool, body: &str) -> bool {
        let sig: Signature = syn::parse_str(sig).unwrap();
        can_run_long(&sig, primitive_self, &body.parse().unwrap())
    }

    #[test]
    fn accessors_and_casts_are_bounded() {
        assert!(!long("fn len(&self) -> usize", "self.len"));
        assert!(!long("fn clear(&mut self)", "self.len = 0;"));
        assert!(!long("fn is_empty(&self) -> bool", "self.len == 0"));
        assert!(!long("fn bump(&mut self)", "self.count += 1;"));
        assert!(!long(
            "fn pick(&self, a: u32, b: (bool, char)) -> u32",
            "let x = if b.0 && self.on { a } else { 1 }; x as u32"
        ));
        assert!(!long_in(
            "fn as_usize(self) -> usize",
            true,
            "self as usize"
        ));
        // A helper defined inside is not run by defining it.
        assert!(!long(
            "fn f(&self) -> u8",
            "fn helper() { loop {} } let g = || 1; self.b"
        ));
    }

    #[test]
    fn loops_calls_macros_and_operators_may_run_long() {
        for body in [
            "loop {}",
            "while self.x < 10 { self.x += 1; }",
            "for _ in 0..self.n {}",
            "self.items.len()",
            "work()",
            "format!(\"{}\", 1); 1",
            "self.a + self.b",
            "self.a == self.b",
            "self.v[3]",
            "-self.x",
            "*self.ptr",
            "self.name = other_name;",
            "self.parse()?",
            "self.text += \"more\";",
            "[0u8; 1 << 20]",
            "let = ;",
        ] {
            assert!(long("fn f(&mut self)", body), "{body}");
        }
    }

    #[test]
    fn what_the_function_owns_and_drops_may_run_long() {
        assert!(long("fn f(v: Vec<u8>)", ""));
        assert!(long("fn f<T>(t: T)", ""));
        assert!(long("fn f(self) -> usize", "self as usize"), "Self unknown");
        assert!(long("fn f(self: Box<Self>)", ""));
        assert!(!long(
            "fn f(self: &Self, p: *const u8, g: fn(), a: [u32; 4])",
            ""
        ));
        assert!(long("async fn f(&self)", ""));
    }

    #[test]
    fn only_drop_free_types_are_primitive() {
        let ty = |s: &str| syn::parse_str::<Type>(s).unwrap();
        assert!(has_no_drop_glue(&ty("u32"), false));
        assert!(has_no_drop_glue(&ty("&String"), false));
        assert!(has_no_drop_glue(&ty("(u8, [i64; 2])"), false));
        assert!(!has_no_drop_glue(&ty("String"), false));
        assert!(!has_no_drop_glue(&ty("Option<u8>"), false));
        assert!(!has_no_drop_glue(&ty("std::primitive::u8"), false));
        assert!(has_no_drop_glue(&ty("Self"), true));
        assert!(!has_no_drop_glue(&ty("Self"), false));
    }
}
