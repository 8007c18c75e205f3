//! Time units for reports.
//!
//! gprof prints seconds with two decimals, which would show nothing but
//! `0.00` for a WebAssembly run of a few milliseconds. A report picks one
//! unit from the largest number it prints instead, and says which.

/// A unit the text reports print times in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TimeUnit {
    Seconds,
    Milliseconds,
    Microseconds,
    Nanoseconds,
}

impl TimeUnit {
    /// Largest first.
    const ALL: [TimeUnit; 4] = [
        TimeUnit::Seconds,
        TimeUnit::Milliseconds,
        TimeUnit::Microseconds,
        TimeUnit::Nanoseconds,
    ];

    /// The largest unit in which `nanos` is at least 1, so that the largest
    /// number keeps three significant digits or more at two decimals and no
    /// number needs more than three digits before the point (seconds aside).
    /// Nanoseconds for zero.
    pub(super) fn for_largest(nanos: f64) -> TimeUnit {
        Self::ALL
            .into_iter()
            .find(|unit| nanos >= unit.nanos())
            .unwrap_or(TimeUnit::Nanoseconds)
    }

    /// How many nanoseconds one unit is.
    pub(super) fn nanos(self) -> f64 {
        match self {
            TimeUnit::Seconds => 1e9,
            TimeUnit::Milliseconds => 1e6,
            TimeUnit::Microseconds => 1e3,
            TimeUnit::Nanoseconds => 1.0,
        }
    }

    /// `nanos` in this unit.
    pub(super) fn value_of(self, nanos: f64) -> f64 {
        nanos / self.nanos()
    }

    /// ASCII abbreviation, as gprof writes its per-call units (`us`, not `µs`).
    pub(super) fn abbreviation(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Milliseconds => "ms",
            TimeUnit::Microseconds => "us",
            TimeUnit::Nanoseconds => "ns",
        }
    }

    /// The unit spelled out.
    pub(super) fn name(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "seconds",
            TimeUnit::Milliseconds => "milliseconds",
            TimeUnit::Microseconds => "microseconds",
            TimeUnit::Nanoseconds => "nanoseconds",
        }
    }
}

/// A duration for people: three significant digits or so in the unit that
/// suits it, e.g. `12.3 ms`, `850 ns`, `1.50 s`.
pub fn human_duration(nanos: f64) -> String {
    let symbol = |unit| match unit {
        TimeUnit::Microseconds => "µs",
        other => other.abbreviation(),
    };
    duration_with(nanos, symbol)
}

/// [`human_duration`] in ASCII (`us` for microseconds), for reports that
/// keep to gprof's character set.
pub(super) fn human_duration_ascii(nanos: f64) -> String {
    duration_with(nanos, TimeUnit::abbreviation)
}

fn duration_with(nanos: f64, symbol: impl Fn(TimeUnit) -> &'static str) -> String {
    let unit = TimeUnit::for_largest(nanos);
    let value = unit.value_of(nanos);
    let symbol = symbol(unit);
    if unit == TimeUnit::Nanoseconds || value >= 100.0 {
        format!("{value:.0} {symbol}")
    } else if value >= 10.0 {
        format!("{value:.1} {symbol}")
    } else {
        format!("{value:.2} {symbol}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_follows_the_largest_number() {
        assert_eq!(TimeUnit::for_largest(2.5e9), TimeUnit::Seconds);
        assert_eq!(TimeUnit::for_largest(140e6), TimeUnit::Milliseconds);
        assert_eq!(TimeUnit::for_largest(999.0), TimeUnit::Nanoseconds);
        assert_eq!(TimeUnit::for_largest(1000.0), TimeUnit::Microseconds);
        assert_eq!(TimeUnit::for_largest(0.0), TimeUnit::Nanoseconds);
    }

    #[test]
    fn human_durations_read_well() {
        assert_eq!(human_duration(12_345_678.0), "12.3 ms");
        assert_eq!(human_duration(850.0), "850 ns");
        assert_eq!(human_duration(1.5e9), "1.50 s");
        assert_eq!(human_duration(250_000.0), "250 µs");
        assert_eq!(human_duration(0.0), "0 ns");
        assert_eq!(human_duration_ascii(250_000.0), "250 us");
    }
}
