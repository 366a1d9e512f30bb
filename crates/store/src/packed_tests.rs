//! Unit tests of `packed`.

use super::*;

fn session() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join(LOGS)).unwrap();
    dir
}

#[test]
fn a_held_pass_reads_the_pack_it_first_found_and_a_later_read_the_one_now_there() {
    let dir = session();
    let path = dir.path().join(LOGS).join(STDOUT_PACK);
    fs::write(&path, b"first pack\n").unwrap();
    let slice = LogRef::Packed {
        pack: path.clone(),
        offset: 0,
        bytes: 5,
    };
    let replace = || {
        let other = dir.path().join("other");
        fs::write(&other, b"OTHER PACK\n").unwrap();
        fs::rename(&other, &path).unwrap();
    };
    let held = held_open(|| {
        let before = slice.read_all();
        replace();
        (before, slice.read_all())
    });
    assert_eq!(held, (b"first".to_vec(), b"first".to_vec()));
    assert_eq!(
        slice.read_all(),
        b"OTHER",
        "outside the pass, the file at the path"
    );
    replace();
    // Held again, a slice past the length the pack had when opened looks it up anew.
    fs::write(dir.path().join("longer"), b"OTHER PACK, LONGER\n").unwrap();
    let longer = LogRef::Packed {
        pack: path.clone(),
        offset: 12,
        bytes: 6,
    };
    let read = held_open(|| {
        fs::rename(dir.path().join("longer"), &path).unwrap();
        longer.read_all()
    });
    assert_eq!(read, b"LONGER");
}

#[test]
fn each_append_is_found_again_by_its_slice_with_its_digest() {
    let dir = session();
    let mut pack = Pack::open(dir.path(), STDOUT_PACK).unwrap();
    let a = pack.append_from("r0001", &mut &b"first run\n"[..]).unwrap();
    let none = pack.append_from("r0002", &mut &b""[..]).unwrap();
    let b = pack.append_from("r0003", &mut &b"second\n"[..]).unwrap();
    assert_eq!((a.offset, a.bytes), (0, 10));
    assert_eq!((none.offset, none.bytes), (10, 0));
    assert_eq!((b.offset, b.bytes), (10, 7));
    assert_eq!(b.sha256, super::super::sha256_hex(b"second\n"));
    let at = |s: &Slice| LogRef::Packed {
        pack: dir.path().join(LOGS).join(STDOUT_PACK),
        offset: s.offset,
        bytes: s.bytes,
    };
    assert_eq!(at(&a).read_all(), b"first run\n");
    assert_eq!(at(&b).read_all(), b"second\n");
    assert_eq!(at(&none).read_all(), b"");
    // A slice past the end of the pack reads as nothing, never as another run's bytes.
    let past = LogRef::Packed {
        pack: dir.path().join(LOGS).join(STDOUT_PACK),
        offset: 10,
        bytes: 8,
    };
    assert!(past.open().is_none());
    assert_eq!(pack.verify().unwrap(), None);
}

#[test]
fn bytes_another_process_appends_are_cut_off_and_kept_aside() {
    let dir = session();
    let mut pack = Pack::open(dir.path(), STDERR_PACK).unwrap();
    pack.append_from("r0001", &mut &b"ours\n"[..]).unwrap();
    let path = dir.path().join(LOGS).join(STDERR_PACK);
    OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"planted\n")
        .unwrap();
    let change = pack.verify().unwrap().unwrap();
    assert_eq!(
        change,
        "logs/stderr.pack was appended to (the bytes are kept in logs/stderr.pack.found)"
    );
    assert_eq!(fs::read(&path).unwrap(), b"ours\n");
    assert_eq!(
        fs::read(dir.path().join(LOGS).join("stderr.pack.found")).unwrap(),
        b"planted\n"
    );
    assert_eq!(
        pack.verify().unwrap(),
        None,
        "once cut back, it is lab's again"
    );
    fs::write(&path, b"our").unwrap();
    assert_eq!(
        pack.verify().unwrap().unwrap(),
        "logs/stderr.pack was cut short (earlier runs' output is lost)"
    );
}

#[test]
fn an_uncommitted_tail_is_set_aside_and_the_pack_cut_at_the_last_commit() {
    let dir = session();
    fs::write(dir.path().join(LOGS).join(STDOUT_PACK), b"committed|torn").unwrap();
    fs::write(dir.path().join(LOGS).join(STDERR_PACK), b"all kept").unwrap();
    let row = |stdout: (u64, u64), stderr: (u64, u64)| super::super::RunRow {
        stdout_offset: Some(stdout.0),
        stdout_bytes: Some(stdout.1),
        stderr_offset: Some(stderr.0),
        stderr_bytes: Some(stderr.1),
        ..Default::default()
    };
    let runs = [row((0, 4), (0, 4)), row((4, 6), (4, 4))];
    let cut = uncommitted_tails(dir.path(), &runs);
    for tail in &cut {
        super::super::writer::set_aside(dir.path(), tail).unwrap();
    }
    assert_eq!(cut.len(), 1);
    assert_eq!(
        cut[0].describe(),
        "logs/stdout.pack: 4 bytes after byte 10 set aside (output of a run stopped before its row was written)"
    );
    assert_eq!(
        fs::read(dir.path().join(LOGS).join(STDOUT_PACK)).unwrap(),
        b"committed|"
    );
    assert_eq!(
        fs::read(dir.path().join("set-aside/stdout.pack.1")).unwrap(),
        b"torn"
    );
}
