//! The rebuild `lab book --serve` makes once changes have settled (whether the kernel told of
//! them, see `watch`, or the once-a-second look found them, see `poll`): the chapters the
//! changes touched are re-rendered and the HTML built again, never while a session is being
//! written.

use super::changes::{Pending, Render, to_render};
use crate::layout::Layout;
use std::path::PathBuf;

/// True while some experiment's session is being written.
pub(super) fn session_running(layout: &Layout) -> bool {
    layout
        .experiment_dirs()
        .iter()
        .any(|dir| lab_store::is_locked(&layout.data_dir(&lab_config::experiment_name(dir))))
}

/// Re-renders the chapters `pending` asks for (every one, for a change that belongs to no
/// single experiment), then builds the HTML.
pub(super) fn rebuild(layout: &Layout, pending: &Pending, quiet: bool) {
    let only = match to_render(layout, pending) {
        Render::Nothing => return,
        Render::Only(dirs) => dirs,
        Render::Everything => Vec::new(),
    };
    let options = super::ReportOptions {
        only: &only,
        session: None,
        quiet: true,
        summary: crate::chapter::summary::Wanted::Verdict,
    };
    let result = super::report::report(layout, &options)
        .map_err(|e| e.to_string())
        .and_then(|_| super::html::build_html(layout).map_err(|e| e.to_string()));
    match result {
        Ok(built) => {
            for sentence in &built.left_out {
                eprintln!("warning: {sentence}");
            }
            if !quiet {
                eprintln!("rebuilt the book ({})", chapters_named(&only));
            }
        }
        Err(e) => eprintln!("error: {e}"),
    }
}

/// "every chapter", or the experiment folders' names.
fn chapters_named(only: &[PathBuf]) -> String {
    if only.is_empty() {
        return "every chapter".to_string();
    }
    let names: Vec<String> = only
        .iter()
        .filter_map(|dir| dir.file_name())
        .map(|name| name.to_string_lossy().into_owned())
        .collect();
    format!("chapter of {}", names.join(", "))
}
