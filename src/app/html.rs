//! The book's HTML, built with the mdBook library from the files lab wrote and nothing else.
//! A run may plant files or links under `book/`: the build copies the files render writes
//! (never through a link) into a private folder beside the site, builds there, and swaps the
//! new site in whole, so a failed build leaves the previous `book/book/` as it was.

use crate::error::Result;
use crate::layout::Layout;
use anyhow::Context;
use lab_render::published::{self, BOOK_TOML, Chosen, SCRATCH_PREFIX, SITE};
use lab_store::regular::open_same;
use std::fs;
use std::path::{Path, PathBuf};

/// A built site: its index page, and a sentence for each entry of `book/` left out of it.
#[derive(Debug)]
pub struct Built {
    pub index: PathBuf,
    pub left_out: Vec<String>,
}

/// Builds `book/book/` from the files lab wrote under `book/`; returns its index page and
/// what was left out.
pub fn build_html(layout: &Layout) -> Result<Built> {
    let book = layout.book();
    let selection = published::select(&book)?;
    let scratch = Scratch::create(&book)?;
    stage(&book, &selection.files, &scratch.0)?;
    let built = build_staged(&scratch.0).with_context(|| {
        format!(
            "building the book's HTML failed; {} was left as it was",
            book.join(SITE).display()
        )
    })?;
    swap_in(&built, &book.join(SITE), &scratch.0)?;
    Ok(Built {
        index: book.join(SITE).join("index.html"),
        left_out: selection.left_out,
    })
}

/// A private folder under `book/` for one build, removed with everything in it when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn create(book: &Path) -> Result<Scratch> {
        let path = book.join(format!("{SCRATCH_PREFIX}{}", std::process::id()));
        lab_store::remove_planted(&path)
            .with_context(|| format!("cannot clear {}", path.display()))?;
        fs::create_dir(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(Scratch(path))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = lab_store::remove_planted(&self.0);
    }
}

/// Copies each chosen file from `book` to the same place under `root`, reading only the file
/// that was listed (never through a link put there since).
fn stage(book: &Path, files: &[Chosen], root: &Path) -> Result<()> {
    for file in files {
        let from = book.join(&file.relative);
        let to = root.join(&file.relative);
        let mut source = open_same(&from, file.identity)
            .with_context(|| format!("cannot read {}", from.display()))?;
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let mut copy =
            fs::File::create(&to).with_context(|| format!("cannot write {}", to.display()))?;
        std::io::copy(&mut source, &mut copy)
            .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    }
    Ok(())
}

/// Builds the staged book at `root` with mdBook, configured by its book.toml alone (no
/// `MDBOOK_*` overrides); returns the folder the site was written to. mdBook's default
/// preprocessors are off: `{{#include}}` in text a run printed would otherwise pull any file
/// on the machine into the page.
fn build_staged(root: &Path) -> anyhow::Result<PathBuf> {
    let mut config = mdbook_driver::config::Config::from_disk(root.join(BOOK_TOML))
        .map_err(|e| anyhow::anyhow!("cannot read the book's {BOOK_TOML}: {e:#}"))?;
    config.build.use_default_preprocessors = false;
    let book = mdbook_driver::MDBook::load_with_config(root, config)
        .map_err(|e| anyhow::anyhow!("{e:#}"))?;
    book.build().map_err(|e| anyhow::anyhow!("{e:#}"))?;
    let site = book.build_dir_for("html");
    lab_render::search_index::escape_breadcrumbs(&site)?;
    Ok(site)
}

/// Replaces `site` by `built`: the previous site is moved into `scratch` (removed with it)
/// and moved back if the new one cannot take its place.
fn swap_in(built: &Path, site: &Path, scratch: &Path) -> Result<()> {
    let previous = scratch.join("previous");
    let had_previous = match fs::symlink_metadata(site) {
        Ok(_) => {
            fs::rename(site, &previous)
                .with_context(|| format!("cannot move {} aside", site.display()))?;
            true
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(anyhow::anyhow!("cannot read {}: {e}", site.display()).into()),
    };
    if let Err(e) = fs::rename(built, site) {
        if had_previous {
            let _ = fs::rename(&previous, site);
        }
        return Err(anyhow::anyhow!("cannot move the new site to {}: {e}", site.display()).into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site_holding(dir: &Path, text: &str) -> PathBuf {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join("index.html"), text).unwrap();
        dir.to_path_buf()
    }

    #[test]
    fn a_new_site_takes_the_place_of_the_previous_one() {
        let book = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(book.path()).unwrap();
        let site = site_holding(&book.path().join(SITE), "previous");
        let built = site_holding(&scratch.0.join("built"), "new");
        swap_in(&built, &site, &scratch.0).unwrap();
        assert_eq!(fs::read_to_string(site.join("index.html")).unwrap(), "new");
        let path = scratch.0.clone();
        drop(scratch);
        assert!(
            fs::symlink_metadata(path).is_err(),
            "the scratch folder is removed"
        );
    }

    #[test]
    fn a_site_that_cannot_move_in_leaves_the_previous_one_in_place() {
        let book = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(book.path()).unwrap();
        let site = site_holding(&book.path().join(SITE), "previous");
        let err = swap_in(&scratch.0.join("never-built"), &site, &scratch.0).unwrap_err();
        assert!(
            format!("{err:#}")
                .starts_with(&format!("cannot move the new site to {}: ", site.display())),
            "{err:#}"
        );
        assert_eq!(
            fs::read_to_string(site.join("index.html")).unwrap(),
            "previous"
        );
    }
}
