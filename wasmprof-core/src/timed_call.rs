//! The frame of a timed call still running: what its exit needs, kept on
//! the thread's stack of timed calls.

use crate::tree::NodeId;

/// What the exit of a timed call needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TimedFrame {
    pub(crate) node: NodeId,
    /// Timed calls made before this one's clock was read.
    pub(crate) timed_before: u64,
    /// Count-only calls made before it.
    pub(crate) counted_before: u64,
    /// Clock reading at entry.
    pub(crate) start: f64,
    /// The time added for the timed calls made within it: its own time is
    /// never less. Its span holds theirs; only the clock reads taken out
    /// of both, as measured at start-up and a little off in a busy loop,
    /// could make it come out less.
    pub(crate) children: f64,
}
