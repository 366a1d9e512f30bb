//! The commands, each a straight line through the pipeline: config → plan → exec → store →
//! analysis → checks → render. `run` measures; `report` only reads what was stored. Each
//! subcommand's arguments live in its own file as `Args` with `execute(self, &Layout, quiet)`.

mod baseline;
mod bench;
mod bisect;
mod bisect_search;
mod book;
mod bundle;
mod changes;
mod check;
mod ci;
mod compare;
mod explain;
mod export;
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
pub(crate) mod report;
mod run_command;
mod run_shard;
mod scaffold;
mod schema;
mod serve;
pub(crate) mod session;
mod stderr;
pub(crate) mod value_parsers;
mod watch;

pub use crate::assess::chosen::{assess_chosen, find_session, session_list};
pub use crate::chapter::summary::{
    Summary, Wanted as SummaryWanted, summarise, text as summary_text,
};
pub use crate::run::{Engine, RunOptions, SlurmOptions, parse_revs, run_shard};
pub use baseline::{BaselineArgs, save_baseline};
pub use bench::BenchArgs;
pub use bisect::{BisectArgs, bisect};
pub use book::BookArgs;
pub use bundle::{BundleArgs, describe as describe_bundle, write as write_bundle};
pub use check::{CheckArgs, check, verdict_table};
pub use ci::{CiArgs, Deciding, ci};
pub use compare::{CompareArgs, CompareOptions, compare, compared_pair};
pub use explain::{ExplainArgs, explain};
pub use export::{ExportArgs, Exported, export};
pub use history::{HistoryArgs, HistoryOptions, run_history};
pub use html::build_html;
pub use import::{ImportOptions, import};
pub use import_command::{ImportArgs, Source as ImportSource};
pub use lab_judge::compare::{CellChange, Change, Comparison};
pub use list::{ListArgs, list};
pub use logs::{LogsArgs, run_output};
pub use new::{Lang, NewArgs};
pub use noise::{NoiseArgs, NoiseOptions, latest_noise, noise, noise_dir, text as noise_text};
pub use reanalyze::{ReanalyzeArgs, reanalyze};
pub use report::{ReportArgs, ReportOptions, render_book, report, report_json};
pub use run_command::{EngineArgs, On, Revisions, RunArgs, run, typed_command};
pub use run_shard::RunShardArgs;
pub use scaffold::new_experiment;
pub use schema::SchemaArgs;
pub use serve::{resolve as resolve_url, serve};
pub use value_parsers::threshold;
