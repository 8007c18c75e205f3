//! Calibration, once per thread before its first timed call: what a clock
//! read costs and what counting a call costs, both taken out of the times
//! of the calls that hold them.

use crate::thread_state::ThreadState;

/// Measures the clock's own cost, once, before the first call is timed:
/// the least of several rounds of reads back to back. A busy moment of
/// the machine slows a round, and a cost measured too high is taken out
/// of every timed call too many times (in Chromium, where a read costs
/// microseconds, a caller lost milliseconds that way); one measured a
/// little low leaves the reads' true cost in the times, which is the
/// safer error.
#[cold]
pub(crate) fn calibrate(thread: &mut ThreadState) {
    if thread.clock_cost >= 0.0 || !crate::clock::TIMED {
        return;
    }
    thread.clock_cost = least_read_cost(crate::clock::now);
    thread.probe_cost = measure_probe_cost(thread.clock_cost);
}

/// The clock's cost and a counted call's, measured for a thread whose
/// state is behind its lock word (`threads.rs`) before the state is first
/// used: counting calls uses the state, so the measurement cannot run
/// inside a use of it, as [`calibrate`] does. `None` in an untimed build.
#[cfg(not(one_thread))]
#[cold]
pub(crate) fn costs() -> Option<(f64, f64)> {
    if !crate::clock::TIMED {
        return None;
    }
    let clock_cost = least_read_cost(crate::clock::now);
    Some((clock_cost, measure_probe_cost(clock_cost)))
}

/// What one read of `clock` costs, in its units: the least, over a few
/// rounds, of a round's reads back to back divided by their number.
fn least_read_cost(mut clock: impl FnMut() -> f64) -> f64 {
    const READS: u32 = 200;
    least_of_rounds(|| {
        let first = clock();
        let mut last = first;
        for _ in 0..READS {
            last = clock();
        }
        (last - first) / f64::from(READS)
    })
}

/// What one counted call costs, in the clock's unit (ms): measured once,
/// with the clock's cost, so that timed calls can be given it back. The
/// least of a few rounds, as the clock's cost is: it is taken out of a
/// timed call once per counted call under it, so a round slowed by a busy
/// moment would take a caller's time away by the millisecond.
fn measure_probe_cost(clock_cost: f64) -> f64 {
    const PROBES: u32 = 20_000;
    let probe = crate::count::calibration_site();
    let before = crate::thread_state::counted::total();
    let cost = least_of_rounds(|| {
        let start = crate::clock::now();
        for _ in 0..PROBES {
            count_probe(probe);
        }
        let end = crate::clock::now();
        (end - start - clock_cost) / f64::from(PROBES)
    });
    crate::thread_state::counted::set(before);
    cost
}

/// One counted call of the calibration's site, as a program's are made.
#[inline(always)]
fn count_probe(probe: &'static crate::count::CountSite) {
    #[cfg(one_thread)]
    crate::count::count_bare(std::hint::black_box(probe), None);
    #[cfg(not(one_thread))]
    {
        thread_local! {
            static PROBE_CALLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
        }
        #[cfg(target_family = "wasm")]
        {
            let _ = probe;
            PROBE_CALLS.with(|calls| crate::count::count_in(std::hint::black_box(calls)));
        }
        #[cfg(not(target_family = "wasm"))]
        PROBE_CALLS
            .with(|calls| crate::count::count_bare(std::hint::black_box(probe), calls, None));
    }
}

/// The least of a few measurements of one cost, none below zero: a busy
/// moment of the machine (another process, a collection, the engine
/// compiling) slows the round it falls in, never all of them.
fn least_of_rounds(mut round: impl FnMut() -> f64) -> f64 {
    const ROUNDS: u32 = 5;
    (0..ROUNDS)
        .map(|_| round().max(0.0))
        .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::{least_of_rounds, least_read_cost};

    #[test]
    fn a_slow_round_does_not_make_the_clock_look_slow() {
        // Reads cost 1 unit each, but one round (a busy moment) 30.
        let mut now = 0.0;
        let mut reads = 0u32;
        let cost = least_read_cost(|| {
            reads += 1;
            let round = (reads - 1) / 201;
            now += if round == 2 { 30.0 } else { 1.0 };
            now
        });
        assert_eq!(cost, 1.0);
    }

    #[test]
    fn a_slow_round_does_not_make_counting_look_slow() {
        // A counted call costs 2 units, but one round of five was
        // interrupted for 10,000 (in CI, a caller of 200,001 counted calls
        // lost 12 ms of its 125 that way in Chromium).
        let mut round = 0;
        let cost = least_of_rounds(|| {
            round += 1;
            let interrupted = if round == 1 { 10_000.0 } else { 0.0 };
            (20_000.0 * 2.0 + interrupted) / 20_000.0
        });
        assert_eq!(cost, 2.0);
        assert_eq!(round, 5);
    }

    #[test]
    fn a_cost_is_never_below_zero() {
        assert_eq!(least_of_rounds(|| -1.0), 0.0);
    }
}
