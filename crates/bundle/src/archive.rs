//! The container of a bundle: a POSIX ustar archive (IEEE Std 1003.1-2001, "pax interchange
//! format", its ustar header), written deterministically and read as hostile input. The `tar`
//! crate writes and parses the headers; what it leaves open is kept here, each with why.
//!
//! Written: regular files only, in the order given, mode 0644, owner 0, time 0, no user or
//! group names, each padded to 512 bytes, two zero blocks and zero padding to a multiple of
//! 10,240 bytes (the record size `tar` itself writes), so `tar tvf` lists a bundle and the same
//! files give the same bytes. Read: one header at a time, its checksum verified, and anything
//! but a regular file (a link, a device, a folder, a FIFO, a pax or GNU extension header)
//! refused with what it is; a member's data is never read here, only its claimed size, so the
//! caller can refuse a size before a byte is written anywhere.

use std::io::{self, Read, Write};
use tar::EntryType;

/// The size of a header and the unit of every member's data.
const BLOCK: u64 = 512;
/// Archives are padded to a multiple of this many bytes, as `tar` pads them.
const RECORD: u64 = 20 * BLOCK;

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
    fn of(entry: EntryType) -> Kind {
        match entry {
            EntryType::Regular => Kind::File,
            EntryType::Link => Kind::HardLink,
            EntryType::Symlink => Kind::Symlink,
            EntryType::Char => Kind::CharDevice,
            EntryType::Block => Kind::BlockDevice,
            EntryType::Directory => Kind::Folder,
            EntryType::Fifo => Kind::Fifo,
            EntryType::XHeader
            | EntryType::XGlobalHeader
            | EntryType::GNULongName
            | EntryType::GNULongLink => Kind::Extension,
            other => Kind::Other(other.as_byte()),
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

/// Writes regular files one after another as a deterministic archive: same names and bytes,
/// same archive.
pub struct Writer<W: Write> {
    builder: tar::Builder<W>,
    /// Bytes written so far, headers and padding included.
    written: u64,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W) -> Self {
        Writer {
            builder: tar::Builder::new(out),
            written: 0,
        }
    }

    /// Appends the regular file `name` of `size` bytes read from `data`. An error when `data`
    /// holds fewer or more bytes than `size`: `tar::Builder::append` copies whatever the
    /// reader gives, whatever the header says, so the count is checked here.
    pub fn append<R: Read>(&mut self, name: &str, size: u64, data: &mut R) -> io::Result<()> {
        let mut header = tar::Header::new_ustar();
        header.set_path(name)?;
        header.set_entry_type(EntryType::Regular);
        header.set_size(size);
        header.set_mode(0o644);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        header.set_cksum();
        let mut limited = data.by_ref().take(size);
        self.builder.append(&header, &mut limited)?;
        let left = limited.limit();
        if left == 0 && data.read(&mut [0u8; 1])? == 0 {
            self.written += BLOCK + size.div_ceil(BLOCK) * BLOCK;
            return Ok(());
        }
        let got = match left {
            0 => format!("more than {size} bytes"),
            _ => format!("{} bytes", size - left),
        };
        Err(io::Error::other(format!(
            "{name} changed while it was written: {got} where {size} were expected"
        )))
    }

    /// Ends the archive: the two zero blocks `tar::Builder` writes, then zeros to a whole
    /// record, which the builder does not write. The output and the archive's total size.
    pub fn finish(self) -> io::Result<(W, u64)> {
        let end = self.written + 2 * BLOCK;
        let total = end.div_ceil(RECORD) * RECORD;
        let mut out = self.builder.into_inner()?;
        out.write_all(&vec![0u8; (total - end) as usize])?;
        Ok((out, total))
    }
}

/// Reads archive headers one at a time; the caller reads (or skips) each member's data.
///
/// Blocks are read here rather than by `tar::Archive::entries`, which in tar 0.4.46 ends the
/// archive at the first zero block or at the end of the input, whichever comes first
/// (src/archive.rs, `next_entry_raw`): a file cut at a member's end would read as a whole
/// archive, and bytes after the end would go unread. Its entries also borrow the
/// `tar::Archive`, so they could not live in one `Reader` beside the input it owns. Each block
/// is parsed by `tar::Header`.
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
        let mut block = tar::Header::new_old();
        let what = format!("the header of member {}", self.count + 1);
        if !read_full(&mut self.inner, block.as_mut_bytes())? {
            return Err(ArchiveError::Truncated(what));
        }
        if block.as_bytes().iter().all(|&b| b == 0) {
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
        let mut pad = vec![0u8; (size.div_ceil(BLOCK) * BLOCK - size) as usize];
        if !read_full(&mut self.inner, &mut pad)? {
            return Err(ArchiveError::Truncated(format!("the padding of {member}")));
        }
        Ok(())
    }

    /// After the first zero block: a second one, then nothing but zero padding.
    fn rest_is_zeros(&mut self) -> Result<(), ArchiveError> {
        let mut block = [0u8; BLOCK as usize];
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
fn parse_header(h: &tar::Header, number: usize) -> Result<Header, ArchiveError> {
    let bad = |why: String| ArchiveError::Malformed(format!("member {number}: {why}"));
    // The sum of the header's bytes with the checksum field read as spaces. `tar::Header`
    // reads the stored checksum but compares it only inside `tar::Archive::entries`.
    let bytes = h.as_bytes();
    let sum: u32 = bytes[..148]
        .iter()
        .chain(&bytes[156..])
        .map(|&b| u32::from(b))
        .sum();
    if h.cksum().ok() != Some(sum + 8 * u32::from(b' ')) {
        return Err(bad(
            "its header's checksum does not hold: the bundle is damaged or not a tar archive"
                .into(),
        ));
    }
    if h.as_ustar().is_none() {
        return Err(bad(
            "its header is not a POSIX ustar header: lab reads only the archives `lab bundle` writes".into(),
        ));
    }
    // tar 0.4.46 reads a base-256 size from the field's last 8 bytes only (src/header.rs,
    // `numeric_extended_from`), so a size past 2^64 would read as a smaller one than `tar`
    // itself sees; lab never writes one (it is for members over 8 GiB).
    if h.as_old().size[0] & 0x80 != 0 {
        return Err(bad(
            "it claims a size in base-256, larger than 8 GiB: refused".into(),
        ));
    }
    let size = h
        .entry_size()
        .map_err(|e| bad(format!("its size is not an octal number ({e})")))?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Ok(Header {
        path: text(&h.path_bytes()),
        kind: Kind::of(h.entry_type()),
        size,
        link: h.link_name_bytes().map(|b| text(&b)).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `files` as an archive, as `lab bundle` writes one.
    fn write_archive(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut w = Writer::new(Vec::new());
        for (name, bytes) in files {
            w.append(name, bytes.len() as u64, &mut &bytes[..]).unwrap();
        }
        let (out, total) = w.finish().unwrap();
        assert_eq!(total, out.len() as u64);
        out
    }

    /// `archive` with its first header changed by `change`, its checksum resealed.
    fn changed(mut archive: Vec<u8>, change: impl FnOnce(&mut [u8])) -> Vec<u8> {
        change(&mut archive[..512]);
        let mut header = tar::Header::from_byte_slice(&archive[..512]).clone();
        header.set_cksum();
        archive[..512].copy_from_slice(header.as_bytes());
        archive
    }

    #[test]
    fn an_archive_is_padded_to_whole_records_and_reads_back() {
        let out = write_archive(&[("a.txt", &b"hello"[..]), ("b/c", &b""[..])]);
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
        let big = vec![7u8; 10_000];
        assert_eq!(write_archive(&[("big", &big)]).len(), 20_480);
    }

    #[test]
    fn the_header_holds_only_the_name_the_size_and_fixed_fields() {
        let out = write_archive(&[("runs.csv", &[b'x'; 1234][..])]);
        let h = &out[..512];
        assert_eq!(&h[..9], b"runs.csv\0");
        assert_eq!(&h[100..108], b"0000644\0");
        assert_eq!(
            (&h[108..116], &h[116..124]),
            (&b"0000000\0"[..], &b"0000000\0"[..])
        );
        assert_eq!(&h[124..136], b"00000002322\0");
        assert_eq!(&h[136..148], b"00000000000\0");
        assert_eq!(h[156], b'0');
        assert_eq!(&h[257..265], b"ustar\x0000");
        // No link, no user or group name, no device numbers, no prefix.
        assert!(h[157..257].iter().chain(&h[265..512]).all(|&b| b == 0));
        let sum: u32 = h[..148]
            .iter()
            .chain(&h[156..])
            .map(|&b| u32::from(b))
            .sum();
        assert_eq!(&h[148..156], format!("{:07o}\0", sum + 256).as_bytes());
        assert_eq!(write_archive(&[("runs.csv", &[b'x'; 1234][..])]), out);
    }

    #[test]
    fn an_archive_with_the_checksum_laid_out_as_gnu_tar_lays_it_reads_back() {
        // Bundles written before the `tar` crate wrote the checksum as six digits, NUL, space.
        let mut out = write_archive(&[("a", &b"x"[..])]);
        let sum: u32 = out[..148]
            .iter()
            .chain(&out[156..512])
            .map(|&b| u32::from(b))
            .sum();
        out[148..156].copy_from_slice(format!("{:06o}\0 ", sum + 256).as_bytes());
        let h = Reader::new(out.as_slice()).next_header().unwrap().unwrap();
        assert_eq!((h.path.as_str(), h.size), ("a", 1));
    }

    #[test]
    fn a_damaged_header_is_refused_by_its_checksum() {
        let mut out = write_archive(&[("a", &b"x"[..])]);
        out[0] = b'b';
        let err = Reader::new(out.as_slice()).next_header().unwrap_err();
        assert!(err.to_string().contains("checksum does not hold"), "{err}");
    }

    #[test]
    fn every_kind_but_a_regular_file_is_named() {
        let out = write_archive(&[("a", &b""[..])]);
        for (flag, kind) in [
            (b'1', Kind::HardLink),
            (b'2', Kind::Symlink),
            (b'5', Kind::Folder),
            (b'6', Kind::Fifo),
            (b'x', Kind::Extension),
            (b'L', Kind::Extension),
            (b'7', Kind::Other(b'7')),
        ] {
            let archive = changed(out.clone(), |h| h[156] = flag);
            let h = Reader::new(archive.as_slice())
                .next_header()
                .unwrap()
                .unwrap();
            assert_eq!(h.kind, kind, "{}", flag as char);
        }
    }

    #[test]
    fn a_file_that_is_not_the_size_it_was_said_to_be_is_not_written() {
        let mut w = Writer::new(Vec::new());
        let err = w.append("a", 3, &mut &b"ab"[..]).unwrap_err();
        assert!(err.to_string().contains("2 bytes where 3"), "{err}");
        let err = w.append("b", 3, &mut &b"abcd"[..]).unwrap_err();
        assert!(
            err.to_string().contains("changed while it was written"),
            "{err}"
        );
    }

    #[test]
    fn a_cut_file_a_base_256_size_and_bytes_after_the_end_are_refused() {
        let out = write_archive(&[("a", &b"x"[..])]);
        let err = |bytes: &[u8]| {
            let mut r = Reader::new(bytes);
            let first = r.next_header().and_then(|h| {
                r.copy_data(h.map_or(0, |h| h.size), &mut io::sink(), "a")?;
                r.next_header()
            });
            first.unwrap_err().to_string()
        };
        assert!(err(&out[..300]).contains("the header of member 1"));
        assert!(err(&out[..1024]).contains("the header of member 2"));
        let mut after = out.clone();
        after.push(1);
        assert!(err(&after).contains("bytes follow the end"));
        let huge = changed(out, |h| h[124] = 0x80);
        let err = Reader::new(huge.as_slice()).next_header().unwrap_err();
        assert!(err.to_string().contains("base-256"), "{err}");
    }
}
