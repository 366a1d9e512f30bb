//! Every end-to-end test of lab, in one test binary linked once: each module is one area of
//! the pipeline (`cargo test --test suite pipeline::` runs one), all sharing `common`'s
//! temporary projects and its one fake runner.

mod common;

mod analyses;
mod architecture;
mod bench;
mod bench_door;
mod bisect;
mod book_reading;
mod browser;
mod budget;
mod bundle;
pub(crate) mod ci;
mod committed;
mod compare;
mod counters;
mod docs;
mod duet;
mod experiments;
mod fake_runner;
mod first_hour;
mod fuzz;
mod growth;
mod history;
mod hostile;
mod import;
mod import_asv;
mod import_bdn;
mod import_catch2;
mod import_nanobench;
mod import_props;
mod import_real;
mod interrupt;
mod jobs;
mod layout;
mod machines;
mod mechanism;
mod named_cells;
mod noise;
mod order_effects;
mod packed_logs;
mod pipeline;
mod revs;
mod revs_sampled;
mod schema;
mod scoped;
mod sealed;
mod sequential;
mod serve;
mod slurm;
mod snapshots;
mod steady_state;
mod structure;
mod traps;
mod under_load;
