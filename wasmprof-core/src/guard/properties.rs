//! The tree's times hold together, by construction, whatever the calls do:
//! generated programs of nested calls, short and long, run through the real
//! guards and clock, and every snapshot is checked.

use proptest::prelude::*;

use super::enter;
use crate::site::Site;
use crate::site::test_cache;
use crate::snapshot::{Snapshot, take};

/// The functions a generated program calls.
static SITES: [Site; 5] = [
    Site::new("properties", "a", "src/guard/properties.rs", 1),
    Site::new("properties", "b", "src/guard/properties.rs", 2),
    Site::new("properties", "c", "src/guard/properties.rs", 3),
    Site::new("properties", "d", "src/guard/properties.rs", 4),
    Site::new("properties", "e", "src/guard/properties.rs", 5),
];

/// A call of one of [`SITES`], repeated, with some work of its own and
/// calls of its own.
#[derive(Debug, Clone)]
struct Call {
    function: usize,
    repeat: u32,
    /// Rounds of busy work before its callees: none (a call too short to
    /// time), a little, or a lot.
    work: u32,
    /// On its last repetition only, this much more work: a function that
    /// turns long after many short calls.
    last_work: u32,
    callees: Vec<Call>,
}

fn call() -> impl Strategy<Value = Call> {
    let work = prop_oneof![3 => Just(0u32), 1 => 1u32..200, 1 => 2_000u32..10_000];
    let last_work = prop_oneof![3 => Just(0u32), 1 => 10_000u32..100_000];
    let leaf = (0..SITES.len(), 1u32..200, work.clone(), last_work.clone()).prop_map(
        |(function, repeat, work, last_work)| Call {
            function,
            repeat,
            work,
            last_work,
            callees: Vec::new(),
        },
    );
    leaf.prop_recursive(4, 24, 4, move |inner| {
        (
            0..SITES.len(),
            1u32..6,
            work.clone(),
            last_work.clone(),
            prop::collection::vec(inner, 1..4),
        )
            .prop_map(|(function, repeat, work, last_work, callees)| Call {
                function,
                repeat,
                work,
                last_work,
                callees,
            })
    })
}

fn busy(rounds: u32) -> u64 {
    let mut x = 1u64;
    for i in 0..rounds {
        x = std::hint::black_box(
            x.wrapping_mul(6364136223846793005)
                .wrapping_add(u64::from(i)),
        );
    }
    x
}

fn run(call: &Call) {
    for round in 0..call.repeat {
        let _guard = enter(
            &SITES[call.function],
            test_cache(&SITES[call.function]),
            None,
        );
        let mut work = call.work;
        if round + 1 == call.repeat {
            work += call.last_work;
        }
        std::hint::black_box(busy(work));
        for callee in &call.callees {
            run(callee);
        }
    }
}

/// Every node's children together hold no more than it does, and no time
/// is negative: exactly, but for the rounding of sums. Only the snapshot's
/// own thread is checked: other tests' threads, still running, have calls
/// open, whose time is not in yet.
fn check(snapshot: &Snapshot) -> Result<(), String> {
    let mut own: Vec<f64> = snapshot.nodes.iter().map(|n| n.inclusive).collect();
    if let Some(threads) = &snapshot.threads {
        own.iter_mut().for_each(|time| *time = 0.0);
        for share in &threads[0].nodes {
            own[share.node as usize] = share.inclusive;
        }
    }
    let mut children_time = vec![0.0; snapshot.nodes.len()];
    for (index, node) in snapshot.nodes.iter().enumerate().skip(1) {
        if own[index] < 0.0 {
            return Err(format!("a negative time: {node:?}"));
        }
        children_time[node.parent as usize] += own[index];
    }
    for (index, &time) in own.iter().enumerate().skip(1) {
        let slack = 1e-9 * time.max(1.0);
        if children_time[index] > time + slack {
            return Err(format!(
                "{:?} holds {} ms, its children {} ms",
                snapshot.path_names(index),
                time,
                children_time[index]
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn no_node_holds_less_than_its_children(
        program in prop::collection::vec(call(), 1..4),
        misjudged in prop_oneof![Just(1.0), 0.2f64..5.0],
    ) {
        // A thread of its own: a fresh tree, with nothing open. The clock
        // read's cost, which every timed call has taken out, may be
        // misjudged (in a busy loop a read costs less than back to back,
        // where it is measured): the times must hold together all the same.
        let checked = std::thread::spawn(move || {
            crate::state::with_thread(|thread| {
                crate::calibration::calibrate(thread);
                thread.clock_cost *= misjudged;
            });
            for call in &program {
                run(call);
            }
            check(&take())
        })
        .join()
        .unwrap();
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }
}
