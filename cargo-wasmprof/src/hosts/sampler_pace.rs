//! How often a sampler samples a program whose threads fill the machine:
//! one rule for wasmtime's epoch ticker and for the browser's profilers.
//!
//! A sampler is a timer: each sample is an interrupt on some core, and
//! V8 starts a sampler thread for each thread it profiles. While a core
//! is idle the sampler wakes there; once the program's threads keep every
//! core busy it lands on one of them. That costs a few microseconds on
//! bare metal and tens in a virtual machine (measured at about 30 µs in a
//! Firecracker guest, for a ticker thread and for a POSIX timer's signal
//! alike), so that a program whose threads fill the machine paid 10 to
//! 15 % more for the same samples than on one thread in wasmtime, and its
//! sampled runs 1.5 times more on web workers in Chromium. With the
//! default interval the sampler then takes [`BUSY_INTERVAL`] instead, as
//! perf lowers its rate when its interrupts take too much of the machine.
//! Each sample keeps the time since its thread's last one, so only the
//! samples' grain changes. An interval the user chose is kept.

use std::time::Duration;

/// The interval while the program's threads keep every core busy: the
/// default of Node's `--cpu-prof`, samply and Firefox's profiler.
pub(crate) const BUSY_INTERVAL: Duration = Duration::from_millis(1);

/// The cores the program's threads can fill.
pub(crate) fn cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// The interval to sample at: `interval`, or [`BUSY_INTERVAL`] when it
/// `adapts` (the user did not choose it) and `threads` sampled threads
/// occupy every one of the `cores`.
pub(crate) fn interval_for(interval: Duration, adapts: bool, threads: u32, cores: u32) -> Duration {
    if adapts && threads >= cores {
        interval.max(BUSY_INTERVAL)
    } else {
        interval
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_interval_slows_to_a_millisecond_once_the_threads_fill_the_cores() {
        let us = Duration::from_micros;
        assert_eq!(interval_for(us(100), true, 0, 2), us(100));
        assert_eq!(interval_for(us(100), true, 1, 2), us(100));
        assert_eq!(interval_for(us(100), true, 2, 2), BUSY_INTERVAL);
        assert_eq!(interval_for(us(100), true, 5, 2), BUSY_INTERVAL);
        // A default slower than the busy interval is kept.
        assert_eq!(interval_for(us(4000), true, 2, 2), us(4000));
        // An interval the user chose is kept, however busy the machine.
        assert_eq!(interval_for(us(100), false, 5, 2), us(100));
    }
}
