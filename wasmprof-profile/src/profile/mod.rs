//! The profile file format and the operations every report needs on it.

mod animation_frames;
mod columns;
mod invariants;
mod io;
mod memory;
mod merge;
mod model;
mod threads;

pub use animation_frames::{Frame, FrameCalls, Frames};
pub(crate) use io::check as check_invariants;
pub use io::{parse_profile, read_profile, validate, write_profile};
pub use memory::{FailedAlloc, MemoryGrow, MemoryProfile, MemoryWeight, PathMemory};
pub use merge::merge;
pub use model::{
    CountCheck, CountDifference, CoverageInfo, FORMAT, FORMAT_MAJOR, Function, FunctionTier,
    FutureStats, HybridInfo, Latency, Node, Profile, Requests, RunInfo, TimerInfo, TimerMode,
    UnmatchedSamples, Window,
};
pub(crate) use threads::is_between_jobs;
pub use threads::{Activity, Thread, ThreadNode, ThreadRead, WAIT_FUNCTIONS, is_wait_function};
