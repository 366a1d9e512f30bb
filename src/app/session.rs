//! A session named on the command line, assessed through [`crate::assess::chosen`], its
//! notices printed.

pub(crate) use crate::assess::chosen::{
    assess_chosen, assess_chosen_with, no_session, session_list,
};
use crate::assess::{Assessed, Rows};
use crate::error::Result;
use crate::layout::Layout;
use lab_store::SessionRef;
use std::path::Path;

/// The chosen (or latest) session of one experiment, assessed, its notices printed; its rows
/// and samples are given up once judged (`lab check` and `lab report --json` read only the
/// analysis and the verdicts).
pub(crate) fn assessed(
    layout: &Layout,
    arg: &Path,
    which: Option<&SessionRef>,
) -> Result<Assessed> {
    assessed_with(layout, arg, which, Rows::GiveUp)
}

/// [`assessed`], keeping the session's rows where `rows` says so (`lab bench` exports each
/// run's exit code and memory from them).
pub(crate) fn assessed_with(
    layout: &Layout,
    arg: &Path,
    which: Option<&SessionRef>,
    rows: Rows,
) -> Result<Assessed> {
    let dir = layout.experiment_dir(arg)?;
    let found = assess_chosen_with(layout, &dir, which, rows)?.ok_or_else(|| no_session(&dir))?;
    crate::chapter::tell_notices(&found, &super::stderr::Stderr { quiet: false });
    Ok(found)
}
