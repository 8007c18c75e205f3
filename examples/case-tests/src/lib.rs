//! A small library whose tests are written the ways registry crates write
//! them: `test_case` cases, `rstest` cases and a value matrix, one plain
//! `#[test]`, and two doctests (merged into one binary by edition 2024's
//! rustdoc). The harness runs ten tests and rustdoc two;
//! `cargo wasmprof test` must list twelve, each with the calls it made.

/// `x` squared.
///
/// ```
/// assert_eq!(case_tests::square(3), 9);
/// ```
pub fn square(x: u64) -> u64 {
    x * x
}

/// `a + b`, the slow way, so that each test does some work of its own.
///
/// ```
/// use case_tests::add;
/// assert_eq!(add(2, 3), 5);
/// ```
pub fn add(a: u64, b: u64) -> u64 {
    (0..b).fold(a, |sum, _| std::hint::black_box(sum + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use test_case::test_case;

    #[test_case(2, 4; "two")]
    #[test_case(3, 9; "three")]
    #[test_case(4, 16)]
    fn squares(x: u64, expected: u64) {
        assert_eq!(square(x), expected);
    }

    #[rstest]
    #[case(1, 2, 3)]
    #[case(2, 2, 4)]
    fn adds(#[case] a: u64, #[case] b: u64, #[case] sum: u64) {
        assert_eq!(add(a, b), sum);
    }

    #[rstest]
    fn combos(#[values(1, 2)] a: u64, #[values(10, 20)] b: u64) {
        assert!(add(a, b) > 10);
    }

    #[test]
    fn plain() {
        assert_eq!(square(5), 25);
        assert_eq!(add(5, 5), 10);
    }
}
