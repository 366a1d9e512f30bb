//! When `lab book --serve` rebuilds. The kernel reports changes under experiments/ and data/
//! (inotify, through the notify crate: one watch per folder, folders made later included); a
//! burst of changes is gathered until [`QUIET`] passes without one, and only the chapters of
//! the experiments it touched are re-rendered (see `changes`) before the HTML is built again.
//! Nothing is rebuilt while a session is being written (an experiment's lock is held): the
//! changes wait, and the lock is looked at again every [`LOCK_RECHECK`] until the run ends.
//! With nothing pending the thread blocks, so an idle server costs no CPU. Where inotify
//! cannot be had (the watch limit is reached, the file system has none) it says why once and
//! looks for changes once a second, as lab did before (see `poll`).

use super::changes::{Pending, change_at};
use super::poll::{changed_since, fallback_notice, newest_input, poll};
use super::rebuild::{rebuild, session_running};
use crate::layout::Layout;
use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

/// How long a burst of changes must fall silent before the rebuild.
const QUIET: Duration = Duration::from_millis(300);
/// The longest a change waits for its burst to end, so a writer that never pauses is shown.
const LONGEST_WAIT: Duration = Duration::from_secs(5);
/// How often changes that wait for a session to end look at its lock again.
const LOCK_RECHECK: Duration = Duration::from_secs(1);

/// Rebuilds the book whenever its inputs change, until the process ends.
pub(super) fn watch(layout: &Layout, quiet: bool) -> ! {
    match Notifications::start(layout) {
        Ok(notifications) => {
            let failure = notifications.follow(layout, quiet);
            eprintln!("{}", fallback_notice(layout, &failure));
            // Changes may have gone unseen since the failure: the first look rebuilds.
            poll(layout, quiet, None)
        }
        Err(failure) => {
            eprintln!("{}", fallback_notice(layout, &failure));
            poll(layout, quiet, newest_input(layout))
        }
    }
}

/// Changes as the kernel reports them, and the watcher that asks for them.
struct Notifications {
    watcher: notify::RecommendedWatcher,
    events: Receiver<notify::Result<Event>>,
    /// The project as the watcher names paths: from the root of the file system.
    watched: Layout,
    /// When the book last began to be rebuilt: every change before it is in the book.
    rebuilt: SystemTime,
}

impl Notifications {
    /// Watches every folder under experiments/ and data/, and the project folder itself for
    /// either of them appearing.
    fn start(layout: &Layout) -> notify::Result<Notifications> {
        let watched = Layout::new(std::path::absolute(&layout.root).map_err(notify::Error::io)?);
        let (sender, events) = mpsc::channel();
        let mut watcher = notify::recommended_watcher(sender)?;
        watcher.watch(&watched.root, RecursiveMode::NonRecursive)?;
        let mut notifications = Notifications {
            watcher,
            events,
            watched,
            rebuilt: SystemTime::now(),
        };
        for tree in notifications.trees() {
            notifications.watch_tree(&tree)?;
        }
        Ok(notifications)
    }

    /// experiments/ and data/, as the watcher names them.
    fn trees(&self) -> [PathBuf; 2] {
        [self.watched.experiments(), self.watched.data()]
    }

    /// Watches `tree` and every folder in it, now and as they are made. A tree that is not
    /// there is no error; one whose folders move while they are walked is walked again.
    fn watch_tree(&mut self, tree: &Path) -> notify::Result<()> {
        for _ in 0..3 {
            match self.watcher.watch(tree, RecursiveMode::Recursive) {
                Err(e) if is_not_found(&e) => continue,
                done => return done,
            }
        }
        Ok(())
    }

    /// Rebuilds as changes come, until notifications fail; returns why they did.
    fn follow(mut self, layout: &Layout, quiet: bool) -> notify::Error {
        let mut waiting: Option<Batch> = None;
        loop {
            let received = match &waiting {
                None => self
                    .events
                    .recv()
                    .map_err(|_| RecvTimeoutError::Disconnected),
                Some(batch) => self
                    .events
                    .recv_timeout(batch.due().saturating_duration_since(Instant::now())),
            };
            match received {
                Ok(Ok(event)) => match self.absorb(&event) {
                    Ok(Pending::Nothing) => {}
                    Ok(pending) => waiting.get_or_insert_with(Batch::new).add(pending),
                    Err(failure) => return failure,
                },
                Ok(Err(failure)) => return failure,
                Err(RecvTimeoutError::Timeout) => {
                    waiting = waiting.and_then(|batch| self.settle(layout, batch, quiet));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return notify::Error::generic("the watcher stopped");
                }
            }
        }
    }

    /// What one event asks to rebuild; experiments/ or data/ appearing is watched from then on.
    /// After lost events (the kernel's queue overflowed) both are watched anew, and what
    /// changed is read from modification times: the rebuild itself opens every run's log, so
    /// rebuilding everything whenever events were lost could go on forever.
    fn absorb(&mut self, event: &Event) -> notify::Result<Pending> {
        let mut pending = Pending::Nothing;
        if !is_change(&event.kind) {
            return Ok(pending);
        }
        if event.need_rescan() {
            for tree in self.trees() {
                self.watch_tree(&tree)?;
            }
            for change in changed_since(&self.watched, self.rebuilt) {
                pending.add(change);
            }
        }
        for path in &event.paths {
            if self.trees().contains(path) && appeared(&event.kind) {
                self.watch_tree(path)?;
            }
            pending.add(change_at(&self.watched, path));
        }
        Ok(pending)
    }

    /// Rebuilds what `batch` asks for, or, while a session is written, keeps it for later.
    fn settle(&mut self, layout: &Layout, batch: Batch, quiet: bool) -> Option<Batch> {
        if session_running(layout) {
            let not_before = Instant::now() + LOCK_RECHECK;
            return Some(Batch {
                not_before,
                ..batch
            });
        }
        self.rebuilt = SystemTime::now();
        rebuild(layout, &batch.pending, quiet);
        None
    }
}

/// Changes waiting to be rebuilt, and when to look at them next.
struct Batch {
    pending: Pending,
    first: Instant,
    last: Instant,
    /// Set while a session is written: the lock is not looked at again before.
    not_before: Instant,
}

impl Batch {
    fn new() -> Batch {
        let now = Instant::now();
        Batch {
            pending: Pending::Nothing,
            first: now,
            last: now,
            not_before: now,
        }
    }

    fn add(&mut self, pending: Pending) {
        self.last = Instant::now();
        self.pending.merge(pending);
    }

    /// When the burst counts as over: [`QUIET`] after its last change, or [`LONGEST_WAIT`]
    /// after its first, but not before the lock is due to be looked at again.
    fn due(&self) -> Instant {
        (self.last + QUIET)
            .min(self.first + LONGEST_WAIT)
            .max(self.not_before)
    }
}

/// Whether an event says something changed: opening a file, reading it and closing it
/// unwritten (the rebuild itself does that to every input) change nothing.
fn is_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(access) => matches!(access, AccessKind::Close(AccessMode::Write)),
        _ => true,
    }
}

/// Whether an event says its path was made or moved into place.
fn appeared(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Create(_) | EventKind::Modify(notify::event::ModifyKind::Name(_))
    )
}

/// Whether watching failed because a folder was not there (any more).
fn is_not_found(error: &notify::Error) -> bool {
    match &error.kind {
        notify::ErrorKind::PathNotFound => true,
        notify::ErrorKind::Io(e) => e.kind() == std::io::ErrorKind::NotFound,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_is_no_change_and_writing_is() {
        use notify::event::{CreateKind, DataChange, ModifyKind};
        assert!(!is_change(&EventKind::Access(AccessKind::Open(
            AccessMode::Any
        ))));
        assert!(!is_change(&EventKind::Access(AccessKind::Close(
            AccessMode::Read
        ))));
        assert!(is_change(&EventKind::Access(AccessKind::Close(
            AccessMode::Write
        ))));
        assert!(is_change(&EventKind::Create(CreateKind::File)));
        assert!(is_change(&EventKind::Modify(ModifyKind::Data(
            DataChange::Any
        ))));
        assert!(is_change(&EventKind::Other));
    }

    #[test]
    fn a_burst_is_due_when_quiet_or_too_long_and_never_before_the_lock_recheck() {
        let mut batch = Batch::new();
        batch.add(Pending::Everything);
        assert_eq!(batch.due(), batch.last + QUIET);
        batch.first -= LONGEST_WAIT;
        assert_eq!(batch.due(), batch.first + LONGEST_WAIT);
        batch.not_before = batch.last + LOCK_RECHECK;
        assert_eq!(batch.due(), batch.not_before);
    }
}
