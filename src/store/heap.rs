//! Giving the heap's free pages back to the system once a large read is done with: the
//! allocator keeps the room of freed blocks for the process, and after a session of 100,000
//! runs is parsed and judged that room is tens of MB held for nothing.

/// Returns the free pages of every allocator arena to the system (glibc's `malloc_trim`);
/// nothing where the allocator is not glibc's.
pub fn give_back_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases pages the allocator holds free; it touches no block in
    // use and may be called from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
