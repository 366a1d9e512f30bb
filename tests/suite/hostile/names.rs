//! Names and places: experiments with one folder name in two places, experiments outside
//! `experiments/`, and a book server that a stalled client cannot block.

use super::common::http_get as get;
use super::{minimal, project_with, stderr};
use lab::Exit;
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

#[test]
fn two_folders_of_one_name_never_share_a_data_folder() {
    let script = "sleep 0.2; echo '{\"v\": 1}'";
    let project = project_with("exp", &minimal(script, ""), &[]);
    let elsewhere = project.path("elsewhere/exp");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("lab.toml"), minimal(script, "")).unwrap();
    project.lab_exits(&["run", "experiments/exp", "--quiet"], Exit::Ok);
    let out = project.lab_exits(&["run", "elsewhere/exp"], Exit::Ok);
    let data: Vec<String> = std::fs::read_dir(project.path("data"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(data.len(), 2, "{data:?}");
    assert!(data.contains(&"exp".to_string()));
    let other = data.iter().find(|d| *d != "exp").unwrap();
    assert!(other.starts_with("exp-") && other.len() == 12, "{other}");
    assert_eq!(
        project.sessions("exp").len(),
        1,
        "the first experiment's data is its own"
    );
    // The chapter path printed for the experiment outside experiments/ exists.
    let written = stderr(&out)
        .lines()
        .find_map(|l| l.strip_prefix("wrote ").map(str::to_string))
        .unwrap();
    assert!(project.path(&written).is_file(), "{written} does not exist");
}

#[test]
fn an_absolute_path_to_an_experiment_works_too() {
    let project = project_with("exp", &minimal("sleep 0.2; echo '{\"v\": 1}'", ""), &[]);
    let absolute = project.path("experiments/exp");
    project.lab_exits(&["run", absolute.to_str().unwrap(), "--quiet"], Exit::Ok);
    assert_eq!(project.sessions("exp").len(), 1);
}

#[test]
fn a_client_that_never_reads_does_not_stall_the_book_server() {
    let project = project_with("exp", &minimal("sleep 0.2; echo '{\"v\": 1}'", ""), &[]);
    project.lab_exits(&["run", "exp", "--quiet"], Exit::Ok);
    project.lab_exits(&["book", "--quiet"], Exit::Ok);
    // A 10 MB file in the site, requested by clients that never read the answer.
    std::fs::write(project.path("book/book/big.bin"), vec![b'x'; 10_000_000]).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["book", "--serve", "--port", &port.to_string(), "--quiet"])
        .current_dir(project.root())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while get(port, "/").is_none() {
        assert!(Instant::now() < deadline, "the server never answered");
        std::thread::sleep(Duration::from_millis(100));
    }
    let stalled: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            write!(s, "GET /big.bin HTTP/1.0\r\nHost: localhost\r\n\r\n").unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let page = get(port, "/exp/index.html").unwrap_or_default();
    let took = started.elapsed();
    server.kill().unwrap();
    server.wait().unwrap();
    drop(stalled);
    assert!(page.contains("200 OK"), "{page:.200}");
    assert!(took < Duration::from_secs(2), "answered after {took:?}");
}
