//! A bounded pool of recycled body buffers.
//!
//! Fresh memory is slow here: a newly mapped page faults on first touch at ~2.2 us per
//! 4 KiB (perf-findings), 5-20x the cost of copying into it, and glibc hands fresh
//! mappings to every large allocation. A buffer that already held a body is warm. So
//! blocks are allocated in size classes and, when a body's Buffer is collected or
//! released, go back here for the next body of that class, up to a byte bound.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// Blocks smaller than this are not worth pooling: malloc serves them warm already.
pub const MIN_POOLED: usize = 4 * 1024;
/// Classes go up to this size; larger blocks are allocated exactly and freed.
pub const MAX_POOLED: usize = 256 * 1024 * 1024;
/// Default bound on the bytes the pool keeps idle.
pub const DEFAULT_POOL_BYTES: u64 = 256 * 1024 * 1024;

const MIN_SHIFT: u32 = MIN_POOLED.trailing_zeros();
const CLASSES: usize = ((MAX_POOLED.trailing_zeros() - MIN_SHIFT) * 4 + 1) as usize;

struct Pool {
    free: Vec<Vec<Vec<u8>>>,
    bytes: u64,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    free: Vec::new(),
    bytes: 0,
});
static POOL_BYTES: AtomicU64 = AtomicU64::new(0);
static POOL_LIMIT: AtomicU64 = AtomicU64::new(DEFAULT_POOL_BYTES);

/// The size a request for `n` bytes is rounded up to: four classes per power of two, so
/// at most 25% more than asked. `None` outside the pooled range.
pub fn class_size(n: usize) -> Option<usize> {
    class_of(n).map(|(_, size)| size)
}

fn class_of(n: usize) -> Option<(usize, usize)> {
    if !(MIN_POOLED..=MAX_POOLED).contains(&n) {
        return None;
    }
    let shift = usize::BITS - 1 - (n - 1).leading_zeros(); // 2^shift <= n-1 < 2^(shift+1)
    let base = 1usize << shift;
    let quarter = base >> 2;
    let steps = (n - base).div_ceil(quarter); // 1..=4
    let size = base + steps * quarter;
    // MIN_POOLED itself is the last class of the power of two below it: index 0.
    let index = ((shift + 1 - MIN_SHIFT) as usize) * 4 + steps - 4;
    Some((index.min(CLASSES - 1), size))
}

/// A buffer with capacity for at least `n` bytes: a pooled one when the class has one.
/// `None` when the allocator cannot provide it: `n` is often a client's number, and a
/// failed allocation must become an answer, never abort the process.
pub fn take(n: usize) -> Option<Vec<u8>> {
    let Some((index, size)) = class_of(n) else {
        return allocate(n);
    };
    if let Ok(mut pool) = POOL.lock() {
        if let Some(block) = pool.free.get_mut(index).and_then(Vec::pop) {
            pool.bytes -= block.capacity() as u64;
            POOL_BYTES.store(pool.bytes, Relaxed);
            return Some(block);
        }
    }
    allocate(size)
}

/// Exactly `n` bytes of capacity (so a class-sized block stays poolable), or `None`.
fn allocate(n: usize) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(n).ok()?;
    Some(bytes)
}

/// An idle pooled buffer for at least `n` bytes, if the pool has one; never allocates.
pub fn take_idle(n: usize) -> Option<Vec<u8>> {
    let (index, _) = class_of(n)?;
    let mut pool = POOL.lock().ok()?;
    let block = pool.free.get_mut(index).and_then(Vec::pop)?;
    pool.bytes -= block.capacity() as u64;
    POOL_BYTES.store(pool.bytes, Relaxed);
    Some(block)
}

/// A block left behind when a body grew into a larger one is kept only while the pool
/// holds less than this share of its bound. Such blocks serve the growth of later bodies
/// of unknown length, but a burst of concurrent uploads leaves one of every smaller class
/// per upload (64 uploads of 8 MiB: 64 x (1 + 2 + 4) MiB), which would otherwise fill the
/// whole bound with blocks nobody asks for again (bench "memory": 1.51x peak / held).
const LEFTOVER_SHARE: u64 = 4;

/// Keeps a block left behind by growth (see LEFTOVER_SHARE), else frees it.
pub fn give_leftover(block: Vec<u8>) {
    if POOL_BYTES.load(Relaxed) + block.capacity() as u64
        <= POOL_LIMIT.load(Relaxed) / LEFTOVER_SHARE
    {
        give(block);
    }
}

/// Keeps `block` for reuse if it is of a class size and the bound allows, else frees it.
pub fn give(mut block: Vec<u8>) {
    let capacity = block.capacity();
    let Some((index, size)) = class_of(capacity) else {
        return;
    };
    if size != capacity {
        return;
    }
    let Ok(mut pool) = POOL.lock() else {
        return;
    };
    if pool.bytes + capacity as u64 > POOL_LIMIT.load(Relaxed) {
        return;
    }
    if pool.free.is_empty() {
        pool.free.resize_with(CLASSES, Vec::new);
    }
    block.clear();
    pool.bytes += capacity as u64;
    POOL_BYTES.store(pool.bytes, Relaxed);
    pool.free[index].push(block);
}

/// Bytes held idle by the pool.
pub fn pooled_bytes() -> u64 {
    POOL_BYTES.load(Relaxed)
}

/// Sets the bound on idle pooled bytes; shrinking it frees blocks at once.
pub fn set_limit(bytes: u64) {
    POOL_LIMIT.store(bytes, Relaxed);
    let dropped: Vec<Vec<u8>> = {
        let Ok(mut pool) = POOL.lock() else {
            return;
        };
        let mut dropped = Vec::new();
        let mut held = pool.bytes;
        // Free the largest blocks first: they are the costliest to hold.
        for class in pool.free.iter_mut().rev() {
            while held > bytes {
                let Some(block) = class.pop() else { break };
                held -= block.capacity() as u64;
                dropped.push(block);
            }
        }
        pool.bytes = held;
        POOL_BYTES.store(held, Relaxed);
        dropped
    };
    drop(dropped); // freed outside the lock
}

pub fn limit() -> u64 {
    POOL_LIMIT.load(Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_up_by_at_most_a_quarter() {
        let mut last = 0;
        for n in (MIN_POOLED..5 * 1024 * 1024).step_by(997) {
            let (index, size) = class_of(n).unwrap();
            assert!(
                size >= n && size as f64 <= n as f64 * 1.25 + 1.0,
                "{n} -> {size}"
            );
            assert!(index >= last);
            last = index;
            assert_eq!(
                class_of(size).unwrap().1,
                size,
                "a class size is its own class"
            );
        }
        assert_eq!(class_size(MIN_POOLED), Some(MIN_POOLED));
        assert_eq!(class_size(MIN_POOLED - 1), None);
        assert_eq!(class_size(1 << 20), Some(1 << 20));
        assert_eq!(class_size((1 << 20) + 1), Some(5 << 18));
        assert_eq!(class_size(MAX_POOLED), Some(MAX_POOLED));
        assert_eq!(class_size(MAX_POOLED + 1), None);
    }

    #[test]
    fn an_impossible_size_is_none_not_an_abort() {
        assert!(take(usize::MAX).is_none());
        assert!(take(isize::MAX as usize).is_none());
        assert_eq!(take(MIN_POOLED).map(|b| b.capacity()), Some(MIN_POOLED));
    }
}
