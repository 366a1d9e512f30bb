//! `lab book`: the chapters re-rendered from stored data, then the book's HTML built into
//! book/book/ with the mdBook library, and served on request.

use super::html::build_html;
use super::report::render_book;
use crate::error::{Exit, Result};
use crate::layout::Layout;
use lab_store::SessionRef;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct BookArgs {
    /// Render this session of the one experiment named (default: every latest session).
    #[arg(long, requires = "experiment")]
    pub session: Option<SessionRef>,
    /// The experiment whose chapter `--session` chooses.
    #[arg(long)]
    pub experiment: Option<PathBuf>,
    /// Then serve it on 127.0.0.1 and rebuild the chapters whose data, notes or lab.toml change.
    #[arg(long)]
    pub serve: bool,
    /// The loopback port to serve on.
    #[arg(long, default_value_t = 3000, requires = "serve")]
    pub port: u16,
}

impl BookArgs {
    /// `lab book`: renders, builds the HTML and, with `--serve`, serves it.
    pub fn execute(self, layout: &Layout, quiet: bool) -> Result<Exit> {
        let chosen: Vec<PathBuf> = self.experiment.into_iter().collect();
        let summary = crate::chapter::summary::Wanted::Verdict;
        render_book(layout, &chosen, self.session.as_ref(), quiet, summary)?;
        let built = build_html(layout)?;
        for sentence in &built.left_out {
            eprintln!("warning: {sentence}");
        }
        if !quiet {
            eprintln!("HTML written to {}", built.index.display());
        }
        if self.serve {
            super::serve::serve(layout, self.port, quiet)?;
        }
        Ok(Exit::Ok)
    }
}
