//! The book's HTML, built with the mdBook library from the Markdown lab wrote.

use super::Layout;
use crate::error::Result;
use std::path::PathBuf;

/// Builds the book's HTML with the mdBook library; returns the path of its index page.
pub fn build_html(layout: &Layout) -> Result<PathBuf> {
    let book = mdbook_driver::MDBook::load(layout.book()).map_err(|e| {
        anyhow::anyhow!("cannot load the book in {}: {e:#}", layout.book().display())
    })?;
    book.build()
        .map_err(|e| anyhow::anyhow!("building the book's HTML failed: {e:#}"))?;
    Ok(book.build_dir_for("html").join("index.html"))
}
