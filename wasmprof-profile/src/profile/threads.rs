//! The threads of a threaded program: the profile's tree is every thread's
//! calls merged (what gprof and pprof show by default), and each thread's
//! own share of it is kept beside it, so that one thread can be shown
//! alone (`report --thread NAME`).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

use super::Profile;

/// One thread, and what it alone did on each call path it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thread {
    /// The name the program gave it, else `thread N`; the thread the
    /// profile was taken on (the main one) comes first.
    pub name: String,
    /// How the snapshot came by the thread's record: `answered` (by the
    /// thread itself, between two calls) unless said otherwise.
    #[serde(default, skip_serializing_if = "ThreadRead::is_answered")]
    pub read: ThreadRead,
    /// Its share of each call path it took.
    pub nodes: Vec<ThreadNode>,
}

/// How a snapshot came by one thread's record. The runtime reads no
/// thread under a lock: a thread copies its record itself between two
/// calls when a snapshot asks, and one that makes no call meanwhile is
/// read where it stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThreadRead {
    /// Copied by the thread itself between two calls, or after it
    /// finished: exact.
    #[default]
    Answered,
    /// The thread made no call while the snapshot waited (idle, blocked,
    /// or in code that is not instrumented), and was read where it stood:
    /// exact, the calls it was inside marked as not returned.
    WhereItStood,
    /// The thread had stopped in the middle of recording a call (a trap,
    /// or the host stopped it there): read as it stood, its last call
    /// perhaps counted without its time, or not counted.
    MidRecord,
}

impl ThreadRead {
    fn is_answered(&self) -> bool {
        *self == ThreadRead::Answered
    }
}

impl From<wasmprof_wire::ThreadRead> for ThreadRead {
    fn from(read: wasmprof_wire::ThreadRead) -> ThreadRead {
        match read {
            wasmprof_wire::ThreadRead::Answered => ThreadRead::Answered,
            wasmprof_wire::ThreadRead::WhereItStood => ThreadRead::WhereItStood,
            wasmprof_wire::ThreadRead::MidRecord => ThreadRead::MidRecord,
        }
    }
}

/// A thread's calls and time on one node of [`Profile::nodes`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ThreadNode {
    /// The call path: an index into [`Profile::nodes`].
    pub node: usize,
    /// The thread's calls on it.
    pub calls: u64,
    /// Their time, callees included.
    pub inclusive_nanos: f64,
    /// Some of its calls were too short to time ([`super::Node::partly_timed`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partly_timed: bool,
    /// A call of the thread's was still running ([`super::Node::open`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub open: bool,
}

/// Functions in which a thread waits for others instead of working, seen
/// when their crate is instrumented (`--instrument-crate rayon-core`):
/// rayon's idle loop between jobs, and the latch a thread outside the pool
/// blocks on until the pool has run its job. Joins on `std` threads are not
/// among them: `std` is not instrumented, so a join's time stays in the
/// joining function's self time.
pub const WAIT_FUNCTIONS: &[&str] = &[
    "rayon_core::sleep::Sleep::no_work_found",
    "rayon_core::sleep::Sleep::sleep",
    "rayon_core::latch::LockLatch::wait",
    "rayon_core::latch::LockLatch::wait_and_reset",
];

/// Whether a thread in `function` is waiting (see [`WAIT_FUNCTIONS`]).
pub fn is_wait_function(function: &str) -> bool {
    WAIT_FUNCTIONS.contains(&function)
}

/// rayon's worker loop outside any job: a worker in these functions (or
/// in `rayon_core::sleep`) is starting, looking for work or falling
/// asleep, and runs none. A job runs inside the loop through an `execute`,
/// which is not among them.
const BETWEEN_JOBS: &[&str] = &[
    "rayon_core::registry::ThreadBuilder::run",
    "rayon_core::registry::main_loop",
    "rayon_core::registry::WorkerThread::wait_until_out_of_work",
    "rayon_core::registry::WorkerThread::wait_until_cold",
    "rayon_core::registry::WorkerThread::find_work",
    "rayon_core::registry::WorkerThread::take_local_job",
    "rayon_core::registry::WorkerThread::steal",
    "rayon_core::registry::WorkerThread::has_injected_job",
    "rayon_core::registry::Registry::pop_injected_job",
    "rayon_core::registry::Registry::has_injected_job",
];

/// Whether a thread in `function` is in its pool's loop between jobs, or
/// waiting: a thread whose every open call is such a function was doing
/// no work when the program ended.
pub(crate) fn is_between_jobs(function: &str) -> bool {
    is_wait_function(function)
        || function.starts_with("rayon_core::sleep::")
        || BETWEEN_JOBS.contains(&function)
}

/// How a thread spent the time the profile saw it in instrumented calls.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Activity {
    /// Inside instrumented calls, less the time waiting.
    pub busy_nanos: f64,
    /// Inside a [wait function](WAIT_FUNCTIONS) that returned.
    pub waiting_nanos: f64,
}

impl Thread {
    /// Time inside instrumented calls, told apart into working and waiting.
    ///
    /// A call that never returned (a rayon worker's loop, which runs until
    /// the program ends) has no time of its own; what the calls it made
    /// returned from stands for it, so a worker whose whole life is one
    /// open call still shows the work it did.
    pub fn activity(&self, profile: &Profile) -> Activity {
        let children = profile.children();
        let mut shares = vec![None; profile.nodes.len()];
        for share in &self.nodes {
            if let Some(slot) = shares.get_mut(share.node) {
                *slot = Some(*share);
            }
        }
        let tree = ThreadTree {
            profile,
            children: &children,
            shares: &shares,
        };
        let (inside, waiting) = tree.below(Profile::ROOT);
        Activity {
            busy_nanos: (inside - waiting).max(0.0),
            waiting_nanos: waiting,
        }
    }

    /// Calls of every instrumented function on this thread.
    pub fn calls(&self) -> u64 {
        self.nodes.iter().map(|n| n.calls).sum()
    }
}

/// One thread's shares laid over the profile's tree.
struct ThreadTree<'a> {
    profile: &'a Profile,
    children: &'a [Vec<usize>],
    shares: &'a [Option<ThreadNode>],
}

impl ThreadTree<'_> {
    /// Time inside, and time waiting, of the calls below `node`.
    fn below(&self, node: usize) -> (f64, f64) {
        self.children[node]
            .iter()
            .map(|&child| self.at(child))
            .fold((0.0, 0.0), |(a, b), (c, d)| (a + c, b + d))
    }

    /// Time inside, and time waiting, of this thread's calls on `node`.
    fn at(&self, node: usize) -> (f64, f64) {
        let Some(share) = self.shares[node] else {
            return (0.0, 0.0);
        };
        let waits = self.profile.nodes[node]
            .function
            .and_then(|f| self.profile.functions.get(f))
            .is_some_and(|f| is_wait_function(&f.name));
        if waits {
            return (share.inclusive_nanos, share.inclusive_nanos);
        }
        let (inside, waiting) = self.below(node);
        if share.open {
            (share.inclusive_nanos.max(inside), waiting)
        } else {
            (share.inclusive_nanos, waiting)
        }
    }
}

impl Profile {
    /// The thread named `which`, or the `which`th (from 0) when it is a
    /// number.
    pub fn find_thread(&self, which: &str) -> Result<usize> {
        let named = self.threads.iter().position(|t| t.name == which);
        let numbered = which
            .parse::<usize>()
            .ok()
            .filter(|&n| n < self.threads.len());
        named.or(numbered).ok_or_else(|| Error::NoSuchThread {
            asked: which.to_owned(),
            threads: self.threads.iter().map(|t| t.name.clone()).collect(),
        })
    }

    /// The profile of one thread alone: the same paths, with that thread's
    /// calls and time on each and nothing on the others.
    pub fn thread_view(&self, index: usize) -> Profile {
        let mut view = self.clone();
        let thread = &self.threads[index];
        for node in view.nodes.iter_mut() {
            node.calls = 0;
            node.inclusive_nanos = 0.0;
            node.partly_timed = false;
            node.open = false;
            node.samples = 0;
        }
        for share in &thread.nodes {
            if let Some(node) = view.nodes.get_mut(share.node) {
                node.calls = share.calls;
                node.inclusive_nanos = share.inclusive_nanos;
                node.partly_timed = share.partly_timed;
                node.open = share.open;
            }
        }
        // Counted functions' calls are not kept per thread.
        view.run.entry = format!("{} (thread {})", self.run.entry, thread.name);
        view.threads = Vec::new();
        view.futures = Vec::new();
        view.memory = None;
        view.frames = None;
        view
    }

    /// Moves every thread's shares through `map` (old node → new node),
    /// leaving out the nodes it drops.
    pub fn remap_threads(&mut self, map: impl Fn(usize) -> Option<usize>) {
        for thread in &mut self.threads {
            thread.nodes = thread
                .nodes
                .iter()
                .filter_map(|n| {
                    Some(ThreadNode {
                        node: map(n.node)?,
                        ..*n
                    })
                })
                .collect();
        }
    }

    /// Adds `other`'s threads, whose nodes `node_map` moves into this
    /// profile, to this one's: a thread of the same name gets the calls.
    pub(crate) fn merge_threads(&mut self, other: &Profile, node_map: &[usize]) {
        for thread in &other.threads {
            let index = match self.threads.iter().position(|t| t.name == thread.name) {
                Some(index) => index,
                None => {
                    self.threads.push(Thread {
                        name: thread.name.clone(),
                        read: thread.read,
                        nodes: Vec::new(),
                    });
                    self.threads.len() - 1
                }
            };
            let into = &mut self.threads[index];
            for share in &thread.nodes {
                let node = node_map[share.node];
                match into.nodes.iter_mut().find(|n| n.node == node) {
                    Some(n) => {
                        n.calls += share.calls;
                        n.inclusive_nanos += share.inclusive_nanos;
                        n.partly_timed |= share.partly_timed;
                        n.open |= share.open;
                    }
                    None => into.nodes.push(ThreadNode { node, ..*share }),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::fixtures::{ProfileBuilder, node_at, two_workers};

    #[test]
    fn a_thread_alone_has_its_own_calls_on_the_same_paths() {
        let profile = two_workers();
        let index = profile.find_thread("worker-1").unwrap();
        let alone = profile.thread_view(index);
        let work = node_at(&alone, &["work"]);
        assert_eq!(alone.nodes[work].calls, 5);
        assert_eq!(alone.nodes[work].inclusive_nanos, 5_000.0);
        assert!(alone.threads.is_empty());
        assert!(alone.run.entry.ends_with("(thread worker-1)"));
        assert_eq!(profile.find_thread("1").unwrap(), 1);
        assert_eq!(profile.threads[1].activity(&profile).busy_nanos, 3_000.0);
        assert_eq!(
            profile.threads[0].activity(&profile).busy_nanos.to_bits(),
            0.0f64.to_bits()
        );
    }

    /// A rayon worker lives in one call that never returns; the main
    /// thread blocks on a latch while the pool runs its job.
    #[test]
    fn a_worker_s_open_loop_shows_the_work_and_the_waits_inside_it() {
        let profile = crate::fixtures::rayon_pool();
        let worker = profile.threads[1].activity(&profile);
        assert_eq!(
            (worker.busy_nanos, worker.waiting_nanos),
            (4_000.0, 2_000.0)
        );
        let main = profile.threads[0].activity(&profile);
        assert_eq!((main.busy_nanos, main.waiting_nanos), (1_000.0, 9_000.0));
    }

    #[test]
    fn an_unknown_thread_is_refused_naming_those_there_are() {
        let error = two_workers()
            .find_thread("worker-7")
            .unwrap_err()
            .to_string();
        assert!(error.contains("main, worker-0, worker-1"), "{error}");
        let one = ProfileBuilder::timed().path(&["work"], 1, 1.0).build();
        let error = one.find_thread("main").unwrap_err().to_string();
        assert!(error.contains("one thread"), "{error}");
    }

    #[test]
    fn merged_profiles_add_the_calls_of_threads_of_the_same_name() {
        let merged = crate::profile::merge(vec![two_workers(), two_workers()]).unwrap();
        assert_eq!(merged.threads.len(), 3);
        let work = node_at(&merged, &["work"]);
        assert_eq!(merged.nodes[work].calls, 16);
        let alone = merged.thread_view(merged.find_thread("worker-0").unwrap());
        assert_eq!(alone.nodes[work].calls, 6);
    }
}
