//! The bytes a thread holds from the allocator, so that rendering notes.md can stop at its
//! memory budget: a value doubled in a loop passes any limit in a few dozen iterations, and an
//! allocation that fails ends the whole process, so lab must stop the template before that.
//!
//! The `lab` binary installs [`CountingAllocator`] as its global allocator; it hands every
//! request to the system's allocator and adds what the calling thread took, less what it gave
//! back, to a counter of that thread's own. Hand-written because the budget needs one thread's
//! bytes, which the allocator-statistics crates (global totals) do not give.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Bytes this thread took from the allocator less those it gave back (a block freed on
    /// another thread counts there, which is why this may go below zero).
    static HELD: Cell<isize> = const { Cell::new(0) };
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
// counting touches only a thread-local integer, which neither allocates nor unwinds.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `layout` is `System.alloc`'s.
        let block = unsafe { System.alloc(layout) };
        if !block.is_null() {
            count(signed(layout.size()));
        }
        block
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
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
