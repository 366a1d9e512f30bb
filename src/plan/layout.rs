//! Stage 2, memory layout: each run's environment padding, drawn from the session's seed.
//!
//! The size of the environment moves the initial stack of every program the kernel starts
//! (the strings sit at the top of the stack, above `argv` and `envp`), and with it the
//! alignment of everything the program places there. Mytkowicz et al., "Producing wrong data
//! without doing anything obviously wrong!" (ASPLOS 2009), saw results move by 10% and more
//! with the environment's size alone; tango randomises such offsets per sample. A padding of
//! 0 to [`PAD_RANGE`] − 1 bytes spans a page, as they varied it.

use super::PlannedRun;

/// The variable whose value pads a run's environment: its length is the run's padding.
pub const PAD_VAR: &str = "LAB_LAYOUT_PAD";

/// Paddings are drawn from 0 to one less than this: a page of 4,096 bytes, so that every
/// offset within a page is reached. A power of two, so that the draws below are unbiased.
pub const PAD_RANGE: u32 = 4096;

/// The smallest padding of the upper half of the range: the check sets the runs padded with
/// at least this many bytes against the others.
pub const PAD_SPLIT: u32 = PAD_RANGE / 2;

/// The padding of the run `id`, repetition `repetition`, in a session seeded with `seed`.
/// Drawn uniformly within one half of the range, the half alternating with the repetition:
/// the draws of a cell are blocked, as the shuffled order is, so every cell has as many runs
/// in each half for the check to compare, while each padding is still uniform over the page.
/// Its own seeded stream per run: a run keeps its padding whatever else is planned, and the
/// same seed gives the same paddings.
pub fn padding(seed: u64, id: &str, repetition: u32) -> u32 {
    use rand::RngCore;
    let mut rng = crate::stats::stream(seed, &format!("layout {id}"));
    let upper = repetition.is_multiple_of(2);
    u32::from(upper) * PAD_SPLIT + rng.next_u32() % PAD_SPLIT
}

/// Gives every run its padding.
pub fn pad(runs: &mut [PlannedRun], seed: u64) {
    for run in runs {
        run.env_padding = Some(padding(seed, &run.id, run.repetition));
    }
}

/// The value of [`PAD_VAR`] for a padding of `bytes`: that many `x`.
pub fn pad_value(bytes: u32) -> String {
    "x".repeat(bytes as usize)
}
