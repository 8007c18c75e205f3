//! Subresource integrity for the files the run replaces.
//!
//! trunk writes `integrity="sha384-…"` on the `<link rel=modulepreload>`
//! and `<link rel=preload>` of the module's JS and wasm. Those hashes are of
//! its own build; the browser refuses the instrumented files under them. The
//! page keeps its checks: each such attribute gets the hash of the file the
//! run serves instead.

use std::path::PathBuf;

use base64::Engine;
use sha2::{Digest, Sha384};

/// `html` with the `integrity` of every tag whose `href` or `src` is a
/// replaced file (`replaced` gives the file served for a URL path) set to
/// that file's hash.
pub(super) fn recompute(html: &str, replaced: impl Fn(&str) -> Option<PathBuf>) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        let Some(length) = rest[start..].find('>') else {
            break;
        };
        let tag = &rest[start..start + length + 1];
        out.push_str(&rest[..start]);
        out.push_str(&with_integrity(tag, &replaced).unwrap_or_else(|| tag.to_owned()));
        rest = &rest[start + length + 1..];
    }
    out.push_str(rest);
    out
}

/// The tag with its integrity recomputed, if it has one and names a
/// replaced file.
fn with_integrity(tag: &str, replaced: &impl Fn(&str) -> Option<PathBuf>) -> Option<String> {
    let (value_start, value_end) = attribute(tag, "integrity")?;
    let url = attribute(tag, "href")
        .or_else(|| attribute(tag, "src"))
        .map(|(start, end)| &tag[start..end])?;
    let path = url_path(url)?;
    let bytes = std::fs::read(replaced(&path)?).ok()?;
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha384::digest(&bytes));
    Some(format!(
        "{}sha384-{hash}{}",
        &tag[..value_start],
        &tag[value_end..]
    ))
}

/// Where the value of attribute `name` lies in `tag`, quotes excluded.
fn attribute(tag: &str, name: &str) -> Option<(usize, usize)> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        let before = lower[..at].chars().next_back();
        if !before.is_some_and(char::is_whitespace) {
            continue;
        }
        let after = lower[from..].trim_start();
        let Some(after) = after.strip_prefix('=') else {
            continue;
        };
        let value = after.trim_start();
        let value_at = lower.len() - value.len();
        return Some(match value.chars().next()? {
            quote @ ('"' | '\'') => {
                let end = value[1..].find(quote)?;
                (value_at + 1, value_at + 1 + end)
            }
            _ => {
                let end = value
                    .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
                    .unwrap_or(value.len());
                (value_at, value_at + end)
            }
        });
    }
    None
}

/// The URL path a page-relative or root-relative URL asks the server for;
/// `None` for another origin's.
fn url_path(url: &str) -> Option<String> {
    if url.contains("://") || url.starts_with("//") {
        return None;
    }
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let url = url.trim_start_matches("./");
    Some(if url.starts_with('/') {
        url.to_owned()
    } else {
        format!("/{url}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_file_s_integrity_is_its_own_hash_and_others_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let wasm = dir.path().join("app_bg.wasm");
        std::fs::write(&wasm, b"instrumented").unwrap();
        let html = "<head><link rel=\"preload\" href=\"/app-1f2e_bg.wasm\" \
                    integrity=\"sha384-OLD\" as=\"fetch\">\n\
                    <link rel=modulepreload href='./other.js' integrity='sha384-KEEP'>\n\
                    <script src=\"/app-1f2e_bg.wasm?v=2\" integrity=sha384-OLD2></script></head>";
        let served = recompute(html, |path| {
            (path == "/app-1f2e_bg.wasm").then(|| wasm.clone())
        });
        let expected =
            base64::engine::general_purpose::STANDARD.encode(Sha384::digest(b"instrumented"));
        assert_eq!(served.matches(&format!("sha384-{expected}")).count(), 2);
        assert!(served.contains("integrity='sha384-KEEP'"), "{served}");
        assert!(!served.contains("OLD"), "{served}");
        assert!(served.ends_with("</script></head>"), "{served}");
    }

    #[test]
    fn text_that_is_not_a_tag_is_left_as_it_is() {
        let html = "a < b and c > d <p data-integrity=\"x\">";
        assert_eq!(recompute(html, |_| None), html);
    }
}
