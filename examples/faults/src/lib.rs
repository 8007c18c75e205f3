//! Programs that go wrong, to show (and test) that what was collected before
//! is kept: `cargo wasmprof run -p faults --invoke panic_after -- 5` panics
//! in the sixth call of `step`; `--invoke spin --timeout 2s` never returns;
//! `--invoke overflow` recurses until its stack runs out.

#[wasmprof::instrument]
#[inline(never)]
fn step(i: u32, limit: u32) -> u32 {
    if i == limit {
        panic!("step {i} failed on purpose");
    }
    std::hint::black_box(i * 2)
}

#[wasmprof::instrument]
#[inline(never)]
fn steps(limit: u32) -> u32 {
    (0..u32::MAX)
        .map(|i| step(i, limit))
        .fold(0, u32::wrapping_add)
}

/// Calls `step` until call number `limit` (0-based) panics, trapping the module.
#[no_mangle]
pub extern "C" fn panic_after(limit: u32) -> u32 {
    steps(limit)
}

#[wasmprof::instrument]
#[inline(never)]
fn tick(n: u64) -> u64 {
    std::hint::black_box(n.wrapping_mul(6364136223846793005).wrapping_add(1))
}

#[wasmprof::instrument]
#[inline(never)]
fn forever() -> u64 {
    let mut n = 0u64;
    loop {
        n = tick(n);
    }
}

/// Never returns: only a timeout ends it.
#[no_mangle]
pub extern "C" fn spin() -> u64 {
    forever()
}

/// Returns at once: the control case.
#[no_mangle]
pub extern "C" fn fine() -> u32 {
    step(1, 0)
}

/// Calls `step` once, then `wasmprof::exit(code)`: the host ends the run
/// with that status once this call has returned.
#[no_mangle]
pub extern "C" fn exit_with(code: i32) -> u32 {
    let value = step(3, 0);
    wasmprof::exit(code);
    value
}

/// One level of a recursion with no end: each call keeps a kilobyte on the
/// stack (WebAssembly's shadow stack, in linear memory), so that the stack
/// runs out after about a thousand calls, and the store below its bottom
/// traps.
#[wasmprof::instrument]
#[inline(never)]
#[allow(unconditional_recursion)]
fn descend(depth: u32) -> u32 {
    let frame = std::hint::black_box([depth as u8; 1024]);
    descend(depth + 1).wrapping_add(u32::from(frame[depth as usize % 1024]))
}

/// Recurses until the stack overflows, trapping the module.
#[no_mangle]
pub extern "C" fn overflow() -> u32 {
    descend(0)
}
