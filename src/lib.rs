//! lab: turns a benchmark investigation into a reproducible, publishable notebook.
//!
//! The pipeline, one module per stage, each taking the previous one's typed output:
//! `config` (lab.toml → Experiment) → `plan` (runs in a seeded order) → `exec` (one process
//! per run) → `store` (sealed, append-only session files) → `validity` (valid / invalid with
//! reasons) → `analysis` (statistics of valid runs) → `checks` (verdicts) → `stopping` (a
//! sampled session: more runs, or why it stopped) → `compare` and `history` (sessions side by
//! side, and across commits) → `render` (charts and the mdBook chapter).
//! `bundle` carries a sealed session to another project and back; `replication` sets the
//! sessions of several machines side by side. `app` strings them together per command.

pub mod app;
pub mod cli;
pub mod error;
pub use error::Exit;
pub use lab_bundle as bundle;
pub use lab_config as config;
pub use lab_config::{format, plan, units};
pub use lab_exec as exec;
pub use lab_import as import;
pub use lab_judge::{analysis, checks, compare, history, replication, stopping, validity};
pub use lab_render as render;
pub use lab_stats as stats;
pub use lab_store as store;
pub use lab_store::regular;
