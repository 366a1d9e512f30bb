//! What of `book/` is published: the files render writes there (book.toml, lab.css, the index
//! pages, and for each chapter SUMMARY.md lists its pages, the charts they show, analysis.json
//! and the raw CSV files), found without following a symbolic link. Everything else there —
//! a file a run planted, a link, a FIFO — is named, so the build can leave it out and say so.

use anyhow::{Context, Result};
use lab_store::regular::{Identity, kind_of, open_regular};
use lab_store::{RUNS, SAMPLES};
use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The book's mdBook configuration.
pub const BOOK_TOML: &str = "book.toml";
/// The files render writes beside `src/`.
pub const ROOT_FILES: [&str; 2] = [BOOK_TOML, "lab.css"];
/// The pages render writes at the top of `src/`.
pub const INDEX_PAGES: [&str; 3] = ["SUMMARY.md", "introduction.md", "how-to-read.md"];
/// A chapter's first page.
pub const CHAPTER_PAGE: &str = "index.md";
/// A chapter's History page.
pub const HISTORY_PAGE: &str = "history.md";
/// A chapter's page of where each number comes from.
pub const PROVENANCE_PAGE: &str = "provenance.md";
/// A chapter's numbers, as its pages print them, by id: what `lab explain` checks against.
pub const NUMBERS_JSON: &str = "numbers.json";
/// A chapter's Bisect page (an experiment `lab bisect` searched).
pub const BISECT_PAGE: &str = "bisect.md";
/// A chapter's Replications page (an experiment measured on several machines).
pub const REPLICATIONS_PAGE: &str = "replications.md";
/// Every statistic and verdict of a chapter.
pub const ANALYSIS_JSON: &str = "analysis.json";
/// The chapter's folder of raw CSV files.
pub const DATA_FOLDER: &str = "data";
/// The folder under `book/` that holds the built site; the build replaces it whole.
pub const SITE: &str = "book";
/// The start of the name of a private folder a build works in, under `book/`.
pub const SCRATCH_PREFIX: &str = ".lab-html-";

/// A file to publish: where it is under `book/`, and which file that was when listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub relative: PathBuf,
    pub identity: Identity,
}

/// What a build of `book/` publishes and what it leaves out.
#[derive(Debug, Default)]
pub struct Selection {
    pub files: Vec<Chosen>,
    /// One sentence for each entry left out, naming it.
    pub left_out: Vec<String>,
}

/// Lists `book/`: the files render wrote, and a sentence for everything else found there.
pub fn select(book: &Path) -> Result<Selection> {
    let src = book.join("src");
    for folder in [book, src.as_path()] {
        let meta = fs::symlink_metadata(folder)
            .with_context(|| format!("cannot read {}", folder.display()))?;
        if !meta.is_dir() {
            anyhow::bail!(
                "{} is {}, not the folder lab writes the book in\n  hint: move it aside and run `lab book` again",
                folder.display(),
                kind_of(&meta.file_type())
            );
        }
    }
    let mut selection = Walk {
        book,
        selection: Selection::default(),
    };
    selection.root()?;
    Ok(selection.selection)
}

/// One pass over `book/`, collecting what it publishes.
struct Walk<'a> {
    book: &'a Path,
    selection: Selection,
}

impl Walk<'_> {
    fn root(&mut self) -> Result<()> {
        for (name, meta) in entries(self.book)? {
            let path = self.book.join(&name);
            if name == SITE || name.starts_with(SCRATCH_PREFIX) {
                continue;
            } else if ROOT_FILES.contains(&name.as_str()) {
                self.file(&path, &meta);
            } else if name == "src" {
                self.src(&path)?;
            } else {
                self.stray(&path, &meta);
            }
        }
        Ok(())
    }

    fn src(&mut self, src: &Path) -> Result<()> {
        let chapters = summary_chapters(&src.join("SUMMARY.md"));
        for (name, meta) in entries(src)? {
            let path = src.join(&name);
            if INDEX_PAGES.contains(&name.as_str()) {
                self.file(&path, &meta);
            } else if chapters.contains(&name) {
                if self.folder(&path, &meta) {
                    self.chapter(&path)?;
                }
            } else {
                self.stray(&path, &meta);
            }
        }
        Ok(())
    }

    fn chapter(&mut self, dir: &Path) -> Result<()> {
        let pages: Vec<String> = [CHAPTER_PAGE, HISTORY_PAGE, REPLICATIONS_PAGE, BISECT_PAGE]
            .iter()
            .filter_map(|page| read_text(&dir.join(page)))
            .collect();
        let shown = |chart: &str| {
            let quoted = format!("\"{chart}\"");
            pages.iter().any(|page| page.contains(&quoted))
        };
        for (name, meta) in entries(dir)? {
            let path = dir.join(&name);
            if [
                CHAPTER_PAGE,
                HISTORY_PAGE,
                REPLICATIONS_PAGE,
                BISECT_PAGE,
                PROVENANCE_PAGE,
                ANALYSIS_JSON,
                NUMBERS_JSON,
            ]
            .contains(&name.as_str())
                || (name.ends_with(".svg") && shown(&name))
            {
                self.file(&path, &meta);
            } else if name.ends_with(".svg") && meta.is_file() {
                self.leave_out(&path, "no page of its chapter shows it");
            } else if name == DATA_FOLDER {
                if self.folder(&path, &meta) {
                    self.data(&path)?;
                }
            } else {
                self.stray(&path, &meta);
            }
        }
        Ok(())
    }

    fn data(&mut self, dir: &Path) -> Result<()> {
        for (name, meta) in entries(dir)? {
            let path = dir.join(&name);
            if [RUNS, SAMPLES].contains(&name.as_str()) {
                self.file(&path, &meta);
            } else {
                self.stray(&path, &meta);
            }
        }
        Ok(())
    }

    /// Publishes `path` where render writes a file, when it is a regular one.
    fn file(&mut self, path: &Path, meta: &fs::Metadata) {
        if meta.is_file() {
            let relative = path.strip_prefix(self.book).unwrap_or(path).to_path_buf();
            self.selection.files.push(Chosen {
                relative,
                identity: Identity::of(meta),
            });
        } else {
            let kind = kind_of(&meta.file_type());
            self.leave_out(path, &format!("it is {kind}, not a regular file"));
        }
    }

    /// Whether `path`, where render writes a folder, is a real one to look into.
    fn folder(&mut self, path: &Path, meta: &fs::Metadata) -> bool {
        if !meta.is_dir() {
            let kind = kind_of(&meta.file_type());
            self.leave_out(path, &format!("it is {kind}, not a folder"));
        }
        meta.is_dir()
    }

    /// Names an entry render never writes.
    fn stray(&mut self, path: &Path, meta: &fs::Metadata) {
        if meta.is_symlink() {
            self.leave_out(path, "it is a symbolic link, and lab never follows one");
        } else if meta.is_dir() {
            let folder = format!("{}/", path.display());
            self.leave_out(Path::new(&folder), "lab did not write this folder");
        } else {
            self.leave_out(path, "lab did not write it");
        }
    }

    fn leave_out(&mut self, path: &Path, why: &str) {
        self.selection
            .left_out
            .push(format!("left {} out of the HTML: {why}", path.display()));
    }
}

/// The entries of `dir` with what each is (a link is a link, not what it points to), sorted
/// by name; a name that is not UTF-8 is kept as lossy text, which no file render writes has.
fn entries(dir: &Path) -> Result<Vec<(String, fs::Metadata)>> {
    let read = |e: std::io::Error| anyhow::anyhow!("cannot read {}: {e}", dir.display());
    let mut list = Vec::new();
    for entry in fs::read_dir(dir).map_err(read)? {
        let entry = entry.map_err(read)?;
        let meta = fs::symlink_metadata(entry.path()).map_err(read)?;
        list.push((entry.file_name().to_string_lossy().into_owned(), meta));
    }
    list.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(list)
}

/// The chapter folders SUMMARY.md links to: `- [Title](NAME/index.md)` and its History page.
fn summary_chapters(summary: &Path) -> BTreeSet<String> {
    read_text(summary)
        .unwrap_or_default()
        .lines()
        .filter_map(chapter_of)
        .map(str::to_string)
        .collect()
}

/// The chapter folder a SUMMARY.md line links into, if it links to a chapter's page.
fn chapter_of(line: &str) -> Option<&str> {
    let target = line.trim_end().strip_suffix(')')?.rsplit_once("](")?.1;
    let (name, page) = target.split_once('/')?;
    let folder = !name.is_empty() && name != "." && name != "..";
    (folder && [CHAPTER_PAGE, HISTORY_PAGE, BISECT_PAGE].contains(&page)).then_some(name)
}

/// The text of a regular file (not through a link), if it is one.
fn read_text(path: &Path) -> Option<String> {
    let mut bytes = Vec::new();
    open_regular(path).ok()?.read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A book as render writes it: one chapter `exp` with a chart its page shows.
    fn book() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let book = dir.path();
        fs::create_dir_all(book.join("src/exp/data")).unwrap();
        fs::create_dir_all(book.join("book")).unwrap();
        for file in ROOT_FILES {
            fs::write(book.join(file), "").unwrap();
        }
        for page in INDEX_PAGES {
            fs::write(book.join("src").join(page), "").unwrap();
        }
        fs::write(
            book.join("src/SUMMARY.md"),
            "# Summary\n\n- [A [title]](exp/index.md)\n",
        )
        .unwrap();
        fs::write(
            book.join("src/exp/index.md"),
            "<img src=\"v-runs.svg\" alt=\"\">\n",
        )
        .unwrap();
        for file in [
            "analysis.json",
            "v-runs.svg",
            "data/runs.csv",
            "data/samples.csv",
        ] {
            fs::write(book.join("src/exp").join(file), "").unwrap();
        }
        dir
    }

    fn published(selection: &Selection) -> Vec<String> {
        selection
            .files
            .iter()
            .map(|f| f.relative.display().to_string())
            .collect()
    }

    #[test]
    fn every_file_render_writes_is_published_and_nothing_is_left_out() {
        let dir = book();
        let selection = select(dir.path()).unwrap();
        assert_eq!(
            published(&selection),
            [
                "book.toml",
                "lab.css",
                "src/SUMMARY.md",
                "src/exp/analysis.json",
                "src/exp/data/runs.csv",
                "src/exp/data/samples.csv",
                "src/exp/index.md",
                "src/exp/v-runs.svg",
                "src/how-to-read.md",
                "src/introduction.md",
            ]
        );
        assert_eq!(selection.left_out, Vec::<String>::new());
    }

    #[test]
    fn planted_entries_are_named_and_not_published() {
        let dir = book();
        let book = dir.path();
        fs::write(book.join("src/evil.html"), "<script>").unwrap();
        fs::write(book.join("src/exp/unshown.svg"), "<svg>").unwrap();
        fs::create_dir_all(book.join("src/notes/deep")).unwrap();
        fs::write(book.join("src/notes/deep/x.md"), "").unwrap();
        fs::create_dir_all(book.join("theme")).unwrap();
        std::os::unix::fs::symlink("/etc", book.join("src/exp/data/etc")).unwrap();
        fs::remove_file(book.join("src/exp/analysis.json")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", book.join("src/exp/analysis.json")).unwrap();
        let selection = select(book).unwrap();
        let at = |p: &str| book.join(p).display().to_string();
        assert_eq!(
            selection.left_out,
            [
                format!(
                    "left {} out of the HTML: lab did not write it",
                    at("src/evil.html")
                ),
                format!(
                    "left {} out of the HTML: it is a symbolic link, not a regular file",
                    at("src/exp/analysis.json")
                ),
                format!(
                    "left {} out of the HTML: it is a symbolic link, and lab never follows one",
                    at("src/exp/data/etc")
                ),
                format!(
                    "left {} out of the HTML: no page of its chapter shows it",
                    at("src/exp/unshown.svg")
                ),
                format!(
                    "left {}/ out of the HTML: lab did not write this folder",
                    at("src/notes")
                ),
                format!(
                    "left {}/ out of the HTML: lab did not write this folder",
                    at("theme")
                ),
            ]
        );
        assert!(!published(&selection).contains(&"src/exp/analysis.json".to_string()));
        assert_eq!(published(&selection).len(), 9);
    }

    #[test]
    fn a_chapter_folder_that_is_a_link_is_not_looked_into() {
        let dir = book();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("index.md"), "outside").unwrap();
        let chapter = dir.path().join("src/exp");
        fs::remove_dir_all(&chapter).unwrap();
        std::os::unix::fs::symlink(outside.path(), &chapter).unwrap();
        let selection = select(dir.path()).unwrap();
        assert_eq!(
            selection.left_out,
            [format!(
                "left {} out of the HTML: it is a symbolic link, not a folder",
                chapter.display()
            )]
        );
        assert!(published(&selection).iter().all(|f| !f.contains("exp")));
    }

    #[test]
    fn a_src_folder_that_is_a_link_stops_the_build() {
        let dir = tempfile::tempdir().unwrap();
        let book = dir.path().join("book");
        fs::create_dir_all(&book).unwrap();
        std::os::unix::fs::symlink("/etc", book.join("src")).unwrap();
        let err = select(&book).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{} is a symbolic link, not the folder lab writes the book in\n  hint: move it aside and run `lab book` again",
                book.join("src").display()
            )
        );
    }

    #[test]
    fn chapters_are_the_folders_summary_links_into() {
        assert_eq!(chapter_of("- [A](exp/index.md)"), Some("exp"));
        assert_eq!(chapter_of("  - [History](exp/history.md)  "), Some("exp"));
        assert_eq!(chapter_of("[Introduction](introduction.md)"), None);
        assert_eq!(chapter_of("- [A](../index.md)"), None);
        assert_eq!(chapter_of("- [A](exp/other.md)"), None);
        assert_eq!(chapter_of("- [A](a/b/index.md)"), None);
        assert_eq!(chapter_of("- [A](/index.md)"), None);
    }
}
