//! The bytes a thread holds from the allocator, so that rendering notes.md can stop at its
//! memory budget: a value doubled in a loop passes any limit in a few dozen iterations, and an
//! allocation that fails ends the whole process, so lab must stop the template before that.
//!
//! The `lab` binary installs [`CountingAllocator`] as its global allocator; it hands every
//! request to the system's allocator and adds what the calling thread took, less what it gave
//! back, to a counter of that thread's own. Hand-written because the budget needs one thread's
//! bytes, which the allocator-statistics crates (global totals) do not give.
//!
//! A loop step comes too late for one filter that writes a terabyte (`join` with a long
//! separator): the rendering thread is fenced. A request that would take it past its
//! [`Fence`], or any request once its rendering was given up on, is never made: the thread
//! stops where it stands, asleep for good, holding what it held, and the fence says why.
//! Stable Rust cannot make a failed allocation an error the template could return (a failed
//! allocation aborts the process), so sleeping is the one way to stop a thread there.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
use std::time::Duration;

thread_local! {
    /// Bytes this thread took from the allocator less those it gave back (a block freed on
    /// another thread counts there, which is why this may go below zero).
    static HELD: Cell<isize> = const { Cell::new(0) };
    /// The fence of this thread's rendering, while the template's own work runs.
    static FENCE: Cell<*const Fence> = const { Cell::new(std::ptr::null()) };
}

/// What a rendering thread may take from the allocator, and what stopped it.
pub(super) struct Fence {
    /// The most the thread may hold, in its own count ([`held_by_this_thread`]).
    limit: AtomicIsize,
    given_up: AtomicBool,
    /// The bytes of the request that stopped the thread at the fence; 0 while none has.
    asked: AtomicUsize,
    /// Whether the thread is stopped.
    stopped: AtomicBool,
}

impl Fence {
    pub(super) fn new() -> Self {
        Fence {
            limit: AtomicIsize::new(isize::MAX),
            given_up: AtomicBool::new(false),
            asked: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
        }
    }

    /// Lets the calling thread hold `more` bytes beyond what it holds now, and fences it
    /// until the returned guard is dropped.
    pub(super) fn enclose(&self, more: isize) -> Enclosed<'_> {
        self.limit.store(
            held_by_this_thread().saturating_add(more),
            Ordering::Relaxed,
        );
        let _ = FENCE.try_with(|f| f.set(self as *const Fence));
        Enclosed { _fence: self }
    }

    /// Stops the thread at its next request to the allocator.
    pub(super) fn give_up(&self) {
        self.given_up.store(true, Ordering::Relaxed);
    }

    /// The bytes of the request the thread was stopped at, when it was stopped for one past
    /// its limit.
    pub(super) fn refused_request(&self) -> Option<usize> {
        let asked = self.asked.load(Ordering::Relaxed);
        (self.stopped.load(Ordering::Relaxed) && asked > 0).then_some(asked)
    }

    /// Stops the calling thread here, for good, when taking `more` bytes would pass the
    /// limit or its rendering was given up on. Neither allocates nor unwinds.
    fn stop_if_past(&self, more: usize) {
        let past =
            held_by_this_thread().saturating_add(signed(more)) > self.limit.load(Ordering::Relaxed);
        if !past && !self.given_up.load(Ordering::Relaxed) {
            return;
        }
        if past {
            self.asked.store(more, Ordering::Relaxed);
        }
        self.stopped.store(true, Ordering::Relaxed);
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}

/// The calling thread fenced; unfenced when dropped.
pub(super) struct Enclosed<'f> {
    _fence: &'f Fence,
}

impl Drop for Enclosed<'_> {
    fn drop(&mut self) {
        let _ = FENCE.try_with(|f| f.set(std::ptr::null()));
    }
}

/// Runs `work` unfenced: lab's own functions, which may hold a lock others wait for and are
/// bounded by what the session holds, are never stopped midway.
pub(super) fn unfenced<T>(work: impl FnOnce() -> T) -> T {
    let fence = FENCE
        .try_with(|f| f.replace(std::ptr::null()))
        .unwrap_or_default();
    let out = work();
    let _ = FENCE.try_with(|f| f.set(fence));
    out
}

/// Stops the calling thread if it is fenced and `more` bytes would take it past its fence.
fn check_fence(more: usize) {
    let fence = FENCE.try_with(Cell::get).unwrap_or(std::ptr::null());
    // SAFETY: a thread's fence pointer is set by `Fence::enclose` and cleared when its guard,
    // which borrows the fence, is dropped; a thread stopped at the fence never drops it.
    if let Some(fence) = unsafe { fence.as_ref() } {
        fence.stop_if_past(more);
    }
}

/// The system's allocator, counting what each thread holds of it.
pub struct CountingAllocator;

fn count(bytes: isize) {
    // During a thread's teardown its counter may be gone: nothing is counted then.
    let _ = HELD.try_with(|held| held.set(held.get().wrapping_add(bytes)));
}

fn signed(bytes: usize) -> isize {
    isize::try_from(bytes).unwrap_or(isize::MAX)
}

// SAFETY: every method hands the request to `System` unchanged and returns what it returned;
// counting touches only a thread-local integer, and the fence a thread-local pointer and
// atomics, none of which allocates or unwinds.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check_fence(layout.size());
        // SAFETY: the caller's contract for `layout` is `System.alloc`'s.
        let block = unsafe { System.alloc(layout) };
        if !block.is_null() {
            count(signed(layout.size()));
        }
        block
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check_fence(layout.size());
        // SAFETY: as `alloc`.
        let block = unsafe { System.alloc_zeroed(layout) };
        if !block.is_null() {
            count(signed(layout.size()));
        }
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: `block` came from this allocator, that is from `System`, with `layout`.
        unsafe { System.dealloc(block, layout) };
        count(-signed(layout.size()));
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check_fence(new_size.saturating_sub(layout.size()));
        // SAFETY: `block` came from `System` with `layout`; the caller's contract holds.
        let moved = unsafe { System.realloc(block, layout, new_size) };
        if !moved.is_null() {
            count(signed(new_size).wrapping_sub(signed(layout.size())));
        }
        moved
    }
}

/// The bytes the calling thread holds now, where [`CountingAllocator`] is the global
/// allocator; 0 always where it is not.
pub(super) fn held_by_this_thread() -> isize {
    HELD.try_with(Cell::get).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[global_allocator]
    static COUNTING: CountingAllocator = CountingAllocator;

    #[test]
    fn a_thread_holds_what_it_took_until_it_gives_it_back() {
        std::thread::spawn(|| {
            let before = held_by_this_thread();
            let block = vec![1u8; 3 << 20];
            assert_eq!(held_by_this_thread() - before, 3 << 20);
            let mut grown = block;
            grown.reserve_exact(5 << 20);
            assert_eq!(held_by_this_thread() - before, 8 << 20);
            drop(grown);
            assert_eq!(held_by_this_thread(), before);
        })
        .join()
        .unwrap();
    }

    /// Waits up to ten seconds for `done`.
    fn comes_true(done: impl Fn() -> bool) -> bool {
        (0..1000).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            done()
        })
    }

    #[test]
    fn a_fenced_thread_stops_before_a_request_past_its_fence_and_asks_nothing_more() {
        let fence: &'static Fence = Box::leak(Box::new(Fence::new()));
        let asked = std::sync::Arc::new(AtomicUsize::new(0));
        let seen = std::sync::Arc::clone(&asked);
        std::thread::spawn(move || {
            let _fenced = fence.enclose(4 << 20);
            let small = vec![1u8; 3 << 20];
            seen.store(small.len(), Ordering::Relaxed);
            let big = vec![1u8; 8 << 20];
            seen.store(big.len(), Ordering::Relaxed);
        });
        assert!(comes_true(|| fence.refused_request().is_some()));
        assert_eq!(fence.refused_request(), Some(8 << 20));
        assert_eq!(
            asked.load(Ordering::Relaxed),
            3 << 20,
            "the 8 MiB never came"
        );
    }

    #[test]
    fn a_thread_given_up_on_stops_at_its_next_request_and_lab_functions_are_not_fenced() {
        let fence: &'static Fence = Box::leak(Box::new(Fence::new()));
        let rounds = std::sync::Arc::new(AtomicUsize::new(0));
        let counted = std::sync::Arc::clone(&rounds);
        std::thread::spawn(move || {
            let _fenced = fence.enclose(1 << 20);
            // Beyond the fence, unfenced: lab's own functions are never stopped.
            let own = unfenced(|| vec![0u8; 2 << 20]);
            assert_eq!(own.len(), 2 << 20);
            drop(own);
            loop {
                std::hint::black_box(vec![0u8; 64]);
                counted.fetch_add(1, Ordering::Relaxed);
            }
        });
        assert!(comes_true(|| rounds.load(Ordering::Relaxed) > 1000));
        fence.give_up();
        assert!(comes_true(|| fence.stopped.load(Ordering::Relaxed)));
        let at_stop = rounds.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(
            rounds.load(Ordering::Relaxed),
            at_stop,
            "the thread runs no more"
        );
        assert_eq!(
            fence.refused_request(),
            None,
            "stopped for giving up, not a request"
        );
    }

    #[test]
    fn what_another_thread_takes_is_not_counted_here() {
        let before = held_by_this_thread();
        let elsewhere = std::thread::spawn(|| vec![0u8; 1 << 20]).join().unwrap();
        // Starting a thread takes a few hundred bytes here; the megabyte is the other's.
        let after = held_by_this_thread();
        assert!((0..4096).contains(&(after - before)), "{}", after - before);
        drop(elsewhere);
        assert_eq!(held_by_this_thread() - after, -(1 << 20));
    }
}
