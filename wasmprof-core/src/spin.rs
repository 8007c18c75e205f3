//! The runtime's locks, spun for rather than waited on.
//!
//! A page that reads the profile of a program running on web workers does
//! so on the browser's main thread, which may not block: a wait there
//! traps. The runtime holds each of its locks for a few instructions, so
//! spinning costs nothing that waiting would save.

use std::sync::{Mutex, MutexGuard, TryLockError};

/// Locks `mutex`, spinning while another thread holds it; a lock poisoned
/// by a panic is taken as it is.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    let mut spins: u32 = 0;
    loop {
        match mutex.try_lock() {
            Ok(guard) => return guard,
            Err(TryLockError::Poisoned(poisoned)) => return poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => {
                spins = spins.wrapping_add(1);
                // Natively the holder may have been preempted: let it run.
                if spins % 64 == 0 {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    #[test]
    fn threads_that_contend_all_get_the_lock_and_lose_no_update() {
        let counter = Arc::new(Mutex::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let counter = counter.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        *super::lock(&counter) += 1;
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(*super::lock(&counter), 40_000);
    }

    #[test]
    fn a_poisoned_lock_is_taken_as_it_is() {
        let mutex = Arc::new(Mutex::new(1));
        let poisoner = mutex.clone();
        let _ = std::thread::spawn(move || {
            let _guard = poisoner.lock().unwrap();
            panic!("poison");
        })
        .join();
        assert_eq!(*super::lock(&mutex), 1);
    }
}
