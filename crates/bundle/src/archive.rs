//! The container of a bundle: a POSIX ustar archive (IEEE Std 1003.1-2001, "pax interchange
//! format", its ustar header), written deterministically and read as hostile input.
//!
//! Written: regular files only, in the order given, mode 0644, owner 0, time 0, no user or
//! group names, each padded to 512 bytes, two zero blocks and zero padding to a multiple of
//! 10,240 bytes (the record size `tar` itself writes), so `tar tvf` lists a bundle and the same
//! files give the same bytes. Read: one header at a time, its checksum verified, and anything
//! but a regular file (a link, a device, a folder, a FIFO, a pax or GNU extension header)
//! refused with what it is; a member's data is never read here, only its claimed size, so the
//! caller can refuse a size before a byte is written anywhere.

use std::io::{self, Read, Write};

/// The size of a header and the unit of every member's data.
pub const BLOCK: usize = 512;
/// Archives are padded to a multiple of this many bytes, as `tar` pads them.
const RECORD: u64 = 20 * BLOCK as u64;
/// The longest name the header's name field holds (lab writes no prefix field).
pub const MAX_NAME: usize = 100;

/// Why an archive cannot be read: each names what is wrong at which member.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("the file ends inside {0}: the bundle is truncated\n  hint: copy the whole file again")]
    Truncated(String),
    #[error("{0}")]
    Malformed(String),
    #[error("cannot read the bundle: {0}")]
    Io(#[from] io::Error),
}

/// What a member is, from its header's type flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    HardLink,
    Symlink,
    CharDevice,
    BlockDevice,
    Folder,
    Fifo,
    /// A pax or GNU header that would change how the next member is read.
    Extension,
    Other(u8),
}

impl Kind {
    fn of(flag: u8) -> Kind {
        match flag {
            b'0' | 0 => Kind::File,
            b'1' => Kind::HardLink,
            b'2' => Kind::Symlink,
            b'3' => Kind::CharDevice,
            b'4' => Kind::BlockDevice,
            b'5' => Kind::Folder,
            b'6' => Kind::Fifo,
            b'x' | b'g' | b'L' | b'K' => Kind::Extension,
            other => Kind::Other(other),
        }
    }

    /// What it is, in words: "a symbolic link", "a hard link".
    pub fn words(self) -> String {
        match self {
            Kind::File => "a regular file".into(),
            Kind::HardLink => "a hard link".into(),
            Kind::Symlink => "a symbolic link".into(),
            Kind::CharDevice => "a character device".into(),
            Kind::BlockDevice => "a block device".into(),
            Kind::Folder => "a folder".into(),
            Kind::Fifo => "a FIFO".into(),
            Kind::Extension => "an extended header (pax or GNU)".into(),
            Kind::Other(flag) => format!("an entry of unknown type {:?}", flag as char),
        }
    }
}

/// A member's header, read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The path as the header spells it (prefix and name joined), lossily decoded.
    pub path: String,
    pub kind: Kind,
    /// The size the header claims; the data that follows is this long, padded to a block.
    pub size: u64,
    /// Where a link points, for a link.
    pub link: String,
}

/// Writes `files` as a deterministic archive: same names and bytes, same archive.
pub fn write_archive<W: Write>(out: &mut W, files: &[(&str, &[u8])]) -> io::Result<u64> {
    let mut written = 0u64;
    for (name, bytes) in files {
        written += write_member(out, name, bytes.len() as u64, &mut &bytes[..])?;
    }
    finish_archive(out, written)
}

/// Writes one regular file of `size` bytes read from `data`; the bytes it took in the archive.
/// An error when `data` holds fewer or more bytes than `size`.
pub fn write_member<W: Write, R: Read>(
    out: &mut W,
    name: &str,
    size: u64,
    data: &mut R,
) -> io::Result<u64> {
    out.write_all(&file_header(name, size)?)?;
    let copied = io::copy(&mut data.take(size), out)?;
    let mut extra = [0u8; 1];
    if copied != size || data.read(&mut extra)? != 0 {
        return Err(io::Error::other(format!(
            "{name} changed while it was written: {copied} bytes where {size} were expected"
        )));
    }
    let pad = padding(size);
    out.write_all(&vec![0u8; pad as usize])?;
    Ok(BLOCK as u64 + size + pad)
}

/// Ends an archive of `written` bytes: two zero blocks, then zeros to a whole record. The
/// archive's total size.
pub fn finish_archive<W: Write>(out: &mut W, written: u64) -> io::Result<u64> {
    let end = 2 * BLOCK as u64;
    let total = (written + end).div_ceil(RECORD) * RECORD;
    out.write_all(&vec![0u8; (total - written) as usize])?;
    Ok(total)
}

/// The zero bytes after `size` bytes of data up to the next block.
pub fn padding(size: u64) -> u64 {
    (BLOCK as u64 - size % BLOCK as u64) % BLOCK as u64
}

/// The ustar header of a regular file `name` of `size` bytes, owned by no one, at time 0.
pub fn file_header(name: &str, size: u64) -> io::Result<[u8; BLOCK]> {
    if name.len() > MAX_NAME || name.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} does not fit a ustar name"),
        ));
    }
    let mut h = [0u8; BLOCK];
    h[..name.len()].copy_from_slice(name.as_bytes());
    octal(&mut h[100..108], 0o644);
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    octal(&mut h[124..136], size);
    octal(&mut h[136..148], 0);
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    seal_checksum(&mut h);
    Ok(h)
}

/// Writes the header's checksum: the sum of its bytes with the checksum field as spaces.
pub fn seal_checksum(h: &mut [u8; BLOCK]) {
    h[148..156].copy_from_slice(b"        ");
    let sum: u64 = h.iter().map(|&b| u64::from(b)).sum();
    let text = format!("{sum:06o}\0 ");
    h[148..156].copy_from_slice(text.as_bytes());
}

/// `value` in octal, zero-padded, NUL-terminated, filling `field`.
fn octal(field: &mut [u8], value: u64) {
    let digits = field.len() - 1;
    let text = format!("{value:0digits$o}");
    field[..digits].copy_from_slice(&text.as_bytes()[text.len() - digits..]);
    field[digits] = 0;
}

/// Reads archive headers one at a time; the caller reads (or skips) each member's data.
pub struct Reader<R: Read> {
    inner: R,
    /// Members read so far, for messages.
    count: usize,
}

impl<R: Read> Reader<R> {
    pub fn new(inner: R) -> Self {
        Reader { inner, count: 0 }
    }

    /// The next member's header, or `None` at the end-of-archive blocks (after which only
    /// zero bytes may follow).
    pub fn next_header(&mut self) -> Result<Option<Header>, ArchiveError> {
        let mut block = [0u8; BLOCK];
        let what = format!("the header of member {}", self.count + 1);
        if !read_full(&mut self.inner, &mut block)? {
            return Err(ArchiveError::Truncated(what));
        }
        if block.iter().all(|&b| b == 0) {
            self.rest_is_zeros()?;
            return Ok(None);
        }
        self.count += 1;
        parse_header(&block, self.count).map(Some)
    }

    /// The `size` bytes of the current member's data, copied to `out`, then its padding.
    pub fn copy_data<W: Write>(
        &mut self,
        size: u64,
        out: &mut W,
        member: &str,
    ) -> Result<(), ArchiveError> {
        let mut limited = (&mut self.inner).take(size);
        let copied = io::copy(&mut limited, out)?;
        if copied < size {
            return Err(ArchiveError::Truncated(format!("member {member}")));
        }
        let mut pad = vec![0u8; padding(size) as usize];
        if !read_full(&mut self.inner, &mut pad)? {
            return Err(ArchiveError::Truncated(format!("the padding of {member}")));
        }
        Ok(())
    }

    /// After the first zero block: a second one, then nothing but zero padding.
    fn rest_is_zeros(&mut self) -> Result<(), ArchiveError> {
        let mut block = [0u8; BLOCK];
        if !read_full(&mut self.inner, &mut block)? {
            return Err(ArchiveError::Truncated("the end-of-archive blocks".into()));
        }
        let mut rest = Vec::new();
        (&mut self.inner).take(RECORD + 1).read_to_end(&mut rest)?;
        if block.iter().chain(&rest).any(|&b| b != 0) || rest.len() as u64 > RECORD {
            return Err(ArchiveError::Malformed(
                "bytes follow the end of the archive: this is not the file `lab bundle` wrote\n  hint: ask for the bundle again".into(),
            ));
        }
        Ok(())
    }
}

/// Fills `buf` whole; false when the input ends first (having read something or nothing).
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<bool> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => return Ok(false),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// A header block checked: its checksum, its magic, a size in octal.
fn parse_header(h: &[u8; BLOCK], number: usize) -> Result<Header, ArchiveError> {
    let bad = |why: String| ArchiveError::Malformed(format!("member {number}: {why}"));
    let stored = field_text(&h[148..156]);
    let mut blank = *h;
    blank[148..156].copy_from_slice(b"        ");
    let sum: u64 = blank.iter().map(|&b| u64::from(b)).sum();
    if u64::from_str_radix(stored.trim(), 8).ok() != Some(sum) {
        return Err(bad(
            "its header's checksum does not hold: the bundle is damaged or not a tar archive"
                .into(),
        ));
    }
    if &h[257..263] != b"ustar\0" {
        return Err(bad(
            "its header is not a POSIX ustar header: lab reads only the archives `lab bundle` writes".into(),
        ));
    }
    if h[124] & 0x80 != 0 {
        return Err(bad(
            "it claims a size in base-256, larger than 8 GiB: refused".into(),
        ));
    }
    let size_text = field_text(&h[124..136]);
    let size = u64::from_str_radix(size_text.trim(), 8)
        .map_err(|_| bad(format!("its size {size_text:?} is not an octal number")))?;
    let name = field_text(&h[0..100]);
    let prefix = field_text(&h[345..500]);
    let path = if prefix.is_empty() {
        name
    } else {
        format!("{prefix}/{name}")
    };
    Ok(Header {
        path,
        kind: Kind::of(h[156]),
        size,
        link: field_text(&h[157..257]),
    })
}

/// A header field up to its first NUL, lossily decoded.
fn field_text(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_archive_is_padded_to_whole_records_and_reads_back() {
        let mut out = Vec::new();
        let total =
            write_archive(&mut out, &[("a.txt", &b"hello"[..]), ("b/c", &b""[..])]).unwrap();
        assert_eq!(total, 10_240);
        assert_eq!(out.len(), 10_240);
        let mut r = Reader::new(out.as_slice());
        let a = r.next_header().unwrap().unwrap();
        assert_eq!((a.path.as_str(), a.kind, a.size), ("a.txt", Kind::File, 5));
        let mut data = Vec::new();
        r.copy_data(a.size, &mut data, "a.txt").unwrap();
        assert_eq!(data, b"hello");
        let b = r.next_header().unwrap().unwrap();
        assert_eq!((b.path.as_str(), b.size), ("b/c", 0));
        r.copy_data(0, &mut data, "b/c").unwrap();
        assert_eq!(r.next_header().unwrap(), None);
    }

    #[test]
    fn the_header_matches_what_tar_writes_for_the_same_fields() {
        let h = file_header("runs.csv", 1234).unwrap();
        assert_eq!(&h[124..136], b"00000002322\0");
        assert_eq!(&h[100..108], b"0000644\0");
        assert_eq!(&h[257..265], b"ustar\x0000");
        // 6 octal digits, NUL, space: the layout GNU tar and POSIX use.
        assert_eq!((h[154], h[155]), (0, b' '));
    }

    #[test]
    fn a_damaged_header_is_refused_by_its_checksum() {
        let mut out = Vec::new();
        write_archive(&mut out, &[("a", &b"x"[..])]).unwrap();
        out[0] = b'b';
        let err = Reader::new(out.as_slice()).next_header().unwrap_err();
        assert!(err.to_string().contains("checksum does not hold"), "{err}");
    }
}
