//! Builds the heap-shift shim (`src/heap_shift.c`) that `layout = "randomized"` preloads
//! into runs, with the system C compiler, for lab to embed. Without a compiler (or when
//! building for another machine) the build goes on: lab then runs without shifting heaps and
//! says so in each session it records.

use std::path::PathBuf;
use std::process::Command;

const SOURCE: &str = "src/heap_shift.c";

fn main() {
    println!("cargo::rustc-check-cfg=cfg(heap_shim)");
    println!("cargo::rerun-if-changed={SOURCE}");
    println!("cargo::rerun-if-env-changed=CC");
    match build_shim() {
        Ok(()) => println!("cargo::rustc-cfg=heap_shim"),
        Err(why) => println!(
            "cargo::warning=the heap-shift shim was not built ({why}): lab will randomise the stack but not the heap"
        ),
    }
}

/// Compiles the shim into `$OUT_DIR/heap_shift.so`, or says why it could not.
fn build_shim() -> Result<(), String> {
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    if env("CARGO_CFG_TARGET_OS") != "linux" {
        return Err("the target is not Linux".into());
    }
    if env("TARGET") != env("HOST") {
        return Err(format!("cross-compiling for {}", env("TARGET")));
    }
    let out = PathBuf::from(env("OUT_DIR")).join("heap_shift.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut words = cc.split_whitespace();
    let program = words.next().ok_or("CC is empty")?;
    let status = Command::new(program)
        .args(words)
        .args(["-shared", "-fPIC", "-O2", "-s", "-o"])
        .arg(&out)
        .arg(SOURCE)
        .status()
        .map_err(|e| format!("`{program}`: {e}"))?;
    if !status.success() {
        return Err(format!("`{program}` {status}"));
    }
    Ok(())
}
