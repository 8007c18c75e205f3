//! The arguments of `#[wasmprof::instrument(...)]` and `#[wasmprof::skip]`.
//!
//! Parsed with `lookahead1`, so that an unknown argument is reported at its
//! own token with the list of the arguments that would have fit there.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{LitStr, Path, Token};

mod kw {
    syn::custom_keyword!(name);
    syn::custom_keyword!(test);
    syn::custom_keyword!(count);
    syn::custom_keyword!(__after_macro);
    syn::custom_keyword!(__slot);
}

/// `#[wasmprof::instrument(crate = path, name = "text", test | count)]`,
/// all optional.
#[derive(Default)]
pub(crate) struct Args {
    /// Where the runtime is, for crates that re-export it.
    pub(crate) krate: Option<Path>,
    /// The `name` keyword (for errors) and the name given.
    pub(crate) name: Option<(Span, LitStr)>,
    /// `test`: the function is a test, which the harness calls from outside
    /// every instrumented call (see `cargo wasmprof test`).
    pub(crate) test: Option<Span>,
    /// `count`: count the calls and nothing more (no call path below it, no
    /// time of its own), for functions too small and hot to time.
    pub(crate) count: Option<Span>,
    /// `__after_macro`, which ours writes when it goes below another
    /// crate's attribute macro (see `after_other_macros`): that macro may
    /// copy our attribute onto items it makes that are not functions (a
    /// struct), which are then left as they are.
    pub(crate) after_macro: bool,
    /// `__slot = N`, which `cargo wasmprof`'s crate-wide rewrite writes on
    /// each function it instruments: the function's index in its crate's
    /// block of per-thread site state (see the runtime's `site_block`),
    /// among the functions of its tier. Only on a function's own attribute.
    pub(crate) slot: Option<u32>,
}

impl Args {
    /// The path the expansion reaches the runtime by; absolute unless the
    /// user chose otherwise.
    pub(crate) fn krate(&self) -> TokenStream {
        match &self.krate {
            Some(path) => quote!(#path),
            None => quote!(::wasmprof),
        }
    }

    /// The `crate = ...` path as written, to recognise `#[<path>::skip]`.
    pub(crate) fn krate_path(&self) -> Option<&Path> {
        self.krate.as_ref()
    }
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut args = Args::default();
        while !input.is_empty() {
            // Ours alone writes it: peeked outside the lookahead, so that no
            // error lists it among the arguments.
            if input.peek(kw::__after_macro) {
                input.parse::<kw::__after_macro>()?;
                args.after_macro = true;
                if !input.is_empty() {
                    input.parse::<Token![,]>()?;
                }
                continue;
            }
            if input.peek(kw::__slot) {
                input.parse::<kw::__slot>()?;
                input.parse::<Token![=]>()?;
                args.slot = Some(input.parse::<syn::LitInt>()?.base10_parse()?);
                if !input.is_empty() {
                    input.parse::<Token![,]>()?;
                }
                continue;
            }
            let lookahead = input.lookahead1();
            if lookahead.peek(Token![crate]) {
                let keyword: Token![crate] = input.parse()?;
                input.parse::<Token![=]>()?;
                let path = input.call(Path::parse_mod_style).map_err(|error| {
                    syn::Error::new(
                        error.span(),
                        "expected the path of the runtime crate: `crate = my_crate::wasmprof`",
                    )
                })?;
                if args.krate.is_some() {
                    return Err(syn::Error::new(
                        keyword.span,
                        "`crate` is given more than once",
                    ));
                }
                args.krate = Some(path);
            } else if lookahead.peek(kw::name) {
                let keyword: kw::name = input.parse()?;
                input.parse::<Token![=]>()?;
                let name = parse_name(input)?;
                if args.name.is_some() {
                    return Err(syn::Error::new(
                        keyword.span,
                        "`name` is given more than once",
                    ));
                }
                args.name = Some((keyword.span, name));
            } else if lookahead.peek(kw::test) {
                let keyword: kw::test = input.parse()?;
                if args.test.is_some() {
                    return Err(syn::Error::new(
                        keyword.span,
                        "`test` is given more than once",
                    ));
                }
                args.test = Some(keyword.span);
            } else if lookahead.peek(kw::count) {
                let keyword: kw::count = input.parse()?;
                if args.count.is_some() {
                    return Err(syn::Error::new(
                        keyword.span,
                        "`count` is given more than once",
                    ));
                }
                args.count = Some(keyword.span);
            } else {
                return Err(lookahead.error());
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        if let (Some(_), Some(count)) = (args.test, args.count) {
            return Err(syn::Error::new(
                count,
                "`count` cannot be combined with `test`: a test is entered at the root, \
                 as a node of its own",
            ));
        }
        Ok(args)
    }
}

/// A function name for the reports: a non-empty string literal without
/// surrounding or control whitespace, so that every report prints it on one
/// line as written.
fn parse_name(input: ParseStream) -> syn::Result<LitStr> {
    let name: LitStr = input.parse().map_err(|error| {
        syn::Error::new(
            error.span(),
            "expected a string literal: `name = \"my_function\"`",
        )
    })?;
    let value = name.value();
    if value.trim().is_empty() {
        return Err(syn::Error::new(name.span(), "`name` must not be empty"));
    }
    if value.trim() != value || value.chars().any(char::is_control) {
        return Err(syn::Error::new(
            name.span(),
            "`name` must not start or end with whitespace or contain control characters",
        ));
    }
    Ok(name)
}

/// `#[wasmprof::skip]` takes nothing; anything given is a mistake worth
/// reporting rather than ignoring.
pub(crate) fn check_skip_args(args: TokenStream) -> syn::Result<()> {
    if args.is_empty() {
        Ok(())
    } else {
        Err(syn::Error::new_spanned(
            args,
            "#[wasmprof::skip] takes no arguments",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(tokens: TokenStream) -> syn::Result<Args> {
        syn::parse2(tokens)
    }

    fn message(tokens: TokenStream) -> String {
        match parse(tokens) {
            Ok(_) => panic!("expected an error"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn no_arguments() {
        let args = parse(quote!()).unwrap();
        assert_eq!(args.krate().to_string(), quote!(::wasmprof).to_string());
        assert!(args.name.is_none());
    }

    #[test]
    fn both_arguments_in_any_order_with_trailing_comma() {
        let args = parse(quote!(name = "custom", crate = my::wasmprof,)).unwrap();
        assert_eq!(args.name.as_ref().unwrap().1.value(), "custom");
        assert_eq!(args.krate().to_string(), quote!(my::wasmprof).to_string());
        let args = parse(quote!(crate = crate::reexport::wasmprof, name = "x")).unwrap();
        assert_eq!(
            args.krate().to_string(),
            quote!(crate::reexport::wasmprof).to_string()
        );
    }

    #[test]
    fn unknown_argument_names_the_expected_ones() {
        assert_eq!(
            message(quote!(level = 3)),
            "expected one of: `crate`, `name`, `test`, `count`"
        );
        assert_eq!(
            message(quote!(name = "a", skip)),
            "expected one of: `crate`, `name`, `test`, `count`"
        );
    }

    #[test]
    fn bad_values() {
        assert_eq!(
            message(quote!(name = 42)),
            "expected a string literal: `name = \"my_function\"`"
        );
        assert_eq!(
            message(quote!(name = foo)),
            "expected a string literal: `name = \"my_function\"`"
        );
        assert_eq!(message(quote!(name = "")), "`name` must not be empty");
        assert!(message(quote!(name = " a")).contains("whitespace"));
        assert_eq!(
            message(quote!(crate = "wasmprof")),
            "expected the path of the runtime crate: `crate = my_crate::wasmprof`"
        );
        assert_eq!(
            message(quote!(crate = a::)),
            "expected the path of the runtime crate: `crate = my_crate::wasmprof`"
        );
        assert_eq!(
            message(quote!(crate = a::<u8>)),
            "expected the path of the runtime crate: `crate = my_crate::wasmprof`"
        );
        assert_eq!(message(quote!(name)), "expected `=`");
    }

    #[test]
    fn separators_and_duplicates() {
        assert_eq!(message(quote!(name = "a" crate = b)), "expected `,`");
        assert_eq!(
            message(quote!(name = "a", name = "b")),
            "`name` is given more than once"
        );
        assert_eq!(
            message(quote!(crate = a, crate = b)),
            "`crate` is given more than once"
        );
    }

    #[test]
    fn count_is_a_flag_that_excludes_test() {
        assert!(parse(quote!(count)).unwrap().count.is_some());
        assert_eq!(
            message(quote!(count, count)),
            "`count` is given more than once"
        );
        assert!(message(quote!(test, count)).starts_with("`count` cannot be combined with `test`"));
    }

    #[test]
    fn skip_takes_nothing() {
        assert!(check_skip_args(quote!()).is_ok());
        assert_eq!(
            check_skip_args(quote!(all)).unwrap_err().to_string(),
            "#[wasmprof::skip] takes no arguments"
        );
    }
}
