//! A small library whose tests are written the ways registry crates write
//! them: `test_case` cases, `rstest` cases and a value matrix, and one
//! plain `#[test]`. The harness runs ten tests; `cargo wasmprof test` must
//! list ten, each with the calls it made.

/// `x` squared.
pub fn square(x: u64) -> u64 {
    x * x
}

/// `a + b`, the slow way, so that each test does some work of its own.
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
