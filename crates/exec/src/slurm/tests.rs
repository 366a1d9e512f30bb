//! Shard splitting, Slurm's output read back, and the watch's decisions, against a scheduler
//! that lab scripts here instead of Slurm.

use super::*;
use lab_config::plan::{CellKey, PlannedRun};
use std::cell::RefCell;

fn runs(n: usize) -> Vec<PlannedRun> {
    (1..=n)
        .map(|p| PlannedRun {
            id: format!("r{p:04}"),
            position: p,
            cell: CellKey::new(if p % 2 == 0 { "a" } else { "b" }, Default::default()),
            repetition: 1,
            warmup: false,
            argv: vec!["true".into()].into(),
            repeats: None,
            look: 1,
            env_padding: None,
            heap_shift: None,
        })
        .collect()
}

fn ids(shard: &[PlannedRun]) -> Vec<usize> {
    shard.iter().map(|r| r.position).collect()
}

#[test]
fn shards_are_contiguous_blocks_of_the_shuffled_order_larger_first() {
    let s = shards(&runs(10), 3);
    assert_eq!(
        s.iter().map(|b| ids(b)).collect::<Vec<_>>(),
        vec![vec![1, 2, 3, 4], vec![5, 6, 7], vec![8, 9, 10]]
    );
    // Never more shards than runs, never an empty one, and one shard is the plan itself.
    assert_eq!(shards(&runs(2), 5).len(), 2);
    assert_eq!(ids(&shards(&runs(7), 1)[0]), (1..=7).collect::<Vec<_>>());
    assert!(shards(&runs(0), 4).is_empty());
}

#[test]
fn array_lists_are_ranges_when_contiguous_and_throttled() {
    assert_eq!(array_spec(&[0, 1, 2, 3], 2), "0-3%2");
    assert_eq!(array_spec(&[1, 4, 5], 1), "1,4,5%1");
    assert_eq!(array_spec(&[7], 3), "7%3");
}

#[test]
fn scontrol_lines_give_each_task_its_state() {
    let text = "JobId=12 ArrayJobId=12 ArrayTaskId=3-5%2 JobState=PENDING Reason=JobArrayTaskLimit ExitCode=0:0\n\
                JobId=14 ArrayJobId=12 ArrayTaskId=1 JobState=RUNNING ExitCode=0:0 NodeList=n1\n\
                JobId=13 ArrayJobId=12 ArrayTaskId=0 JobState=COMPLETED ExitCode=0:0\n\
                JobId=15 ArrayJobId=12 ArrayTaskId=2 JobState=NODE_FAIL ExitCode=0:0\n\
                JobId=16 ArrayJobId=12 ArrayTaskId=6 JobState=COMPLETED ExitCode=2:0\n";
    let tasks = parse_scontrol(text);
    assert_eq!(tasks.len(), 7);
    assert_eq!(tasks[&0], TaskState::Completed);
    assert_eq!(tasks[&1], TaskState::Running);
    assert_eq!(tasks[&2], TaskState::Ended("NODE_FAIL (exit 0:0)".into()));
    for pending in [3, 4, 5] {
        assert_eq!(tasks[&pending], TaskState::Pending);
    }
    assert_eq!(tasks[&6], TaskState::Ended("COMPLETED (exit 2:0)".into()));
    assert_eq!(task_ids("0-6:3,9"), vec![0, 3, 6, 9]);
}

#[test]
fn a_lost_task_is_resubmitted_until_its_limit_then_given_up() {
    let open: BTreeSet<usize> = [0, 1, 2, 3].into();
    let states: BTreeMap<usize, TaskState> = [
        (0, TaskState::Completed),
        (1, TaskState::Ended("CANCELLED (exit 0:15)".into())),
        (2, TaskState::Running),
        // 3 is unknown to Slurm: purged, and its shard is incomplete.
    ]
    .into();
    let complete = |i: usize| i == 0;
    let none = BTreeMap::new();
    let d = decide(&open, &states, &complete, &none, 2);
    assert_eq!(d.resubmit, vec![1, 3]);
    assert_eq!(d.waiting, 1);
    assert!(d.given_up.is_empty());
    let twice: BTreeMap<usize, u32> = [(1, 2), (3, 1)].into();
    let d = decide(&open, &states, &complete, &twice, 2);
    assert_eq!((d.resubmit, d.given_up), (vec![3], vec![1]));
    // A task Slurm calls failed whose shard holds every run (it failed after its last run)
    // is done: the data decides, not the exit status.
    let d = decide(&open, &states, &|i| i != 2, &none, 2);
    assert_eq!((d.resubmit.len(), d.waiting), (0, 1));
}

/// A scheduler whose tasks follow a script: each job's answers, one per look.
struct Fake {
    submitted: Vec<(String, Vec<usize>)>,
    looks: RefCell<BTreeMap<String, Vec<Lookup>>>,
    cancelled: Vec<String>,
}

fn known(states: BTreeMap<usize, TaskState>) -> Lookup {
    Lookup::Known(states)
}

impl Scheduler for Fake {
    fn submit(&mut self, job: &Submission, tasks: &[usize]) -> Result<String> {
        let id = (100 + self.submitted.len()).to_string();
        self.submitted
            .push((array_spec(tasks, job.nodes), tasks.to_vec()));
        Ok(id)
    }
    fn tasks(&mut self, job: &str) -> Result<Lookup> {
        let mut looks = self.looks.borrow_mut();
        let script = looks.entry(job.to_string()).or_default();
        Ok(match script.len() {
            0 => known(BTreeMap::new()),
            1 => script[0].clone(),
            _ => script.remove(0),
        })
    }
    fn cancel(&mut self, job: &str) -> Result<()> {
        self.cancelled.push(job.to_string());
        Ok(())
    }
}

/// Shards whose completeness is set by the test.
#[derive(Default)]
struct Disk {
    complete: RefCell<BTreeSet<usize>>,
    notes: RefCell<Vec<String>>,
    /// The job ids handed over after each submission.
    recorded: RefCell<Vec<Vec<String>>>,
}

impl Shards for Disk {
    fn complete(&self, index: usize) -> bool {
        self.complete.borrow().contains(&index)
    }
    fn finished_runs(&self) -> usize {
        self.complete.borrow().len() * 10
    }
    fn note(&self, line: &str) {
        self.notes.borrow_mut().push(line.to_string());
    }
    fn submitted(&self, jobs: &[String]) -> Result<()> {
        self.recorded.borrow_mut().push(jobs.to_vec());
        Ok(())
    }
}

fn job() -> Submission {
    Submission {
        job_name: "lab-test".into(),
        command: vec!["lab".into(), "run-shard".into(), "/s".into()],
        output: "/s/shards/slurm-%A_%a.out".into(),
        partition: None,
        constraint: None,
        nodes: 2,
    }
}

/// Job 100's task 1 is lost to a failed node; its resubmission, job 101, completes.
fn node_fail_then_complete() -> Fake {
    let lost = TaskState::Ended("NODE_FAIL (exit 0:0)".into());
    Fake {
        submitted: Vec::new(),
        looks: RefCell::new(
            [
                (
                    "100".to_string(),
                    vec![known([(0, TaskState::Completed), (1, lost)].into())],
                ),
                (
                    "101".to_string(),
                    vec![known([(1, TaskState::Completed)].into())],
                ),
            ]
            .into(),
        ),
        cancelled: Vec::new(),
    }
}

/// Shards on disk that count as complete once a resubmission has been noted.
struct Completing<'a>(&'a Disk, RefCell<usize>);

impl Shards for Completing<'_> {
    fn complete(&self, i: usize) -> bool {
        *self.1.borrow() > 2 || self.0.complete(i)
    }
    fn finished_runs(&self) -> usize {
        self.0.finished_runs()
    }
    fn note(&self, line: &str) {
        if line.starts_with("resubmitted") {
            *self.1.borrow_mut() = 3;
        }
        self.0.note(line);
    }
    fn submitted(&self, jobs: &[String]) -> Result<()> {
        self.0.submitted(jobs)
    }
}

#[test]
fn the_watch_resubmits_only_the_lost_shard_and_ends_when_all_are_complete() {
    let mut fake = node_fail_then_complete();
    let disk = Disk {
        complete: RefCell::new([0].into()),
        ..Disk::default()
    };
    // Shard 1 completes once its second task has run: mark it before the job's next look.
    let mut jobs = Vec::new();
    let watched = {
        run_array(
            &mut fake,
            &job(),
            &[0, 1],
            BTreeMap::new(),
            &Completing(&disk, RefCell::new(0)),
            &mut jobs,
        )
        .unwrap()
    };
    assert_eq!(watched, Watched::Complete);
    assert_eq!(
        fake.submitted,
        vec![
            ("0-1%2".to_string(), vec![0, 1]),
            ("1%2".to_string(), vec![1])
        ]
    );
    assert_eq!(jobs, vec!["100", "101"]);
    // Each job id was handed over to be kept as soon as it existed.
    assert_eq!(
        *disk.recorded.borrow(),
        vec![vec!["100".to_string()], vec!["100".into(), "101".into()]]
    );
    let notes = disk.notes.borrow();
    assert!(
        notes
            .iter()
            .any(|n| n == "resubmitted shard 1 as job 101 (lost: 1 NODE_FAIL (exit 0:0))"),
        "{notes:?}"
    );
    assert!(fake.cancelled.is_empty());
}

#[test]
fn the_watch_gives_up_on_a_shard_lost_more_often_than_allowed() {
    let failed = || known([(0, TaskState::Ended("FAILED (exit 1:0)".into()))].into());
    let mut fake = Fake {
        submitted: Vec::new(),
        looks: RefCell::new(
            (100..100 + 1 + RESUBMISSIONS as usize)
                .map(|j| (j.to_string(), vec![failed()]))
                .collect(),
        ),
        cancelled: Vec::new(),
    };
    let disk = Disk::default();
    let mut jobs = Vec::new();
    let watched = run_array(&mut fake, &job(), &[0], BTreeMap::new(), &disk, &mut jobs).unwrap();
    assert_eq!(watched, Watched::GivenUp(vec![0]));
    assert_eq!(fake.submitted.len(), 1 + RESUBMISSIONS as usize);
    assert_eq!(jobs.len(), 1 + RESUBMISSIONS as usize);
}

/// A scheduler that accepts the job, then cannot be asked about it.
struct Unreachable {
    cancelled: Vec<String>,
}

impl Scheduler for Unreachable {
    fn submit(&mut self, _: &Submission, _: &[usize]) -> Result<String> {
        Ok("300".into())
    }
    fn tasks(&mut self, _: &str) -> Result<Lookup> {
        anyhow::bail!("cannot start `scontrol`")
    }
    fn cancel(&mut self, job: &str) -> Result<()> {
        self.cancelled.push(job.to_string());
        Ok(())
    }
}

#[test]
fn a_job_lab_can_no_longer_follow_is_cancelled() {
    let mut slurm = Unreachable {
        cancelled: Vec::new(),
    };
    let disk = Disk::default();
    let mut jobs = Vec::new();
    let err = run_array(
        &mut slurm,
        &job(),
        &[0, 1],
        BTreeMap::new(),
        &disk,
        &mut jobs,
    )
    .unwrap_err();
    assert!(format!("{err:#}").contains("scontrol"));
    assert_eq!(slurm.cancelled, vec!["300"]);
    assert_eq!(jobs, vec!["300"]);
}

/// What `scontrol show job` prints on stderr when the controller is down, as Slurm 22.05 does.
const NO_CONTROLLER: &str =
    "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n";

#[test]
fn a_purged_job_has_no_tasks_and_a_silent_controller_is_no_answer() {
    assert_eq!(
        failed_lookup("slurm_load_jobs error: Invalid job id specified\n"),
        Lookup::Known(BTreeMap::new())
    );
    assert_eq!(
        failed_lookup(NO_CONTROLLER),
        Lookup::NoAnswer(
            "slurm_load_jobs error: Unable to contact slurm controller (connect failure)".into()
        )
    );
}

#[test]
fn while_the_controller_is_silent_the_watch_waits_and_resubmits_nothing() {
    let silent = || Lookup::NoAnswer("connect failure".into());
    let mut fake = Fake {
        submitted: Vec::new(),
        // Two looks without an answer (the controller restarting), then the task completes.
        looks: RefCell::new(
            [(
                "100".to_string(),
                vec![
                    known([(0, TaskState::Running)].into()),
                    silent(),
                    silent(),
                    known([(0, TaskState::Completed)].into()),
                ],
            )]
            .into(),
        ),
        cancelled: Vec::new(),
    };
    // The shard is on disk in full once the controller answers again.
    struct AfterSilence(Disk);
    impl Shards for AfterSilence {
        fn complete(&self, _: usize) -> bool {
            self.0
                .notes
                .borrow()
                .iter()
                .any(|n| n.contains("answers again"))
        }
        fn finished_runs(&self) -> usize {
            0
        }
        fn note(&self, line: &str) {
            self.0.note(line);
        }
        fn submitted(&self, jobs: &[String]) -> Result<()> {
            self.0.submitted(jobs)
        }
    }
    let shards = AfterSilence(Disk::default());
    let mut jobs = Vec::new();
    let watched = run_array(&mut fake, &job(), &[0], BTreeMap::new(), &shards, &mut jobs).unwrap();
    let disk = &shards.0;
    assert_eq!(watched, Watched::Complete);
    assert_eq!(fake.submitted.len(), 1, "nothing resubmitted");
    let notes = disk.notes.borrow();
    let silences: Vec<&String> = notes
        .iter()
        .filter(|n| n.starts_with("Slurm's controller"))
        .collect();
    assert_eq!(silences.len(), 2, "{notes:?}");
    assert_eq!(
        silences[0],
        "Slurm's controller does not answer (connect failure); lab waits for it and resubmits nothing meanwhile"
    );
    assert!(silences[1].starts_with("Slurm's controller answers again after "));
}

/// Three jobs of one session as Slurm sees them: 99 forgotten, 100 with shard 0 done, shard
/// 1 lost and shard 2 running, and 101 holding shard 1 again, pending.
fn three_jobs() -> Fake {
    let lost = TaskState::Ended("NODE_FAIL (exit 0:0)".into());
    Fake {
        submitted: Vec::new(),
        looks: RefCell::new(
            [
                // Job 100: shard 0 done, shard 1 lost, shard 2 still running.
                (
                    "100".to_string(),
                    vec![known(
                        [
                            (0, TaskState::Completed),
                            (1, lost),
                            (2, TaskState::Running),
                        ]
                        .into(),
                    )],
                ),
                // Job 101 resubmitted shard 1, which waits for a node.
                (
                    "101".to_string(),
                    vec![known([(1, TaskState::Pending)].into())],
                ),
                // Job 99 is long gone: Slurm has forgotten it.
                ("99".to_string(), vec![known(BTreeMap::new())]),
            ]
            .into(),
        ),
        cancelled: Vec::new(),
    }
}

#[test]
fn resume_adopts_the_tasks_still_pending_or_running_of_the_latest_job_per_shard() {
    let mut fake = three_jobs();
    let jobs: Vec<String> = ["99", "100", "101"].map(String::from).to_vec();
    let live = live_tasks(&mut fake, &jobs).unwrap();
    assert_eq!(
        live,
        [(1, "101".to_string()), (2, "100".to_string())].into()
    );

    // Adopted tasks are watched without submitting anything new.
    fake.looks.borrow_mut().insert(
        "101".into(),
        vec![known([(1, TaskState::Completed)].into())],
    );
    let disk = Disk {
        complete: RefCell::new([1, 2].into()),
        ..Disk::default()
    };
    let mut recorded = jobs.clone();
    let watched = run_array(&mut fake, &job(), &[], live, &disk, &mut recorded).unwrap();
    assert_eq!(watched, Watched::Complete);
    assert!(fake.submitted.is_empty());
    assert_eq!(recorded, jobs);

    // A controller that does not answer leaves lab unable to tell what still runs.
    fake.looks.borrow_mut().insert(
        "99".into(),
        vec![Lookup::NoAnswer("connect failure".into())],
    );
    let err = live_tasks(&mut fake, &jobs).unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        "cannot tell whether job 99 still runs: Slurm's controller does not answer (connect failure)\n  hint: run the same command again once `squeue` answers"
    );
}
