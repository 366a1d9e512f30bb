//! Stage 2, memory layout: each run's environment padding and heap shift, drawn from the
//! session's seed.
//!
//! The size of the environment moves the initial stack of every program the kernel starts
//! (the strings sit at the top of the stack, the arguments' strings just below them, then
//! `argv` and `envp`), and with it the alignment of everything the program places there.
//! Mytkowicz et al., "Producing wrong data without doing anything obviously wrong!" (ASPLOS
//! 2009), saw results move by 10% and more with the environment's size alone; tango
//! randomises such offsets per sample. A padding of 0 to [`PAD_RANGE`] − 1 bytes spans a page,
//! as they varied it.
//!
//! The heap does not move with the environment: its start is page-aligned, so everything a
//! program allocates lands at the same place within a page, and within a cache line, in every
//! run. STABILIZER (Curtsinger & Berger, ASPLOS 2013) randomises the heap for this reason. The
//! heap shift is how many bytes a preloaded shim (`exec::heap`) allocates and keeps before the
//! program starts, moving every later allocation of the C allocator by that much: a multiple
//! of [`HEAP_STEP`] below [`HEAP_RANGE`], so that every position within a cache line is
//! reached.

use super::PlannedRun;

/// The variable whose value pads a run's environment: its length is the run's padding.
pub const PAD_VAR: &str = "LAB_LAYOUT_PAD";

/// Paddings are drawn from 0 to one less than this: a page of 4,096 bytes, so that every
/// offset within a page is reached. A power of two, so that the draws below are unbiased.
pub const PAD_RANGE: u32 = 4096;

/// The smallest padding of the upper half of the range: the check sets the runs padded with
/// at least this many bytes against the others.
pub const PAD_SPLIT: u32 = PAD_RANGE / 2;

/// The variable that tells the heap shim how many bytes to move the run's heap by.
pub const HEAP_VAR: &str = "LAB_HEAP_SHIFT";

/// Heap shifts are drawn below this: a page, as the paddings are.
pub const HEAP_RANGE: u32 = 4096;

/// Heap shifts are multiples of this: the alignment malloc promises on 64-bit Linux, which a
/// shift must keep.
pub const HEAP_STEP: u32 = 16;

/// The cache line whose positions the shifts reach: 64 bytes on x86-64 and most ARM cores.
pub const CACHE_LINE: u32 = 64;

/// The positions within a cache line a heap can take: 0, 16, 32 and 48 bytes along it.
pub const HEAP_POSITIONS: u32 = CACHE_LINE / HEAP_STEP;

/// The position within a cache line of each repetition of a cell, eight at a time: every
/// position twice, once at an odd repetition (padded below [`PAD_SPLIT`]) and once at an even
/// one (above), so the positions and the padding's halves are crossed and neither effect
/// passes for the other; and the first four repetitions reach every position.
const POSITION_ORDER: [u32; 8] = [0, 1, 2, 3, 1, 0, 3, 2];

/// The padding of the run `id`, repetition `repetition`, in a session seeded with `seed`.
/// Drawn uniformly within one half of the range, the half alternating with the repetition:
/// the draws of a cell are blocked, as the shuffled order is, so every cell has as many runs
/// in each half for the check to compare, while each padding is still uniform over the page.
/// Its own seeded stream per run: a run keeps its padding whatever else is planned, and the
/// same seed gives the same paddings.
pub fn padding(seed: u64, id: &str, repetition: u32) -> u32 {
    use rand::RngCore;
    let mut rng = lab_basis::stream(seed, &format!("layout {id}"));
    let upper = repetition.is_multiple_of(2);
    u32::from(upper) * PAD_SPLIT + rng.next_u32() % PAD_SPLIT
}

/// The heap shift of the run `id`, repetition `repetition`, in a session seeded with `seed`:
/// its position within a cache line blocked by repetition as [`POSITION_ORDER`] says, the
/// cache line within the page uniform, from the run's own seeded stream.
pub fn heap_shift(seed: u64, id: &str, repetition: u32) -> u32 {
    use rand::RngCore;
    let mut rng = lab_basis::stream(seed, &format!("heap {id}"));
    let position = POSITION_ORDER[(repetition.saturating_sub(1) % 8) as usize];
    let line = rng.next_u32() % (HEAP_RANGE / CACHE_LINE);
    line * CACHE_LINE + position * HEAP_STEP
}

/// Where within a cache line a heap shifted by `shift` bytes starts, counted in steps of
/// [`HEAP_STEP`]: 0 to [`HEAP_POSITIONS`] − 1.
pub fn heap_position(shift: u32) -> u32 {
    shift % CACHE_LINE / HEAP_STEP
}

/// Gives every run its padding and its heap shift.
pub fn pad(runs: &mut [PlannedRun], seed: u64) {
    for run in runs {
        run.env_padding = Some(padding(seed, &run.id, run.repetition));
        run.heap_shift = Some(heap_shift(seed, &run.id, run.repetition));
    }
}

/// The value of [`PAD_VAR`] for a padding of `bytes`: that many `x`.
pub fn pad_value(bytes: u32) -> String {
    "x".repeat(bytes as usize)
}
