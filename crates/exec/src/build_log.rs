//! The build's output, stdout and stderr interleaved as they came, written to a file in the
//! experiment folder rather than held in memory, and its end read back in bounded memory: a
//! failing build that printed 100,000 lines shows its last lines, says how many were cut and
//! where all of them are, and cannot flood the terminal or the error.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Where the output of the latest build is kept, in the experiment folder.
pub(crate) const LOG_FILE: &str = ".lab-build.log";
/// The most lines of a failing build's output an error shows.
pub(crate) const TAIL_LINES: usize = 40;
/// The most bytes of a failing build's output an error shows.
pub(crate) const TAIL_BYTES: u64 = 8 * 1024;

/// A new, empty build log in `dir` (whatever was at its name is removed first, so that the
/// build never writes through a link left there).
pub(crate) fn create(dir: &Path) -> std::io::Result<(PathBuf, File)> {
    let path = dir.join(LOG_FILE);
    lab_store::remove_planted(&path)?;
    let file = File::options().write(true).create_new(true).open(&path)?;
    Ok((path, file))
}

/// The end of a build's output as an error shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tail {
    /// The last whole lines, at most [`TAIL_LINES`] and [`TAIL_BYTES`]; or the end of the
    /// last line after `…` when that line alone is longer.
    pub text: String,
    /// How many lines the whole output has.
    pub lines: usize,
    /// How many of them `text` shows.
    pub shown: usize,
    /// Whether `text` is the end of one line too long to show whole.
    pub partial: bool,
    /// The file holding the whole output.
    pub path: PathBuf,
}

impl std::fmt::Display for Tail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        if self.lines == 0 {
            f.write_str("it printed nothing")
        } else if self.partial {
            write!(
                f,
                "the last {} KiB of its {} lines (the whole output is in {path}):\n{}",
                TAIL_BYTES / 1024,
                self.lines,
                self.text
            )
        } else if self.shown < self.lines {
            write!(
                f,
                "its last {} lines ({} lines before them cut; the whole output is in {path}):\n{}",
                self.shown,
                self.lines - self.shown,
                self.text
            )
        } else {
            write!(f, "its output:\n{}", self.text)
        }
    }
}

/// The tail of the output kept at `path`; an unreadable file reads as empty.
pub(crate) fn tail(path: &Path) -> Tail {
    let lines = count_lines(path);
    let (end, cut) = last_bytes(path);
    let text = String::from_utf8_lossy(&end);
    let text = text.trim_end_matches(['\n', '\r']);
    let mut all: Vec<&str> = text.split('\n').collect();
    let partial = cut && all.len() == 1;
    if cut && !partial {
        // The first line starts before the bytes read: only whole lines are shown.
        all.remove(0);
    }
    let kept: Vec<&str> = all[all.len().saturating_sub(TAIL_LINES)..]
        .iter()
        .map(|l| l.trim_end_matches('\r'))
        .collect();
    let shown = if text.is_empty() { 0 } else { kept.len() };
    Tail {
        text: if partial {
            format!("…{}", kept.concat())
        } else {
            kept.join("\n")
        },
        lines,
        shown,
        partial,
        path: path.to_path_buf(),
    }
}

/// How many lines the file has, a last line without its break counted.
fn count_lines(path: &Path) -> usize {
    let Ok(file) = File::open(path) else {
        return 0;
    };
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let (mut lines, mut last) = (0, b'\n');
    loop {
        let chunk = match reader.fill_buf() {
            Ok([]) | Err(_) => break,
            Ok(chunk) => chunk,
        };
        lines += chunk.iter().filter(|&&b| b == b'\n').count();
        last = chunk[chunk.len() - 1];
        let used = chunk.len();
        reader.consume(used);
    }
    lines + usize::from(last != b'\n')
}

/// The last [`TAIL_BYTES`] bytes of the file (all of it when shorter), and whether there
/// was more before them.
fn last_bytes(path: &Path) -> (Vec<u8>, bool) {
    let mut end = Vec::new();
    let Ok(mut file) = File::open(path) else {
        return (end, false);
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let from = len.saturating_sub(TAIL_BYTES);
    if file.seek(SeekFrom::Start(from)).is_ok() {
        let _ = file.take(TAIL_BYTES).read_to_end(&mut end);
    }
    (end, from > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tail_of(bytes: &[u8]) -> Tail {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = create(dir.path()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        tail(&path)
    }

    #[test]
    fn a_short_output_is_shown_whole() {
        let t = tail_of(b"compiling\r\nerror: x\n");
        assert_eq!((t.lines, t.shown), (2, 2));
        assert!(
            t.to_string()
                .starts_with("its output:\ncompiling\nerror: x")
        );
        assert_eq!(tail_of(b"").to_string(), "it printed nothing");
        assert_eq!(tail_of(b"no break").text, "no break");
    }

    #[test]
    fn a_long_output_is_cut_to_its_last_lines_saying_where_the_rest_is() {
        let text: String = (1..=100_000).map(|i| format!("line {i}\n")).collect();
        let t = tail_of(text.as_bytes());
        assert_eq!((t.lines, t.shown), (100_000, TAIL_LINES));
        assert!(t.text.starts_with("line 99961\n"), "{}", t.text);
        assert!(t.text.ends_with("line 100000"));
        assert!(
            t.to_string().starts_with(&format!(
                "its last 40 lines (99960 lines before them cut; the whole output is in {}):\nline 99961\n",
                t.path.display()
            )),
            "{t}"
        );
        // Long lines: as many whole ones as fit in the bytes shown.
        let text: String = (1..=100).map(|i| format!("{i:0>999}\n")).collect();
        let t = tail_of(text.as_bytes());
        assert_eq!((t.lines, t.shown), (100, 8));
        assert!(t.text.starts_with(&format!("{:0>999}\n", 93)));
    }

    #[test]
    fn one_endless_line_is_cut_to_its_last_bytes() {
        let t = tail_of(&vec![b'x'; 1_000_000]);
        assert_eq!((t.lines, t.shown, t.partial), (1, 1, true));
        assert_eq!(t.text.chars().count(), TAIL_BYTES as usize + 1);
        assert!(t.text.starts_with("…x"));
        assert!(t.to_string().starts_with("the last 8 KiB of its 1 lines"));
    }
}
