//! Include and exclude patterns on function paths: `parser::*`,
//! `*::helpers::*`, `Lexer::next`.
//!
//! A path is what the reports show without the crate name in front:
//! `parser::parse`, `parser::Parser::expr`, `Shape::describe` (a trait's
//! default method). `*` matches any run of characters, `::` included, and a
//! pattern also covers everything inside what it names, so `parser` and
//! `parser::*` both cover `parser::Parser::expr`. A pattern may start with
//! the crate name (`my_crate::parser::*`).

/// The include and exclude lists and the size threshold of one crate.
/// The default lets everything in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    /// When not empty, only functions matching one of these are instrumented.
    pub include: Vec<String>,
    /// Functions matching one of these are left alone.
    pub exclude: Vec<String>,
    /// Functions smaller than this, without a loop or recursion, are not
    /// fully instrumented (see [`super::size`]).
    pub min_size: usize,
    /// Whether those small functions are counted (the count-only tier)
    /// rather than left out.
    pub count_small: bool,
}

/// Stands for "anything inside this module": only a `*` can match it.
const INSIDE: &str = "::\u{0}";

impl Filter {
    /// Whether the function at `path` (crate-relative) passes the patterns.
    pub(crate) fn allows_path(&self, crate_name: &str, path: &str) -> bool {
        let included =
            self.include.is_empty() || self.include.iter().any(|p| covers(p, crate_name, path));
        included && !self.exclude.iter().any(|p| covers(p, crate_name, path))
    }

    /// Whether nothing inside the module at `path` can be instrumented, so
    /// that the module need not be read at all.
    pub(crate) fn excludes_module(&self, crate_name: &str, path: &str) -> bool {
        let inside = format!("{path}{INSIDE}");
        self.exclude.iter().any(|p| covers(p, crate_name, &inside))
    }
}

/// Whether `pattern` names `path` or something around it.
fn covers(pattern: &str, crate_name: &str, path: &str) -> bool {
    let pattern = pattern.trim();
    let pattern = pattern
        .strip_prefix(crate_name)
        .and_then(|rest| rest.strip_prefix("::"))
        .or_else(|| pattern.strip_prefix("crate::"))
        .unwrap_or(pattern);
    if pattern == crate_name || pattern == "crate" {
        return true;
    }
    glob(pattern, path) || glob(&format!("{pattern}::*"), path)
}

/// `*`-only glob matching, `*` spanning `::`.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    // Classic two-pointer matching with backtracking to the last star.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((star_p, star_t)) = star {
            p = star_p + 1;
            t = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(include: &[&str], exclude: &[&str]) -> Filter {
        Filter {
            count_small: true,
            include: include.iter().map(|s| s.to_string()).collect(),
            exclude: exclude.iter().map(|s| s.to_string()).collect(),
            min_size: 0,
        }
    }

    #[test]
    fn globs() {
        assert!(glob("parser::*", "parser::parse"));
        assert!(glob("parser::*", "parser::Parser::expr"));
        assert!(!glob("parser::*", "parser"));
        assert!(glob("*::helper", "a::b::helper"));
        assert!(!glob("*::helper", "a::b::helpers"));
        assert!(glob("*", ""));
        assert!(glob("a*c*e", "abcde"));
        assert!(!glob("a*c*f", "abcde"));
    }

    #[test]
    fn patterns_cover_what_is_inside() {
        let f = filter(&["parser"], &[]);
        assert!(f.allows_path("app", "parser::parse"));
        assert!(f.allows_path("app", "parser::Parser::expr"));
        assert!(!f.allows_path("app", "parser_extra::parse"));
        assert!(!f.allows_path("app", "main"));
        let f = filter(&["app::parser::*"], &["*::noisy", "parser::Lexer"]);
        assert!(f.allows_path("app", "parser::parse"));
        assert!(!f.allows_path("app", "parser::noisy"));
        assert!(!f.allows_path("app", "parser::Lexer::next"));
        assert!(f.allows_path("app", "parser::LexerState::next"));
    }

    #[test]
    fn whole_modules_can_be_excluded() {
        let f = filter(&[], &["util::*", "a::b"]);
        assert!(f.excludes_module("app", "util"));
        assert!(f.excludes_module("app", "util::inner"));
        assert!(f.excludes_module("app", "a::b"));
        assert!(!f.excludes_module("app", "a"));
        let f = filter(&[], &["util::parse"]);
        assert!(!f.excludes_module("app", "util"));
    }
}
