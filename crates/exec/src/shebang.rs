//! Why a program that is there could not start: `execve` answers "No such file or directory"
//! both for a missing program and for a script whose `#!` interpreter is missing, which reads
//! as if the script itself were missing. The script's first line tells them apart.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The most of a script's first line the kernel reads for its interpreter (`BINPRM_BUF_SIZE`).
const FIRST_LINE: u64 = 256;

/// Why `program`, started in `cwd` with `env` set on top of lab's environment, was "not
/// found" although it exists: its `#!` line names an interpreter that does not exist (said
/// of "it", the program). `None` when the program itself is missing or its first line does
/// not explain it.
pub(crate) fn missing_interpreter(
    program: &str,
    cwd: &Path,
    env: &BTreeMap<String, String>,
) -> Option<String> {
    let script = locate(program, cwd, env)?;
    let line = first_line(&script)?;
    let interpreter = line.strip_prefix("#!")?.split_whitespace().next()?;
    if cwd.join(interpreter).exists() {
        return None;
    }
    let shown = lab_config::format::terminal(&line);
    Some(format!(
        "it starts with `{shown}`, and `{}` does not exist (install it, or correct the script's first line)",
        lab_config::format::terminal(interpreter)
    ))
}

/// The file `execve` was given for `program`: the path itself when it holds a slash (taken
/// from `cwd`), else the first executable file of that name on the PATH.
pub fn locate(program: &str, cwd: &Path, env: &BTreeMap<String, String>) -> Option<PathBuf> {
    if program.contains('/') {
        let path = cwd.join(program);
        return path.is_file().then_some(path);
    }
    let path = env
        .get("PATH")
        .map(Into::into)
        .or_else(|| std::env::var_os("PATH"))?;
    std::env::split_paths(&path)
        .map(|dir| cwd.join(dir).join(program))
        .find(|candidate| is_executable_file(candidate))
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The start of the first line of `file`, as far as the kernel reads it, as text.
fn first_line(file: &Path) -> Option<String> {
    let mut start = Vec::new();
    std::fs::File::open(file)
        .ok()?
        .take(FIRST_LINE)
        .read_to_end(&mut start)
        .ok()?;
    let line = start.split(|&b| b == b'\n').next()?;
    Some(String::from_utf8_lossy(line).trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
        std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn a_missing_interpreter_is_named_with_the_line_that_asks_for_it() {
        let dir = tempfile::tempdir().unwrap();
        script(
            dir.path(),
            "bench.sh",
            "#!/nonexistent/interp -u\necho hi\n",
        );
        script(dir.path(), "fine.sh", "#!/bin/sh\necho hi\n");
        script(dir.path(), "plain", "echo hi\n");
        let none = BTreeMap::new();
        assert_eq!(
            missing_interpreter("./bench.sh", dir.path(), &none).as_deref(),
            Some(
                "it starts with `#!/nonexistent/interp -u`, and `/nonexistent/interp` does not exist (install it, or correct the script's first line)"
            )
        );
        assert_eq!(missing_interpreter("./fine.sh", dir.path(), &none), None);
        assert_eq!(missing_interpreter("./plain", dir.path(), &none), None);
        assert_eq!(missing_interpreter("./absent.sh", dir.path(), &none), None);
        // Found on the PATH the variant sets, a relative entry taken from the run's folder.
        let on_path = BTreeMap::from([("PATH".to_string(), ".".to_string())]);
        assert!(
            missing_interpreter("bench.sh", dir.path(), &on_path)
                .is_some_and(|m| m.starts_with("it starts with `#!/nonexistent/interp -u`"))
        );
    }
}
