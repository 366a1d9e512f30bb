//! `lab book --serve`: the HTML on loopback, rebuilt when notes or data change (only the
//! chapters that changed, never while a session is written), and polling where inotify has no
//! watches left.

use crate::common;
use lab::Exit;

use common::{Project, http_get as get};
use std::net::TcpListener;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a rebuild may take to be served: a few seconds, with room for a loaded machine.
const REBUILT_WITHIN: Duration = Duration::from_secs(15);

/// A loopback port no one listens on now.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The response to GET `path` once it contains `needle` (within 60 s).
pub(crate) fn wait_for(port: u16, path: &str, needle: &str) -> String {
    wait_within(port, path, needle, Duration::from_secs(60))
}

/// The response to GET `path` once it contains `needle`, which it must within `limit`.
fn wait_within(port: u16, path: &str, needle: &str, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(r) = get(port, path).filter(|r| r.contains(needle)) {
            return r;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("{path} did not contain {needle:?} within {limit:?}");
}

/// Waits until `done` holds, which it must within `limit`.
fn wait_until(what: &str, limit: Duration, done: impl Fn() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(
            Instant::now() < deadline,
            "{what} did not happen within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `lab book --serve --quiet` running in a project (its standard error in `serve.err` at the
/// project's root), stopped when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(project: &Project) -> Server {
        let port = free_port();
        let mut command = Command::new(env!("CARGO_BIN_EXE_lab"));
        command.args(["book", "--serve", "--port", &port.to_string(), "--quiet"]);
        Server::spawn(project, command, port)
    }

    /// The server in a user namespace of its own whose inotify watch limit is `limit`; `None`
    /// where this machine lets no test make one.
    fn start_with_watch_limit(project: &Project, limit: usize) -> Option<Server> {
        const SCRIPT: &str =
            "echo \"$1\" > /proc/sys/user/max_inotify_watches && shift && exec \"$0\" \"$@\"";
        let allowed = Command::new("unshare")
            .args(["-Ur", "sh", "-c", SCRIPT, "true", "1"])
            .status()
            .is_ok_and(|s| s.success());
        if !allowed {
            eprintln!("skipped: no user namespace in which to limit inotify watches");
            return None;
        }
        let port = free_port();
        let mut command = Command::new("unshare");
        command.args(["-Ur", "sh", "-c", SCRIPT, env!("CARGO_BIN_EXE_lab")]);
        command.arg(limit.to_string());
        command.args(["book", "--serve", "--port", &port.to_string(), "--quiet"]);
        Some(Server::spawn(project, command, port))
    }

    fn spawn(project: &Project, mut command: Command, port: u16) -> Server {
        let stderr = std::fs::File::create(project.path("serve.err")).unwrap();
        let child = command
            .current_dir(project.root())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        Server { child, port }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A project with the fixture `tiny` run once.
fn tiny_with_a_session() -> Project {
    let project = Project::with_fixtures(&["tiny"]);
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    project
}

/// The `tiny` fixture with a session, served, its chapter's page up.
fn serving_tiny() -> (Project, Server) {
    let project = tiny_with_a_session();
    let server = Server::start(&project);
    wait_for(
        server.port,
        "/tiny/index.html",
        "Tiny: double against triple",
    );
    (project, server)
}

/// Which file a chapter's page is, and when it was written: a chapter rendered again is a new
/// file (render swaps in a whole new folder).
fn chapter_written(project: &Project, name: &str) -> (u64, std::time::SystemTime) {
    let meta = std::fs::metadata(project.path(&format!("book/src/{name}/index.md"))).unwrap();
    (meta.ino(), meta.modified().unwrap())
}

fn write_notes(project: &Project, name: &str, text: &str) {
    std::fs::write(project.path(&format!("experiments/{name}/notes.md")), text).unwrap();
}

#[test]
fn serves_the_book_on_loopback_and_rebuilds_on_change() {
    let project = tiny_with_a_session();
    let server = Server::start(&project);
    let port = server.port;
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

    write_notes(
        &project,
        "tiny",
        "A fresh note: {{ cell(of=\"triple n=2\") }}.\n",
    );
    wait_within(
        port,
        "/tiny/index.html",
        "A fresh note: <a href=\"provenance.html#triple-n-2.score.median\">6.00 points [6.00, 6.00]</a>",
        REBUILT_WITHIN,
    );
}

#[test]
fn a_new_session_is_served_within_seconds_of_its_end() {
    let (project, server) = serving_tiny();
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    let newest = project.session("tiny");
    let name = newest.file_name().unwrap().to_string_lossy();
    wait_within(server.port, "/tiny/index.html", &name, REBUILT_WITHIN);
}

#[test]
fn a_change_made_while_a_session_is_written_is_rebuilt_when_it_ends() {
    let (project, server) = serving_tiny();
    let lock = lab::store::lock_experiment(&project.path("data/tiny"), "a session in a test")
        .unwrap()
        .expect("no one else holds the lock");
    write_notes(&project, "tiny", "Written while a session ran.\n");
    std::thread::sleep(Duration::from_secs(3));
    let page = get(server.port, "/tiny/index.html").unwrap();
    assert!(
        !page.contains("Written while a session ran."),
        "rebuilt while the session's lock was held"
    );
    drop(lock);
    wait_within(
        server.port,
        "/tiny/index.html",
        "Written while a session ran.",
        REBUILT_WITHIN,
    );
}

#[test]
fn files_made_in_a_new_folder_under_data_are_seen() {
    let (project, server) = serving_tiny();
    let (session, before) = (project.session("tiny"), chapter_written(&project, "tiny"));
    let copy = project.path("data/tiny/29991231T000000Z-copy");
    std::fs::create_dir(&copy).unwrap();
    // The empty folder is no session: the chapter is rendered again as it was...
    wait_until("a rebuild for the new folder", REBUILT_WITHIN, || {
        chapter_written(&project, "tiny") != before
    });
    // ...and what is written into it later, in folders of its own too, is seen.
    common::copy_dir(&session, &copy);
    wait_within(
        server.port,
        "/tiny/index.html",
        "29991231T000000Z-copy",
        REBUILT_WITHIN,
    );
}

#[test]
fn only_the_changed_experiments_chapter_is_rendered_again() {
    let project = tiny_with_a_session();
    common::copy_dir(
        &project.path("experiments/tiny"),
        &project.path("experiments/twin"),
    );
    project.lab_exits(&["run", "twin", "--quiet"], Exit::CheckFailed);
    let server = Server::start(&project);
    wait_for(
        server.port,
        "/twin/index.html",
        "Tiny: double against triple",
    );
    let (tiny, twin) = (
        chapter_written(&project, "tiny"),
        chapter_written(&project, "twin"),
    );
    write_notes(&project, "tiny", "Only this chapter changed.\n");
    wait_within(
        server.port,
        "/tiny/index.html",
        "Only this chapter changed.",
        REBUILT_WITHIN,
    );
    assert_ne!(chapter_written(&project, "tiny"), tiny);
    assert_eq!(
        chapter_written(&project, "twin"),
        twin,
        "twin was rendered again"
    );
}

/// The watches a full watch of `project` takes: its folder and every folder under
/// experiments/ and data/.
fn watches_needed(project: &Project) -> usize {
    fn folders(dir: &Path) -> usize {
        1 + std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_type().unwrap().is_dir())
            .map(|e| folders(&e.path()))
            .sum::<usize>()
    }
    1 + folders(&project.path("experiments")) + folders(&project.path("data"))
}

const FALLBACK: &str =
    "cannot be told of changes by the kernel: the limit of inotify watches is reached";

#[test]
fn with_too_few_inotify_watches_it_says_why_once_and_polls() {
    let project = tiny_with_a_session();
    let Some(server) = Server::start_with_watch_limit(&project, 2) else {
        return;
    };
    wait_for(
        server.port,
        "/tiny/index.html",
        "Tiny: double against triple",
    );
    write_notes(&project, "tiny", "Seen by polling.\n");
    wait_within(
        server.port,
        "/tiny/index.html",
        "Seen by polling.",
        REBUILT_WITHIN,
    );
    let said = project.read("serve.err");
    assert_eq!(said.matches(FALLBACK).count(), 1, "{said}");
    assert!(
        said.contains("`sudo sysctl fs.inotify.max_user_watches="),
        "{said}"
    );
}

#[test]
fn running_out_of_inotify_watches_later_falls_back_to_polling() {
    let project = tiny_with_a_session();
    let needed = watches_needed(&project);
    let Some(server) = Server::start_with_watch_limit(&project, needed) else {
        return;
    };
    wait_for(
        server.port,
        "/tiny/index.html",
        "Tiny: double against triple",
    );
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(
        project.read("serve.err"),
        "",
        "{needed} watches were not enough"
    );
    std::fs::create_dir_all(project.path("data/tiny/more/folders")).unwrap();
    wait_until("the fallback", REBUILT_WITHIN, || {
        project.read("serve.err").contains(FALLBACK)
    });
    write_notes(&project, "tiny", "Seen by polling.\n");
    wait_within(
        server.port,
        "/tiny/index.html",
        "Seen by polling.",
        REBUILT_WITHIN,
    );
}
