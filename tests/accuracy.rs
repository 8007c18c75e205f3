//! Equal work takes equal time: the thesis's validation program (appendix B)
//! with `--timer host`. This binary holds one test so that nothing else runs
//! beside it; the bound is on ratios and wide enough for a loaded 2-core
//! machine (`cargo bench --bench overhead` measures the real figures).

use wasmprof_tests::*;

const RUNS: usize = 3;

#[test]
fn appendix_b_equal_work_takes_equal_time() {
    let main = "appendix_b::main";
    // f_main_1..4, f_half_2, f_half, f_quarter, summed over the runs.
    let mut sums = [0f64; 7];
    // A first run builds the module and warms the machine; it is not used.
    wasmprof(&["run", "-p", "appendix-b", "--release", "--top", "0"]).assert_success();
    for _ in 0..RUNS {
        let run = wasmprof(&["run", "-p", "appendix-b", "--release", "--top", "0"]);
        run.assert_success();
        let profile = run.profile();
        let paths = [
            "appendix_b::f_main_1",
            "appendix_b::f_main_2",
            "appendix_b::f_main_3",
            "appendix_b::f_main_4",
            "appendix_b::f_half_2",
            "appendix_b::f_half",
            "appendix_b::f_quarter",
        ];
        for (sum, f) in sums.iter_mut().zip(paths) {
            *sum += time_of_path(&profile, &[main, f]);
        }
    }
    let mains = &sums[..4];
    let (min, max) = mains
        .iter()
        .fold((f64::MAX, 0f64), |(lo, hi), &t| (lo.min(t), hi.max(t)));
    assert!(min > 0.0);
    assert!(max / min < 1.25, "f_main_* times {mains:?}");
    let mean = mains.iter().sum::<f64>() / 4.0;
    for (name, time, share) in [
        ("f_half_2", sums[4], 0.5),
        ("f_half", sums[5], 0.5),
        ("f_quarter", sums[6], 0.25),
    ] {
        let measured = time / mean;
        assert!(
            (measured / share - 1.0).abs() < 0.2,
            "{name} is {measured:.3} of f_main, expected {share}"
        );
    }
}
