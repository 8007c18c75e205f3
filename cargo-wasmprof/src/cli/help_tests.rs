//! The help is the reference, and the book carries it word for word: each
//! subcommand's `--help` is a golden file, and its page of the book's
//! command reference (`docs/src/reference/NAME.md`) holds the same text
//! between markers. `WASMPROF_BLESS=1` writes both anew after a deliberate
//! change.

use clap::CommandFactory;

use super::CargoCli;
use wasmprof_profile::fixtures::assert_golden_in;

/// The subcommands a user runs (the hidden test runner is not one).
const SUBCOMMANDS: &[&str] = &["add", "build", "run", "test", "bench", "report"];
/// The width the help is rendered at, whatever the terminal.
const WIDTH: usize = 100;

fn long_help(subcommand: &str) -> String {
    let mut cargo = CargoCli::command().term_width(WIDTH);
    let wasmprof = cargo
        .find_subcommand_mut("wasmprof")
        .expect("the wasmprof subcommand");
    let mut command = wasmprof
        .find_subcommand_mut(subcommand)
        .unwrap_or_else(|| panic!("no subcommand {subcommand}"))
        .clone()
        .term_width(WIDTH)
        .bin_name(format!("cargo wasmprof {subcommand}"));
    let text = command.render_long_help().to_string();
    // Trailing spaces would not survive an editor.
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    format!("{}\n", lines.join("\n").trim_end())
}

#[test]
fn every_subcommand_s_help_matches_its_golden_file() {
    for subcommand in SUBCOMMANDS {
        assert_golden_in(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
            &format!("help/{subcommand}.txt"),
            &long_help(subcommand),
        );
    }
}

/// The book's block for `subcommand`: between `<!-- help:NAME -->` and
/// `<!-- /help:NAME -->`, in a `text` code fence.
fn book_block(subcommand: &str) -> String {
    format!(
        "<!-- help:{subcommand} -->\n```text\n$ cargo wasmprof {subcommand} --help\n{}```\n<!-- /help:{subcommand} -->",
        long_help(subcommand)
    )
}

#[test]
fn the_book_carries_every_subcommand_s_help() {
    let bless = std::env::var_os("WASMPROF_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for subcommand in SUBCOMMANDS {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../docs/src/reference/{subcommand}.md"));
        let mut page = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let start = format!("<!-- help:{subcommand} -->");
        let end = format!("<!-- /help:{subcommand} -->");
        let (Some(from), Some(to)) = (page.find(&start), page.find(&end)) else {
            panic!("{} has no `{start}` … `{end}` block", path.display());
        };
        let wanted = book_block(subcommand);
        if page[from..to + end.len()] != wanted {
            stale.push(*subcommand);
            if bless {
                page.replace_range(from..to + end.len(), &wanted);
                std::fs::write(&path, page).expect("write the book's page");
            }
        }
    }
    assert!(
        bless || stale.is_empty(),
        "the book's help of {stale:?} differs from `--help` (re-bless with WASMPROF_BLESS=1)"
    );
}

/// What a document says to type after `cargo wasmprof` on one line: the
/// subcommand and the long flags up to the program's own arguments (`--`),
/// a pipe, a comment or the end of a code span.
fn command_in(line: &str) -> Option<(String, Vec<String>)> {
    let at = line.find("cargo wasmprof ")?;
    let rest = &line[at + "cargo wasmprof ".len()..];
    let end = ['`', '|', ';', '#', '&', '"', ')']
        .iter()
        .filter_map(|c| rest.find(*c))
        .min()
        .unwrap_or(rest.len());
    let mut words = rest[..end].split_whitespace();
    let subcommand = words.next()?;
    if !subcommand.chars().all(|c| c.is_ascii_lowercase()) {
        return None; // a placeholder (COMMAND, <command>, …) or a flag
    }
    let flags = words
        .take_while(|word| *word != "--")
        .filter(|word| word.starts_with("--") && !word.contains('…'))
        .map(|word| {
            let flag = word.split('=').next().unwrap_or(word);
            flag.trim_end_matches([',', '.', ':', '\'']).to_owned()
        })
        .collect();
    Some((subcommand.to_owned(), flags))
}

#[test]
fn every_command_and_flag_the_documents_name_exists() {
    let mut cargo = CargoCli::command();
    cargo.build();
    let wasmprof = cargo
        .find_subcommand("wasmprof")
        .expect("the wasmprof subcommand");
    let mut unknown = Vec::new();
    // The changelog names what was, on purpose.
    for path in crate::docs_tests::documents()
        .into_iter()
        .filter(|p| !p.ends_with("CHANGELOG.md"))
    {
        let text = std::fs::read_to_string(&path).expect("a document");
        for (number, line) in text.lines().enumerate() {
            let Some((subcommand, flags)) = command_in(line) else {
                continue;
            };
            let place = format!("{}:{}", path.display(), number + 1);
            let Some(command) = wasmprof.find_subcommand(&subcommand) else {
                unknown.push(format!("{place}: no command `cargo wasmprof {subcommand}`"));
                continue;
            };
            let known = |flag: &str| {
                let long = flag.trim_start_matches("--");
                long == "help"
                    || long == "version"
                    || command.get_arguments().any(|arg| {
                        arg.get_long() == Some(long)
                            || arg
                                .get_all_aliases()
                                .is_some_and(|aliases| aliases.contains(&long))
                    })
            };
            for flag in flags.iter().filter(|flag| !known(flag)) {
                unknown.push(format!(
                    "{place}: `cargo wasmprof {subcommand}` has no {flag}"
                ));
            }
        }
    }
    assert!(unknown.is_empty(), "{}", unknown.join("\n"));
}

#[test]
fn a_documented_command_line_is_read_up_to_the_program_s_own_arguments() {
    assert_eq!(
        command_in("`cargo wasmprof run --release --timer=none -p x -- --not-ours`"),
        Some((
            "run".to_owned(),
            vec!["--release".to_owned(), "--timer".to_owned()]
        ))
    );
    assert_eq!(command_in("cargo wasmprof COMMAND --flag"), None);
    assert_eq!(
        command_in("cargo wasmprof report | less # --nothing"),
        Some(("report".to_owned(), vec![]))
    );
}
