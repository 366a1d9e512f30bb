//! `lab book --serve`: the HTML on loopback, rebuilt when notes change.

use crate::common;
use lab::Exit;

use common::{Project, http_get as get};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A loopback port no one listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The response to GET `path` once it contains `needle` (within 60 s).
pub fn wait_for(port: u16, path: &str, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Some(r) = get(port, path).filter(|r| r.contains(needle)) {
            return r;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("{path} never contained {needle:?}");
}

#[test]
fn serves_the_book_on_loopback_and_rebuilds_on_change() {
    let project = Project::with_fixtures(&["tiny"]);
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    let port = free_port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["book", "--serve", "--port", &port.to_string(), "--quiet"])
        .current_dir(project.root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let page = wait_for(port, "/tiny/index.html", "Tiny: double against triple");
    assert!(
        page.starts_with("HTTP/1.1 200") || page.starts_with("HTTP/1.0 200"),
        "{page}"
    );
    assert!(page.contains("text/html"));
    assert!(
        get(port, "/tiny/score-by-n.svg")
            .unwrap()
            .contains("image/svg+xml")
    );
    assert!(get(port, "/../../etc/passwd").unwrap().contains("404"));

    std::fs::write(
        project.path("experiments/tiny/notes.md"),
        "A fresh note: {{ cell(of=\"triple n=2\") }}.\n",
    )
    .unwrap();
    wait_for(port, "/tiny/index.html", "A fresh note: 6.00 points");
    server.kill().unwrap();
    server.wait().unwrap();
}
