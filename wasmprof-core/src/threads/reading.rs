//! A snapshot's side: ask every other thread for its record, wait for the
//! answers with a bound, and read the threads that make no call meanwhile
//! where they stand.
//!
//! A thread that records calls answers within a call, as Chrome's tracing
//! flushes each thread's buffer when the thread next passes by. One whose
//! generation stays even and unchanged for [`STILL`] is making no call
//! (idle, blocked, in code that is not instrumented, or exited), and is
//! read where it stands. One whose generation stays odd is in the middle
//! of recording a call: it is waited for up to [`STUCK`], then read as it
//! stands and said to have stopped there (a trap, or a host that stopped
//! it). Once the host says that no other thread will run again
//! ([`super::stopped`]), nothing is waited for.

use std::sync::Mutex;
use std::sync::atomic::Ordering;

use wasmprof_wire::ThreadRead;

use super::registry::{self, Other, SlotRef};
use super::slot::{ASKING, REQUEST};
use crate::thread_state::ThreadRecord;

/// How long a thread's generation must stay even and unchanged for the
/// thread to count as making no call: far longer than any use of its
/// state lasts (a few instructions, or the copy of an answer), and short
/// beside a snapshot's own work.
const STILL: f64 = 2.0;

/// How long a thread may stay in the middle of one use of its state
/// before it counts as stopped there: longer than the copy of the largest
/// tree a thread answers with, on a busy machine. (Shorter in the unit
/// tests, which stop a thread there on purpose.)
const STUCK: f64 = if cfg!(test) { 300.0 } else { 3_000.0 };

/// One snapshot at a time: each raises its own request.
static SNAPSHOTS: Mutex<()> = Mutex::new(());

/// Threads found stopped in the middle of a use, with the generation they
/// stopped at: not waited for again while it stays there.
static STOPPED_AT: Mutex<Vec<(usize, u32)>> = Mutex::new(Vec::new());

/// What every other thread recorded, each read once, in the registry's
/// order (see [`registry::others`]): the threads that exited, then those
/// still running; threads that recorded nothing are left out.
pub(crate) fn others() -> Vec<ThreadRecord> {
    let _one_at_a_time = crate::spin::lock(&SNAPSHOTS);
    let others = registry::others();
    let slots: Vec<SlotRef> = others
        .iter()
        .filter_map(|other| match other {
            Other::Running(slot) => Some(*slot),
            Other::Finished(_) => None,
        })
        .collect();
    let mut records: Vec<ThreadRecord> = others
        .iter()
        .filter_map(|other| match other {
            Other::Finished(record) => Some((*record).clone()),
            Other::Running(_) => None,
        })
        .collect();
    if slots.is_empty() {
        return records;
    }
    let request = REQUEST.fetch_add(1, Ordering::SeqCst).wrapping_add(1);
    ASKING.store(true, Ordering::SeqCst);
    let stopped = super::stopped();
    let mut waiting: Vec<Waiting> = slots
        .iter()
        .map(|&slot| Waiting::new(slot, stopped))
        .collect();
    let mut read: Vec<Option<Option<ThreadRecord>>> = vec![None; slots.len()];
    loop {
        let now = crate::clock::wait_now();
        let mut left = 0;
        for (index, waiting) in waiting.iter_mut().enumerate() {
            if read[index].is_some() {
                continue;
            }
            match waiting.try_read(request, now) {
                Some(record) => read[index] = Some(record),
                None => left += 1,
            }
        }
        if left == 0 {
            break;
        }
        // Natively the threads it waits for may need this core to answer.
        #[cfg(not(target_family = "wasm"))]
        std::thread::yield_now();
        std::hint::spin_loop();
    }
    ASKING.store(false, Ordering::SeqCst);
    for slot in slots {
        registry::unpin(slot);
    }
    records.extend(read.into_iter().flatten().flatten());
    records
}

/// One thread the snapshot waits for.
struct Waiting {
    slot: SlotRef,
    /// Its generation when last looked at, and since when it stands there
    /// (`None`: not looked at yet).
    seen: Option<(u32, f64)>,
    /// The host said every other thread has stopped.
    stopped: bool,
}

impl Waiting {
    fn new(slot: SlotRef, stopped: bool) -> Waiting {
        Waiting {
            slot,
            seen: None,
            stopped,
        }
    }

    /// The thread's record, once there is one to take: `Some(None)` when
    /// it recorded nothing.
    fn try_read(&mut self, request: u32, now: f64) -> Option<Option<ThreadRecord>> {
        let slot = self.slot.0;
        // Exiting: its state is final.
        if slot.gone.load(Ordering::Acquire) {
            return Some(self.read(request, None, ThreadRead::Answered));
        }
        if let Some(answer) = slot.answer_to(request) {
            return Some(answer.map(|r| with_read(r, ThreadRead::Answered)));
        }
        let generation = slot.generation();
        let still = match self.seen {
            Some((seen, since)) if seen == generation => now - since,
            _ => {
                self.seen = Some((generation, now));
                0.0
            }
        };
        if generation % 2 == 0 {
            if self.stopped {
                return Some(self.read(request, None, ThreadRead::WhereItStood));
            }
            if still >= STILL {
                return slot
                    .read_where_it_stands(request, Some(generation))
                    .map(|r| r.map(|r| with_read(r, ThreadRead::WhereItStood)));
            }
            return None;
        }
        let key = slot as *const _ as usize;
        let known = crate::spin::lock(&STOPPED_AT).contains(&(key, generation));
        if self.stopped || known || still >= STUCK {
            if !known {
                crate::spin::lock(&STOPPED_AT).push((key, generation));
            }
            return Some(self.read(request, None, ThreadRead::MidRecord));
        }
        None
    }

    /// Reads the thread as it stands, for good: it has finished, or
    /// stopped.
    fn read(&self, request: u32, expected: Option<u32>, read: ThreadRead) -> Option<ThreadRecord> {
        self.slot
            .0
            .read_where_it_stands(request, expected)
            .flatten()
            .map(|r| with_read(r, read))
    }
}

fn with_read(record: ThreadRecord, read: ThreadRead) -> ThreadRecord {
    ThreadRecord { read, ..record }
}
