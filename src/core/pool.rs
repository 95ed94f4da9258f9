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
//!
//! Idle blocks go back to the system: a block that nobody took for `IDLE_AFTER` is freed.
//! Time is counted in decay steps, at most one every `DECAY_STEP` (half of `IDLE_AFTER`):
//! a block is stamped with the step it came back in, and the step `IDLE_STEPS` + 1 after
//! that frees it, so it goes after 4 to 6 s idle. Steps run from a give every
//! `STEP_EVERY_RETURNS` returns (a busy pool looks at the clock that rarely) and from
//! `decay()`, which src/node calls on an unref'd timer while the pool holds or may get
//! back memory. A busy class keeps its blocks warm; a class the workload left, or the
//! whole pool once the load stops, is given back (docs/performance.md, row 'idle decay').

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::ledger::Ledger;

/// Blocks smaller than this are not worth pooling: malloc serves them warm already.
pub const MIN_POOLED: usize = 4 * 1024;
/// Classes go up to this size; larger blocks are allocated exactly and freed.
pub const MAX_POOLED: usize = 256 * 1024 * 1024;
/// Default bound on the bytes the pool keeps idle.
pub const DEFAULT_POOL_BYTES: u64 = 256 * 1024 * 1024;

const MIN_SHIFT: u32 = MIN_POOLED.trailing_zeros();
const CLASSES: usize = ((MAX_POOLED.trailing_zeros() - MIN_SHIFT) * 4 + 1) as usize;

/// How long a block may sit idle before it is freed (4 s: docs/performance.md, row 'idle
/// decay').
pub const IDLE_AFTER: Duration = Duration::from_secs(4);
/// The least time between two decay steps.
pub const DECAY_STEP: Duration = Duration::from_secs(2);
/// Whole steps a block may stay idle: the step after them frees it.
const IDLE_STEPS: u64 = (IDLE_AFTER.as_millis() / DECAY_STEP.as_millis()) as u64;
/// A timer may fire a little early by the monotonic clock (libuv's loop time is cached
/// per turn): a step this close to `DECAY_STEP` after the last one counts.
const STEP_SLACK: Duration = Duration::from_millis(50);
/// A give looks at the clock once per this many returns: the busy pool's decay, costing
/// one clock read per 64 bodies.
const STEP_EVERY_RETURNS: u64 = 64;

/// An idle block, when it came back (a counter, not a clock) and in which decay step, and
/// the ledger its bytes are on (see ledger.rs: idle blocks are reported to V8 too).
struct Idle {
    returned: u64,
    step: u64,
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
        drop(self.unledgered());
    }

    /// The memory, taken off its ledger: the caller frees it.
    fn unledgered(self) -> Vec<u8> {
        self.ledger.add(-(self.bytes.capacity() as i64));
        self.bytes
    }
}

struct Pool {
    /// Per class, oldest first: taking pops the back, eviction the oldest front.
    free: Vec<VecDeque<Idle>>,
    bytes: u64,
    returns: u64,
    /// The decay step now, and when it began (`None` before the first).
    step: u64,
    stepped: Option<Instant>,
}

impl Pool {
    const fn new() -> Pool {
        Pool {
            free: Vec::new(),
            bytes: 0,
            returns: 0,
            step: 0,
            stepped: None,
        }
    }

    fn pop(&mut self, index: usize) -> Option<Held> {
        let idle = self.free.get_mut(index)?.pop_back()?;
        self.bytes -= idle.bytes.capacity() as u64;
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
        self.pop_front(index)
    }

    fn pop_front(&mut self, index: usize) -> Option<Held> {
        let idle = self.free[index].pop_front()?;
        self.bytes -= idle.bytes.capacity() as u64;
        Some(Held {
            bytes: idle.bytes,
            ledger: idle.ledger,
        })
    }

    /// Keeps `block` (of class `index`), evicting the least recently returned blocks to
    /// keep the pool under `limit`; answers the evicted, for the caller to free outside
    /// the lock.
    fn put(&mut self, index: usize, mut block: Held, limit: u64) -> Vec<Held> {
        let capacity = block.bytes.capacity() as u64;
        let mut evicted = Vec::new();
        while self.bytes + capacity > limit {
            match self.evict_oldest() {
                Some(old) => evicted.push(old),
                None => break,
            }
        }
        if self.free.is_empty() {
            self.free.resize_with(CLASSES, VecDeque::new);
        }
        block.bytes.clear();
        self.returns += 1;
        self.bytes += capacity;
        self.free[index].push_back(Idle {
            returned: self.returns,
            step: self.step,
            bytes: block.bytes,
            ledger: block.ledger,
        });
        evicted
    }

    /// A decay step, if `DECAY_STEP` has passed since the last one: frees (answers, for
    /// the caller to free outside the lock) every block idle through `IDLE_STEPS` whole
    /// steps. Each class is oldest first, so only its front is looked at.
    fn decay(&mut self, now: Instant) -> Vec<Held> {
        let due = self
            .stepped
            .is_none_or(|last| now.saturating_duration_since(last) + STEP_SLACK >= DECAY_STEP);
        if !due {
            return Vec::new();
        }
        self.stepped = Some(now);
        self.step += 1;
        let mut freed = Vec::new();
        for index in 0..self.free.len() {
            while self.free[index]
                .front()
                .is_some_and(|idle| idle.step + IDLE_STEPS < self.step)
            {
                freed.extend(self.pop_front(index));
            }
        }
        freed
    }

    /// The time from `now` until the next step is due.
    fn until_next(&self, now: Instant) -> Duration {
        self.stepped.map_or(Duration::ZERO, |last| {
            DECAY_STEP.saturating_sub(now.saturating_duration_since(last))
        })
    }
}

static POOL: Mutex<Pool> = Mutex::new(Pool::new());
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
    if let Some(block) = POOL
        .lock()
        .ok()
        .and_then(|mut pool| popped(&mut pool, index))
    {
        return Some(block);
    }
    allocate(size)
}

/// Class `index`'s most recent idle block, the pool's bytes published.
fn popped(pool: &mut Pool, index: usize) -> Option<Held> {
    let block = pool.pop(index);
    POOL_BYTES.store(pool.bytes, Relaxed);
    block
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
    let mut pool = POOL.lock().ok()?;
    popped(&mut pool, index)
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
    popped(&mut pool, index)
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
    let capacity = block.bytes.capacity();
    let limit = POOL_LIMIT.load(Relaxed);
    let kept = class_of(capacity).filter(|&(_, size)| size == capacity && capacity as u64 <= limit);
    let (Some((index, _)), Ok(mut pool)) = (kept, POOL.lock()) else {
        block.free();
        return;
    };
    let evicted = pool.put(index, block, limit);
    let decayed = if pool.returns % STEP_EVERY_RETURNS == 0 {
        pool.decay(Instant::now())
    } else {
        Vec::new()
    };
    POOL_BYTES.store(pool.bytes, Relaxed);
    drop(pool);
    // Freed outside the lock: large frees are munmap calls.
    evicted.into_iter().for_each(Held::free);
    release(decayed);
}

/// A decay step, if one is due (see the module's comment): frees the blocks idle for
/// `IDLE_AFTER`, and lets the allocator give their memory back. Answers the time until
/// the next step is due, for a timer to come back then (a give may have run the last).
pub fn decay() -> Duration {
    let now = Instant::now();
    let Ok(mut pool) = POOL.lock() else {
        return DECAY_STEP;
    };
    let freed = pool.decay(now);
    POOL_BYTES.store(pool.bytes, Relaxed);
    let next = pool.until_next(now);
    drop(pool);
    release(freed);
    next
}

/// Decayed blocks of at least this many bytes in all are freed on a thread of their own:
/// unmapping touched pages took 22-31 ms for 256 MiB here (0.1 ms a MiB), which the JS
/// thread running the timer (or a finalizer) should not wait for.
const OFF_THREAD_BYTES: usize = 4 * 1024 * 1024;

/// Frees decayed blocks and gives their memory back to the system; large amounts on a
/// short-lived thread (nothing waits for it, and a thread keeps no Node process alive).
/// Their ledgers are debited at once, on the calling thread, so what V8 is told next
/// already leaves them out.
fn release(blocks: Vec<Held>) {
    if blocks.is_empty() {
        return;
    }
    let memory: Vec<Vec<u8>> = blocks.into_iter().map(Held::unledgered).collect();
    let bytes: usize = memory.iter().map(Vec::capacity).sum();
    let free = move || {
        drop(memory);
        give_back_to_system();
    };
    if bytes < OFF_THREAD_BYTES {
        free();
    } else if std::thread::Builder::new()
        .name("uws-body-free".into())
        .spawn(free)
        .is_err()
    {
        // The closure, and the memory with it, was dropped by the failed spawn.
        give_back_to_system();
    }
}

/// Asks glibc's malloc to return the free memory it keeps: blocks under its mmap
/// threshold (which rises to 32 MiB as large blocks are freed) live in its heaps, and a
/// free chunk in the middle of one stays resident until trimmed. Other allocators return
/// large frees themselves.
fn give_back_to_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: malloc_trim takes no pointer and is thread-safe (it locks each arena).
        unsafe { malloc_trim(0) };
    }
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
        POOL_BYTES.store(pool.bytes, Relaxed);
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

    /// A pool of its own (the process's is shared by every test), a block of class
    /// `index` put in, and the clock the steps are driven by.
    fn put_block(pool: &mut Pool, index: usize) {
        let block = allocate(class_size_at(index)).unwrap();
        assert!(pool.put(index, block, u64::MAX).is_empty());
    }

    fn held(pool: &Pool, index: usize) -> usize {
        pool.free.get(index).map_or(0, VecDeque::len)
    }

    #[test]
    fn a_block_idle_for_idle_after_is_freed_at_the_next_step() {
        let start = Instant::now();
        let mut pool = Pool::new();
        assert!(
            pool.decay(start).is_empty(),
            "the first step starts the clock"
        );
        put_block(&mut pool, 3);
        let mut at = start;
        for step in 1..=IDLE_STEPS {
            at += DECAY_STEP;
            assert!(pool.decay(at).is_empty(), "kept through step {step}");
            assert_eq!(held(&pool, 3), 1);
        }
        at += DECAY_STEP;
        let freed = pool.decay(at);
        assert_eq!(freed.len(), 1, "freed once idle for IDLE_AFTER");
        assert_eq!(at - start, IDLE_AFTER + DECAY_STEP);
        assert_eq!(pool.bytes, 0);
        freed.into_iter().for_each(Held::free);
    }

    #[test]
    fn steps_closer_than_decay_step_do_not_age_blocks() {
        let start = Instant::now();
        let mut pool = Pool::new();
        let _ = pool.decay(start);
        put_block(&mut pool, 0);
        // A burst of calls (many gives, a timer and a give together) is one step.
        for ms in (0..DECAY_STEP.as_millis() as u64 * 2).step_by(100) {
            let _ = pool.decay(start + Duration::from_millis(ms) / 2);
        }
        assert_eq!(
            pool.step, 2,
            "one step per DECAY_STEP, a slightly early timer counted"
        );
        assert_eq!(held(&pool, 0), 1);
        let last = start + Duration::from_millis(1950);
        assert_eq!(
            pool.until_next(last),
            DECAY_STEP,
            "a timer comes back a step later"
        );
        assert_eq!(pool.until_next(last + DECAY_STEP / 4), DECAY_STEP * 3 / 4);
        // A late step is one step: a stalled timer never frees a block sooner.
        assert!(pool.decay(start + IDLE_AFTER * 10).is_empty());
    }

    #[test]
    fn a_class_in_use_stays_warm_and_only_what_the_load_left_is_freed() {
        let start = Instant::now();
        let mut pool = Pool::new();
        let _ = pool.decay(start);
        put_block(&mut pool, 1); // taken no more
        put_block(&mut pool, 2); // taken and given back at every step
        put_block(&mut pool, 2); // its spare: the class needs one block at a time
        let mut freed = Vec::new();
        for step in 1..=10 {
            let block = pool.pop(2).unwrap();
            assert!(pool.put(2, block, u64::MAX).is_empty());
            freed.extend(pool.decay(start + DECAY_STEP * step));
        }
        assert_eq!(held(&pool, 1), 0, "the class the load left is freed");
        assert_eq!(
            held(&pool, 2),
            1,
            "the block in use stays, its idle spare goes"
        );
        assert_eq!(freed.len(), 2);
        assert_eq!(pool.bytes, class_size_at(2) as u64);
        freed.into_iter().for_each(Held::free);
    }

    #[test]
    fn released_blocks_leave_the_ledger_at_once_wherever_they_are_freed() {
        let _ = crate::core::ledger::take_unreported();
        let small = allocate(MIN_POOLED).unwrap();
        let large = allocate(OFF_THREAD_BYTES).unwrap();
        let credited = crate::core::ledger::take_unreported();
        assert_eq!(credited, (MIN_POOLED + OFF_THREAD_BYTES) as i64);
        release(vec![small]);
        release(vec![large]); // freed on a thread of its own
        assert_eq!(crate::core::ledger::take_unreported(), -credited);
    }
}
