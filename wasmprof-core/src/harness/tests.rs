use super::*;
use crate::guard::enter;
use crate::site::test_cache;
use crate::snapshot::take;

static HELPER: Site = Site::new("harness_tests", "helper", "src/harness.rs", 1);
static MARKED: Site = Site::new("harness_tests", "marked", "src/harness.rs", 2).test();

#[test]
fn calls_between_two_harness_tests_are_the_first_one_s() {
    // On a thread of its own, so that other tests' calls do not mix in.
    std::thread::spawn(|| {
        __wasmprof_harness_test(1);
        drop(enter(&HELPER, test_cache(&HELPER), None));
        drop(enter(&HELPER, test_cache(&HELPER), None));
        __wasmprof_harness_test(2);
        {
            // A test instrumented as one goes under the harness's.
            let _test = enter_test(&MARKED, test_cache(&MARKED), None);
            drop(enter(&HELPER, test_cache(&HELPER), None));
        }
        __wasmprof_harness_test(0);
        drop(enter(&HELPER, test_cache(&HELPER), None));
        let s = take();
        let calls = |path: &[&str]| -> u64 {
            (0..s.nodes.len())
                .filter(|&i| s.path_names(i) == path)
                .map(|i| s.nodes[i].calls)
                .sum()
        };
        assert_eq!(
            calls(&["__wasmprof_harness::1", "harness_tests::helper"]),
            2
        );
        assert_eq!(
            calls(&[
                "__wasmprof_harness::2",
                "harness_tests::marked",
                "harness_tests::helper"
            ]),
            1
        );
        assert_eq!(calls(&["harness_tests::helper"]), 1, "after the last test");
        assert!(s.open_path().is_empty(), "every test ended");
    })
    .join()
    .unwrap();
}
