//! `async fn`: the call is recorded when the future is created, so the
//! function becomes a synchronous one that records it and returns its body
//! as an instrumented future.
//!
//! ```text
//! async fn load(id: u32, (a, b): (u8, u8)) -> Data { body }
//! ```
//! becomes, when instrumentation is on,
//! ```text
//! fn load(arg0: u32, arg1: (u8, u8)) -> __future_of!(Data) {
//!     static SITE: Site = Site::new_async(..);
//!     Instrumented::new(&SITE, .., async move { let id = arg0; let (a, b) = arg1; body })
//! }
//! ```
//! which, like the `async fn`, moves every argument into the future and
//! captures every lifetime (see the runtime's `__future_of!`).
//!
//! Another attribute macro that must see an `async fn` (`#[wasm_bindgen]`,
//! `#[wasm_bindgen_test]`, `#[tokio::main]`, or `#[async_trait]` on its impl
//! block or trait, after ours) keeps it: the function stays
//! `async` and awaits its instrumented body, so its call is recorded at its
//! first poll, from where it is polled (for those, the host or a harness:
//! the root).
//!
//! Either way the runtime decides, so that an ordinary build gets the
//! `async fn` unchanged: `__instrument_async!` chooses between the new
//! function and the one as written, `__instrument_async_body!` between the
//! instrumented body and the body as written.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote};
use syn::{Attribute, FnArg, Pat, ReturnType, Signature};

use super::{Entry, FnName, MaybeItemFn, SelfType, braced, line_of};

pub(super) fn expand(
    function: &MaybeItemFn,
    krate: &TokenStream,
    name: &FnName,
    self_type: SelfType,
    entry: Entry,
) -> TokenStream {
    let MaybeItemFn {
        outer_attrs,
        vis,
        defaultness,
        sig,
        brace,
        inner_attrs,
        body,
        keep_async,
        // Only plain functions are kept out of line.
        primitive_self: _,
        // A future's state is not thread-local: its site keeps none.
        slot: _,
    } = function;
    let Signature {
        unsafety,
        abi,
        fn_token,
        ident,
        generics,
        paren_token,
        inputs,
        output,
        ..
    } = sig;
    let where_clause = &generics.where_clause;
    let line = line_of(ident);
    let self_type = self_type.tokens();
    let at_root = entry == Entry::Test;
    let output_type = match output {
        ReturnType::Default => quote!(()),
        ReturnType::Type(_, ty) => ty.to_token_stream(),
    };
    // `-> !` may be written only as a function's return type on stable:
    // neither the future's `Output` nor a `let` may name it.
    let never = matches!(output, ReturnType::Type(_, ty) if matches!(**ty, syn::Type::Never(_)));
    let pin_output = if never {
        TokenStream::new()
    } else {
        pin_output(&output_type)
    };
    let (literal, given) = (&name.literal, name.given);
    let site = quote! {
        static __WASMPROF_SITE: #krate::__private::Site = #krate::__private::Site::new_async(
            ::core::module_path!(),
            #literal,
            ::core::file!(),
            #line,
        )
        .marked(__wasmprof_here, #given);
        #krate::__name_marker!(__WASMPROF_SITE);
    };
    // `--verify-counts`: a second count of the call, made where the
    // runtime records it, when the future is created.
    let oracle = quote!(#krate::__oracle_hit!(#literal, #given, #line, #self_type););
    let braces = brace.span.join();
    if never || *keep_async || keeps_async(outer_attrs) {
        // The function itself stays as written, for the other macro to see
        // (or to keep its `-> !`); only its body changes, and only when
        // instrumentation is on.
        let instrumented = quote! {{
            #oracle
            #krate::__private::Instrumented::new(
                &__WASMPROF_SITE,
                #self_type,
                #at_root,
                async move { #pin_output #body },
            )
            .await
        }};
        // A body that never returns: its future never completes, and the
        // function's `!` is the loop after it, never reached.
        let (on, allow) = if never {
            (
                quote!(let _ = #instrumented; loop {}),
                quote!(#[allow(unreachable_code)]),
            )
        } else {
            (instrumented, TokenStream::new())
        };
        let new_body = braced(
            braces,
            quote! {
                #(#inner_attrs)*
                #krate::__instrument_async_body! {
                    on = {
                        #site
                        #on
                    }
                    off = { #body }
                }
            },
        );
        let asyncness = &sig.asyncness;
        return quote! {
            #(#outer_attrs)*
            #allow
            #vis #defaultness #asyncness #unsafety #abi
            #fn_token #ident #generics (#inputs) #output #where_clause
            #new_body
        };
    }
    let off = function.as_written();
    let on = {
        let mut params = Vec::new();
        let mut bindings = Vec::new();
        for (index, input) in inputs.iter().enumerate() {
            match input {
                FnArg::Receiver(receiver) => {
                    params.push(receiver.to_token_stream());
                    // Moved into the future even if the body does not use
                    // it, as an `async fn` does.
                    bindings.push(quote!(let _ = &self;));
                }
                FnArg::Typed(typed) => {
                    let arg = format_ident!("__wasmprof_arg{}", index, span = Span::mixed_site());
                    let ty = &typed.ty;
                    params.push(quote!(#arg: #ty));
                    let attrs = &typed.attrs;
                    let pat = &typed.pat;
                    bindings.push(match &*typed.pat {
                        // `let _ = arg` would not move it: keep it alive
                        // until the future ends, as an `async fn` does.
                        Pat::Wild(_) => quote!(#(#attrs)* let #arg = #arg;),
                        _ => quote!(#(#attrs)* let #pat = #arg;),
                    });
                }
            }
        }
        let mut param_list = TokenStream::new();
        paren_token.surround(&mut param_list, |tokens| {
            tokens.extend(quote!(#(#params),*));
        });
        let new_body = braced(
            braces,
            quote! {
                #(#inner_attrs)*
                #site
                #oracle
                #krate::__private::Instrumented::new(
                    &__WASMPROF_SITE,
                    #self_type,
                    #at_root,
                    async move {
                        #(#bindings)*
                        #pin_output
                        #body
                    },
                )
            },
        );
        quote! {
            #(#outer_attrs)*
            #vis #defaultness #unsafety #abi
            #fn_token #ident #generics #param_list -> #krate::__future_of!(#output_type)
            #where_clause
            #new_body
        }
    };
    quote! {
        #krate::__instrument_async! {
            on = { #on }
            off = { #off }
        }
    }
}

/// Tells the `async` block what it returns, so that `?` and `return` in the
/// body infer as they do in the `async fn`: an unreachable `return` of a
/// value of the declared type. Not when that type is an `impl Trait`,
/// which a `let` cannot name.
fn pin_output(output_type: &TokenStream) -> TokenStream {
    if mentions_impl(output_type.clone()) {
        return TokenStream::new();
    }
    quote! {
        #[allow(unreachable_code, clippy::diverging_sub_expression)]
        if false {
            let __wasmprof_output: #output_type = loop {};
            return __wasmprof_output;
        }
    }
}

fn mentions_impl(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|tree| match tree {
        TokenTree::Ident(ident) => ident == "impl",
        TokenTree::Group(group) => mentions_impl(group.stream()),
        _ => false,
    })
}

/// Whether another attribute on the function may need to see it as an
/// `async fn`: any attribute but the built-in ones that only annotate it.
pub(super) fn keeps_async(attrs: &[Attribute]) -> bool {
    const INERT: &[&str] = &[
        "doc",
        "allow",
        "warn",
        "deny",
        "forbid",
        "expect",
        "cfg",
        "cfg_attr",
        "must_use",
        "inline",
        "cold",
        "track_caller",
        "deprecated",
        "rustfmt",
        "clippy",
        "diagnostic",
    ];
    attrs.iter().any(|attr| {
        let first = attr.path().segments.first();
        !first.is_some_and(|segment| INERT.iter().any(|inert| segment.ident == inert))
    })
}
