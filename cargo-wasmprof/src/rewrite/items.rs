//! Which items of a file get an attribute, and where it goes.
//!
//! Free functions get `#[::wasmprof::instrument]` each. Impl blocks and
//! traits get it once, on the block, so that the macro names methods by
//! their type (`crate::module::Type::method`, associated functions without
//! `self` included) and default methods by their trait
//! (`crate::module::Trait::method`); methods of such a block that must stay
//! out get `#[::wasmprof::skip]`. Every attribute goes just before the
//! item's first attribute other than documentation (so that it is expanded
//! before other attribute macros), or before the item's first token when it
//! has none, and contains no newline, so no line moves.

use std::collections::BTreeSet;
use std::path::PathBuf;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{Attribute, Block, ImplItem, Item, ItemImpl, ItemMod, ItemTrait, Meta, TraitItem, Type};

use super::modules::{ModDir, is_inside};
use super::size::{Size, is_entry};
use super::source::Source;
use super::{CrateSpec, PathOutside, Planned, PlannedKind, RewriteError, Slots, Stats};

/// A module file still to read.
pub(crate) struct FileJob {
    pub file: PathBuf,
    /// Its path in the crate, without the crate name.
    pub module: Vec<String>,
    pub dir: ModDir,
}

/// The walk over one file.
pub(crate) struct FileWalk<'a> {
    pub spec: &'a CrateSpec,
    pub source: &'a Source,
    pub insertions: Vec<(usize, usize, String)>,
    pub queue: Vec<FileJob>,
    pub stats: Stats,
    pub planned: Vec<Planned>,
    /// The crate's slots given so far, this file's included.
    pub slots: Slots,
    /// The walk is inside an item an attribute macro may write out more
    /// than once (see `copies.rs`): no function there gets a slot.
    in_copied: bool,
}

impl<'a> FileWalk<'a> {
    pub(super) fn new(spec: &'a CrateSpec, source: &'a Source, slots: Slots) -> Self {
        FileWalk {
            spec,
            source,
            insertions: Vec::new(),
            queue: Vec::new(),
            stats: Stats::default(),
            planned: Vec::new(),
            slots,
            in_copied: false,
        }
    }

    /// Whether a function with `attrs`, here, may be written out more than
    /// once, and so must not have a slot of its own.
    fn may_be_copied(&self, attrs: &[Attribute]) -> bool {
        self.in_copied || super::copies::may_copy(attrs)
    }

    /// Walks `inside` as within an item with `attrs`.
    fn within<R>(&mut self, attrs: &[Attribute], inside: impl FnOnce(&mut Self) -> R) -> R {
        let outer = self.in_copied;
        self.in_copied = self.may_be_copied(attrs);
        let result = inside(self);
        self.in_copied = outer;
        result
    }

    /// The attribute of a function instrumented at `tier`, with the next
    /// slot of its tier; an `async fn`'s site keeps no per-thread state,
    /// and takes none, nor does one that may be `copied`.
    fn own_attr(&mut self, tier: Tier, is_async: bool, copied: bool) -> Option<String> {
        let counted = match tier {
            Tier::Full => false,
            Tier::Counted => true,
            Tier::Out => return None,
        };
        if is_async {
            return Some(self.spec.runtime.instrument_attr());
        }
        if copied {
            return Some(match counted {
                true => self.spec.runtime.count_attr(),
                false => self.spec.runtime.instrument_attr(),
            });
        }
        let slot = self.slots.take(counted);
        Some(self.spec.runtime.slotted_attr(counted, slot))
    }

    pub(super) fn items(
        &mut self,
        items: &[Item],
        module: &[String],
        dir: &ModDir,
    ) -> Result<(), RewriteError> {
        for item in items {
            match item {
                Item::Fn(function) => self.free_fn(function, module),
                Item::Impl(imp) => self.impl_block(imp, module),
                Item::Trait(tr) => self.trait_block(tr, module),
                Item::Mod(module_item) => self.module(module_item, module, dir)?,
                Item::Macro(mac) if self.spec.tests => self.tests_in_macro(mac),
                Item::Static(item) if self.spec.wrap_allocator => self.global_allocator(item),
                // Macro invocations (and the functions they write), extern
                // blocks, consts, statics and the rest stay as they are.
                _ => {}
            }
        }
        Ok(())
    }

    fn free_fn(&mut self, function: &syn::ItemFn, module: &[String]) {
        let test = self.spec.tests && is_test(&function.attrs);
        if !test && !self.spec.functions {
            return;
        }
        if self.leaves_alone(&function.attrs) {
            self.stats.left_alone += 1;
            return;
        }
        if !instrumentable(&function.sig, &function.attrs) {
            self.stats.not_instrumentable += 1;
            return;
        }
        if test {
            let path = join(module, &[function.sig.ident.unraw().to_string()]);
            let at = self.item_start(function.to_token_stream());
            self.insert(at, self.spec.runtime.test_attr());
            self.plan(
                &function.sig.ident,
                first_line(&function.attrs, &function.sig),
                path,
                PlannedKind::Test,
                Tier::Full,
            );
            return;
        }
        let path = join(module, &[function.sig.ident.unraw().to_string()]);
        if self.spec.direct && !directly_wrappable(&function.sig, &function.attrs) {
            self.stats.not_instrumentable += 1;
            return;
        }
        let entry = is_entry(&function.sig.ident, &function.attrs);
        // An async fn is never counted only: its futures need their node.
        let entry = entry || function.sig.asyncness.is_some();
        let tier = self.wanted(&path, &function.sig.ident, entry, &function.block);
        let copied = self.may_be_copied(&function.attrs);
        if self.spec.direct {
            if tier != Tier::Out {
                let name = function.sig.ident.unraw().to_string();
                self.wrap_body(
                    &function.block,
                    &function.sig.ident,
                    &name,
                    false,
                    tier,
                    copied,
                );
                self.plan(
                    &function.sig.ident,
                    first_line(&function.attrs, &function.sig),
                    path,
                    PlannedKind::Function,
                    tier,
                );
            }
            return;
        }
        let Some(attr) = self.own_attr(tier, function.sig.asyncness.is_some(), copied) else {
            return;
        };
        let at = self.item_start(function.to_token_stream());
        self.insert(at, attr);
        self.plan(
            &function.sig.ident,
            first_line(&function.attrs, &function.sig),
            path,
            PlannedKind::Function,
            tier,
        );
    }

    /// Tests written by a `macro_rules!` macro (itoa's, many crates'):
    /// each `#[test]` in its body gets the test attribute too, so every
    /// test the macro writes is marked, under the name it is given.
    /// `--memory`: the crate's own `#[global_allocator]` wrapped in the
    /// runtime's recording allocator, on the lines it is written on, so
    /// that the program need not wrap it by hand.
    fn global_allocator(&mut self, item: &syn::ItemStatic) {
        use syn::spanned::Spanned;
        let declared = item
            .attrs
            .iter()
            .any(|a| a.path().is_ident("global_allocator"));
        let wrapped = item.ty.to_token_stream().to_string().contains("Recording");
        if !declared || wrapped {
            return;
        }
        let runtime = &self.spec.runtime.name;
        let ty = item.ty.span().byte_range();
        let expr = item.expr.span().byte_range();
        let skip = self.source.skip;
        self.insert(skip + ty.start, format!("::{runtime}::Recording<"));
        self.insert(skip + ty.end, ">".to_owned());
        self.insert(skip + expr.start, format!("::{runtime}::Recording::new("));
        self.insert(skip + expr.end, ")".to_owned());
        self.stats.wrapped_allocators += 1;
    }

    fn tests_in_macro(&mut self, mac: &syn::ItemMacro) {
        if !mac.mac.path.is_ident("macro_rules") {
            return;
        }
        let mut starts = Vec::new();
        test_attributes_in(mac.mac.tokens.clone(), &mut starts);
        for span in starts {
            let at = self.source.offset(span);
            self.insert(at, self.spec.runtime.test_attr());
            self.stats.macro_tests += 1;
        }
    }

    fn impl_block(&mut self, imp: &ItemImpl, module: &[String]) {
        if !self.spec.functions {
            return;
        }
        if self.leaves_alone(&imp.attrs) {
            self.stats.left_alone += 1;
            return;
        }
        let trait_name = imp
            .trait_
            .as_ref()
            .and_then(|(_, path, _)| path.segments.last())
            .map(|segment| segment.ident.unraw().to_string());
        if let Some(name) = trait_name.as_deref() {
            // The runtime allocates when it first sees a function: inside an
            // allocator that would recurse. Type descriptors are run by the
            // wasm-bindgen CLI's interpreter, which cannot run the runtime.
            if ALLOCATOR_TRAITS.contains(&name) {
                self.stats.allocators += 1;
            }
            if ALLOCATOR_TRAITS.contains(&name) || DESCRIPTOR_TRAITS.contains(&name) {
                self.stats.not_instrumentable += imp
                    .items
                    .iter()
                    .filter(|i| matches!(i, ImplItem::Fn(_)))
                    .count();
                return;
            }
        }
        let owner = match (&trait_name, is_type_parameter(&imp.self_ty, &imp.generics)) {
            (Some(trait_name), true) => trait_name.clone(),
            _ => type_label(&imp.self_ty),
        };
        self.within(&imp.attrs, |walk| {
            walk.impl_members(imp, module, &owner, trait_name.as_deref())
        });
    }

    /// The functions of an impl block, each marked (or, in a `direct`
    /// crate, wrapped) for its own tier.
    fn impl_members(
        &mut self,
        imp: &ItemImpl,
        module: &[String],
        owner: &str,
        trait_name: Option<&str>,
    ) {
        let mut members = Vec::new();
        for item in &imp.items {
            let ImplItem::Fn(function) = item else {
                continue;
            };
            // `#[wasm_bindgen] impl` exports its public methods.
            let entry = is_entry(&function.sig.ident, &function.attrs)
                || (matches!(function.vis, syn::Visibility::Public(_))
                    && is_entry(&function.sig.ident, &imp.attrs));
            if let Some(take) = self.block_member(
                &function.attrs,
                &function.sig,
                &function.block,
                entry,
                module,
                owner,
            ) {
                let (tier, path) = take;
                if self.spec.direct {
                    // Named as the macro would: by `Self`, or by the trait
                    // in a blanket impl.
                    let blanket = is_type_parameter(&imp.self_ty, &imp.generics);
                    let ident = function.sig.ident.unraw().to_string();
                    let (name, by_self) = match trait_name {
                        Some(trait_name) if blanket => (format!("{trait_name}::{ident}"), false),
                        _ => (ident, true),
                    };
                    self.wrap_direct(
                        &function.sig,
                        &function.attrs,
                        &function.block,
                        &name,
                        by_self,
                        tier,
                        path,
                    );
                    continue;
                }
                let copied = self.may_be_copied(&function.attrs);
                members.push((
                    function.to_token_stream(),
                    &function.sig,
                    path,
                    tier,
                    copied,
                ));
            }
        }
        if !self.spec.direct {
            self.mark_block(imp.to_token_stream(), members, PlannedKind::Method);
        }
    }

    fn trait_block(&mut self, tr: &ItemTrait, module: &[String]) {
        if !self.spec.functions {
            return;
        }
        if self.leaves_alone(&tr.attrs) {
            self.stats.left_alone += 1;
            return;
        }
        let owner = tr.ident.unraw().to_string();
        self.within(&tr.attrs, |walk| walk.trait_members(tr, module, &owner));
    }

    /// The default methods of a trait, each marked (or, in a `direct`
    /// crate, wrapped) for its own tier.
    fn trait_members(&mut self, tr: &ItemTrait, module: &[String], owner: &str) {
        let mut members = Vec::new();
        for item in &tr.items {
            let TraitItem::Fn(function) = item else {
                continue;
            };
            let Some(block) = &function.default else {
                continue;
            };
            let entry = is_entry(&function.sig.ident, &function.attrs);
            if let Some(take) =
                self.block_member(&function.attrs, &function.sig, block, entry, module, owner)
            {
                let (tier, path) = take;
                if self.spec.direct {
                    let name = format!("{owner}::{}", function.sig.ident.unraw());
                    self.wrap_direct(
                        &function.sig,
                        &function.attrs,
                        block,
                        &name,
                        false,
                        tier,
                        path,
                    );
                    continue;
                }
                let copied = self.may_be_copied(&function.attrs);
                members.push((
                    function.to_token_stream(),
                    &function.sig,
                    path,
                    tier,
                    copied,
                ));
            }
        }
        if !self.spec.direct {
            self.mark_block(tr.to_token_stream(), members, PlannedKind::DefaultMethod);
        }
    }

    /// For a function of an impl block or trait that the macro would
    /// instrument: whether we want it, and its path. `None` when the macro
    /// leaves it alone anyway (const, `#[wasmprof::skip]`, its own
    /// `#[wasmprof::instrument]`).
    fn block_member(
        &mut self,
        attrs: &[Attribute],
        sig: &syn::Signature,
        block: &Block,
        entry: bool,
        module: &[String],
        owner: &str,
    ) -> Option<(Tier, String)> {
        if self.leaves_alone(attrs) {
            self.stats.left_alone += 1;
            return None;
        }
        if sig.constness.is_some() {
            self.stats.not_instrumentable += 1;
            return None;
        }
        let path = join(module, &[owner.to_owned(), sig.ident.unraw().to_string()]);
        if !instrumentable(sig, attrs) {
            self.stats.not_instrumentable += 1;
            return Some((Tier::Out, path));
        }
        let entry = entry || sig.asyncness.is_some();
        let tier = self.wanted(&path, &sig.ident, entry, block);
        Some((tier, path))
    }

    /// One attribute on the block, for its members' commonest tier (full
    /// if any member is fully instrumented), and on each member its own:
    /// its tier with its slot, or a skip for one left out. The macro
    /// expands them all from the block, where their `Self` is known.
    fn mark_block(
        &mut self,
        block: TokenStream,
        members: Vec<(TokenStream, &syn::Signature, String, Tier, bool)>,
        kind: PlannedKind,
    ) {
        let block_tier = if members.iter().any(|m| m.3 == Tier::Full) {
            Tier::Full
        } else if members.iter().any(|m| m.3 == Tier::Counted) {
            Tier::Counted
        } else {
            return;
        };
        let at = self.item_start(block);
        let attr = match block_tier {
            Tier::Full => self.spec.runtime.instrument_attr(),
            _ => self.spec.runtime.count_attr(),
        };
        self.insert(at, attr);
        for (tokens, sig, path, tier, copied) in members {
            let attr = match tier {
                Tier::Out => Some(self.spec.runtime.skip_attr()),
                // Its own attribute with the block's tier, as the block's
                // attribute gives an async fn.
                _ if sig.asyncness.is_some() && tier == block_tier => None,
                _ => self.own_attr(tier, sig.asyncness.is_some(), copied),
            };
            let at = self.item_start(tokens);
            let first_line = self.source.line_of(at);
            if let Some(attr) = attr {
                self.insert(at, attr);
            }
            if tier != Tier::Out {
                self.plan(&sig.ident, first_line, path, kind, tier);
            }
        }
    }

    /// A member of an impl block or trait in a `direct` crate: its body
    /// wrapped, unless it cannot be (see [`directly_wrappable`]).
    #[allow(clippy::too_many_arguments)]
    fn wrap_direct(
        &mut self,
        sig: &syn::Signature,
        attrs: &[Attribute],
        block: &Block,
        name: &str,
        by_self: bool,
        tier: Tier,
        path: String,
    ) {
        if tier == Tier::Out {
            return;
        }
        if !directly_wrappable(sig, attrs) {
            self.stats.not_instrumentable += 1;
            return;
        }
        let copied = self.may_be_copied(attrs);
        self.wrap_body(block, &sig.ident, name, by_self, tier, copied);
        self.plan(
            &sig.ident,
            first_line(attrs, sig),
            path,
            PlannedKind::Method,
            tier,
        );
    }

    /// What `#[wasmprof::instrument]` would expand the body to, written
    /// into the source: `{ ::rt::__instrument_body! { name = …, body = {`
    /// after the opening brace and `} } }` before the closing one, on the
    /// same lines.
    fn wrap_body(
        &mut self,
        block: &Block,
        ident: &syn::Ident,
        name: &str,
        by_self: bool,
        tier: Tier,
        copied: bool,
    ) {
        let open = self.source.offset(block.brace_token.span.open()) + 1;
        let close = self.source.offset(block.brace_token.span.close());
        let runtime = &self.spec.runtime.name;
        let (count, space) = match tier {
            Tier::Counted => ("count, ", "counted"),
            _ => ("", "full"),
        };
        // A function that may be copied keeps no slot (`copies.rs`).
        let slot = match copied {
            true => String::new(),
            false => format!(
                "__slot = {space} {}, ",
                self.slots.take(tier == Tier::Counted)
            ),
        };
        let self_type = if by_self {
            "::core::option::Option::Some((|| ::core::any::type_name::<Self>()) as fn() -> &'static str)"
        } else {
            "::core::option::Option::None"
        };
        let line = ident.span().start().line;
        self.insert(
            open,
            format!(
                " ::{runtime}::__instrument_body! {{ {count}{slot}\
                 name = {name:?}, given = false, line = {line}, self_type = {self_type}, \
                 body = {{"
            ),
        );
        self.insert(close, "} } ".to_owned());
    }

    fn module(
        &mut self,
        item: &ItemMod,
        module: &[String],
        dir: &ModDir,
    ) -> Result<(), RewriteError> {
        let name = item.ident.unraw().to_string();
        let path: Vec<String> = module.iter().cloned().chain([name.clone()]).collect();
        let excluded = self
            .spec
            .filter
            .excludes_module(&self.spec.crate_name, &path.join("::"));
        if excluded && !self.leaves_alone(&item.attrs) {
            self.stats.excluded_modules.push(format!(
                "{}::{}",
                self.spec.crate_name,
                path.join("::")
            ));
        }
        let left_out = self.leaves_alone(&item.attrs) || excluded;
        let path_attr = path_attribute(&item.attrs);
        if item.content.is_none()
            && let Some((relative, literal)) = &path_attr
        {
            let target = dir.file_module_candidates(&name, Some(relative))[0]
                .file
                .clone();
            if !is_inside(&target, &self.spec.package_root) {
                if !left_out {
                    let at = self.source.offset(item.mod_token.span);
                    return Err(RewriteError::PathOutside(Box::new(PathOutside {
                        file: self.source.path.clone(),
                        line: self.source.line_of(at),
                        module: path.join("::"),
                        target,
                        package_root: self.spec.package_root.clone(),
                    })));
                }
                // Left as it is, but read from where it is: the copy
                // is elsewhere, and a relative path would miss it.
                let range = literal.span().byte_range();
                self.insertions.push((
                    self.source.skip + range.start,
                    self.source.skip + range.end,
                    format!("{:?}", target.display().to_string()),
                ));
                return Ok(());
            }
        }
        if left_out {
            self.stats.left_alone += usize::from(self.leaves_alone(&item.attrs));
            return Ok(());
        }
        let path_attr = path_attr.map(|(relative, _)| relative);
        match &item.content {
            Some((_, items)) => {
                let inner = dir.inline_module(&name, path_attr.as_deref());
                self.within(&item.attrs, |walk| walk.items(items, &path, &inner))
            }
            None => {
                let candidates = dir.file_module_candidates(&name, path_attr.as_deref());
                let Some(found) = candidates.iter().find(|c| c.file.is_file()) else {
                    // Not there: a module for another platform or feature
                    // that rustc will not look for either.
                    return Ok(());
                };
                self.queue.push(FileJob {
                    file: found.file.clone(),
                    module: path,
                    dir: found.dir.clone(),
                });
                Ok(())
            }
        }
    }

    /// What the patterns and the size threshold give the function; an
    /// `entry` (`main`, an export) is never too small.
    fn wanted(&mut self, path: &str, name: &syn::Ident, entry: bool, body: &Block) -> Tier {
        if !self.spec.filter.allows_path(&self.spec.crate_name, path) {
            self.stats.excluded += 1;
            return Tier::Out;
        }
        if entry || Size::measure(name, body).worth_a_guard(self.spec.filter.min_size) {
            Tier::Full
        } else if self.spec.filter.count_small {
            self.stats.counted += 1;
            Tier::Counted
        } else {
            self.stats.small += 1;
            Tier::Out
        }
    }

    /// Whether an attribute of ours (`instrument`, `skip`) is already on
    /// the item: the user's own choice, which the rewrite keeps.
    /// `#[wasmprof::skip]`, `#[<runtime>::skip]`, and `#[skip]` when the
    /// crate uses wasmprof (imported by name): the rule the macro applies
    /// too (`wasmprof_attributes`).
    fn leaves_alone(&self, attrs: &[Attribute]) -> bool {
        let runtime = [self.spec.runtime.name.as_str()];
        let scope = wasmprof_attributes::Scope {
            bare_is_ours: self.spec.bare_attributes_are_ours,
            runtime: &runtime,
        };
        attrs.iter().any(|attr| {
            let names = super::copies::path_names(attr.path());
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            wasmprof_attributes::is_choice(&names, &scope)
        })
    }

    /// Where the attribute goes: before the item's first attribute that is
    /// not documentation, else before the item itself. First among the
    /// attributes, ours is expanded first; where another crate's attribute
    /// macro follows (Yew's `#[hook]`), ours moves itself below it, so that
    /// theirs sees the function as written (see the macro's
    /// `after_other_macros`).
    fn item_start(&self, tokens: TokenStream) -> usize {
        self.source.offset(insertion_point(tokens))
    }

    fn insert(&mut self, at: usize, text: String) {
        self.insertions.push((at, at, text));
    }

    fn plan(
        &mut self,
        ident: &syn::Ident,
        first_line: usize,
        path: String,
        kind: PlannedKind,
        tier: Tier,
    ) {
        self.stats.instrumented += 1;
        let line = ident.span().start().line;
        self.planned.push(Planned {
            file: self.source.path.clone(),
            line,
            first_line: first_line.min(line),
            path,
            kind,
            counted: tier == Tier::Counted,
        });
    }
}

/// What crate-wide instrumentation gives one function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tier {
    /// `#[instrument]`: a node of the tree, timed.
    Full,
    /// `#[instrument(count)]`: below the size threshold, counted only.
    Counted,
    /// Left out: by a pattern, or small with `--no-count-small`.
    Out,
}

/// Traits whose methods run inside the allocator.
const ALLOCATOR_TRAITS: &[&str] = &["GlobalAlloc", "Allocator"];

/// wasm-bindgen's descriptor traits, run at build time by its CLI.
const DESCRIPTOR_TRAITS: &[&str] = &["WasmDescribe", "WasmDescribeVector"];

/// `#[test]`, `#[wasm_bindgen_test]` (by any path): a function a test
/// harness calls.
fn is_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "test" || s.ident == "wasm_bindgen_test")
    })
}

/// Whether a function with a body can take a guard at all: not `const`
/// (cannot call the runtime), not `#[naked]` (no body of its own to wrap).
/// An `async fn` can: its future is instrumented.
fn instrumentable(sig: &syn::Signature, attrs: &[Attribute]) -> bool {
    sig.constness.is_none()
        && !attrs
            .iter()
            .any(|a| a.path().is_ident("naked") || a.path().is_ident("panic_handler"))
}

/// The spans of the `#` of each `#[test]` or `#[wasm_bindgen_test]` (by
/// any path) in a macro's tokens, nested groups included.
fn test_attributes_in(tokens: TokenStream, starts: &mut Vec<Span>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (index, tree) in trees.iter().enumerate() {
        let TokenTree::Group(group) = tree else {
            continue;
        };
        let after_hash =
            index > 0 && matches!(&trees[index - 1], TokenTree::Punct(p) if p.as_char() == '#');
        if after_hash && group.delimiter() == proc_macro2::Delimiter::Bracket {
            let words: Vec<TokenTree> = group.stream().into_iter().collect();
            let is_test_path = words.iter().all(|t| match t {
                TokenTree::Ident(_) => true,
                TokenTree::Punct(p) => p.as_char() == ':',
                _ => false,
            });
            let last = words.iter().rev().find_map(|t| match t {
                TokenTree::Ident(ident) => Some(ident.to_string()),
                _ => None,
            });
            if is_test_path && matches!(last.as_deref(), Some("test" | "wasm_bindgen_test")) {
                starts.push(trees[index - 1].span());
            }
            continue;
        }
        test_attributes_in(group.stream(), starts);
    }
}

/// Whether a body can be wrapped in place: not an `async fn` (its future
/// needs the attribute's expansion), and no inner attribute (`#![...]`),
/// which must stay first in the body.
fn directly_wrappable(sig: &syn::Signature, attrs: &[Attribute]) -> bool {
    sig.asyncness.is_none()
        && !attrs
            .iter()
            .any(|a| matches!(a.style, syn::AttrStyle::Inner(_)))
}

/// The line a function's item starts on, not counting its doc comments:
/// where the rewrite's attribute goes, and the attributes a compile error
/// may point at.
fn first_line(attrs: &[Attribute], sig: &syn::Signature) -> usize {
    attrs
        .iter()
        .filter(|a| matches!(a.style, syn::AttrStyle::Outer) && !a.path().is_ident("doc"))
        .map(|a| a.pound_token.span.start().line)
        .min()
        .unwrap_or_else(|| sig.fn_token.span.start().line)
}

/// `#[path = "..."]`: the path and its literal.
fn path_attribute(attrs: &[Attribute]) -> Option<(String, syn::LitStr)> {
    attrs.iter().find_map(|attr| match &attr.meta {
        Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some((s.value(), s.clone())),
            _ => None,
        },
        _ => None,
    })
}

/// The span of the `#` of the first outer attribute that is not
/// documentation (doc comments appear as `#[doc = ...]`), else of the first
/// token after the attributes.
fn insertion_point(tokens: TokenStream) -> Span {
    let mut iter = tokens.into_iter().peekable();
    while let Some(token) = iter.next() {
        if let TokenTree::Punct(p) = &token
            && p.as_char() == '#'
            && let Some(TokenTree::Group(g)) = iter.peek()
            && g.delimiter() == proc_macro2::Delimiter::Bracket
        {
            let is_doc = matches!(
                g.stream().into_iter().next(),
                Some(TokenTree::Ident(ident)) if ident == "doc"
            );
            if !is_doc {
                return token.span();
            }
            iter.next();
            continue;
        }
        return token.span();
    }
    Span::call_site()
}

fn join(module: &[String], rest: &[String]) -> String {
    module
        .iter()
        .chain(rest)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("::")
}

/// What the reports will call an impl's type: its last path segment.
fn type_label(ty: &Type) -> String {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .map(|s| s.ident.unraw().to_string())
            .unwrap_or_default(),
        Type::Reference(r) => type_label(&r.elem),
        Type::Paren(p) => type_label(&p.elem),
        Type::Group(g) => type_label(&g.elem),
        Type::TraitObject(t) => t
            .bounds
            .iter()
            .find_map(|b| match b {
                syn::TypeParamBound::Trait(t) => {
                    t.path.segments.last().map(|s| s.ident.unraw().to_string())
                }
                _ => None,
            })
            .unwrap_or_default(),
        other => other
            .to_token_stream()
            .to_string()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect(),
    }
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

/// Source files a crate reads as text with `include_str!`/`include_bytes!`
/// that end in `.rs`: they would read the instrumented copy.
pub(super) fn included_sources(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for marker in ["include_str!(", "include_bytes!("] {
        for (at, _) in text.match_indices(marker) {
            let rest = text[at + marker.len()..].trim_start();
            if let Some(rest) = rest.strip_prefix('"')
                && let Some(end) = rest.find('"')
            {
                let name = &rest[..end];
                if name.ends_with(".rs") {
                    found.insert(name.to_owned());
                }
            }
        }
    }
    found
}
