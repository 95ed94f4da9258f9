//! A bounded pool of recycled body buffers.
//!
//! Fresh memory is slow here: a newly mapped page faults on first touch, which costs
//! several times copying into it (docs/performance.md, row 'fresh pages'), and glibc
//! hands fresh mappings to every large allocation. A buffer that already held a body is warm. So blocks are allocated in
//! size classes and, when a body's Buffer is collected, go back here for the next body of
//! that class, up to a byte bound.
//!
//! Recency decides what stays. Each class hands out its most recently returned block
//! first (the likeliest still in cache), and when a returned block does not fit under the
//! bound, the least recently returned blocks of any class make room for it: the pool
//! follows the current workload instead of keeping what an earlier one left: keeping the
//! old blocks made a large body fault in fresh memory every time once smaller bodies had
//! filled the pool (docs/performance.md, row 'pool recency').

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use super::ledger::Ledger;

/// Blocks smaller than this are not worth pooling: malloc serves them warm already.
pub const MIN_POOLED: usize = 4 * 1024;
/// Classes go up to this size; larger blocks are allocated exactly and freed.
pub const MAX_POOLED: usize = 256 * 1024 * 1024;
/// Default bound on the bytes the pool keeps idle.
pub const DEFAULT_POOL_BYTES: u64 = 256 * 1024 * 1024;

const MIN_SHIFT: u32 = MIN_POOLED.trailing_zeros();
const CLASSES: usize = ((MAX_POOLED.trailing_zeros() - MIN_SHIFT) * 4 + 1) as usize;

/// An idle block, when it came back (a counter, not a clock), and the ledger its bytes
/// are on (see ledger.rs: idle blocks are reported to V8 too).
struct Idle {
    returned: u64,
    bytes: Vec<u8>,
    ledger: Ledger,
}

/// Memory the pool hands out or takes back: the bytes and the ledger they are on.
#[derive(Debug)]
pub struct Held {
    pub bytes: Vec<u8>,
    pub ledger: Ledger,
}

impl Held {
    /// Frees the memory, and takes it off its ledger.
    fn free(self) {
        self.ledger.add(-(self.bytes.capacity() as i64));
    }
}

struct Pool {
    /// Per class, oldest first: taking pops the back, eviction the oldest front.
    free: Vec<VecDeque<Idle>>,
    bytes: u64,
    returns: u64,
}

impl Pool {
    fn pop(&mut self, index: usize) -> Option<Held> {
        let idle = self.free.get_mut(index)?.pop_back()?;
        self.bytes -= idle.bytes.capacity() as u64;
        POOL_BYTES.store(self.bytes, Relaxed);
        let mut ledger = idle.ledger;
        ledger.move_here(idle.bytes.capacity());
        Some(Held {
            bytes: idle.bytes,
            ledger,
        })
    }

    /// Removes the least recently returned block of any class.
    fn evict_oldest(&mut self) -> Option<Held> {
        let index = (0..self.free.len())
            .filter_map(|i| self.free[i].front().map(|idle| (idle.returned, i)))
            .min()?
            .1;
        let idle = self.free[index].pop_front()?;
        self.bytes -= idle.bytes.capacity() as u64;
        POOL_BYTES.store(self.bytes, Relaxed);
        Some(Held {
            bytes: idle.bytes,
            ledger: idle.ledger,
        })
    }
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    free: Vec::new(),
    bytes: 0,
    returns: 0,
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
pub fn take(n: usize) -> Option<Held> {
    let Some((index, size)) = class_of(n) else {
        return allocate(n);
    };
    if let Some(block) = POOL.lock().ok().and_then(|mut pool| pool.pop(index)) {
        return Some(block);
    }
    allocate(size)
}

/// Exactly `n` bytes of capacity (so a class-sized block stays poolable), on this
/// thread's ledger, or `None`.
fn allocate(n: usize) -> Option<Held> {
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(n).ok()?;
    let ledger = Ledger::current();
    ledger.add(bytes.capacity() as i64);
    Some(Held { bytes, ledger })
}

/// An idle pooled buffer for at least `n` bytes, if the pool has one; never allocates.
pub fn take_idle(n: usize) -> Option<Held> {
    let (index, _) = class_of(n)?;
    POOL.lock().ok()?.pop(index)
}

/// The most recently returned idle buffer holding at least `min` and at most `max` bytes,
/// if the pool has one; never allocates. For a body of unknown length this is the best
/// guess of its final size: the size recent bodies ended with.
pub fn take_recent(min: usize, max: usize) -> Option<Held> {
    let (first, _) = class_of(min.max(MIN_POOLED))?;
    let mut pool = POOL.lock().ok()?;
    let index = (first..pool.free.len())
        .take_while(|&i| class_size_at(i) <= max)
        .filter_map(|i| pool.free[i].back().map(|idle| (idle.returned, i)))
        .max()?
        .1;
    pool.pop(index)
}

/// The size of class `index`.
fn class_size_at(index: usize) -> usize {
    let shift = MIN_SHIFT + (index as u32).div_ceil(4) - 1;
    let steps = (index + 3) % 4 + 1;
    let base = 1usize << shift;
    base + steps * (base >> 2)
}

/// A block left behind when a body grew into a larger one is kept only while the pool
/// holds less than this share of its bound, and never displaces another block. Such
/// blocks serve the growth of later bodies of unknown length, but a burst of concurrent
/// uploads leaves one of every smaller class per upload (64 uploads of 8 MiB: 64 blocks
/// each of 1, 2 and 4 MiB), which would otherwise fill the whole bound with blocks nobody asks
/// for again (docs/performance.md, row 'leftover share').
const LEFTOVER_SHARE: u64 = 4;

/// Keeps a block left behind by growth (see LEFTOVER_SHARE), else frees it.
pub fn give_leftover(block: Held) {
    if POOL_BYTES.load(Relaxed) + block.bytes.capacity() as u64
        <= POOL_LIMIT.load(Relaxed) / LEFTOVER_SHARE
    {
        give(block);
    } else {
        block.free();
    }
}

/// Keeps `block` for reuse if it is of a class size and fits under the bound, evicting
/// the least recently returned blocks to make room; else frees it.
pub fn give(block: Held) {
    let Held {
        bytes: mut block,
        ledger,
    } = block;
    let capacity = block.capacity();
    let limit = POOL_LIMIT.load(Relaxed);
    let kept = class_of(capacity).filter(|&(_, size)| size == capacity && capacity as u64 <= limit);
    let (Some((index, _)), Ok(mut pool)) = (kept, POOL.lock()) else {
        Held {
            bytes: block,
            ledger,
        }
        .free();
        return;
    };
    let evicted = {
        let mut evicted = Vec::new();
        while pool.bytes + capacity as u64 > limit {
            match pool.evict_oldest() {
                Some(old) => evicted.push(old),
                None => break,
            }
        }
        if pool.free.is_empty() {
            pool.free.resize_with(CLASSES, VecDeque::new);
        }
        block.clear();
        pool.returns += 1;
        let returned = pool.returns;
        pool.bytes += capacity as u64;
        POOL_BYTES.store(pool.bytes, Relaxed);
        pool.free[index].push_back(Idle {
            returned,
            bytes: block,
            ledger,
        });
        drop(pool);
        evicted
    };
    // Freed outside the lock: large frees are munmap calls.
    evicted.into_iter().for_each(Held::free);
}

/// Bytes held idle by the pool.
pub fn pooled_bytes() -> u64 {
    POOL_BYTES.load(Relaxed)
}

/// Set once setPoolLimit was called: the default no longer moves.
static POOL_LIMIT_EXPLICIT: AtomicBool = AtomicBool::new(false);

/// Sets the bound on idle pooled bytes; shrinking it frees the least recently returned
/// blocks at once.
pub fn set_limit(bytes: u64) {
    POOL_LIMIT_EXPLICIT.store(true, Relaxed);
    apply_limit(bytes);
}

/// Lowers the default bound to `bytes` (a share of the memory the process may use, so
/// that a small container is not filled by idle blocks), unless a bound was set.
pub fn lower_default_limit(bytes: u64) {
    if bytes < DEFAULT_POOL_BYTES
        && !POOL_LIMIT_EXPLICIT.load(Relaxed)
        && POOL_LIMIT
            .compare_exchange(DEFAULT_POOL_BYTES, bytes, Relaxed, Relaxed)
            .is_ok()
    {
        apply_limit(bytes);
    }
}

fn apply_limit(bytes: u64) {
    POOL_LIMIT.store(bytes, Relaxed);
    let evicted: Vec<Held> = {
        let Ok(mut pool) = POOL.lock() else {
            return;
        };
        let mut evicted = Vec::new();
        while pool.bytes > bytes {
            match pool.evict_oldest() {
                Some(old) => evicted.push(old),
                None => break,
            }
        }
        evicted
    };
    evicted.into_iter().for_each(Held::free); // freed outside the lock
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
        for index in 0..CLASSES {
            assert_eq!(
                class_of(class_size_at(index)),
                Some((index, class_size_at(index)))
            );
        }
    }

    #[test]
    fn an_impossible_size_is_none_not_an_abort() {
        assert!(take(usize::MAX).is_none());
        assert!(take(isize::MAX as usize).is_none());
        assert_eq!(
            take(MIN_POOLED).map(|b| b.bytes.capacity()),
            Some(MIN_POOLED)
        );
    }
}
