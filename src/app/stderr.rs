//! What the pipeline tells the command line as it goes (`crate::chapter::Told`), printed on
//! stderr.

use crate::chapter::Told;
use lab_config::format::terminal;
use std::path::Path;

/// Prints what writing chapters tells: notes and warnings always, the closing line unless
/// quiet.
pub(crate) struct Stderr {
    pub quiet: bool,
}

impl Told for Stderr {
    fn note(&self, text: &str) {
        eprintln!("note: {}", terminal(text));
    }

    fn warning(&self, text: &str) {
        eprintln!("warning: {}", terminal(text));
    }

    fn written(&self, book: &Path, rendered: usize, failed: usize) {
        if self.quiet {
            return;
        }
        eprintln!(
            "book written to {}: {rendered} chapter{} rendered{}",
            book.display(),
            if rendered == 1 { "" } else { "s" },
            if failed == 0 {
                String::new()
            } else {
                format!(", {failed} could not be")
            }
        );
    }
}
