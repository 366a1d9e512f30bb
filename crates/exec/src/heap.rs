//! Stage 3, the heap of a randomised layout: the shim that shifts a run's heap (built from
//! `heap_shift.c` by build.rs and embedded), written where runs can preload it, and whether a
//! run's program can be shifted at all.
//!
//! The dynamic loader preloads the shim (`LD_PRELOAD`) into every dynamically linked program
//! of the run, and its constructor moves the C allocator's heap by the run's drawn shift (see
//! [`lab_config::plan::layout`]). A statically linked program never runs the loader: its heap stays
//! where it is, and the run records no shift. What a program allocates otherwise (a Java or Go
//! heap, blocks of 128 KiB and more that malloc maps on their own, a second thread's arena,
//! an allocator that sorts blocks by size) is not moved either: the shift reaches the blocks
//! the C allocator carves in turn from the main heap.

use lab_config::Experiment;
use lab_config::plan::PlannedRun;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The shim's bytes, where build.rs could compile it.
#[cfg(heap_shim)]
const SHIM: Option<&[u8]> = Some(include_bytes!(concat!(env!("OUT_DIR"), "/heap_shift.so")));
#[cfg(not(heap_shim))]
const SHIM: Option<&[u8]> = None;

/// The variable that names the libraries the dynamic loader preloads.
pub(crate) const PRELOAD_VAR: &str = "LD_PRELOAD";

/// `PT_INTERP`: the program header naming a program's dynamic loader.
const PT_INTERP: u32 = 3;

/// The shift `run` gets and the shim that applies it: `None` when its plan draws none, or
/// when it cannot be applied ([`obstacle`] says why).
pub(crate) fn shift(exp: &Experiment, run: &PlannedRun) -> Option<(u32, &'static Path)> {
    let bytes = run.heap_shift?;
    let shim = shim().ok()?;
    obstacle(exp, run).is_none().then_some((bytes, shim))
}

/// Why the heaps of `runs` that draw a shift will not all get it: one sentence per reason,
/// each once, in the order of the runs.
pub fn unshifted(exp: &Experiment, runs: &[PlannedRun]) -> Vec<String> {
    let mut reasons: Vec<String> = Vec::new();
    for run in runs.iter().filter(|r| r.heap_shift.is_some()) {
        if let Some(why) = obstacle(exp, run).filter(|why| !reasons.contains(why)) {
            reasons.push(why);
        }
    }
    reasons
}

/// `LD_PRELOAD` with the shim added after the libraries `existing` names (the variant's, or
/// lab's own environment's): those keep their place and their order.
pub(crate) fn preload(existing: Option<&str>, shim: &Path) -> String {
    match existing.map(str::trim).filter(|e| !e.is_empty()) {
        Some(libraries) => format!("{libraries}:{}", shim.display()),
        None => shim.display().to_string(),
    }
}

/// Why `run`'s heap cannot be shifted: no shim, or a program that cannot load it.
fn obstacle(exp: &Experiment, run: &PlannedRun) -> Option<String> {
    if let Err(why) = shim() {
        return Some(why.clone());
    }
    let program = run.argv.first()?;
    let cwd = exp.run_dir(&run.cell.params);
    type Key = (String, PathBuf);
    static SEEN: Mutex<BTreeMap<Key, Option<String>>> = Mutex::new(BTreeMap::new());
    let key = (program.clone(), cwd.to_path_buf());
    if let Some(known) = SEEN.lock().ok().and_then(|s| s.get(&key).cloned()) {
        return known;
    }
    let env = exp.variant(&run.cell.variant).map(|v| v.env.clone());
    let found = super::shebang::locate(program, cwd, &env.unwrap_or_default())
        .and_then(|path| unshiftable(&path, &lab_config::format::terminal(program)));
    if let Ok(mut seen) = SEEN.lock() {
        seen.insert(key, found.clone());
    }
    found
}

/// The shim's path on this machine, written at the first call; why there is none otherwise.
fn shim() -> Result<&'static Path, &'static String> {
    static WRITTEN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    WRITTEN
        .get_or_init(|| {
            let bytes = SHIM.ok_or_else(|| {
                "lab was built without a C compiler, so it has no heap shim: no heap was shifted"
                    .to_string()
            })?;
            write_shim(bytes, &std::env::temp_dir())
        })
        .as_ref()
        .map(PathBuf::as_path)
}

/// Writes `bytes` as `lab-heap-UID/heap-shift-HASH.so` under `base`, in a folder only this
/// user may enter (so that no one else can put another library in its place), and returns its
/// path; an unchanged copy from an earlier session is kept.
fn write_shim(bytes: &[u8], base: &Path) -> Result<PathBuf, String> {
    use sha2::{Digest, Sha256};
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let dir = base.join(format!("lab-heap-{uid}"));
    let failed = |e: std::io::Error| {
        format!(
            "the heap shim could not be written in {}: {e}",
            dir.display()
        )
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(failed(e)),
        _ => {}
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(failed)?;
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "{} is not a folder of this user's alone: no heap shim was written there, and no heap was shifted",
            dir.display()
        ));
    }
    let hash = format!("{:x}", Sha256::digest(bytes));
    let path = dir.join(format!("heap-shift-{}.so", &hash[..16]));
    if std::fs::read(&path).is_ok_and(|kept| kept == bytes) {
        return preloadable(path);
    }
    let staged = dir.join(format!(".heap-shift-{}", std::process::id()));
    std::fs::write(&staged, bytes).map_err(failed)?;
    std::fs::rename(&staged, &path).map_err(failed)?;
    preloadable(path)
}

/// `path`, unless `LD_PRELOAD` cannot name it (its separators are spaces and colons).
fn preloadable(path: PathBuf) -> Result<PathBuf, String> {
    let text = path.display().to_string();
    if text.contains([' ', ':']) {
        return Err(format!(
            "the heap shim's path {text} holds a space or a colon, which LD_PRELOAD cannot name: no heap was shifted (set TMPDIR to another folder)"
        ));
    }
    Ok(path)
}

/// Why the program at `path` (named `shown`) cannot load the shim: it is an ELF program
/// without a dynamic loader (no `PT_INTERP` header), which the kernel starts directly with
/// nothing preloaded, or one built for another word size than the shim. `None` for a
/// dynamically linked program of the shim's kind, for the loader itself started as a program
/// (it has no loader either, but preloads), for scripts, and for what lab cannot read.
fn unshiftable(path: &Path, shown: &str) -> Option<String> {
    use std::io::Read;
    let loader = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("ld-"));
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(HEAD_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    let (class, types) = program_headers(&head)?;
    if !types.contains(&PT_INTERP) && !loader {
        return Some(format!(
            "`{shown}` is statically linked: no dynamic loader runs to preload the heap shim, so its heap stays where it is"
        ));
    }
    let native = if cfg!(target_pointer_width = "64") {
        2
    } else {
        1
    };
    (class != native).then(|| {
        format!(
            "`{shown}` is a {}-bit program, which cannot load the {}-bit heap shim, so its heap stays where it is",
            32 * u32::from(class),
            32 * u32::from(native)
        )
    })
}

/// How much of a program is read for its program headers, which follow the ELF header.
const HEAD_BYTES: u64 = 1 << 16;

/// The class (1: 32-bit, 2: 64-bit) of an ELF file and the types of its program headers
/// (`p_type` of each), from its header as elf(5) lays it out; `None` for a file that is not
/// a little-endian ELF, or whose headers lie beyond `elf`.
fn program_headers(elf: &[u8]) -> Option<(u8, Vec<u32>)> {
    if elf.get(..4)? != b"\x7fELF" || *elf.get(5)? != 1 {
        return None;
    }
    let word = |at: usize, len: usize| -> Option<u64> {
        let bytes = elf.get(at..at.checked_add(len)?)?;
        Some(bytes.iter().rev().fold(0, |n, b| n << 8 | u64::from(*b)))
    };
    // e_phoff, e_phentsize and e_phnum sit at 28, 42, 44 in ELF32 and 32, 54, 56 in ELF64.
    let class = *elf.get(4)?;
    let (offset, size, count) = match class {
        1 => (word(28, 4)?, word(42, 2)?, word(44, 2)?),
        2 => (word(32, 8)?, word(54, 2)?, word(56, 2)?),
        _ => return None,
    };
    let types = (0..count)
        .map(|i| {
            let at = usize::try_from(offset.checked_add(i.checked_mul(size)?)?).ok()?;
            word(at, 4).map(|t| t as u32)
        })
        .collect::<Option<Vec<u32>>>()?;
    Some((class, types))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A little-endian ELF64 header with `types` as its program headers.
    fn elf64(types: &[u32]) -> Vec<u8> {
        let mut elf = vec![0u8; 64];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        elf[32..40].copy_from_slice(&64u64.to_le_bytes());
        elf[54..56].copy_from_slice(&56u16.to_le_bytes());
        elf[56..58].copy_from_slice(&(types.len() as u16).to_le_bytes());
        for t in types {
            let mut header = vec![0u8; 56];
            header[..4].copy_from_slice(&t.to_le_bytes());
            elf.extend(header);
        }
        elf
    }

    /// A little-endian ELF32 header with `types` as its program headers.
    fn elf32(types: &[u32]) -> Vec<u8> {
        let mut elf = vec![0u8; 52];
        elf[..6].copy_from_slice(b"\x7fELF\x01\x01");
        elf[28..32].copy_from_slice(&52u32.to_le_bytes());
        elf[42..44].copy_from_slice(&32u16.to_le_bytes());
        elf[44..46].copy_from_slice(&(types.len() as u16).to_le_bytes());
        for t in types {
            let mut header = vec![0u8; 32];
            header[..4].copy_from_slice(&t.to_le_bytes());
            elf.extend(header);
        }
        elf
    }

    #[test]
    fn a_program_without_a_loader_or_of_another_word_size_is_not_shifted() {
        let dir = tempfile::tempdir().unwrap();
        let why = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            unshiftable(&path, name)
        };
        // PT_PHDR, PT_INTERP, PT_LOAD: a dynamically linked program.
        assert_eq!(why("dynamic", &elf64(&[6, PT_INTERP, 1])), None);
        // PT_LOAD, PT_DYNAMIC without PT_INTERP: a static-pie program.
        assert_eq!(
            why("static", &elf64(&[1, 2])).unwrap(),
            "`static` is statically linked: no dynamic loader runs to preload the heap shim, so its heap stays where it is"
        );
        assert_eq!(why("ld-linux-x86-64.so.2", &elf64(&[1, 2])), None);
        assert_eq!(
            why("i386", &elf32(&[6, PT_INTERP, 1])).unwrap(),
            "`i386` is a 32-bit program, which cannot load the 64-bit heap shim, so its heap stays where it is"
        );
        assert_eq!(why("script", b"#!/bin/sh\necho\n"), None);
        assert_eq!(why("short", b"\x7fELF\x02\x01"), None);
        assert_eq!(unshiftable(&dir.path().join("missing"), "missing"), None);
        // A program of this machine's own: the shell is linked dynamically almost everywhere.
        assert_eq!(unshiftable(Path::new("/bin/sh"), "sh"), None);
    }

    #[test]
    fn the_shim_comes_after_the_libraries_already_preloaded() {
        let shim = Path::new("/tmp/lab-heap-1/heap-shift-ab.so");
        assert_eq!(preload(None, shim), "/tmp/lab-heap-1/heap-shift-ab.so");
        assert_eq!(preload(Some(" "), shim), "/tmp/lab-heap-1/heap-shift-ab.so");
        assert_eq!(
            preload(Some("libjemalloc.so.2"), shim),
            "libjemalloc.so.2:/tmp/lab-heap-1/heap-shift-ab.so"
        );
    }

    #[test]
    fn the_shim_is_written_once_in_a_folder_of_its_users_alone() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let path = write_shim(b"shim", base.path()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"shim");
        let dir = path.parent().unwrap();
        assert_eq!(
            std::fs::metadata(dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert_eq!(write_shim(b"shim", base.path()).unwrap(), path, "kept");
        assert_ne!(
            write_shim(b"other", base.path()).unwrap(),
            path,
            "named by its hash"
        );
        // A folder others may write into is refused.
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refused = write_shim(b"shim", base.path()).unwrap_err();
        assert!(
            refused.contains("is not a folder of this user's alone"),
            "{refused}"
        );
        let spaced = tempfile::Builder::new().prefix("a b").tempdir().unwrap();
        let refused = write_shim(b"shim", spaced.path()).unwrap_err();
        assert!(refused.contains("holds a space or a colon"), "{refused}");
    }

    #[test]
    fn this_lab_carries_the_shim_where_it_was_built_with_a_compiler() {
        // The machines lab is built and tested on have a C compiler (Rust links with it).
        let shim = shim().expect("a heap shim");
        let bytes = std::fs::read(shim).unwrap();
        let (class, types) = program_headers(&bytes).expect("an ELF library");
        assert_eq!((class, types.contains(&PT_INTERP)), (2, false));
    }
}
