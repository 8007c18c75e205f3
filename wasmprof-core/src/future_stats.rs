//! What the futures of each call path did: the table a thread's state
//! holds, which the futures of `future.rs` fill in and the snapshot reads.

use crate::tree::{NodeId, Random};

/// Latencies kept exactly per call path; past this many, a uniform sample
/// of them (a reservoir), from which the median is estimated.
const LATENCIES_KEPT: usize = 4096;

/// What the runtime knows of the futures of one call path.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FutureStats {
    pub node: NodeId,
    pub polls: u64,
    pub completions: u64,
    pub cancellations: u64,
    /// CPU time (ms) of the futures still pending: polled, not finished.
    pub pending_time: f64,
    pub latency: Latency,
}

/// Latencies of completed futures, in milliseconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Latency {
    pub count: u64,
    pub total: f64,
    pub max: f64,
    kept: Vec<f64>,
}

impl Latency {
    pub(crate) fn record(&mut self, ms: f64, random: &mut Random) {
        self.count += 1;
        self.total += ms;
        self.max = self.max.max(ms);
        if self.kept.len() < LATENCIES_KEPT {
            self.kept.push(ms);
        } else {
            // Algorithm R: the n-th latency replaces a kept one with
            // probability kept/n, which keeps the sample uniform.
            let at = random.below(self.count);
            if let Some(slot) = self.kept.get_mut(at as usize) {
                *slot = ms;
            }
        }
    }

    /// The median of the kept latencies: exact up to [`LATENCIES_KEPT`]
    /// completions, an estimate past them.
    pub(crate) fn median(&self) -> f64 {
        if self.kept.is_empty() {
            return 0.0;
        }
        let mut sorted = self.kept.clone();
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        if sorted.len() % 2 == 0 {
            (sorted[mid - 1] + sorted[mid]) / 2.0
        } else {
            sorted[mid]
        }
    }
}

/// Every call path of a thread that created a future, found by node.
#[derive(Debug)]
pub(crate) struct Futures {
    /// Index into `stats` by node id; `u32::MAX` for none.
    slot_of: Vec<u32>,
    pub stats: Vec<FutureStats>,
}

impl Futures {
    pub(crate) const fn new() -> Self {
        Futures {
            slot_of: Vec::new(),
            stats: Vec::new(),
        }
    }

    pub(crate) fn slot(&mut self, node: NodeId) -> u32 {
        let index = node as usize;
        if self.slot_of.len() <= index {
            self.slot_of.resize(index + 1, u32::MAX);
        }
        if self.slot_of[index] == u32::MAX {
            self.slot_of[index] = self.stats.len() as u32;
            self.stats.push(FutureStats {
                node,
                ..FutureStats::default()
            });
        }
        self.slot_of[index]
    }
}

#[cfg(test)]
mod tests {
    use super::{LATENCIES_KEPT, Latency};
    use crate::tree::Random;

    #[test]
    fn the_median_is_exact_and_the_reservoir_bounded() {
        let mut latency = Latency::default();
        let mut random = Random::new(7);
        for ms in [5.0, 1.0, 3.0] {
            latency.record(ms, &mut random);
        }
        assert_eq!(
            (latency.median(), latency.max, latency.count),
            (3.0, 5.0, 3)
        );
        for i in 0..3 * LATENCIES_KEPT {
            latency.record(i as f64, &mut random);
        }
        assert_eq!(latency.kept.len(), LATENCIES_KEPT);
        assert_eq!(latency.count, 3 + 3 * LATENCIES_KEPT as u64);
    }
}
