//! `lab import lab`'s reading side: a bundle verified member by member into a staging folder,
//! refusing anything it did not expect before it is written. What the index claims is judged
//! first (names, sizes, totals, the room on disk); then each member must be the next one the
//! index lists, a regular file of the size listed, whose bytes have the listed SHA-256; then
//! the session itself must read back whole, sealed and with every run's output as its row
//! recorded it. The caller removes the staging folder whatever the outcome, unless it moves
//! it into place.

use super::archive::{self, ArchiveError, Kind};
use super::write::Hashing;
use super::{
    INDEX, Index, MAX_INDEX_BYTES, MAX_MEMBER_BYTES, MAX_MEMBERS, MAX_TOTAL_BYTES, Member,
    REQUIRED_FILES, path_problem, size_words,
};
use anyhow::{Result, anyhow, bail};
use lab_store::{self as store, StoredSession, Stream};
use std::collections::BTreeSet;
use std::fs;
use std::io::{BufReader, Read};
use std::path::Path;

/// A bundle that verified, staged as a session folder.
#[derive(Debug)]
pub struct Received {
    pub index: Index,
    /// SHA-256 of the index: it names every member's digest, so it names the bundle's content.
    pub index_sha256: String,
    /// The staged session, read back as any stored session is.
    pub session: StoredSession,
}

/// Reads the bundle at `bundle` into the new folder `staging` and verifies it; an error
/// saying why it was refused. `staging` may be left part-written on error.
pub fn receive(bundle: &Path, staging: &Path) -> Result<Received> {
    let file =
        fs::File::open(bundle).map_err(|e| anyhow!("cannot read {}: {e}", bundle.display()))?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        bail!("{} is not a file", bundle.display());
    }
    let mut reader = archive::Reader::new(BufReader::new(file));
    let (index, index_sha256) = read_index(&mut reader)?;
    check_index(&index)?;
    check_room(staging, &index)?;
    fs::create_dir(staging).map_err(|e| anyhow!("cannot create {}: {e}", staging.display()))?;
    for (n, member) in index.members.iter().enumerate() {
        read_member(&mut reader, staging, member, n + 2)?;
    }
    if let Some(extra) = reader.next_header().map_err(archive_error)? {
        bail!(
            "member {} is not listed in the bundle's index: a bundle holds only what its index lists",
            shown(&extra.path)
        );
    }
    let session = verified_session(staging)?;
    Ok(Received {
        index,
        index_sha256,
        session,
    })
}

/// An archive error as the reason a bundle is refused.
fn archive_error(e: ArchiveError) -> anyhow::Error {
    anyhow!("{e}")
}

/// A member's path as a message shows it: quoted, control characters escaped.
fn shown(path: &str) -> String {
    format!("{path:?}")
}

/// The first member, the index: a regular file named bundle.json, of a bounded size, that
/// parses as an index of this lab's format and version.
fn read_index<R: Read>(reader: &mut archive::Reader<R>) -> Result<(Index, String)> {
    let Some(header) = reader.next_header().map_err(archive_error)? else {
        bail!("the archive is empty: it holds no {INDEX}");
    };
    if header.path != INDEX || header.kind != Kind::File {
        bail!(
            "the first member is {} ({}), not the index {INDEX}: this is not a bundle `lab bundle` wrote",
            shown(&header.path),
            header.kind.words()
        );
    }
    if header.size > MAX_INDEX_BYTES {
        bail!(
            "{INDEX} claims {}, over the {} an index may hold",
            size_words(header.size),
            size_words(MAX_INDEX_BYTES)
        );
    }
    let mut text = Vec::new();
    reader
        .copy_data(header.size, &mut text, INDEX)
        .map_err(archive_error)?;
    let index: Index = serde_json::from_slice(&text).map_err(|e| {
        anyhow!(
            "{INDEX}, line {}, column {}: {e}\n  hint: the index must be the one `lab bundle` wrote",
            e.line(),
            e.column()
        )
    })?;
    if index.format != super::FORMAT || index.version != super::VERSION {
        bail!(
            "{INDEX}: format {:?} version {}, where this lab reads {:?} version {}\n  hint: bundle the session with the same lab version",
            index.format,
            index.version,
            super::FORMAT,
            super::VERSION
        );
    }
    Ok((index, store::sha256_hex(&text)))
}

/// What the index claims, judged before anything is written: names lab writes, each once,
/// sizes within the caps, digests that are SHA-256s, and the files every session has.
fn check_index(index: &Index) -> Result<()> {
    if let Some(why) = lab_config::identifier_problem(&index.experiment) {
        bail!("{INDEX}: the experiment name {:?} {why}", index.experiment);
    }
    if let Some(why) = session_name_problem(&index.session) {
        bail!("{INDEX}: the session name {:?} {why}", index.session);
    }
    if index.members.len() > MAX_MEMBERS {
        bail!(
            "{INDEX} lists {} members, over the {MAX_MEMBERS} a bundle may hold",
            index.members.len()
        );
    }
    let mut seen = BTreeSet::new();
    let mut total = 0u64;
    for m in &index.members {
        check_listed_member(m)?;
        if !seen.insert(m.path.as_str()) {
            bail!("{INDEX} lists member {} twice", shown(&m.path));
        }
        total = total.saturating_add(m.bytes);
    }
    if total > MAX_TOTAL_BYTES {
        bail!(
            "the members claim {} in all, over the {} a bundle may hold",
            size_words(total),
            size_words(MAX_TOTAL_BYTES)
        );
    }
    if let Some(missing) = REQUIRED_FILES.iter().find(|f| !seen.contains(**f)) {
        bail!("{INDEX} lists no {missing}: every session has one");
    }
    Ok(())
}

/// One listed member: a name lab writes, a size within the cap, a SHA-256 in hex.
fn check_listed_member(m: &Member) -> Result<()> {
    if let Some(why) = path_problem(&m.path) {
        bail!("member {} {why}", shown(&m.path));
    }
    if m.bytes > MAX_MEMBER_BYTES {
        bail!(
            "member {} claims {}, over the {} a member may hold",
            m.path,
            size_words(m.bytes),
            size_words(MAX_MEMBER_BYTES)
        );
    }
    let hex = m.sha256.len() == 64 && m.sha256.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex || m.sha256.bytes().any(|b| b.is_ascii_uppercase()) {
        bail!("{INDEX}: the digest of {} is not a SHA-256 in hex", m.path);
    }
    Ok(())
}

/// Why `name` cannot be a session folder's name; `None` when it can.
fn session_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() || name.len() > 128 {
        return Some("is empty or longer than 128 characters");
    }
    if name.starts_with('.') {
        return Some("starts with `.`");
    }
    let plain = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    (!plain).then_some("holds characters other than letters, digits, `-`, `_` and `.`")
}

/// The members must fit on the disk holding `staging`, with room to spare.
fn check_room(staging: &Path, index: &Index) -> Result<()> {
    let total: u64 = index.members.iter().map(|m| m.bytes).sum();
    let parent = staging.parent().unwrap_or(Path::new("."));
    match store::space::free_bytes(parent) {
        Some(free) if free < total.saturating_add(1 << 20) => bail!(
            "the bundle's {} do not fit in the {} free under {}\n  hint: make room, then import it again",
            size_words(total),
            size_words(free),
            parent.display()
        ),
        _ => Ok(()),
    }
}

/// The next member, which must be `expected`: a regular file of its listed size whose bytes
/// have its listed digest, written to its place under `staging`.
fn read_member<R: Read>(
    reader: &mut archive::Reader<R>,
    staging: &Path,
    expected: &Member,
    number: usize,
) -> Result<()> {
    let Some(header) = reader.next_header().map_err(archive_error)? else {
        bail!(
            "the archive ends before member {}, which its index lists: the bundle is truncated\n  hint: copy the whole file again",
            expected.path
        );
    };
    check_header(&header, expected, number)?;
    let target = staging.join(&expected.path);
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent)?;
    }
    let file = fs::File::options()
        .write(true)
        .create_new(true)
        .open(&target)
        .map_err(|e| anyhow!("cannot create {}: {e}", target.display()))?;
    let mut out = Hashing::new(std::io::BufWriter::new(file));
    reader
        .copy_data(header.size, &mut out, &expected.path)
        .map_err(archive_error)?;
    let now = out.hex();
    if now != expected.sha256 {
        bail!(
            "member {} does not match its digest: its SHA-256 is {}, the index lists {}\n  hint: the bundle was changed or damaged on its way; ask for it again",
            expected.path,
            &now[..12],
            &expected.sha256[..12]
        );
    }
    Ok(())
}

/// The member's header must name a regular file at a safe path, the one the index lists
/// next, of its listed size.
fn check_header(header: &archive::Header, expected: &Member, number: usize) -> Result<()> {
    if let Some(why) = path_problem(&header.path) {
        bail!("member {number}, {}, {why}", shown(&header.path));
    }
    if header.kind != Kind::File {
        let is_link = matches!(header.kind, Kind::Symlink | Kind::HardLink);
        let to = if header.link.is_empty() || !is_link {
            String::new()
        } else {
            format!(" to {}", shown(&header.link))
        };
        bail!(
            "member {} is {}{to}: a bundle holds regular files only",
            header.path,
            header.kind.words()
        );
    }
    if header.path != expected.path {
        bail!(
            "member {number} is {} where the index lists {}: the bundle is not in the order `lab bundle` writes",
            header.path,
            expected.path
        );
    }
    if header.size != expected.bytes {
        bail!(
            "member {} claims {} where the index lists {}",
            header.path,
            size_words(header.size),
            size_words(expected.bytes)
        );
    }
    Ok(())
}

/// The staged folder read back as a session: rows that parse, with no torn tail, every file
/// the session was sealed with unchanged, and every run's output as its row recorded it.
fn verified_session(staging: &Path) -> Result<StoredSession> {
    let session = store::load_session(staging).map_err(|e| anyhow!("{e:#}"))?;
    if let Some(why) = &session.manifest.damaged {
        bail!("the session in the bundle does not hold its seal: {why}");
    }
    if let Some(tail) = session.tails.first() {
        bail!(
            "the session in the bundle has bytes after its last whole row: {}",
            tail.describe()
        );
    }
    for row in &session.runs {
        check_run_output(
            &session,
            row,
            Stream::Stdout,
            Some(row.stdout_sha256.as_str()),
        )?;
        check_run_output(&session, row, Stream::Stderr, row.stderr_sha256.as_deref())?;
    }
    Ok(session)
}

/// A run's output on `stream` must have the SHA-256 its row recorded (when it recorded one).
fn check_run_output(
    session: &StoredSession,
    row: &store::RunRow,
    stream: Stream,
    recorded: Option<&str>,
) -> Result<()> {
    let Some(recorded) = recorded.filter(|d| d.len() == 64) else {
        return Ok(());
    };
    let log = store::log_ref(&session.dir, row, stream);
    let now = store::sha256_hex(&log.read_all());
    if now != recorded {
        bail!(
            "the output of run {} on {} is not what the run wrote (its row records SHA-256 {}, the bundle holds {})",
            row.run_id,
            if stream == Stream::Stdout {
                "stdout"
            } else {
                "stderr"
            },
            &recorded[..12],
            &now[..12]
        );
    }
    Ok(())
}
