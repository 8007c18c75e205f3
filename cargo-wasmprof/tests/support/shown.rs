//! Times as the viewers print them (`169.9 ms`, `169.90ms (55%)`,
//! `99.61µs`, `1.5 s`), read back with the rounding their digits imply.

/// One function's row in a viewer's table: its name, and the self and
/// total times shown for it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub name: String,
    pub self_time: Shown,
    pub total_time: Shown,
}

/// A time as a viewer shows it: in milliseconds, and how far the value
/// behind it can be from it (half the last digit shown).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Shown {
    pub ms: f64,
    pub rounding_ms: f64,
}

impl Shown {
    /// Whether `ms` would be shown as this, give or take `slack_ms`.
    pub(crate) fn matches(&self, ms: f64, slack_ms: f64) -> bool {
        (self.ms - ms).abs() <= self.rounding_ms + slack_ms
    }
}

/// Reads a shown time; a share in brackets after it is left aside.
pub(crate) fn shown(text: &str) -> Shown {
    let time = text.split(" (").next().unwrap_or(text);
    let time: String = time
        .chars()
        .filter(|c| !c.is_whitespace() && *c != ',')
        .collect();
    let units = [
        ("ms", 1.0),
        ("µs", 1e-3),
        ("μs", 1e-3),
        ("ns", 1e-6),
        ("s", 1e3),
    ];
    let (number, scale) = units
        .iter()
        .find_map(|(unit, scale)| time.strip_suffix(unit).map(|n| (n, *scale)))
        .unwrap_or_else(|| panic!("not a time a viewer shows: {text:?}"));
    let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
    Shown {
        ms: number
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("not a time a viewer shows: {text:?}"))
            * scale,
        rounding_ms: 0.5 * 10f64.powi(-(decimals as i32)) * scale,
    }
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn times_are_read_in_their_units_and_digits() {
        let ms = |text: &str| {
            let s = shown(text);
            (s.ms, s.rounding_ms)
        };
        assert_eq!(ms("169.9\u{a0}ms"), (169.9, 0.05));
        assert_eq!(ms("1,234.5\u{a0}ms"), (1234.5, 0.05));
        assert_eq!(ms("336\u{a0}ms"), (336.0, 0.5));
        assert_eq!(ms("850\u{a0}μs"), (0.85, 0.0005));
        assert_eq!(ms("1.5\u{a0}s"), (1500.0, 50.0));
        assert_eq!(ms("169.90ms (55%)"), (169.9, 0.005));
        assert_eq!(ms("0.00ns (<0.01%)"), (0.0, 0.5e-8));
    }
}
