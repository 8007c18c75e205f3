//! The README and the book hold together: every relative link names a file
//! that exists and, after `#`, a heading of it; every page of the book is
//! in its table of contents. (`mdbook build docs` in CI renders it.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the repository")
}

/// The README, the CHANGELOG and every page of the book.
pub(crate) fn documents() -> Vec<PathBuf> {
    let root = repository();
    let mut files = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    let mut dirs = vec![root.join("docs/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("docs/src") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The text of a Markdown file outside code: fenced blocks and inline
/// code spans, whose brackets are not links, become blank.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if !fenced {
            let mut in_code = false;
            for c in line.chars() {
                if c == '`' {
                    in_code = !in_code;
                } else if !in_code {
                    out.push(c);
                }
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of the inline links `[text](target)` of `text`.
fn link_targets(text: &str) -> Vec<String> {
    let prose = prose(text).replace('\n', " ");
    let mut targets = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        if let Some(end) = after.find(')') {
            targets.push(after[..end].trim().to_owned());
        }
        rest = after;
    }
    targets
}

/// A heading's anchor as GitHub and mdBook make it: lowercase, letters,
/// digits, `-` and `_` kept, spaces made `-`, the rest dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings (code spans' backticks
/// dropped, as both renderers do).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut found = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            let heading = line.trim_start_matches('#').replace('`', "");
            found.insert(slug(&heading));
        }
    }
    found
}

#[test]
fn every_relative_link_names_a_file_and_a_heading_that_exist() {
    let mut broken = Vec::new();
    for document in documents() {
        let text = std::fs::read_to_string(&document).expect("a document");
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() {
                document.clone()
            } else {
                document.parent().expect("a folder").join(file)
            };
            if !path.exists() {
                broken.push(format!("{}: {target}: no such file", document.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                let linked = std::fs::read_to_string(&path).unwrap_or_default();
                if !anchors(&linked).contains(anchor) {
                    broken.push(format!("{}: {target}: no such heading", document.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_page_of_the_book_is_in_its_table_of_contents() {
    let src = repository().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).expect("SUMMARY.md");
    let listed: BTreeSet<PathBuf> = link_targets(&summary)
        .iter()
        .map(|target| src.join(target))
        .collect();
    let missing: Vec<String> = documents()
        .into_iter()
        .filter(|page| page.starts_with(&src) && !page.ends_with("SUMMARY.md"))
        .filter(|page| !listed.contains(page))
        .map(|page| page.display().to_string())
        .collect();
    assert!(missing.is_empty(), "pages not in SUMMARY.md: {missing:?}");
}

#[test]
fn anchors_and_links_are_read_as_the_renderers_read_them() {
    assert_eq!(
        slug("Checking the counts (--verify-counts)"),
        "checking-the-counts---verify-counts"
    );
    assert_eq!(
        link_targets("see [a](x.md#y) and `[not](a link)`\n```\n[no](z.md)\n```\n[b](c.md)"),
        vec!["x.md#y", "c.md"]
    );
}

#[test]
fn the_book_names_the_formats_versions_the_code_writes() {
    let root = repository();
    let host_api = std::fs::read_to_string(root.join("docs/src/host-api.md")).expect("host-api.md");
    let wire = format!("(version {}; ", wasmprof_wire::VERSION);
    assert!(
        host_api.contains(&wire),
        "docs/src/host-api.md should give the snapshot's version as `{wire}…`"
    );
    let format = std::fs::read_to_string(root.join("docs/src/profile-format.md"))
        .expect("profile-format.md");
    let written = format!("\"format\": \"{}\"", wasmprof_profile::profile::FORMAT);
    assert!(
        format.contains(&written),
        "docs/src/profile-format.md should show `{written}`"
    );
}
