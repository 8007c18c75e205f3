//! Folded stacks, the common currency of flame-graph tools (Brendan
//! Gregg's `stackcollapse` output, which `flamegraph.pl`, inferno and
//! speedscope read): one line per call path with weight of its own,
//! `main;parse;lex 1234`, names joined outermost first.
//!
//! The weight is the path's self time in whole nanoseconds, or its own
//! calls for a count-only profile. A `;` inside a name (a closure's
//! `{{closure}}` has none, but a trait path could) becomes `:` so that the
//! line splits back into the same frames.

use std::io::Write;

use crate::error::Error;

use super::stacks::Stacks;
use crate::profile::{MemoryWeight, Profile};

pub(crate) fn write_folded(
    profile: &Profile,
    weight: Option<MemoryWeight>,
    out: &mut dyn Write,
) -> crate::Result<()> {
    out.write_all(render_folded(profile, weight).as_bytes())
        .map_err(Error::output("folded stacks"))
}

/// The folded stacks, weighed by time or calls, or by a memory figure
/// (`--weight`); allocations outside any instrumented call are the
/// `(outside instrumented code)` line.
pub(crate) fn render_folded(profile: &Profile, weight: Option<MemoryWeight>) -> String {
    let stacks = Stacks::weighed(profile, weight);
    let mut lines: Vec<String> = (1..stacks.frames.len())
        .filter_map(|node| {
            let weight = stacks.frames[node].self_weight.round() as u64;
            (weight > 0).then(|| {
                let path: Vec<String> = stacks
                    .path(node)
                    .iter()
                    .map(|name| name.replace(';', ":"))
                    .collect();
                format!("{} {weight}", path.join(";"))
            })
        })
        .collect();
    let outside = stacks
        .frames
        .first()
        .map_or(0, |f| f.self_weight.round() as u64);
    if outside > 0 {
        lines.push(format!("{} {outside}", super::words::OUTSIDE));
    }
    lines.sort();
    let mut text = lines.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    text
}

/// Reads folded stacks back: each path and its weight (summed if a path
/// comes twice, as tools allow). The tests read what was written with it.
#[cfg(test)]
fn parse_folded(text: &str) -> Result<Vec<(Vec<String>, u64)>, String> {
    let mut stacks: Vec<(Vec<String>, u64)> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (path, weight) = line
            .rsplit_once(' ')
            .ok_or_else(|| format!("line {}: no weight", number + 1))?;
        let weight: u64 = weight
            .parse()
            .map_err(|_| format!("line {}: `{weight}` is not a whole number", number + 1))?;
        let path: Vec<String> = path.split(';').map(str::to_owned).collect();
        match stacks.iter_mut().find(|(p, _)| *p == path) {
            Some((_, w)) => *w += weight,
            None => stacks.push((path, weight)),
        }
    }
    Ok(stacks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{appendix_b, assert_golden, recursion};

    #[test]
    fn folded_stacks_match_golden() {
        assert_golden(
            "appendix_b.folded.txt",
            &render_folded(&appendix_b(true), None),
        );
        assert_golden(
            "recursion.untimed.folded.txt",
            &render_folded(&recursion(false), None),
        );
    }

    #[test]
    fn folded_stacks_round_trip_to_the_same_self_weights() {
        let profile = appendix_b(true);
        let text = render_folded(&profile, None);
        let parsed = parse_folded(&text).unwrap();
        let stacks = Stacks::build(&profile);
        for node in 1..stacks.frames.len() {
            let path: Vec<String> = stacks.path(node).iter().map(|s| s.to_string()).collect();
            let expected = stacks.frames[node].self_weight.round() as u64;
            let found = parsed
                .iter()
                .find(|(p, _)| *p == path)
                .map_or(0, |(_, w)| *w);
            assert_eq!(found, expected, "{path:?}");
        }
        let total: u64 = parsed.iter().map(|(_, w)| w).sum();
        assert!((total as f64 - stacks.total()).abs() <= stacks.frames.len() as f64);
        assert_eq!(render_folded(&profile, None), text, "the same every time");
    }

    #[test]
    fn a_bad_line_is_an_error() {
        assert!(parse_folded("a;b").unwrap_err().contains("line 1"));
        assert!(
            parse_folded("a;b x")
                .unwrap_err()
                .contains("not a whole number")
        );
    }
}
