//! The limits notes.md renders within. Its loops may run over what runs printed, and a template
//! that loops or writes without end must stop with an error naming the loop, not hang
//! `lab report` or fill the disk. Tera has no such limits of its own (only 100,000 elements in
//! one `range`), so lab counts: a step at the start of every loop body, added to the template it
//! renders; the bytes written; the bytes the rendering thread holds (`held`); and the time
//! rendering takes, less lab's own statistics. The rendering thread is fenced as well
//! ([`held::Fence`]): one filter asking for more than [`MAX_FENCED_BYTES`] at once stops it
//! before the request is made, and a rendering no step stopped in time is given up on after a
//! grace second and stops at its next step or its next request for memory, whichever comes
//! first.

use super::held;
use super::location::{error_at, locate};
use super::source::{Piece, Position, position};
use super::{BUDGETED, TEMPLATE};
use anyhow::Result;
use lab_config::format::grouped;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};
use tera::{Context, Tera, TeraResult, Value};

/// Loop iterations one rendering may take, all loops together: an inner loop counts its
/// iterations in every pass of the outer one.
pub(super) const MAX_LOOP_ITERATIONS: u64 = 100_000;

/// Text one rendering may write: 4 MiB, a hundred times a long chapter's notes.
pub(super) const MAX_OUTPUT_BYTES: usize = 4 << 20;

/// Bytes the rendering thread may hold beyond what it held when it began: 64 MiB, far past
/// what a chapter's values take, so that a value doubled in a loop stops a pass or two later,
/// at a few hundred megabytes, where the allocator would otherwise fail and end lab.
pub(super) const MAX_HELD_BYTES: isize = 64 << 20;

/// The most the rendering thread may hold at any moment, beyond what it held when it began:
/// four times [`MAX_HELD_BYTES`], so that a value doubled in a loop always meets a loop step
/// first (which can name the loop), and a single filter writing more (a `join` whose separator
/// is long) is stopped before it asks.
pub(super) const MAX_FENCED_BYTES: isize = 4 * MAX_HELD_BYTES;

/// How long the template itself may take to render: the time in lab's own functions (`cell`
/// and `ratio` looking their cells up among many) is not counted; the statistics are worked
/// out before rendering starts.
pub(super) const MAX_RENDER_TIME: Duration = Duration::from_secs(5);

/// How much longer than [`MAX_RENDER_TIME`] rendering is waited for, when nothing it does
/// comes by a loop step (a list comprehension, say) to stop it on time.
const GRACE: Duration = Duration::from_secs(1);

/// How often the wait for rendering looks at the template's time.
const WATCH_EVERY: Duration = Duration::from_millis(50);

/// The function that counts a loop's iteration, called at the start of every loop body.
pub(super) const LOOP_STEP: &str = "__lab_loop_step";

/// One rendering of notes.md: its templates (the author's and the budgeted one), the
/// variables, and the budget the budgeted one's loop steps spend.
pub(super) struct Rendering {
    pub tera: Tera,
    pub context: Context,
    pub budget: Arc<Budget>,
    pub path: PathBuf,
    pub source: String,
}

impl Rendering {
    /// The rendered notes, or the error that stopped them: a limit reached, with the loop it
    /// was reached in, or the author's mistake at its line. Rendering runs on a thread of its
    /// own, waited for no longer than the time limit allows.
    pub(super) fn run(self) -> Result<String> {
        let (path, budget) = (self.path.clone(), Arc::clone(&self.budget));
        let (done, result) = mpsc::channel();
        std::thread::spawn(move || done.send(self.render_budgeted()));
        loop {
            match result.recv_timeout(WATCH_EVERY) {
                Ok(rendered) => return rendered,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Some(asked) = budget.fence.refused_request() {
                        return Err(error_at(&path, None, &Limit::Request(asked).reason()));
                    }
                    if budget.template_time() > MAX_RENDER_TIME + GRACE {
                        budget.fence.give_up();
                        return Err(error_at(&path, None, &Limit::Time.reason()));
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(anyhow::anyhow!(
                        "{}: rendering stopped without a result",
                        path.display()
                    ));
                }
            }
        }
    }

    fn render_budgeted(&self) -> Result<String> {
        self.budget.hold_from_here();
        let _fenced = self.budget.fence.enclose(MAX_FENCED_BYTES);
        let mut out = Metered::new(&self.budget);
        let rendered = self.tera.render_to(BUDGETED, &self.context, &mut out);
        if let Some(overrun) = self.budget.overrun() {
            return Err(error_at(&self.path, overrun.at, &overrun.limit.reason()));
        }
        match rendered {
            Ok(()) => Ok(String::from_utf8(out.text)?),
            Err(e) => Err(self.authors_error(&e)),
        }
    }

    /// An error of the budgeted template told as the author's template tells it, with the
    /// lines and columns of the text the author wrote: the author's template, rendered again
    /// with the same variables, stops at the same place (within the budget, as it did).
    fn authors_error(&self, budgeted: &tera::Error) -> anyhow::Error {
        let unmetered = Budget::new(Vec::new());
        let mut out = Metered::new(&unmetered);
        match self.tera.render_to(TEMPLATE, &self.context, &mut out) {
            Err(e) => locate(&e, &self.path, &self.source),
            Ok(()) => locate(budgeted, &self.path, &self.source),
        }
    }
}

/// Which limit rendering reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Limit {
    Iterations,
    Output,
    Memory,
    /// One request for memory, of this many bytes, past [`MAX_FENCED_BYTES`].
    Request(usize),
    Time,
}

impl Limit {
    /// What stopped rendering, with the limit.
    pub(super) fn reason(self) -> String {
        match self {
            Limit::Iterations => format!(
                "rendering stopped after {} loop iterations, the most notes.md may take \
                 (an inner loop counts its iterations in every pass of the outer one)",
                grouped(MAX_LOOP_ITERATIONS)
            ),
            Limit::Output => format!(
                "rendering stopped at {} MiB of text, the most notes.md may write",
                MAX_OUTPUT_BYTES >> 20
            ),
            Limit::Memory => format!(
                "rendering stopped holding over {} MiB, the most notes.md may hold",
                MAX_HELD_BYTES >> 20
            ),
            Limit::Request(asked) => format!(
                "rendering stopped when one step asked for {} MiB at once, past the {} MiB \
                 notes.md may hold (a filter such as `join` or `replace` writing that much)",
                grouped((asked >> 20) as u64),
                MAX_FENCED_BYTES >> 20
            ),
            Limit::Time => format!(
                "rendering stopped after {} s, the longest notes.md may take",
                MAX_RENDER_TIME.as_secs()
            ),
        }
    }
}

/// A limit reached, and where the loop it was reached in starts, when one was running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Overrun {
    pub limit: Limit,
    pub at: Option<Position>,
}

/// What one rendering has spent.
pub(super) struct Budget {
    started: Instant,
    /// The time spent in lab's own functions, and when the one running began.
    in_lab: Mutex<(Duration, Option<Instant>)>,
    /// Where each counted loop starts in the author's notes.md, by the index its step passes.
    loops: Vec<Position>,
    iterations: AtomicU64,
    /// What the rendering thread held when it began ([`held`]).
    held_at_start: AtomicIsize,
    output_full: AtomicBool,
    overrun: Mutex<Option<Overrun>>,
    /// What the rendering thread may ask of the allocator.
    fence: held::Fence,
}

impl Budget {
    pub(super) fn new(loops: Vec<Position>) -> Self {
        Budget {
            started: Instant::now(),
            in_lab: Mutex::new((Duration::ZERO, None)),
            loops,
            iterations: AtomicU64::new(0),
            held_at_start: AtomicIsize::new(0),
            output_full: AtomicBool::new(false),
            overrun: Mutex::new(None),
            fence: held::Fence::new(),
        }
    }

    /// Counts the memory the calling thread holds from now on: called where rendering begins,
    /// on the thread that renders.
    pub(super) fn hold_from_here(&self) {
        self.held_at_start
            .store(held::held_by_this_thread(), Ordering::Relaxed);
    }

    /// Runs one of lab's own functions, its time not counted as the template's.
    pub(super) fn uncounted<T>(&self, work: impl FnOnce() -> T) -> T {
        if let Ok(mut in_lab) = self.in_lab.lock() {
            in_lab.1 = Some(Instant::now());
        }
        let out = held::unfenced(work);
        if let Ok(mut in_lab) = self.in_lab.lock()
            && let Some(since) = in_lab.1.take()
        {
            in_lab.0 += since.elapsed();
        }
        out
    }

    /// The time rendering has taken, less the time in lab's own functions.
    pub(super) fn template_time(&self) -> Duration {
        let in_lab = self.in_lab.lock().map_or(Duration::ZERO, |in_lab| {
            in_lab.0 + in_lab.1.map_or(Duration::ZERO, |since| since.elapsed())
        });
        self.started.elapsed().saturating_sub(in_lab)
    }

    /// Counts one iteration of loop `index`: nothing to write, or an error once a limit is
    /// reached (the output's too, marked by [`Metered`] since the last step).
    pub(super) fn step(&self, index: usize) -> TeraResult<Value> {
        let iterations = self.iterations.fetch_add(1, Ordering::Relaxed) + 1;
        let Some(limit) = self.limit_reached(iterations) else {
            return Ok(Value::safe_string(""));
        };
        let overrun = Overrun {
            limit,
            at: self.loops.get(index).copied(),
        };
        if let Ok(mut first) = self.overrun.lock() {
            first.get_or_insert(overrun);
        }
        Err(tera::Error::message(limit.reason()))
    }

    fn limit_reached(&self, iterations: u64) -> Option<Limit> {
        if iterations > MAX_LOOP_ITERATIONS {
            Some(Limit::Iterations)
        } else if self.output_full.load(Ordering::Relaxed) {
            Some(Limit::Output)
        } else if held::held_by_this_thread()
            .saturating_sub(self.held_at_start.load(Ordering::Relaxed))
            > MAX_HELD_BYTES
        {
            Some(Limit::Memory)
        } else if self.template_time() > MAX_RENDER_TIME {
            Some(Limit::Time)
        } else {
            None
        }
    }

    /// The limit rendering stopped at: the one a loop step reached first, else a full output
    /// that no step came after to report.
    pub(super) fn overrun(&self) -> Option<Overrun> {
        let stopped = self.overrun.lock().ok().and_then(|first| *first);
        stopped.or_else(|| {
            self.output_full.load(Ordering::Relaxed).then_some(Overrun {
                limit: Limit::Output,
                at: None,
            })
        })
    }
}

/// Rendered text kept up to [`MAX_OUTPUT_BYTES`]; what would pass it is dropped and the budget
/// marked spent, so that the next loop step stops rendering at its loop.
pub(super) struct Metered<'b> {
    budget: &'b Budget,
    pub text: Vec<u8>,
}

impl<'b> Metered<'b> {
    pub(super) fn new(budget: &'b Budget) -> Self {
        Metered {
            budget,
            text: Vec::new(),
        }
    }
}

impl Write for Metered<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.text.len() + bytes.len() > MAX_OUTPUT_BYTES {
            self.budget.output_full.store(true, Ordering::Relaxed);
        } else {
            self.text.extend_from_slice(bytes);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The template lab renders: the author's, with a [`LOOP_STEP`] at the start of every loop
/// body, and where each of those loops starts in the author's text. A step after `-%}` trims
/// the whitespace the tag would have trimmed, so the output is the author's template's.
pub(super) fn with_loop_steps(source: &str, pieces: &[Piece]) -> (String, Vec<Position>) {
    let mut out = String::with_capacity(source.len() + 64);
    let mut loops = Vec::new();
    let mut copied = 0;
    for piece in pieces {
        let Piece::Statement { range, keyword } = piece else {
            continue;
        };
        if keyword != "for" {
            continue;
        }
        out.push_str(&source[copied..range.end]);
        let (open, close) = if source[..range.end].ends_with("-%}") {
            ("{{-", "-}}")
        } else {
            ("{{", "}}")
        };
        out.push_str(&format!("{open} {LOOP_STEP}(at={}) {close}", loops.len()));
        loops.push(position(source, range.start));
        copied = range.end;
    }
    out.push_str(&source[copied..]);
    (out, loops)
}

#[cfg(test)]
mod tests {
    use super::super::source::pieces;
    use super::*;

    #[test]
    fn every_loop_body_starts_with_a_step_that_trims_as_its_tag_does() {
        let source = "{% for a in xs %}\n{%- for b in ys -%}\n x{% endfor %}{% endfor %}";
        let (budgeted, loops) = with_loop_steps(source, &pieces(source));
        assert_eq!(
            budgeted,
            "{% for a in xs %}{{ __lab_loop_step(at=0) }}\n\
             {%- for b in ys -%}{{- __lab_loop_step(at=1) -}}\n x{% endfor %}{% endfor %}"
        );
        assert_eq!(
            loops,
            [
                Position { line: 1, column: 1 },
                Position { line: 2, column: 1 }
            ]
        );
    }

    #[test]
    fn limits_are_written_as_people_read_them() {
        assert_eq!(grouped(100_000), "100,000");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert!(Limit::Output.reason().contains("4 MiB"));
        assert!(Limit::Time.reason().contains("5 s"));
    }

    #[test]
    fn time_in_labs_own_functions_is_not_the_templates() {
        let budget = Budget::new(Vec::new());
        budget.uncounted(|| std::thread::sleep(Duration::from_millis(300)));
        assert!(budget.template_time() < Duration::from_millis(250));
        std::thread::sleep(Duration::from_millis(100));
        assert!(budget.template_time() >= Duration::from_millis(100));
    }

    #[test]
    fn a_step_past_a_full_output_names_its_loop() {
        let budget = Budget::new(vec![Position { line: 3, column: 2 }]);
        let mut out = Metered::new(&budget);
        out.write_all(&vec![b'x'; MAX_OUTPUT_BYTES]).unwrap();
        assert!(budget.step(0).is_ok());
        out.write_all(b"y").unwrap();
        assert_eq!(
            out.text.len(),
            MAX_OUTPUT_BYTES,
            "the byte past the limit is dropped"
        );
        assert!(budget.step(0).is_err());
        assert_eq!(
            budget.overrun(),
            Some(Overrun {
                limit: Limit::Output,
                at: Some(Position { line: 3, column: 2 })
            })
        );
    }
}
