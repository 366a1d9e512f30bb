//! lab: turns a benchmark investigation into a reproducible, publishable notebook.
//!
//! The pipeline, one module per stage: `config` (lab.toml → Experiment) → `plan` (runs in a
//! seeded order) → `exec` (one process per run) → `store` (append-only session files) →
//! `analysis` (statistics from stored data only) → `checks` (verdicts) → `render` (charts
//! and the mdBook chapter).

pub mod analysis;
pub mod app;
pub mod checks;
pub mod cli;
pub mod config;
pub mod error;
pub mod exec;
pub mod format;
pub mod plan;
pub mod render;
pub mod serve;
pub mod stats;
pub mod store;
