//! The commands, each a straight line through the pipeline: config → plan → exec → store →
//! analysis → checks → render. `run` measures; `report` only reads what was stored. Each
//! subcommand's arguments live in its own file as `Args` with `execute(self, &Layout, quiet)`.

mod baseline;
mod bench;
mod book;
mod bundle;
mod changes;
mod check;
mod compare;
mod history;
mod html;
mod import;
mod import_command;
mod list;
mod logs;
mod new;
mod noise;
mod poll;
mod reanalyze;
mod rebuild;
mod receive;
mod replications;
mod report;
mod revs;
mod run;
mod run_command;
mod run_shard;
mod scaffold;
mod schema;
mod serve;
pub(crate) mod session;
mod slurm;
mod summary;
pub(crate) mod value_parsers;
mod watch;

pub use crate::compare::{CellChange, Change, Comparison};
pub use baseline::{BaselineArgs, save_baseline};
pub use bench::BenchArgs;
pub use book::BookArgs;
pub use bundle::{BundleArgs, describe as describe_bundle, write as write_bundle};
pub use check::{CheckArgs, check, verdict_table};
pub use compare::{CompareArgs, CompareOptions, compare, compared_pair};
pub use history::{HistoryArgs, HistoryOptions, run_history};
pub use html::build_html;
pub use import::{ImportOptions, import};
pub use import_command::{ImportArgs, Source as ImportSource};
pub use list::{ListArgs, list};
pub use logs::{LogsArgs, run_output};
pub use new::{Lang, NewArgs};
pub use noise::{NoiseArgs, NoiseOptions, latest_noise, noise, noise_dir, text as noise_text};
pub use reanalyze::{ReanalyzeArgs, reanalyze};
pub use report::{ReportArgs, ReportOptions, render_book, report, report_json};
pub use revs::parse_revs;
pub use run::{RunOptions, run};
pub use run_command::{EngineArgs, On, Revisions, RunArgs, typed_command};
pub use run_shard::RunShardArgs;
pub use scaffold::new_experiment;
pub use schema::SchemaArgs;
pub use serve::{resolve as resolve_url, serve};
pub use session::{Assessed, assess, assess_chosen, find_session, session_list};
pub use slurm::{Engine, SlurmOptions, run_shard};
pub use summary::{Summary, summarise, text as summary_text};
pub use value_parsers::threshold;

use crate::config;
use crate::error::{LabError, Result};
use std::path::{Path, PathBuf};

/// Where lab keeps things, relative to the project root.
pub struct Layout {
    pub root: PathBuf,
}

impl Layout {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Layout { root: root.into() }
    }
    pub fn experiments(&self) -> PathBuf {
        self.at("experiments")
    }
    pub fn data(&self) -> PathBuf {
        self.at("data")
    }
    /// Where an experiment's sessions are kept: `data/NAME`.
    pub fn data_dir(&self, experiment: &str) -> PathBuf {
        self.data().join(experiment)
    }
    pub fn book(&self) -> PathBuf {
        self.at("book")
    }

    /// A path under the root, written without a leading `./` for messages and manifests.
    fn at(&self, name: &str) -> PathBuf {
        tidy(&self.root.join(name))
    }

    /// An experiment folder from a path or a bare name.
    pub fn experiment_dir(&self, arg: &Path) -> Result<PathBuf> {
        let candidates = [self.root.join(arg), self.experiments().join(arg)];
        if let Some(dir) = candidates
            .iter()
            .find(|d| d.join(config::FILE_NAME).is_file())
        {
            return Ok(tidy(dir));
        }
        let known: Vec<String> = self
            .experiment_dirs()
            .iter()
            .filter_map(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        Err(LabError::Usage(format!(
            "no experiment at {}: expected a folder holding {}\n  hint: experiments here: {}",
            arg.display(),
            config::FILE_NAME,
            if known.is_empty() {
                "none (create experiments/NAME/lab.toml)".to_string()
            } else {
                known.join(", ")
            }
        )))
    }

    /// Every folder under experiments/ that holds a lab.toml, sorted.
    pub fn experiment_dirs(&self) -> Vec<PathBuf> {
        experiments_in(&self.experiments())
    }

    /// The experiments `lab bench` wrote and did not save (`.lab/bench/bench-HASH`): their
    /// chapters stay in the book beside the project's.
    pub fn bench_dirs(&self) -> Vec<PathBuf> {
        experiments_in(&self.root.join(".lab").join("bench"))
    }
}

/// The folders directly in `parent` that hold a lab.toml, sorted.
fn experiments_in(parent: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(config::FILE_NAME).is_file())
        .map(|p| tidy(&p))
        .collect();
    dirs.sort();
    dirs
}

/// `./experiments/x` reads better as `experiments/x` in messages and manifests.
pub(super) fn tidy(path: &Path) -> PathBuf {
    path.strip_prefix(".").unwrap_or(path).to_path_buf()
}
