//! The calling-context tree: one node per distinct call path.
//!
//! Keeping paths rather than caller→callee arcs is what lets the reports give
//! exact per-caller times instead of apportioning a callee's time among its
//! callers the way gprof must. The tree is bounded: once it holds `cap` nodes,
//! calls on new paths are counted in an overflow node of their function
//! (under one `<overflow>` node), so every function's count stays exact and
//! only their paths are lost.

/// Index of a node in a [`CallTree`].
pub(crate) use wasmprof_wire::NodeId;

/// The function id of the root.
pub(crate) use wasmprof_wire::NO_FUNCTION;
/// The function id of the overflow node.
pub(crate) use wasmprof_wire::OVERFLOW_FUNCTION;
/// The root: the host, which calls into the module "spontaneously".
pub(crate) use wasmprof_wire::ROOT;
/// Index meaning "none" in the sibling and child links.
const NONE: NodeId = u32::MAX;
/// Bound on the number of nodes: `cargo wasmprof --max-nodes N` (through
/// the build script), else 2^20, about 40 MiB of nodes at most.
pub(crate) const DEFAULT_CAP: usize = match option_env!("WASMPROF_MAX_NODES_VALUE") {
    Some(text) => parse_cap(text),
    None => 1 << 20,
};

/// The decimal number of the build script's `WASMPROF_MAX_NODES_VALUE`.
const fn parse_cap(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut value = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        value = value * 10 + (bytes[i] - b'0') as usize;
        i += 1;
    }
    value
}

/// One calling context.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Node {
    pub parent: NodeId,
    pub function: u32,
    first_child: NodeId,
    next_sibling: NodeId,
    /// Exact number of calls through this path.
    pub calls: u64,
    /// How many of those calls were timed and counted in `inclusive` (all of
    /// them unless some were too short to time).
    pub timed_calls: u64,
    /// Time of the timed calls including callees, in the clock's unit (ms).
    pub inclusive: f64,
    /// The call number (of `calls`) from which the next call is timed.
    next_timed: u64,
    /// Some calls were too short to time; their time is in the parent's.
    pub untimed_short: bool,
    /// A call never returned: a panic, caught by JavaScript, skipped its
    /// guard, and the stack was cut back past it.
    pub abandoned: bool,
    /// While the calls are too short to time, one in about `period` is
    /// timed all the same, to see whether they still are.
    period: u32,
}

/// A call shorter than this many clock reads' cost is too short to time:
/// the reads would cost more than the call and drown what it measures.
/// Counts stay exact.
pub(crate) const TINY_IN_CLOCK_COSTS: f64 = 10.0;
/// The longest period between probes of a node whose calls are short.
pub(crate) const MAX_PERIOD: u32 = 1024;

/// The tree itself. Node 0 is the root; a parent always precedes its children.
#[derive(Clone, Debug)]
pub(crate) struct CallTree {
    nodes: Vec<Node>,
    cap: usize,
    overflow: NodeId,
    /// Each function's overflow node (a child of `overflow`), by function id.
    overflow_of: Vec<NodeId>,
}

impl CallTree {
    /// An empty tree; the root is created on first use so this can be `const`.
    pub(crate) const fn new(cap: usize) -> Self {
        CallTree {
            nodes: Vec::new(),
            cap,
            overflow: NONE,
            overflow_of: Vec::new(),
        }
    }

    /// A copy made one node at a time, waiting `between` spins after each:
    /// what a snapshot copying a thread's tree while the thread wrote it
    /// would see, widened (the unit tests of `threads.rs`).
    #[cfg(test)]
    pub(crate) fn clone_slowly(&self, between: u32) -> CallTree {
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for index in 0..self.nodes.len() {
            // SAFETY: a test's racy read of plain words, as it stands.
            nodes.push(unsafe { std::ptr::read_volatile(&self.nodes[index]) });
            for _ in 0..between {
                std::hint::spin_loop();
            }
        }
        CallTree {
            nodes,
            cap: self.cap,
            overflow: self.overflow,
            overflow_of: self.overflow_of.clone(),
        }
    }

    /// All nodes, root first; empty if nothing was ever entered.
    pub(crate) fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Whether `node` is the `<overflow>` node or a function's overflow
    /// node under it.
    #[inline]
    pub(crate) fn is_overflow(&self, node: NodeId) -> bool {
        self.overflow != NONE
            && (node == self.overflow
                || self
                    .nodes
                    .get(node as usize)
                    .is_some_and(|n| n.parent == self.overflow))
    }

    /// The `<overflow>` node, if the cap was ever reached.
    pub(crate) fn overflow(&self) -> Option<NodeId> {
        (self.overflow != NONE).then_some(self.overflow)
    }

    /// The configured node cap.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// Finds or creates the child of `parent` for `function`. Past the cap,
    /// and anywhere below the overflow node, the answer is the function's
    /// overflow node.
    pub(crate) fn child(&mut self, parent: NodeId, function: u32) -> NodeId {
        if self.nodes.is_empty() {
            self.nodes.push(Node::new(NONE, NO_FUNCTION));
        }
        if self.is_overflow(parent) {
            return self.overflow_for(function);
        }
        let mut previous = NONE;
        let mut link = self.nodes[parent as usize].first_child;
        while link != NONE {
            let node = &self.nodes[link as usize];
            if node.function == function {
                if previous != NONE {
                    self.move_to_front(parent, previous, link);
                }
                return link;
            }
            previous = link;
            link = node.next_sibling;
        }
        // Keep one slot for the `<overflow>` node; the functions' own
        // overflow nodes come past the cap, one per function at most.
        if self.nodes.len() + 1 >= self.cap {
            return self.overflow_for(function);
        }
        self.push_child(parent, function)
    }

    /// Makes `child` (now after `previous`) the first of its parent's
    /// children: the guard's second fast path looks only at the first, and
    /// the child just looked up is the one likely to be entered again.
    fn move_to_front(&mut self, parent: NodeId, previous: NodeId, child: NodeId) {
        let next = self.nodes[child as usize].next_sibling;
        self.nodes[previous as usize].next_sibling = next;
        self.nodes[child as usize].next_sibling = self.nodes[parent as usize].first_child;
        self.nodes[parent as usize].first_child = child;
    }

    fn push_child(&mut self, parent: NodeId, function: u32) -> NodeId {
        let id = self.nodes.len() as NodeId;
        let mut node = Node::new(parent, function);
        node.next_sibling = self.nodes[parent as usize].first_child;
        self.nodes[parent as usize].first_child = id;
        self.nodes.push(node);
        id
    }

    /// The overflow node of `function`, made on first use.
    fn overflow_for(&mut self, function: u32) -> NodeId {
        if self.overflow == NONE {
            self.overflow = self.push_child(ROOT, OVERFLOW_FUNCTION);
        }
        let index = function as usize;
        if function >= OVERFLOW_FUNCTION {
            return self.overflow;
        }
        if self.overflow_of.len() <= index {
            self.overflow_of.resize(index + 1, NONE);
        }
        if self.overflow_of[index] == NONE {
            self.overflow_of[index] = self.push_child(self.overflow, function);
        }
        self.overflow_of[index]
    }

    /// The hot path: if `cached` is the child of `parent` for `function`,
    /// counts a call through it and returns whether this call is to be
    /// timed.
    ///
    /// `function` may be `None` when the caller knows that `cached` can only
    /// be a node of its own function.
    #[inline(always)]
    pub(crate) fn enter_cached(
        &mut self,
        cached: NodeId,
        parent: NodeId,
        function: Option<u32>,
    ) -> Option<bool> {
        let node = self.nodes.get_mut(cached as usize)?;
        if node.parent != parent || function.is_some_and(|f| f != node.function) {
            return None;
        }
        node.calls += 1;
        Some(node.is_timed())
    }

    /// The second fast path, for when the site's cached node is of another
    /// parent (recursion moves the parent at every level): if the parent's
    /// newest child is this function's node, counts a call through it and
    /// returns it with whether this call is to be timed.
    #[inline(always)]
    pub(crate) fn enter_first_child(
        &mut self,
        parent: NodeId,
        function: u32,
    ) -> Option<(NodeId, bool)> {
        let child = self.nodes.get(parent as usize)?.first_child;
        let node = self.nodes.get_mut(child as usize)?;
        if node.function != function {
            return None;
        }
        node.calls += 1;
        Some((child, node.is_timed()))
    }

    /// Counts one call through `node`; returns whether this call is to be
    /// timed.
    #[inline(always)]
    pub(crate) fn enter(&mut self, node: NodeId) -> bool {
        match self.nodes.get_mut(node as usize) {
            Some(n) => {
                n.calls += 1;
                n.is_timed()
            }
            None => false,
        }
    }

    /// Ends a timed call of `node` that lasted `elapsed`; `clock_cost` is
    /// what one clock read costs. Returns the time added, if any.
    ///
    /// A timed call's time is added as measured, and it stands for itself
    /// alone: no call's time is ever multiplied to stand for calls that
    /// were not timed, so a node's time never holds more than its calls
    /// spent, and never more than its caller's calls, which hold them.
    ///
    /// Calls shorter than [`TINY_IN_CLOCK_COSTS`] are not timed: the reads
    /// would cost more than the call, and what they measured would be
    /// mostly the clock. Their time stays in the caller's own time, so
    /// totals still add up, and the node is marked. The node's later calls
    /// are then timed only now and then (up to one in [`MAX_PERIOD`], drawn
    /// at random so that the choice cannot lock onto a pattern), to see
    /// whether they have become long; one that has is timed every time
    /// again. A call that `made_timed_calls` is never too short: its
    /// children's time was added, and it holds theirs.
    #[inline(always)]
    pub(crate) fn add_time(
        &mut self,
        node: NodeId,
        elapsed: f64,
        clock_cost: f64,
        made_timed_calls: bool,
        random: &mut Random,
    ) -> Option<f64> {
        let n = self.nodes.get_mut(node as usize)?;
        let added = if elapsed < clock_cost * TINY_IN_CLOCK_COSTS && !made_timed_calls {
            n.untimed_short = true;
            n.period = (n.period * 2).min(MAX_PERIOD);
            None
        } else {
            let elapsed = elapsed.max(0.0);
            n.inclusive += elapsed;
            n.timed_calls += 1;
            n.period = 1;
            Some(elapsed)
        };
        n.next_timed = n.calls + 1 + u64::from(random.geometric(n.period));
        added
    }

    /// Counts the creation of a future through `node`: an async function's
    /// call. Its polls are all timed (they are few and long beside a
    /// clock read), so every call counts as timed.
    pub(crate) fn count_future(&mut self, node: NodeId) {
        if let Some(n) = self.nodes.get_mut(node as usize) {
            n.calls += 1;
            if crate::clock::TIMED {
                n.timed_calls += 1;
            }
        }
    }

    /// Adds time measured for `node` outside [`add_time`](Self::add_time):
    /// the polls of its futures, every one timed, and the time moved along
    /// the tree for a poll run outside its caller.
    pub(crate) fn add_exact_time(&mut self, node: NodeId, elapsed: f64) {
        if let Some(n) = self.nodes.get_mut(node as usize) {
            n.inclusive += elapsed;
        }
    }

    /// Marks a call through `node` as one that never returned.
    pub(crate) fn mark_abandoned(&mut self, node: NodeId) {
        if let Some(n) = self.nodes.get_mut(node as usize) {
            n.abandoned = true;
        }
    }

    /// The parent of `node`; `None` for the root or a node that does not
    /// exist.
    pub(crate) fn parent_of(&self, node: NodeId) -> Option<NodeId> {
        self.nodes
            .get(node as usize)
            .map(|n| n.parent)
            .filter(|&p| p != NONE)
    }

    /// Adds `other`'s calls and time to this tree, path by path (the trees
    /// of finished threads, at a snapshot); returns where each of `other`'s
    /// nodes went.
    pub(crate) fn merge_from(&mut self, other: &CallTree) -> Vec<NodeId> {
        let mut map = vec![ROOT; other.nodes.len()];
        for (index, node) in other.nodes.iter().enumerate().skip(1) {
            let target = self.child(map[node.parent as usize], node.function);
            let merged = &mut self.nodes[target as usize];
            merged.calls += node.calls;
            merged.timed_calls += node.timed_calls;
            merged.untimed_short |= node.untimed_short;
            merged.abandoned |= node.abandoned;
            merged.inclusive += node.inclusive;
            map[index] = target;
        }
        map
    }
}

impl Node {
    const fn new(parent: NodeId, function: u32) -> Self {
        Node {
            parent,
            function,
            first_child: NONE,
            next_sibling: NONE,
            calls: 0,
            timed_calls: 0,
            inclusive: 0.0,
            next_timed: 0,
            untimed_short: false,
            abandoned: false,
            period: 1,
        }
    }

    /// Whether the call just counted is one to time: every call, unless
    /// the node's calls were found too short to time. The next timed call
    /// is drawn when this one ends.
    #[inline(always)]
    fn is_timed(&self) -> bool {
        // `calls` already counts this call; comparing with it needs no store
        // on the untimed path.
        crate::clock::TIMED && self.calls >= self.next_timed
    }
}

/// A small, fast pseudo-random generator (xorshift64) for sampling
/// decisions; statistical quality is all that matters here.
#[derive(Clone, Debug)]
pub(crate) struct Random(u64);

impl Random {
    pub(crate) const fn new(seed: u64) -> Self {
        Random(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        ((x >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..n` (`n` > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((self.unit() * n as f64) as u64).min(n.saturating_sub(1))
    }

    /// Failures before the first success, success having probability
    /// 1/`period`: how many calls to leave untimed.
    pub(crate) fn geometric(&mut self, period: u32) -> u32 {
        if period <= 1 {
            return 0;
        }
        let p = 1.0 / period as f64;
        let draw = self.unit().ln() / (1.0 - p).ln();
        draw.min(u32::MAX as f64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_path_reuses_the_node() {
        let mut tree = CallTree::new(DEFAULT_CAP);
        let a = tree.child(ROOT, 1);
        let b = tree.child(a, 2);
        assert_eq!(tree.child(ROOT, 1), a);
        assert_eq!(tree.child(a, 2), b);
        assert_ne!(tree.child(ROOT, 2), b, "same function, other path");
        assert_eq!(
            tree.enter_cached(b, a, Some(2)),
            Some(true),
            "accepted, timed"
        );
        assert_eq!(tree.enter_cached(b, ROOT, Some(2)), None, "other parent");
        assert_eq!(tree.enter_cached(b, a, Some(3)), None, "other function");
        assert_eq!(tree.enter_cached(b, a, None), Some(true), "function known");
        assert_eq!(tree.enter_cached(999, ROOT, Some(2)), None, "no such node");
        assert_eq!(tree.enter_first_child(a, 2).map(|(n, _)| n), Some(b));
        assert_eq!(tree.enter_first_child(a, 7), None);
        assert_eq!(tree.enter_first_child(b, 2), None, "b has no child");
    }

    #[test]
    fn a_child_looked_up_becomes_the_first_and_no_sibling_is_lost() {
        let mut tree = CallTree::new(DEFAULT_CAP);
        let children: Vec<NodeId> = (10..15).map(|f| tree.child(ROOT, f)).collect();
        assert_eq!(
            tree.enter_first_child(ROOT, 14).map(|(n, _)| n),
            Some(children[4])
        );
        assert_eq!(tree.enter_first_child(ROOT, 11), None, "not first yet");
        assert_eq!(tree.child(ROOT, 11), children[1]);
        assert_eq!(
            tree.enter_first_child(ROOT, 11).map(|(n, _)| n),
            Some(children[1])
        );
        for (f, &node) in (10..15).zip(&children) {
            assert_eq!(tree.child(ROOT, f), node, "function {f} still found");
        }
        assert_eq!(tree.nodes().len(), 6, "nothing created twice");
    }

    #[test]
    fn parents_precede_children() {
        let mut tree = CallTree::new(DEFAULT_CAP);
        let mut parent = ROOT;
        for f in 0..50 {
            parent = tree.child(parent, f % 3);
        }
        for (i, n) in tree.nodes().iter().enumerate().skip(1) {
            assert!((n.parent as usize) < i);
        }
    }

    #[test]
    fn past_the_cap_each_function_has_an_overflow_node() {
        let mut tree = CallTree::new(8);
        let mut seen = Vec::new();
        for f in 0..20 {
            seen.push(tree.child(ROOT, f));
        }
        let overflow = tree.overflow().expect("cap reached");
        // The cap, then one overflow node for each function that came late.
        assert_eq!(tree.nodes().len(), 8 + 20 - 6);
        let late = *seen.last().unwrap();
        assert_ne!(late, overflow);
        assert_eq!(tree.nodes()[late as usize].function, 19);
        assert_eq!(tree.nodes()[late as usize].parent, overflow);
        assert!(tree.is_overflow(late) && tree.is_overflow(overflow));
        // Below an overflow node, a call goes to its own function's.
        assert_eq!(tree.child(late, 3), tree.child(overflow, 3));
        let three = tree.child(late, 3);
        assert_eq!(tree.nodes()[three as usize].function, 3);
        assert_eq!(tree.child(late, 19), late);
        // Paths that existed before the cap still resolve to their nodes.
        assert_eq!(tree.child(ROOT, 0), seen[0]);
        assert!(!tree.is_overflow(seen[0]));
    }

    /// Runs one call of `node` lasting `duration`, timing it if the tree
    /// says so; returns whether it was timed.
    fn call(tree: &mut CallTree, node: NodeId, duration: f64, random: &mut Random) -> bool {
        let timed = tree.enter(node);
        if timed {
            tree.add_time(node, duration, 0.001, false, random);
        }
        timed
    }

    #[test]
    fn tiny_calls_are_probed_and_counted_exactly_but_never_timed() {
        let mut tree = CallTree::new(DEFAULT_CAP);
        let tiny = tree.child(ROOT, 1);
        let long = tree.child(ROOT, 2);
        let mut random = Random::new(1);
        let (mut timed_tiny, mut timed_long) = (0, 0);
        for _ in 0..10_000 {
            timed_tiny += u32::from(call(&mut tree, tiny, 0.001, &mut random));
            timed_long += u32::from(call(&mut tree, long, 1.0, &mut random));
        }
        let tiny_node = tree.nodes()[tiny as usize];
        assert_eq!(tiny_node.calls, 10_000);
        assert!(timed_tiny < 500, "{timed_tiny} tiny calls timed");
        assert_eq!(timed_long, 10_000, "long calls are always timed");
        assert_eq!(tree.nodes()[long as usize].inclusive, 10_000.0);
        // Short calls are probed, never counted.
        assert_eq!(tiny_node.timed_calls, 0);
        assert!(tiny_node.untimed_short);
        assert_eq!(tiny_node.inclusive, 0.0);
    }

    #[test]
    fn a_long_call_among_short_ones_brings_full_timing_back() {
        let mut tree = CallTree::new(DEFAULT_CAP);
        let node = tree.child(ROOT, 1);
        let mut random = Random::new(42);
        let mut long_counted = 0.0;
        // A thousand short calls, then long ones: a probe soon sees a long
        // call, and from then on every call is timed.
        for i in 0..20_000u32 {
            let duration = if i < 1000 { 0.001 } else { 1.0 };
            if call(&mut tree, node, duration, &mut random) && duration == 1.0 {
                long_counted += 1.0;
            }
        }
        let n = tree.nodes()[node as usize];
        assert_eq!(n.calls, 20_000);
        assert!(long_counted > 18_000.0, "{long_counted} long calls timed");
        // The long calls, all timed once the probe found the first.
        assert!((n.inclusive - long_counted).abs() < 1e-6, "{}", n.inclusive);
    }

    #[test]
    fn calls_long_enough_to_time_are_all_timed_and_none_stands_for_others() {
        // semver's `identifier`: hundreds of calls of a few clock reads,
        // then one very long. Each timed call is added once, as measured,
        // so the node never holds more than its calls took.
        let mut tree = CallTree::new(DEFAULT_CAP);
        let node = tree.child(ROOT, 1);
        let mut random = Random::new(7);
        let mut truth = 0.0;
        for i in 0..400_000u32 {
            let duration = match i {
                300_000 => 85.0,
                _ if i % 3 == 0 => 0.09,
                _ => 0.015,
            };
            truth += duration;
            assert!(call(&mut tree, node, duration, &mut random), "call {i}");
        }
        let n = tree.nodes()[node as usize];
        assert!(!n.untimed_short);
        assert_eq!(n.timed_calls, 400_000);
        assert!(
            (n.inclusive - truth).abs() < 1e-6,
            "{} vs {truth}",
            n.inclusive
        );
    }

    #[test]
    fn merge_adds_calls_and_time_by_path() {
        let mut a = CallTree::new(DEFAULT_CAP);
        let x = a.child(ROOT, 1);
        a.enter(x);
        a.add_time(x, 2.0, 0.0, false, &mut Random::new(1));
        let mut b = CallTree::new(DEFAULT_CAP);
        let y = b.child(ROOT, 1);
        let z = b.child(y, 2);
        b.enter(y);
        b.enter(z);
        b.add_time(y, 3.0, 0.0, false, &mut Random::new(1));
        a.merge_from(&b);
        assert_eq!(a.nodes()[x as usize].calls, 2);
        assert_eq!(a.nodes()[x as usize].inclusive, 5.0);
        let z2 = a.child(x, 2);
        assert_eq!(a.nodes()[z2 as usize].calls, 1);
    }
}
