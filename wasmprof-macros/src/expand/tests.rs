//! The expansion, checked on tokens (proc_macro2 runs outside the compiler
//! here, with real line numbers thanks to `span-locations`).

use super::*;

fn tokens(source: &str) -> TokenStream {
    match source.parse() {
        Ok(tokens) => tokens,
        Err(error) => panic!("bad test input {source:?}: {error}"),
    }
}

fn expand(args: &str, item: &str) -> TokenStream {
    instrument(tokens(args), tokens(item))
}

fn text(tokens: &TokenStream) -> String {
    tokens.to_string()
}

/// The `__instrument_body!` invocations of an expansion, as
/// `(name, line, self_type)`.
fn sites(expanded: &TokenStream) -> Vec<(String, String, String)> {
    struct Invocation(String, String, String);
    impl Parse for Invocation {
        fn parse(input: ParseStream) -> syn::Result<Self> {
            let field = |input: ParseStream, key: &str| -> syn::Result<String> {
                let ident: Ident = input.parse()?;
                assert_eq!(ident, key);
                input.parse::<Token![=]>()?;
                let mut value = TokenStream::new();
                while !input.peek(Token![,]) {
                    value.extend(Some(input.parse::<TokenTree>()?));
                }
                input.parse::<Token![,]>()?;
                Ok(value.to_string())
            };
            let name = field(input, "name")?;
            // Checked by its own test.
            field(input, "given")?;
            let line = field(input, "line")?;
            let self_type = field(input, "self_type")?;
            input.parse::<TokenStream>()?;
            Ok(Invocation(name, line, self_type))
        }
    }
    fn walk(tokens: TokenStream, out: &mut Vec<(String, String, String)>) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, tree) in trees.iter().enumerate() {
            if let TokenTree::Group(group) = tree {
                let after_bang = i >= 2
                    && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '!')
                    && matches!(&trees[i - 2], TokenTree::Ident(id) if id == "__instrument_body");
                if after_bang {
                    let Invocation(name, line, self_type) = syn::parse2(group.stream()).unwrap();
                    out.push((name, line, self_type));
                }
                walk(group.stream(), out);
            }
        }
    }
    let mut out = Vec::new();
    walk(expanded.clone(), &mut out);
    out
}

const NONE: &str = ":: core :: option :: Option :: None";

fn is_some_self(self_type: &str) -> bool {
    self_type.starts_with(":: core :: option :: Option :: Some")
        && self_type.contains("type_name :: < Self >")
}

fn error_of(expanded: &TokenStream) -> Option<String> {
    let trees: Vec<TokenTree> = expanded.clone().into_iter().collect();
    let at = trees
        .iter()
        .position(|tree| matches!(tree, TokenTree::Ident(id) if id == "compile_error"))?;
    let TokenTree::Group(group) = trees.get(at + 2)? else {
        return None;
    };
    syn::parse2::<LitStr>(group.stream())
        .ok()
        .map(|lit| lit.value())
}

#[test]
fn a_free_function_keeps_everything_and_wraps_its_body() {
    let source = "/// Adds one.\n\
                  #[inline]\n\
                  #[must_use]\n\
                  pub(crate) fn add_one(a: u32) -> u32 {\n\
                      #![allow(unused_variables)]\n\
                      let unused = 1;\n\
                      a + 1\n\
                  }";
    let expanded = expand("", source);
    let function: syn::ItemFn = syn::parse2(expanded.clone()).unwrap();
    let original: syn::ItemFn = syn::parse2(tokens(source)).unwrap();
    assert_eq!(
        text(&function.sig.to_token_stream()),
        text(&original.sig.to_token_stream())
    );
    assert_eq!(text(&function.vis.to_token_stream()), "pub (crate)");
    // Outer attributes first, in order; the inner one stays an attribute of
    // the function.
    let attrs: Vec<String> = function
        .attrs
        .iter()
        .map(|a| text(&a.to_token_stream()))
        .collect();
    assert_eq!(
        attrs,
        [
            "# [doc = \" Adds one.\"]",
            "# [inline]",
            "# [must_use]",
            "# ! [allow (unused_variables)]"
        ]
    );
    assert_eq!(
        sites(&expanded),
        [("\"add_one\"".to_owned(), "4".to_owned(), NONE.to_owned())]
    );
    let body = text(&function.block.to_token_stream());
    assert!(
        body.contains(":: wasmprof :: __instrument_body !"),
        "{body}"
    );
    assert!(body.contains("body = { let unused = 1 ; a + 1 }"), "{body}");
}

#[test]
fn the_line_is_the_line_of_the_name() {
    let expanded = expand(
        "",
        "#[cfg(all())]\n\n/// doc\n/// more doc\nunsafe extern \"C\"\nfn\nlate() {}",
    );
    assert_eq!(sites(&expanded)[0].1, "7");
}

#[test]
fn generics_where_clauses_and_impl_trait_survive() {
    let source = "pub fn pick<'a, T: Clone + 'a, const N: usize>(xs: &'a [T; N], f: impl Fn(&T) -> bool) \
                  -> impl Iterator<Item = T> + 'a where T: Default, for<'b> &'b T: PartialEq { \
                  xs.iter().filter(move |x| f(x)).cloned() }";
    let expanded = expand("", source);
    let function: syn::ItemFn = syn::parse2(expanded).unwrap();
    let original: syn::ItemFn = syn::parse2(tokens(source)).unwrap();
    assert_eq!(
        text(&function.sig.to_token_stream()),
        text(&original.sig.to_token_stream())
    );
    assert!(function.sig.generics.where_clause.is_some());
}

#[test]
fn unsafe_extern_and_raw_names() {
    let expanded = expand(
        "",
        "pub unsafe extern \"C\" fn r#match(p: *const u8) -> u8 { *p }",
    );
    let function: syn::ItemFn = syn::parse2(expanded.clone()).unwrap();
    assert!(function.sig.unsafety.is_some());
    assert_eq!(text(&function.sig.abi.to_token_stream()), "extern \"C\"");
    assert_eq!(sites(&expanded)[0].0, "\"match\"");
}

#[test]
fn methods_are_named_by_self() {
    for source in [
        "fn a(self) {}",
        "fn a(&self) {}",
        "fn a(&mut self) {}",
        "fn a(self: Box<Self>) {}",
        "fn a(mut self: std::rc::Rc<Self>) {}",
        "fn a() -> Self { todo!() }",
        "fn a(x: Option<Vec<Self>>) {}",
        "fn a<T>() where T: From<Self> {}",
        "fn a() -> u32 { Self::B }",
        "fn a() -> u32 { let s = Self { x: 1 }; s.x }",
        "fn a() -> u32 { (|| Self::B)() }",
    ] {
        let (_, _, self_type) = sites(&expand("", source)).remove(0);
        assert!(is_some_self(&self_type), "{source}: {self_type}");
    }
}

#[test]
fn free_functions_never_use_self() {
    // `Self` in a nested item or a macro's tokens says nothing about the
    // function: there it would not compile.
    for source in [
        "fn a() {}",
        "fn a(x: u32) -> u32 { x }",
        "fn a() { struct S; impl S { fn new() -> Self { S } } }",
        "fn a() { fn inner() -> u32 { 0 } }",
        "fn a() { m!(Self); }",
        "fn a() -> u32 { this is not rust Self }",
    ] {
        let (_, _, self_type) = sites(&expand("", source)).remove(0);
        assert_eq!(self_type, NONE, "{source}");
    }
}

#[test]
fn a_body_that_does_not_parse_still_expands() {
    let expanded = expand("", "fn half(a: u32) -> u32 { let x = ; a. }");
    assert!(error_of(&expanded).is_none());
    assert!(text(&expanded).contains("body = { let x = ; a . }"));
    let expanded = expand("", "fn half() { #![allow(unused)] let x = }");
    assert!(text(&expanded).contains("{ # ! [allow (unused)] :: wasmprof"));
}

#[test]
fn arguments_change_name_and_runtime_path() {
    let expanded = expand(
        "name = \"parse_all\", crate = my::wasmprof",
        "fn parse() {}",
    );
    assert_eq!(sites(&expanded)[0].0, "\"parse_all\"");
    // A name given by hand is kept; a derived one gives way to rustc's.
    assert!(text(&expanded).contains("name = \"parse_all\" , given = true"));
    assert!(text(&expand("", "fn parse() {}")).contains("name = \"parse\" , given = false"));
    assert!(text(&expanded).contains("my :: wasmprof :: __instrument_body !"));
    let expanded = expand("crate = ::other", "fn parse() {}");
    assert!(text(&expanded).contains(":: other :: __instrument_body !"));
}

#[test]
fn a_test_enters_at_the_root_and_keeps_its_test_attribute() {
    let expanded = expand("test", "#[test] fn adds() { assert_eq!(1 + 1, 2); }");
    let written = text(&expanded);
    assert!(written.starts_with("# [test] fn adds ()"), "{written}");
    assert!(
        written.contains("__instrument_body ! { test , name = \"adds\""),
        "{written}"
    );
    let plain = expand("", "fn adds() {}");
    assert!(!text(&plain).contains("test ,"));
}

#[test]
fn misuse_is_one_error_and_the_item_unchanged() {
    let cases = [
        (
            "count",
            "pub async fn fetch() -> u32 { 1 }",
            "`count` cannot be used on an async fn: its futures are recorded in full (calls, \
             polls, completions), which a counter alone cannot do",
        ),
        (
            "",
            "const fn zero() -> u32 { 0 }",
            "#[wasmprof::instrument] cannot instrument a const fn: a const fn cannot call the \
             profiler's runtime",
        ),
        (
            "",
            "#[derive(Debug)] pub struct Point { x: u32 }",
            "#[wasmprof::instrument] applies to functions, impl blocks, traits and inline modules",
        ),
        (
            "",
            "enum E { A }",
            "#[wasmprof::instrument] applies to functions, impl blocks, traits and inline modules",
        ),
        (
            "",
            "fn declared(x: u32);",
            "#[wasmprof::instrument] needs a function with a body",
        ),
        (
            "level = 1",
            "fn f() {}",
            "expected one of: `crate`, `name`, `test`, `count`",
        ),
        (
            "name = 1",
            "fn f() {}",
            "expected a string literal: `name = \"my_function\"`",
        ),
        (
            "name = \"x\"",
            "impl S { fn f() {} }",
            "`name` names a single function and cannot be used on an impl block",
        ),
        (
            "test",
            "mod tests { fn f() {} }",
            "`test` marks a single test function and cannot be used on a module",
        ),
        ("test, test", "fn f() {}", "`test` is given more than once"),
    ];
    for (args, item, message) in cases {
        let expanded = expand(args, item);
        assert_eq!(error_of(&expanded).as_deref(), Some(message), "{item}");
        assert_eq!(text(&expanded).matches("compile_error").count(), 1);
        assert!(
            text(&expanded).ends_with(&text(&tokens(item))),
            "the item follows the error: {expanded}"
        );
    }
}

#[test]
fn errors_point_at_the_offending_token() {
    let span_of = |args: &str, item: &str| {
        let expanded = expand(args, item);
        let error = expanded.into_iter().next().unwrap();
        let start = error.span().start();
        (start.line, start.column)
    };
    // Columns of `count`, `const`, `struct`, `level`.
    assert_eq!(span_of("count", "pub async fn f() {}"), (1, 0));
    assert_eq!(span_of("", "/// doc\nconst fn f() {}"), (2, 0));
    assert_eq!(span_of("", "#[derive(Debug)]\npub struct S;"), (2, 4));
    assert_eq!(span_of("name = \"a\", level = 1", "fn f() {}"), (1, 12));
}

#[test]
fn skip_checks_its_arguments() {
    let item = tokens("fn f() {}");
    assert_eq!(text(&skip(TokenStream::new(), item.clone())), text(&item));
    let expanded = skip(tokens("x"), item.clone());
    assert_eq!(
        error_of(&expanded).as_deref(),
        Some("#[wasmprof::skip] takes no arguments")
    );
    assert!(text(&expanded).ends_with(&text(&item)));
}

#[test]
fn an_impl_block_instruments_its_methods() {
    let source = "impl<T: Clone> Stack<T> {\n\
                      #![allow(dead_code)]\n\
                      pub fn new() -> Self { Stack(Vec::new()) }\n\
                      fn len(&self) -> usize { self.0.len() }\n\
                      #[wasmprof::skip]\n\
                      fn skipped(&self) {}\n\
                      #[skip]\n\
                      fn skipped_too(&self) {}\n\
                      #[wasmprof::instrument(name = \"own\")]\n\
                      fn has_its_own(&self) {}\n\
                      const fn constant() -> u32 { 1 }\n\
                      async fn later(&self) {}\n\
                      const C: u32 = 1;\n\
                  }";
    let expanded = expand("", source);
    let imp: ItemImpl = syn::parse2(expanded.clone()).unwrap();
    assert_eq!(imp.items.len(), 8);
    let found = sites(&expanded);
    let names: Vec<&str> = found.iter().map(|(name, _, _)| name.as_str()).collect();
    // A member with an attribute of its own is expanded here too, with its
    // own arguments and its block's `Self`.
    assert_eq!(names, ["\"new\"", "\"len\"", "\"own\""]);
    assert_eq!(found[0].1, "3");
    assert_eq!(found[1].1, "4");
    assert!(
        found
            .iter()
            .all(|(_, _, self_type)| is_some_self(self_type))
    );
    let text = text(&expanded);
    assert!(text.contains("# ! [allow (dead_code)]"));
    assert!(text.contains("# [wasmprof :: skip] fn skipped (& self) { }"));
    assert!(!text.contains("# [wasmprof :: instrument"));
    assert!(text.contains("const fn constant () -> u32 { 1 }"));
    assert!(text.contains("__instrument_async ! { on = { fn later (& self) -> "));
}

#[test]
fn an_async_fn_records_its_call_when_the_future_is_created() {
    let expanded = text(&expand(
        "",
        "pub async fn load<'a>(id: u32, (a, b): (u8, u8), _: String, name: &'a str) -> Result<u8, E> { body }",
    ));
    // On: a synchronous function returning the instrumented body, every
    // argument moved into it; off: the function as written.
    assert!(expanded.contains("on = { pub fn load < 'a > (__wasmprof_arg0 : u32 , __wasmprof_arg1 : (u8 , u8) , __wasmprof_arg2 : String , __wasmprof_arg3 : & 'a str) -> :: wasmprof :: __future_of ! (Result < u8 , E >)"), "{expanded}");
    assert!(expanded.contains("Site :: new_async"), "{expanded}");
    assert!(expanded.contains("async move { let id = __wasmprof_arg0 ; let (a , b) = __wasmprof_arg1 ; let __wasmprof_arg2 = __wasmprof_arg2 ; let name = __wasmprof_arg3 ;"), "{expanded}");
    assert!(
        expanded.contains("let __wasmprof_output : Result < u8 , E > = loop { } ;"),
        "{expanded}"
    );
    assert!(expanded.contains("off = { pub async fn load < 'a > (id : u32 , (a , b) : (u8 , u8) , _ : String , name : & 'a str) -> Result < u8 , E > { body } }"), "{expanded}");
}

#[test]
fn an_async_fn_under_another_attribute_macro_stays_async() {
    let expanded = text(&expand(
        "",
        "#[wasm_bindgen]\npub async fn start() { body }",
    ));
    assert!(
        expanded.starts_with(
            "# [wasm_bindgen] pub async fn start () { :: wasmprof :: __instrument_async_body ! { on = {"
        ),
        "{expanded}"
    );
    assert!(
        expanded.ends_with(". await } } off = { body } } }"),
        "{expanded}"
    );
    // `--verify-counts` counts the call where the runtime records it.
    assert!(
        expanded.contains(
            "{ :: wasmprof :: __oracle_hit ! (\"start\" , false , 2 , :: core :: option :: Option :: None) ; :: wasmprof :: __private :: Instrumented :: new"
        ),
        "{expanded}"
    );
}

#[test]
fn an_async_method_of_a_block_under_another_attribute_macro_stays_async() {
    let expanded = text(&expand(
        "",
        "#[async_trait]\nimpl Fetch for Source { async fn fetch(&self) -> u32 { 1 } }",
    ));
    assert!(
        expanded
            .contains("async fn fetch (& self) -> u32 { :: wasmprof :: __instrument_async_body !"),
        "{expanded}"
    );
    assert!(!expanded.contains("__instrument_async !"), "{expanded}");
}

#[test]
fn trait_impls_trait_defaults_and_blanket_impls() {
    let expanded = expand(
        "",
        "impl Shape for Circle { fn area(&self) -> f64 { 1.0 } }",
    );
    let found = sites(&expanded);
    assert_eq!(found[0].0, "\"area\"");
    assert!(is_some_self(&found[0].2));

    let expanded = expand("", "impl<T: Display> Show for T { fn show(&self) {} }");
    assert_eq!(
        sites(&expanded),
        [("\"Show::show\"".to_owned(), "1".to_owned(), NONE.to_owned())]
    );

    let expanded = expand(
        "",
        "pub trait Shape { fn area(&self) -> f64; fn twice(&self) -> f64 { 2.0 * self.area() } }",
    );
    assert_eq!(
        sites(&expanded),
        [(
            "\"Shape::twice\"".to_owned(),
            "1".to_owned(),
            NONE.to_owned()
        )]
    );
    let tr: ItemTrait = syn::parse2(expanded).unwrap();
    assert_eq!(tr.items.len(), 2);
}

#[test]
fn a_module_instruments_everything_inside() {
    let source = "mod m {\n\
                      //! docs\n\
                      use std::fmt;\n\
                      pub fn free() {}\n\
                      #[wasmprof::skip]\n\
                      fn skipped() {}\n\
                      impl S { fn method(&self) {} }\n\
                      #[wasmprof::skip]\n\
                      impl S { fn skipped_method(&self) {} }\n\
                      trait T { fn default_method(&self) {} }\n\
                      mod inner { fn deep() { fn nested_in_body() {} } }\n\
                      #[my::wasmprof::skip]\n\
                      fn skipped_by_crate_path() {}\n\
                  }";
    let expanded = expand("crate = my::wasmprof", source);
    let found: Vec<(String, String)> = sites(&expanded)
        .into_iter()
        .map(|(name, line, _)| (name, line))
        .collect();
    let expected = [
        ("\"free\"", "4"),
        ("\"method\"", "7"),
        ("\"T::default_method\"", "10"),
        ("\"deep\"", "11"),
    ];
    assert_eq!(
        found,
        expected.map(|(name, line)| (name.to_owned(), line.to_owned()))
    );
    let module: ItemMod = syn::parse2(expanded.clone()).unwrap();
    assert_eq!(module.content.unwrap().1.len(), 8);
    assert!(text(&expanded).contains("# ! [doc = \" docs\"]"));
}

#[test]
fn count_is_the_count_only_entry_on_functions_and_blocks() {
    let expanded = text(&expand("count", "fn get(&self) -> u32 { self.0 }"));
    assert!(
        expanded.contains("__instrument_body ! { count , name = \"get\""),
        "{expanded}"
    );
    let block = text(&expand("count", "impl S { fn a(&self) {} fn b() {} }"));
    assert_eq!(block.matches("{ count , name =").count(), 2, "{block}");
}

#[test]
fn a_member_with_its_own_attribute_is_expanded_with_its_block_s_self() {
    // What crate-wide instrumentation writes: a fully instrumented impl
    // with a small method counted only; `new` does not mention `Self`, yet
    // is named by its type.
    let expanded = text(&expand(
        "crate = ::wasmprof_rt",
        "impl LineStart { \
             fn scan(&mut self) -> usize { 0 } \
             #[::wasmprof_rt::instrument(crate = ::wasmprof_rt, count)] \
             fn new(n: usize) -> LineStart { LineStart(n) } \
             #[::wasmprof_rt::instrument(name = \"renamed\")] \
             fn other() {} \
         }",
    ));
    assert!(
        !expanded.contains("# [:: wasmprof_rt :: instrument"),
        "{expanded}"
    );
    let new = &expanded[expanded.find("fn new").unwrap()..];
    assert!(
        new.contains(":: wasmprof_rt :: __instrument_body ! { count , name = \"new\""),
        "{new}"
    );
    assert!(new.contains("type_name :: < Self >"), "{new}");
    let other = &expanded[expanded.find("fn other").unwrap()..];
    assert!(
        other.contains(":: wasmprof_rt :: __instrument_body ! { name = \"renamed\""),
        "{other}"
    );
}

#[test]
fn sampled_builds_keep_frames_of_what_may_run_long() {
    let keeps = |frames, entry, long: bool| keeps_frame(frames, entry, || long, &[]);
    assert!(!keeps(KeepFrames::None, Entry::Call, true));
    assert!(keeps(KeepFrames::Full, Entry::Call, true));
    // A call that cannot run long needs no sample of its own.
    assert!(!keeps(KeepFrames::Full, Entry::Call, false));
    assert!(!keeps(KeepFrames::Full, Entry::Count, true));
    assert!(keeps(KeepFrames::WithCounted, Entry::Count, true));
    assert!(!keeps(KeepFrames::WithCounted, Entry::Count, false));
    // The user's own inline attribute wins.
    let inline: Attribute = syn::parse_quote!(#[inline]);
    assert!(!keeps_frame(
        KeepFrames::Full,
        Entry::Call,
        || true,
        &[inline]
    ));
}

#[test]
fn another_crate_s_attribute_macro_runs_first_and_ours_on_what_it_makes() {
    let item = "/// Docs.\n#[inline]\n#[function_component]\npub fn App() -> Html { html! {} }";
    let out = text(&expand("", item));
    assert!(
        out.starts_with(
            "# [doc = \" Docs.\"] # [inline] # [function_component] # [:: wasmprof :: instrument (name = \"App\" , __after_macro)] pub fn App"
        ),
        "{out}"
    );
    assert!(!out.contains("__instrument_body"), "not yet: {out}");
    // Arguments and the runtime's path go along.
    let out = text(&expand(
        "crate = my::wasmprof, count",
        "#[yew::hook] fn use_x() {}",
    ));
    assert!(
        out.starts_with(
            "# [yew :: hook] # [my :: wasmprof :: instrument (name = \"use_x\" , __after_macro , crate = my :: wasmprof , count)] fn use_x"
        ),
        "{out}"
    );
    let out = text(&expand("name = \"mine\"", "#[component] fn f() {}"));
    assert!(
        out.starts_with(
            "# [component] # [:: wasmprof :: instrument (__after_macro , name = \"mine\")] fn f"
        ),
        "{out}"
    );
    // Inert attributes, tools' and the macros ours is known to go above
    // stay below it: the function is instrumented now.
    for attr in [
        "#[inline]",
        "#[rustfmt::skip]",
        "#[wasm_bindgen]",
        "#[test]",
        "#[cfg(test)]",
    ] {
        let out = text(&expand("", &format!("{attr} fn f() {{}}")));
        assert!(out.contains("__instrument_body"), "{attr}: {out}");
    }
}

#[test]
fn what_wasm_bindgen_writes_around_the_user_s_function_is_left_alone() {
    // Below `#[wasm_bindgen]`, ours is copied onto the export's shim and
    // its descriptor (which the wasm-bindgen CLI interprets); the user's
    // function, which keeps it too, is the one instrumented.
    for glue in [
        "#[automatically_derived] pub unsafe extern \"C-unwind\" fn __wasm_bindgen_generated_start() -> u32 { 0 }",
        "#[no_mangle] pub extern \"C-unwind\" fn __wbindgen_describe___wasm_bindgen_generated_start() { inform(FUNCTION); }",
    ] {
        assert_eq!(text(&expand("", glue)), text(&tokens(glue)));
    }
    let out = text(&expand("", "pub fn start() {}"));
    assert!(out.contains("__instrument_body"), "{out}");
}

#[test]
fn ours_copied_by_another_macro_onto_an_item_it_made_leaves_that_item_alone() {
    // `#[warnings::warning]` declares a struct with the function's
    // attributes: ours, gone below it, lands there too.
    let out = text(&expand(
        "name = \"called\", __after_macro, count",
        "#[allow(non_camel_case_types)] pub(crate) struct called {}",
    ));
    assert_eq!(
        out,
        "# [allow (non_camel_case_types)] pub (crate) struct called { }"
    );
    // Written by hand on a struct, it is still an error.
    let out = text(&expand("", "struct S {}"));
    assert!(out.contains("compile_error"), "{out}");
}

#[test]
fn a_slot_goes_to_the_body_in_its_tier_and_only_from_a_functions_own_attribute() {
    let free = text(&expand("__slot = 3", "fn f() {}"));
    assert!(free.contains("__slot = full 3 , name"), "{free}");
    let counted = text(&expand("count, __slot = 4", "fn f() {}"));
    assert!(
        counted.contains("count , __slot = counted 4 , name"),
        "{counted}"
    );
    let members = text(&expand(
        "",
        "impl A { #[wasmprof::instrument(count, __slot = 7)] fn a(&self) {} fn b(&self) {} }",
    ));
    assert!(members.contains("__slot = counted 7"), "{members}");
    assert_eq!(members.matches("__slot").count(), 1, "{members}");
    // A test and an async fn keep no per-thread state in a block.
    assert!(!text(&expand("test, __slot = 1", "fn t() {}")).contains("__slot"));
    assert!(!text(&expand("__slot = 2", "async fn a() {}")).contains("__slot"));
}
