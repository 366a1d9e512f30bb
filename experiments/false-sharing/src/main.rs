//! False sharing: every thread increments its own counter, the counters either adjacent in
//! one cache line or each padded to 128 bytes, with plain or atomic increments.
//!
//!   false-sharing --layout=adjacent|padded --write=plain|atomic --threads=N --increments=N
//!
//! Each thread performs exactly `increments` increments of its own counter (a fixed amount of
//! work, not a fixed time, so every variant does the same work and the total is a checksum).
//! The clock is read twice per thread and twice by the main thread, never inside the loop.
//! Prints one JSON object line on stdout; everything else goes to stderr.
//! Exit status: 0 ok, 1 the counters do not add up to the increments made, 2 bad command line.

use std::cell::UnsafeCell;
use std::process::ExitCode;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const USAGE: &str = "usage: false-sharing --layout=adjacent|padded --write=plain|atomic \
                     --threads=N --increments=N";

/// At most this many threads: enough for any machine this runs on, small enough to refuse a
/// typo that would start a million threads.
const MAX_THREADS: usize = 1024;

/// How many adjacent counters one aligned block holds: 16 × 8 bytes = 128 bytes, so the first
/// 8 counters share one 64-byte cache line and the first 16 one 128-byte pair of lines.
const BLOCK: usize = 16;

/// The options as parsed.
struct Options {
    layout: Layout,
    write: Write,
    threads: usize,
    increments: u64,
}

#[derive(Clone, Copy)]
enum Layout {
    Adjacent,
    Padded,
}

#[derive(Clone, Copy)]
enum Write {
    Plain,
    Atomic,
}

impl Layout {
    fn name(self) -> &'static str {
        match self {
            Layout::Adjacent => "adjacent",
            Layout::Padded => "padded",
        }
    }
}

impl Write {
    fn name(self) -> &'static str {
        match self {
            Write::Plain => "plain",
            Write::Atomic => "atomic",
        }
    }
}

/// A per-thread counter: bumped by its owner thread only, read by the main thread after every
/// worker has been joined.
trait Counter: Default + Sync {
    fn bump(&self);
    fn get(&self) -> u64;
}

/// A plain `u64`: each increment is a volatile load and a volatile store, so the compiler can
/// neither keep the counter in a register nor fold the loop into one addition. No lock prefix,
/// no fence: an ordinary store that the cache must still own the line for.
#[derive(Default)]
struct Plain(UnsafeCell<u64>);

// SAFETY: each counter is written by exactly one thread (its owner, by index) and read only by
// the main thread after that thread was joined, which orders the writes before the read. No
// two threads ever access the same counter concurrently.
unsafe impl Sync for Plain {}

impl Counter for Plain {
    #[inline(always)]
    fn bump(&self) {
        let p = self.0.get();
        // SAFETY: `p` points to this counter, which only the calling thread accesses now.
        unsafe { std::ptr::write_volatile(p, std::ptr::read_volatile(p).wrapping_add(1)) }
    }

    fn get(&self) -> u64 {
        // SAFETY: called after every writer was joined.
        unsafe { std::ptr::read_volatile(self.0.get()) }
    }
}

/// An atomic counter: each increment is a `fetch_add` (a `lock xadd` on x86-64), relaxed,
/// since only atomicity matters here.
#[derive(Default)]
struct Atomic(AtomicU64);

impl Counter for Atomic {
    #[inline(always)]
    fn bump(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Where each thread's counter lives.
trait Slots<C: Counter>: Sync {
    fn new(n: usize) -> Self;
    fn slot(&self, i: usize) -> &C;
    /// The address of counter `i`, to report the layout actually used.
    fn address(&self, i: usize) -> usize {
        self.slot(i) as *const C as usize
    }
}

/// 16 counters side by side, the block aligned to 128 bytes so that the first counters share a
/// cache line whatever the allocator returns (in Java, where the write-up measured, the layout
/// could fall either way; here it is fixed).
#[repr(C, align(128))]
struct Block<C>([C; BLOCK]);

struct Adjacent<C>(Vec<Block<C>>);

impl<C: Counter> Slots<C> for Adjacent<C> {
    fn new(n: usize) -> Self {
        Adjacent(
            (0..n.div_ceil(BLOCK))
                .map(|_| Block(std::array::from_fn(|_| C::default())))
                .collect(),
        )
    }

    fn slot(&self, i: usize) -> &C {
        &self.0[i / BLOCK].0[i % BLOCK]
    }
}

/// One counter per 128 bytes: two 64-byte lines, since the adjacent-line prefetcher of many
/// x86 cores fetches lines in pairs, and a neighbour one line away can still interfere.
#[repr(C, align(128))]
#[derive(Default)]
struct Pad<C>(C);

struct Padded<C>(Vec<Pad<C>>);

impl<C: Counter> Slots<C> for Padded<C> {
    fn new(n: usize) -> Self {
        Padded((0..n).map(|_| Pad::default()).collect())
    }

    fn slot(&self, i: usize) -> &C {
        &self.0[i].0
    }
}

/// What one timed run measured.
struct Outcome {
    elapsed: Duration,
    per_thread: Vec<Duration>,
    total: u64,
    stride: usize,
}

/// Starts every thread at one barrier, each bumping its own counter `increments` times; the
/// main thread's clock spans from the barrier to the last join.
fn run<C: Counter, S: Slots<C>>(threads: usize, increments: u64) -> Outcome {
    let slots = S::new(threads);
    let stride = if threads > 1 {
        slots.address(1) - slots.address(0)
    } else {
        0
    };
    let barrier = Barrier::new(threads + 1);
    let (elapsed, per_thread) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|i| {
                let counter = slots.slot(i);
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    let started = Instant::now();
                    for _ in 0..increments {
                        counter.bump();
                    }
                    started.elapsed()
                })
            })
            .collect();
        barrier.wait();
        let started = Instant::now();
        let per_thread: Vec<Duration> = workers
            .into_iter()
            .map(|w| w.join().expect("a worker thread panicked"))
            .collect();
        (started.elapsed(), per_thread)
    });
    let total = (0..threads).map(|i| slots.slot(i).get()).sum();
    Outcome {
        elapsed,
        per_thread,
        total,
        stride,
    }
}

fn measure(o: &Options) -> Outcome {
    match (o.layout, o.write) {
        (Layout::Adjacent, Write::Plain) => run::<Plain, Adjacent<Plain>>(o.threads, o.increments),
        (Layout::Padded, Write::Plain) => run::<Plain, Padded<Plain>>(o.threads, o.increments),
        (Layout::Adjacent, Write::Atomic) => {
            run::<Atomic, Adjacent<Atomic>>(o.threads, o.increments)
        }
        (Layout::Padded, Write::Atomic) => run::<Atomic, Padded<Atomic>>(o.threads, o.increments),
    }
}

fn parse(args: &[String]) -> Result<Options, String> {
    let (mut layout, mut write, mut threads, mut increments) = (None, None, None, None);
    for arg in args {
        let (key, value) = arg
            .split_once('=')
            .ok_or_else(|| format!("expected --key=value, got {arg:?}"))?;
        match key {
            "--layout" => {
                layout = Some(match value {
                    "adjacent" => Layout::Adjacent,
                    "padded" => Layout::Padded,
                    _ => {
                        return Err(format!(
                            "--layout must be adjacent or padded, got {value:?}"
                        ));
                    }
                })
            }
            "--write" => {
                write = Some(match value {
                    "plain" => Write::Plain,
                    "atomic" => Write::Atomic,
                    _ => return Err(format!("--write must be plain or atomic, got {value:?}")),
                })
            }
            "--threads" => {
                threads = Some(
                    value
                        .parse::<usize>()
                        .ok()
                        .filter(|t| (1..=MAX_THREADS).contains(t))
                        .ok_or_else(|| {
                            format!("--threads must be 1 to {MAX_THREADS}, got {value:?}")
                        })?,
                )
            }
            "--increments" => {
                increments = Some(value.parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(
                    || format!("--increments must be a whole number ≥ 1, got {value:?}"),
                )?)
            }
            _ => return Err(format!("unknown option {key:?}")),
        }
    }
    match (layout, write, threads, increments) {
        (Some(layout), Some(write), Some(threads), Some(increments)) => Ok(Options {
            layout,
            write,
            threads,
            increments,
        }),
        _ => Err("every option is required".to_string()),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse(&args) {
        Ok(o) => o,
        Err(why) => {
            eprintln!("error: {why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let Some(expected) = o.increments.checked_mul(o.threads as u64) else {
        eprintln!(
            "error: {} threads × {} increments overflows a u64\n{USAGE}",
            o.threads, o.increments
        );
        return ExitCode::from(2);
    };
    let out = measure(&o);
    let seconds = out.elapsed.as_secs_f64();
    let slowest = out.per_thread.iter().max().copied().unwrap_or_default();
    let fastest = out.per_thread.iter().min().copied().unwrap_or_default();
    // "config" echoes the options as parsed, so the harness can verify that what ran is what
    // was asked for; "stride" is the distance in bytes between the first two counters.
    println!(
        "{{\"config\":{{\"layout\":\"{}\",\"write\":\"{}\",\"threads\":{},\"increments\":{}}},\
         \"stride_bytes\":{},\"mops\":{:.4},\"elapsed_s\":{:.6},\"thread_spread\":{:.4},\
         \"checksum\":\"{}\"}}",
        o.layout.name(),
        o.write.name(),
        o.threads,
        o.increments,
        out.stride,
        out.total as f64 / seconds / 1e6,
        seconds,
        slowest.as_secs_f64() / fastest.as_secs_f64().max(1e-9),
        out.total
    );
    if out.total != expected {
        eprintln!(
            "error: the counters add up to {} but {} threads made {} increments each ({expected})",
            out.total, o.threads, o.increments
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
