//! The one fake runner of the tests: each run answered by a closure from its argv, folder,
//! CPUs and how many runs of the same command came before, with no process started; what the
//! runs did (calls, start order, overlaps) recorded for the test to read.

use lab::exec::{Measurement, RunRequest, Runner};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One run as the fake sees it.
pub(crate) struct FakeRun<'a> {
    pub request: &'a RunRequest<'a>,
    /// The run id (`r0001`, …), or `calibration` for the calibration's spawns of `true`.
    pub id: String,
    /// How many runs of the same argv came before this one.
    pub nth: usize,
}

impl FakeRun<'_> {
    /// Whether this is a measured run rather than one of the calibration's spawns.
    pub(crate) fn measured(&self) -> bool {
        self.id != "calibration"
    }
}

/// What a fake run prints on stdout and reports as its measurement.
pub(crate) struct Reply {
    pub stdout: String,
    pub measurement: Measurement,
}

impl Reply {
    /// A run that printed `stdout` and took `ns` on one CPU (see [`super::clean_measurement`]).
    pub(crate) fn new(stdout: impl Into<String>, ns: u64) -> Reply {
        Reply {
            stdout: stdout.into(),
            measurement: super::clean_measurement(ns),
        }
    }

    /// A run that printed `{"ms": MS}` and took that long.
    pub(crate) fn ms(ms: f64) -> Reply {
        Reply::new(format!("{{\"ms\": {ms:.3}}}\n"), (ms * 1e6) as u64)
    }

    /// This reply with its measurement changed by `change`.
    pub(crate) fn with(mut self, change: impl FnOnce(&mut Measurement)) -> Reply {
        change(&mut self.measurement);
        self
    }
}

/// What the fake's runs did, shared by every copy of the runner.
#[derive(Default)]
pub(crate) struct Seen {
    /// Every call, the calibration's included.
    pub calls: usize,
    /// Measured run ids in the order they started.
    pub started: Vec<String>,
    /// Measured runs executing now: their ids and CPUs.
    pub active: Vec<(String, Option<Vec<usize>>)>,
    /// The most measured runs that executed at once.
    pub most_at_once: usize,
    /// Times a run started while another held one of its CPUs.
    pub clashes: usize,
    /// Runs so far by argv, the calibration's included.
    pub by_argv: BTreeMap<Vec<String>, usize>,
}

type Answer = dyn FnMut(&FakeRun) -> Reply + Send;

/// A runner that starts no process: `answer` says what each run printed and measured.
#[derive(Clone)]
pub(crate) struct FakeRunner {
    answer: Arc<Mutex<Box<Answer>>>,
    seen: Arc<Mutex<Seen>>,
    hold: Duration,
    side_by_side: bool,
}

impl FakeRunner {
    /// A fake that runs one run at a time and answers each with `answer`.
    pub(crate) fn new(answer: impl FnMut(&FakeRun) -> Reply + Send + 'static) -> FakeRunner {
        FakeRunner {
            answer: Arc::new(Mutex::new(Box::new(answer))),
            seen: Arc::default(),
            hold: Duration::ZERO,
            side_by_side: false,
        }
    }

    /// This fake, able to run runs side by side (`lab run --jobs`), each measured run lasting
    /// `hold` of real time so that the next can start beside it.
    pub(crate) fn side_by_side(mut self, hold: Duration) -> FakeRunner {
        self.side_by_side = true;
        self.hold = hold;
        self
    }

    /// What the runs did so far.
    pub(crate) fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap()
    }

    /// Every call so far, the calibration's included.
    pub(crate) fn calls(&self) -> usize {
        self.seen().calls
    }

    /// Records the run as started; how many runs of its argv came before.
    fn start(&self, id: &str, request: &RunRequest) -> usize {
        let mut seen = self.seen();
        seen.calls += 1;
        let count = seen.by_argv.entry(request.argv.to_vec()).or_default();
        let nth = *count;
        *count += 1;
        if id != "calibration" {
            let cpus = request.cpus.map(<[usize]>::to_vec);
            let clash = seen
                .active
                .iter()
                .any(|(_, theirs)| !lab::exec::disjoint(theirs.as_deref(), cpus.as_deref()));
            seen.clashes += usize::from(clash);
            seen.active.push((id.to_string(), cpus));
            seen.most_at_once = seen.most_at_once.max(seen.active.len());
            seen.started.push(id.to_string());
        }
        nth
    }
}

impl Runner for FakeRunner {
    fn run(&mut self, request: &RunRequest) -> Measurement {
        self.run_announced(request, &mut || {})
    }

    /// Records the run as started, lets lab start the next, then answers it.
    fn run_announced(&mut self, request: &RunRequest, spawned: &mut dyn FnMut()) -> Measurement {
        let id = request
            .stdout
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .trim_start_matches('.')
            .to_string();
        let nth = self.start(&id, request);
        spawned();
        let run = FakeRun { request, id, nth };
        if run.measured() && !self.hold.is_zero() {
            std::thread::sleep(self.hold);
        }
        let reply = (self.answer.lock().unwrap())(&run);
        match request.held_output {
            // The serial loop's runs write into files of their own, which have no name.
            Some([stdout, _]) => {
                std::io::Write::write_all(&mut &*stdout, reply.stdout.as_bytes()).unwrap()
            }
            None => {
                std::fs::write(request.stdout, reply.stdout).unwrap();
                std::fs::write(request.stderr, "").unwrap();
            }
        }
        self.seen().active.retain(|(a, _)| *a != run.id);
        reply.measurement
    }

    fn concurrent(&self) -> Option<Box<dyn Runner + Send>> {
        self.side_by_side
            .then(|| Box::new(self.clone()) as Box<dyn Runner + Send>)
    }
}
