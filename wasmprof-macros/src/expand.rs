//! Code generation: the function as written, its body handed to the
//! runtime's `__instrument_body!`.
//!
//! The runtime decides what the body becomes (guard or nothing), so this
//! crate needs no knowledge of how the user's crate is built. Everything
//! here works on `proc_macro2` tokens so that it can be unit-tested.

use proc_macro2::{Delimiter, Group, Literal, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{
    AttrStyle, Attribute, Block, Ident, ImplItem, Item, ItemImpl, ItemMod, ItemTrait, LitStr, Path,
    Signature, Stmt, Token, TraitItem, Type, Visibility, token,
};

use crate::attr::{self, Args};

/// `#[wasmprof::instrument]` on any item.
pub(crate) fn instrument(args: TokenStream, item: TokenStream) -> TokenStream {
    let parsed = match syn::parse2::<Args>(args.clone()) {
        Ok(parsed) => parsed,
        Err(error) => return error_and_item(error, item),
    };
    if is_wasm_bindgen_glue(&item) {
        return item;
    }
    if let Some(later) = after_other_macros(&args, &parsed, &item) {
        return later;
    }
    let args = parsed;
    match expand_item(&args, item.clone()) {
        Ok(expanded) => expanded,
        Err(error) => error_and_item(error, item),
    }
}

/// Whether `item` is a function `#[wasm_bindgen]` wrote around the user's:
/// with our attribute below its own, wasm-bindgen copies the user's
/// attributes, ours included, onto the export's shim and onto its
/// descriptor function. The user's function is instrumented already; a
/// guard in the shim would count every call twice, and one in the
/// descriptor, which the wasm-bindgen CLI runs in its own interpreter,
/// stops the build ("invalid binary op I64Mul").
fn is_wasm_bindgen_glue(item: &TokenStream) -> bool {
    syn::parse2::<MaybeItemFn>(item.clone()).is_ok_and(|function| {
        let name = function.sig.ident.to_string();
        name.starts_with("__wasm_bindgen_generated") || name.starts_with("__wbindgen_")
    })
}

/// A function with another crate's attribute macro below ours (Yew's
/// `#[function_component]` and `#[hook]`, Leptos's and Dioxus's
/// `#[component]`, `#[tokio::main]`): that macro must see the function as
/// its author wrote it, so ours goes below it, and instruments what it
/// makes. The function is handed back with our attribute last, to be
/// expanded again once theirs has run.
fn after_other_macros(
    args: &TokenStream,
    parsed: &Args,
    item: &TokenStream,
) -> Option<TokenStream> {
    struct Split {
        attrs: Vec<Attribute>,
        rest: TokenStream,
    }
    impl Parse for Split {
        fn parse(input: ParseStream) -> syn::Result<Self> {
            let attrs = input.call(Attribute::parse_outer)?;
            let rest = input.parse()?;
            Ok(Split { attrs, rest })
        }
    }
    let function = syn::parse2::<MaybeItemFn>(item.clone()).ok()?;
    let Split { attrs, rest } = syn::parse2(item.clone()).ok()?;
    if !attrs.iter().any(is_other_macro) {
        return None;
    }
    let krate = parsed.krate();
    // What the other macro makes may have another name (Yew's component
    // body becomes `inner`): the calls keep the name the user wrote.
    let args = match parsed.name {
        Some(_) => quote!(__after_macro, #args),
        None if args.is_empty() => {
            let name = default_name(&function.sig.ident);
            quote!(name = #name, __after_macro)
        }
        None => {
            let name = default_name(&function.sig.ident);
            quote!(name = #name, __after_macro, #args)
        }
    };
    Some(quote!(#(#attrs)* #[#krate::instrument(#args)] #rest))
}

/// Whether an attribute may be another crate's attribute macro, still to
/// run (the rule is `wasmprof_attributes::may_be_macro`'s, which the
/// crate-wide rewrite applies too).
fn is_other_macro(attr: &Attribute) -> bool {
    if !matches!(attr.style, AttrStyle::Outer) {
        return false;
    }
    let names = path_names(attr.path());
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    wasmprof_attributes::may_be_macro(&names)
}

/// `#[wasmprof::skip]`: the item unchanged. It marks items that an
/// instrumented impl block, trait or module should leave alone.
pub(crate) fn skip(args: TokenStream, item: TokenStream) -> TokenStream {
    match attr::check_skip_args(args) {
        Ok(()) => item,
        Err(error) => error_and_item(error, item),
    }
}

/// The error, and the item as written so that its uses still resolve and the
/// error is the only one reported.
fn error_and_item(error: syn::Error, item: TokenStream) -> TokenStream {
    let mut out = error.to_compile_error();
    out.extend(item);
    out
}

fn expand_item(args: &Args, item: TokenStream) -> syn::Result<TokenStream> {
    // A function is parsed with its body kept as tokens, so that a body that
    // does not parse yet (code being written in an editor) still expands.
    if let Ok(function) = syn::parse2::<MaybeItemFn>(item.clone()) {
        return expand_fn_item(args, function);
    }
    let parsed = match syn::parse2::<Item>(item.clone()) {
        Ok(parsed) => parsed,
        // Not an item we can read: rustc reports its own syntax errors on
        // the unchanged tokens, and one error is enough.
        Err(_) => return Ok(item),
    };
    let block = match &parsed {
        Item::Impl(_) => Some("an impl block"),
        Item::Trait(_) => Some("a trait"),
        Item::Mod(_) => Some("a module"),
        _ => None,
    };
    if let (Some(what), Some((keyword, _))) = (block, &args.name) {
        return Err(syn::Error::new(
            *keyword,
            format!("`name` names a single function and cannot be used on {what}"),
        ));
    }
    if let (Some(what), Some(keyword)) = (block, args.test) {
        return Err(syn::Error::new(
            keyword,
            format!("`test` marks a single test function and cannot be used on {what}"),
        ));
    }
    let walker = Walker { args };
    match parsed {
        Item::Impl(mut imp) => {
            walker.instrument_impl(&mut imp);
            Ok(imp.into_token_stream())
        }
        Item::Trait(mut tr) => {
            walker.instrument_trait(&mut tr);
            Ok(tr.into_token_stream())
        }
        Item::Mod(mut module) => {
            if module.content.is_none() {
                return Err(syn::Error::new(
                    module.semi.span(),
                    "#[wasmprof::instrument] sees only modules written inline (`mod name { ... }`); \
                     annotate the items in the module's file instead",
                ));
            }
            walker.instrument_mod(&mut module);
            Ok(module.into_token_stream())
        }
        // Put there by the other macro ours went below (`#[warnings::warning]`
        // copies the function's attributes onto a struct it declares): not
        // the function, which ours instruments where that macro put it.
        _ if args.after_macro => Ok(item),
        _ => {
            if let Ok(declaration) = syn::parse2::<FnDeclaration>(item) {
                return Err(syn::Error::new(
                    declaration.semi.span,
                    "#[wasmprof::instrument] needs a function with a body",
                ));
            }
            Err(syn::Error::new(
                keyword_span(&parsed),
                "#[wasmprof::instrument] applies to functions, impl blocks, traits and inline modules",
            ))
        }
    }
}

/// A function annotated on its own.
fn expand_fn_item(args: &Args, function: MaybeItemFn) -> syn::Result<TokenStream> {
    if let Some(constness) = function.sig.constness {
        return Err(syn::Error::new(
            constness.span,
            "#[wasmprof::instrument] cannot instrument a const fn: a const fn cannot call the \
             profiler's runtime",
        ));
    }
    if let (Some(_), Some(count)) = (function.sig.asyncness, args.count) {
        return Err(syn::Error::new(
            count,
            "`count` cannot be used on an async fn: its futures are recorded in full (calls, \
             polls, completions), which a counter alone cannot do",
        ));
    }
    let name = FnName::given_or(&args.name, || default_name(&function.sig.ident));
    // `Self` only compiles inside an impl or trait, so it is used only when
    // the function visibly is in one.
    let self_type = if function.sig.receiver().is_some()
        || mentions_self(function.sig.to_token_stream())
        || body_mentions_self(&function.body)
    {
        SelfType::SelfType
    } else {
        SelfType::None
    };
    let function = MaybeItemFn {
        slot: args.slot,
        ..function
    };
    Ok(function.expand(&args.krate(), &name, self_type, Entry::from_args(args)))
}

/// Where a call is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    /// Under the instrumented call it is made from.
    Call,
    /// At the root: a test, which its harness calls from outside every
    /// instrumented call, even when the test before it failed part-way.
    Test,
    /// Counted under the call it is made from, and nothing more.
    Count,
}

impl Entry {
    fn from_args(args: &Args) -> Entry {
        if args.test.is_some() {
            Entry::Test
        } else if args.count.is_some() {
            Entry::Count
        } else {
            Entry::Call
        }
    }
}

/// How the reports name the function's owner, if it has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SelfType {
    /// Named by module path: free functions, and methods whose `Self` is not
    /// one type (trait default methods, blanket impls), whose name says the
    /// trait instead.
    None,
    /// Named by `type_name::<Self>()`: `crate::module::Type::method`.
    SelfType,
}

impl SelfType {
    /// The `self_type` argument of the runtime's entry points.
    fn tokens(self) -> TokenStream {
        match self {
            SelfType::None => quote!(::core::option::Option::None),
            SelfType::SelfType => quote! {
                ::core::option::Option::Some(
                    (|| ::core::any::type_name::<Self>()) as fn() -> &'static str
                )
            },
        }
    }
}

/// A function, with its body as tokens: enough to re-emit it piece by piece
/// whether or not the statements parse.
struct MaybeItemFn {
    outer_attrs: Vec<Attribute>,
    vis: Visibility,
    defaultness: Option<Token![default]>,
    sig: Signature,
    brace: token::Brace,
    /// `#![...]` at the top of the body: attributes of the function.
    inner_attrs: Vec<Attribute>,
    body: TokenStream,
    /// An `async fn` must stay one: another attribute macro on its impl
    /// block or trait (`#[async_trait]`) will rewrite it.
    keep_async: bool,
    /// In an impl for a type without drop glue (`impl U32 for u32`), which
    /// a by-value `self` may then be without making the call long.
    primitive_self: bool,
    /// Its index in the crate's block of site state, from its own
    /// attribute's `__slot` (see `Args::slot`).
    slot: Option<u32>,
}

impl Parse for MaybeItemFn {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let outer_attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let content;
        let brace = syn::braced!(content in input);
        let inner_attrs = content.call(Attribute::parse_inner)?;
        let body = content.parse()?;
        Ok(MaybeItemFn {
            outer_attrs,
            vis,
            defaultness: None,
            sig,
            brace,
            inner_attrs,
            body,
            keep_async: false,
            primitive_self: false,
            slot: None,
        })
    }
}

impl MaybeItemFn {
    /// From a function syn has parsed in full (inside an impl, trait or
    /// module), where inner and outer attributes share one list.
    fn from_parts(
        attrs: &[Attribute],
        vis: Visibility,
        defaultness: Option<Token![default]>,
        sig: &Signature,
        block: &Block,
    ) -> Self {
        let (inner_attrs, outer_attrs) = attrs
            .iter()
            .cloned()
            .partition(|attr| matches!(attr.style, AttrStyle::Inner(_)));
        let stmts = &block.stmts;
        MaybeItemFn {
            outer_attrs,
            vis,
            defaultness,
            sig: sig.clone(),
            brace: block.brace_token,
            inner_attrs,
            body: quote!(#(#stmts)*),
            keep_async: false,
            primitive_self: false,
            slot: None,
        }
    }

    /// The function with its body wrapped. The signature is re-emitted piece
    /// by piece and keeps its spans, so errors in it point where they did.
    fn expand(
        &self,
        krate: &TokenStream,
        name: &FnName,
        self_type: SelfType,
        entry: Entry,
    ) -> TokenStream {
        if self.sig.asyncness.is_some() {
            return asynchronous::expand(self, krate, name, self_type, entry);
        }
        let MaybeItemFn {
            outer_attrs,
            vis,
            defaultness,
            sig,
            brace,
            inner_attrs,
            body,
            ..
        } = self;
        let Signature {
            constness,
            asyncness,
            unsafety,
            abi,
            fn_token,
            ident,
            generics,
            paren_token,
            inputs,
            variadic,
            output,
        } = sig;
        let where_clause = &generics.where_clause;
        let mut params = TokenStream::new();
        paren_token.surround(&mut params, |tokens| {
            inputs.to_tokens(tokens);
            if let Some(variadic) = variadic {
                if !inputs.empty_or_trailing() {
                    <Token![,]>::default().to_tokens(tokens);
                }
                variadic.to_tokens(tokens);
            }
        });
        let line = line_of(ident);
        let self_type = self_type.tokens();
        let braces = brace.span.join();
        let original_body = braced(braces, body.clone());
        let may_run_long = || bounded::can_run_long(sig, self.primitive_self, body);
        let keep_frame = if keeps_frame(keep_frames(), entry, may_run_long, outer_attrs) {
            quote!(#[inline(never)])
        } else {
            quote!()
        };
        let slot = match (entry, self.slot) {
            (Entry::Call, Some(index)) => {
                let index = proc_macro2::Literal::u32_unsuffixed(index);
                quote!(__slot = full #index,)
            }
            (Entry::Count, Some(index)) => {
                let index = proc_macro2::Literal::u32_unsuffixed(index);
                quote!(__slot = counted #index,)
            }
            _ => quote!(),
        };
        let entry = match entry {
            Entry::Call => quote!(),
            Entry::Test => quote!(test,),
            Entry::Count => quote!(count,),
        };
        let new_body = braced(
            braces,
            quote! {
                #(#inner_attrs)*
                #krate::__instrument_body! {
                    #entry
                    #slot
                    #name,
                    line = #line,
                    self_type = #self_type,
                    body = #original_body
                }
            },
        );
        quote! {
            #(#outer_attrs)*
            #keep_frame
            #vis #defaultness #constness #asyncness #unsafety #abi
            #fn_token #ident #generics #params #output #where_clause
            #new_body
        }
    }
}

/// Which functions this build keeps out of line, so that an engine's
/// sampler sees their frames: `cargo wasmprof` sets `WASMPROF_KEEP_FRAMES`
/// for builds whose runs are sampled, `1` for the fully instrumented ones,
/// `all` for counted ones too (and builds them with a rustc flag of their
/// own, so that cargo does not mix them up with other builds). An ordinary
/// build never has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeepFrames {
    None,
    Full,
    WithCounted,
}

/// Whether a function is kept out of line: only one whose calls may run
/// long ([`bounded`]), for a short one cannot be the long call among
/// short ones that only a sample finds; and never against the user's own
/// `#[inline]`. The body is read only when the build keeps frames at all.
fn keeps_frame(
    frames: KeepFrames,
    entry: Entry,
    may_run_long: impl FnOnce() -> bool,
    attrs: &[Attribute],
) -> bool {
    let keep = match frames {
        KeepFrames::None => false,
        KeepFrames::Full => entry != Entry::Count,
        KeepFrames::WithCounted => true,
    };
    keep && !has_inline(attrs) && may_run_long()
}

fn keep_frames() -> KeepFrames {
    match std::env::var("WASMPROF_KEEP_FRAMES").as_deref() {
        Ok("1") => KeepFrames::Full,
        Ok("all") => KeepFrames::WithCounted,
        _ => KeepFrames::None,
    }
}

/// Whether the user already said how the function is to be inlined.
fn has_inline(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("inline"))
}

impl MaybeItemFn {
    /// The function exactly as written.
    fn as_written(&self) -> TokenStream {
        let MaybeItemFn {
            outer_attrs,
            vis,
            defaultness,
            sig,
            brace,
            inner_attrs,
            body,
            ..
        } = self;
        let body = braced(brace.span.join(), quote!(#(#inner_attrs)* #body));
        quote!(#(#outer_attrs)* #vis #defaultness #sig #body)
    }
}

fn braced(span: Span, tokens: TokenStream) -> TokenTree {
    let mut group = Group::new(Delimiter::Brace, tokens);
    group.set_span(span);
    TokenTree::Group(group)
}

/// `fn name(...);`: a function without a body, which cannot be instrumented.
struct FnDeclaration {
    semi: Token![;],
}

impl Parse for FnDeclaration {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        input.call(Attribute::parse_outer)?;
        input.parse::<Visibility>()?;
        input.parse::<Signature>()?;
        Ok(FnDeclaration {
            semi: input.parse()?,
        })
    }
}

/// The span of an item's keyword (`struct`, `enum`, ...), where a misplaced
/// attribute is reported.
fn keyword_span(item: &Item) -> Span {
    struct Keyword(Span);
    impl Parse for Keyword {
        fn parse(input: ParseStream) -> syn::Result<Self> {
            input.call(Attribute::parse_outer)?;
            input.parse::<Visibility>()?;
            let span = input.cursor().span();
            input.parse::<TokenStream>()?;
            Ok(Keyword(span))
        }
    }
    match syn::parse2::<Keyword>(item.to_token_stream()) {
        Ok(Keyword(span)) => span,
        Err(_) => item.span(),
    }
}

/// The function's own name, without `r#`.
fn default_name(ident: &Ident) -> LitStr {
    LitStr::new(&ident.unraw().to_string(), ident.span())
}

/// The line of the function's name: a literal when the compiler tells it
/// (rustc 1.88+), else `line!()` spanned at the name, which rustc resolves
/// to the same line.
fn line_of(ident: &Ident) -> TokenStream {
    match u32::try_from(ident.span().start().line) {
        Ok(line) if line > 0 => Literal::u32_unsuffixed(line).into_token_stream(),
        _ => quote_spanned!(ident.span()=> ::core::line!()),
    }
}

/// Whether `Self` occurs among the tokens (a signature).
fn mentions_self(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|tree| match tree {
        TokenTree::Ident(ident) => ident == "Self",
        TokenTree::Group(group) => mentions_self(group.stream()),
        _ => false,
    })
}

/// The statements of a function body.
fn parse_statements(body: &TokenStream) -> syn::Result<Vec<Stmt>> {
    struct Statements(Vec<Stmt>);
    impl Parse for Statements {
        fn parse(input: ParseStream) -> syn::Result<Self> {
            Block::parse_within(input).map(Statements)
        }
    }
    syn::parse2::<Statements>(body.clone()).map(|Statements(stmts)| stmts)
}

/// Whether the body uses `Self` itself — not in an item nested in it, where
/// `Self` means that item's type, nor in a macro's tokens, which may be
/// anything. If the body does not parse, it says nothing.
fn body_mentions_self(body: &TokenStream) -> bool {
    struct Finder(bool);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_item(&mut self, _: &'ast Item) {}
        fn visit_ident(&mut self, ident: &'ast Ident) {
            self.0 |= ident == "Self";
        }
    }
    let Ok(stmts) = parse_statements(body) else {
        return false;
    };
    let mut finder = Finder(false);
    for stmt in &stmts {
        finder.visit_stmt(stmt);
    }
    finder.0
}

/// Instruments every function of an impl block, trait or module, except
/// those marked `#[wasmprof::skip]` or carrying their own attribute.
struct Walker<'a> {
    args: &'a Args,
}

impl Walker<'_> {
    /// Whether the item's attributes ask to be left alone.
    fn leaves_alone(&self, attrs: &[Attribute]) -> bool {
        attrs.iter().any(|attr| {
            wasmprof_attributes::CHOICES
                .iter()
                .any(|which| self.is_ours(attr, which))
        })
    }

    /// `#[skip]`, `#[wasmprof::skip]`, `#[<crate path>::skip]`: the rule
    /// the crate-wide rewrite applies too (`wasmprof_attributes`). Bare
    /// attributes are ours inside an instrumented block.
    fn is_ours(&self, attr: &Attribute, which: &str) -> bool {
        let krate: Vec<String> = self
            .args
            .krate_path()
            .map(|path: &Path| path_names(path))
            .unwrap_or_default();
        let krate: Vec<&str> = krate.iter().map(String::as_str).collect();
        let names = path_names(attr.path());
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let scope = wasmprof_attributes::Scope {
            bare_is_ours: true,
            runtime: &krate,
        };
        wasmprof_attributes::is_ours(&names, which, &scope)
    }

    /// Whether a function can be instrumented here; const ones cannot, and
    /// an annotated block leaves them as they are.
    fn wants(&self, attrs: &[Attribute], sig: &Signature) -> bool {
        sig.constness.is_none() && !self.leaves_alone(attrs)
    }

    /// What to expand a member of an impl block or trait with: its
    /// attributes, and its own arguments when it has an `instrument`
    /// attribute of its own (`#[wasmprof::instrument(count)]` among fully
    /// instrumented methods), taken off and expanded here, where its `Self`
    /// is known, with the block's `crate` path unless it gives one. `None`
    /// when the member is left alone: skipped, const, or with
    /// arguments that do not parse (its own expansion reports them).
    fn member(
        &self,
        attrs: &[Attribute],
        sig: &Signature,
    ) -> Option<(Vec<Attribute>, Option<Args>)> {
        let Some(position) = attrs
            .iter()
            .position(|attr| self.is_ours(attr, "instrument"))
        else {
            return self.wants(attrs, sig).then(|| (attrs.to_vec(), None));
        };
        if sig.constness.is_some() {
            return None;
        }
        let mut own = match &attrs[position].meta {
            syn::Meta::Path(_) => Args::default(),
            syn::Meta::List(list) => syn::parse2::<Args>(list.tokens.clone()).ok()?,
            syn::Meta::NameValue(_) => return None,
        };
        if own.krate.is_none() {
            own.krate = self.args.krate_path().cloned();
        }
        let mut rest = attrs.to_vec();
        rest.remove(position);
        Some((rest, Some(own)))
    }

    fn instrument_impl(&self, imp: &mut ItemImpl) {
        // In `impl<T: Bound> Trait for T` the `Self` of the first caller would
        // name every caller: name the trait instead.
        let trait_name = imp
            .trait_
            .as_ref()
            .and_then(|(_, path, _)| path.segments.last())
            .map(|segment| segment.ident.unraw().to_string());
        let blanket = is_type_parameter(&imp.self_ty, &imp.generics);
        let keep_async = asynchronous::keeps_async(&imp.attrs);
        for item in &mut imp.items {
            let ImplItem::Fn(function) = item else {
                continue;
            };
            let Some((attrs, own_args)) = self.member(&function.attrs, &function.sig) else {
                continue;
            };
            let args = own_args.as_ref().unwrap_or(self.args);
            let mut parts = MaybeItemFn::from_parts(
                &attrs,
                function.vis.clone(),
                function.defaultness,
                &function.sig,
                &function.block,
            );
            parts.keep_async = keep_async;
            parts.primitive_self = bounded::has_no_drop_glue(&imp.self_ty, false);
            parts.slot = own_args.as_ref().and_then(|own| own.slot);
            let ident = &function.sig.ident;
            let krate = args.krate();
            let expanded = match (&trait_name, blanket) {
                (Some(trait_name), true) => parts.expand(
                    &krate,
                    &FnName::given_or(&args.name, || owned_name(trait_name, ident)),
                    SelfType::None,
                    Entry::from_args(args),
                ),
                _ => parts.expand(
                    &krate,
                    &FnName::given_or(&args.name, || default_name(ident)),
                    SelfType::SelfType,
                    Entry::from_args(args),
                ),
            };
            *item = ImplItem::Verbatim(expanded);
        }
    }

    fn instrument_trait(&self, tr: &mut ItemTrait) {
        // A default method serves every implementor: name it by the trait.
        let trait_name = tr.ident.unraw().to_string();
        let keep_async = asynchronous::keeps_async(&tr.attrs);
        for item in &mut tr.items {
            let TraitItem::Fn(function) = item else {
                continue;
            };
            let Some(block) = &function.default else {
                continue;
            };
            let Some((attrs, own_args)) = self.member(&function.attrs, &function.sig) else {
                continue;
            };
            let args = own_args.as_ref().unwrap_or(self.args);
            let mut parts =
                MaybeItemFn::from_parts(&attrs, Visibility::Inherited, None, &function.sig, block);
            parts.keep_async = keep_async;
            parts.slot = own_args.as_ref().and_then(|own| own.slot);
            let name =
                FnName::given_or(&args.name, || owned_name(&trait_name, &function.sig.ident));
            *item = TraitItem::Verbatim(parts.expand(
                &args.krate(),
                &name,
                SelfType::None,
                Entry::from_args(args),
            ));
        }
    }

    fn instrument_mod(&self, module: &mut ItemMod) {
        let Some((_, items)) = &mut module.content else {
            return;
        };
        let krate = self.args.krate();
        for item in items {
            match item {
                Item::Fn(function) if self.wants(&function.attrs, &function.sig) => {
                    let parts = MaybeItemFn::from_parts(
                        &function.attrs,
                        function.vis.clone(),
                        None,
                        &function.sig,
                        &function.block,
                    );
                    let name = FnName::derived(default_name(&function.sig.ident));
                    *item = Item::Verbatim(parts.expand(
                        &krate,
                        &name,
                        SelfType::None,
                        Entry::from_args(self.args),
                    ));
                }
                Item::Impl(imp) if !self.leaves_alone(&imp.attrs) => self.instrument_impl(imp),
                Item::Trait(tr) if !self.leaves_alone(&tr.attrs) => self.instrument_trait(tr),
                Item::Mod(inner) if !self.leaves_alone(&inner.attrs) => self.instrument_mod(inner),
                _ => {}
            }
        }
    }
}

/// The name a function's calls are recorded under. One the macro derives
/// is only a fallback: in wasm the reports name the function as rustc does,
/// from the module's name section (see the runtime's `site::Marker`). One
/// the user gave (`name = "..."`, or the name a function had before another
/// crate's macro renamed it) is kept.
pub(crate) struct FnName {
    literal: LitStr,
    given: bool,
}

impl FnName {
    fn derived(literal: LitStr) -> FnName {
        FnName {
            literal,
            given: false,
        }
    }

    /// `given` if the user gave one, else `derived()`.
    fn given_or(given: &Option<(Span, LitStr)>, derived: impl FnOnce() -> LitStr) -> FnName {
        match given {
            Some((_, literal)) => FnName {
                literal: literal.clone(),
                given: true,
            },
            None => FnName::derived(derived()),
        }
    }
}

impl ToTokens for FnName {
    /// `name = "...", given = ...`, as the runtime's macros take them.
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let FnName { literal, given } = self;
        tokens.extend(quote!(name = #literal, given = #given));
    }
}

/// `Trait::method`, which the runtime prefixes with the module path.
fn owned_name(owner: &str, ident: &Ident) -> LitStr {
    LitStr::new(&format!("{owner}::{}", ident.unraw()), ident.span())
}

/// Whether `ty` is one of the impl's own type parameters (a blanket impl).
fn is_type_parameter(ty: &Type, generics: &syn::Generics) -> bool {
    let Type::Path(path) = ty else {
        return false;
    };
    let Some(ident) = path.path.get_ident() else {
        return false;
    };
    path.qself.is_none() && generics.type_params().any(|param| param.ident == *ident)
}

/// A path's segments by name, as the attribute rule takes them.
fn path_names(path: &Path) -> Vec<String> {
    path.segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect()
}

mod asynchronous;
mod bounded;

#[cfg(test)]
mod tests;
