//! Files and links planted under book/ (by a run, or anything else under the project) never
//! reach the published site: `lab book` builds from the files lab wrote, never follows a link,
//! names each entry it leaves out on stderr, keeps the previous site when a build fails, and
//! `lab book --serve` answers only with regular files reached without a link.

use super::{files_containing, minimal, project_with, stderr, unprotected};
use crate::common::{self, Project};
use lab::Exit;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Output;

/// What every planted file holds, so its absence from the site can be asserted.
const PAYLOAD: &str = "PLANTED-PAYLOAD";

/// What /etc/passwd starts with on every Linux machine.
const PASSWD: &str = "root:x:0:";

/// A run that lasts long enough to time and prints `{"v": 1}`, preceded by `first`.
fn valid_run(first: &str) -> String {
    minimal(&format!("sleep 0.3; {first} echo '{{\"v\": 1}}'"), "")
}

/// A project with experiments `a` and `b`, each run once, and the book built.
fn two_chapters() -> Project {
    let project = project_with("a", &valid_run(""), &[]);
    let b = project.path("experiments/b");
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(b.join("lab.toml"), valid_run("")).unwrap();
    for experiment in ["a", "b"] {
        project.lab_exits(&["run", experiment, "--quiet"], Exit::Ok);
    }
    let out = book(&project, &[]);
    common::assert_ended(&out, &["book"], Exit::Ok);
    assert_eq!(warnings(&out), Vec::<String>::new());
    project
}

/// `lab book ARGS` in `project`, stopped after 60 s so that a reader blocked on a FIFO fails
/// the test instead of hanging it.
fn book(project: &Project, args: &[&str]) -> Output {
    std::process::Command::new("timeout")
        .arg("60")
        .arg(env!("CARGO_BIN_EXE_lab"))
        .arg("book")
        .args(args)
        .current_dir(project.root())
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// The warning lines of `out`, in order.
fn warnings(out: &Output) -> Vec<String> {
    stderr(out)
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .map(str::to_string)
        .collect()
}

/// The site's files holding a planted payload or /etc/passwd, by path.
fn leaked(project: &Project) -> Vec<String> {
    let site = project.path("book/book");
    let mut found = files_containing(&site, PAYLOAD.as_bytes());
    found.extend(files_containing(&site, PASSWD.as_bytes()));
    found
}

/// One thing planted under a built book, and exactly what `lab book --experiment a` says of
/// it (chapter `b` is kept as it was, not re-rendered).
struct Planted {
    what: &'static str,
    plant: fn(root: &Path, outside: &Path),
    warnings: &'static [&'static str],
    /// Paths under book/book/ that must not exist afterwards.
    absent: &'static [&'static str],
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// Replaces whatever is at `path` by a link to `target`.
fn link(target: &Path, path: &Path) {
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_dir_all(path);
    symlink(target, path).unwrap();
}

fn mkfifo(path: &Path) {
    std::fs::remove_file(path).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

const PLANTED: [Planted; 14] = [
    Planted {
        what: "an HTML page at the top of book/src",
        plant: |root, _| {
            write(
                &root.join("book/src/evil.html"),
                "<script>PLANTED-PAYLOAD</script>",
            )
        },
        warnings: &["warning: left book/src/evil.html out of the HTML: lab did not write it"],
        absent: &["evil.html"],
    },
    Planted {
        what: "a Markdown chapter SUMMARY.md does not list",
        plant: |root, _| {
            write(
                &root.join("book/src/stray.md"),
                "# Stray\n\n<script>PLANTED-PAYLOAD</script>\n",
            )
        },
        warnings: &["warning: left book/src/stray.md out of the HTML: lab did not write it"],
        absent: &["stray.html", "stray.md"],
    },
    Planted {
        what: "a folder of pages beside the chapters",
        plant: |root, _| {
            write(&root.join("book/src/extra/page.md"), PAYLOAD);
            write(&root.join("book/src/extra/page.html"), PAYLOAD);
        },
        warnings: &["warning: left book/src/extra/ out of the HTML: lab did not write this folder"],
        absent: &["extra"],
    },
    Planted {
        what: "a script in a kept chapter's folder",
        plant: |root, _| write(&root.join("book/src/b/evil.js"), "alert('PLANTED-PAYLOAD')"),
        warnings: &["warning: left book/src/b/evil.js out of the HTML: lab did not write it"],
        absent: &["b/evil.js"],
    },
    Planted {
        what: "a chart no page of the chapter shows",
        plant: |root, _| {
            write(
                &root.join("book/src/b/evil.svg"),
                "<svg><script>PLANTED-PAYLOAD</script></svg>",
            )
        },
        warnings: &[
            "warning: left book/src/b/evil.svg out of the HTML: no page of its chapter shows it",
        ],
        absent: &["b/evil.svg"],
    },
    Planted {
        what: "a CSV file beside the chapter's raw data",
        plant: |root, _| write(&root.join("book/src/b/data/extra.csv"), PAYLOAD),
        warnings: &[
            "warning: left book/src/b/data/extra.csv out of the HTML: lab did not write it",
        ],
        absent: &["b/data/extra.csv"],
    },
    Planted {
        what: "a link to a folder outside the project",
        plant: |root, outside| link(outside, &root.join("book/src/outside")),
        warnings: &[
            "warning: left book/src/outside out of the HTML: it is a symbolic link, and lab never follows one",
        ],
        absent: &["outside"],
    },
    Planted {
        what: "a link to /etc",
        plant: |root, _| link(Path::new("/etc"), &root.join("book/src/etc")),
        warnings: &[
            "warning: left book/src/etc out of the HTML: it is a symbolic link, and lab never follows one",
        ],
        absent: &["etc"],
    },
    Planted {
        what: "the chapter's runs.csv replaced by a link to /etc/passwd",
        plant: |root, _| {
            link(
                Path::new("/etc/passwd"),
                &root.join("book/src/b/data/runs.csv"),
            )
        },
        warnings: &[
            "warning: left book/src/b/data/runs.csv out of the HTML: it is a symbolic link, not a regular file",
        ],
        absent: &["b/data/runs.csv"],
    },
    Planted {
        what: "the chapter's data folder replaced by a link to /etc",
        plant: |root, _| link(Path::new("/etc"), &root.join("book/src/b/data")),
        warnings: &[
            "warning: left book/src/b/data out of the HTML: it is a symbolic link, not a folder",
        ],
        absent: &["b/data"],
    },
    Planted {
        what: "a kept chapter's folder replaced by a link to a folder outside",
        plant: |root, outside| link(outside, &root.join("book/src/b")),
        warnings: &[
            "warning: left book/src/b out of the HTML: it is a symbolic link, and lab never follows one",
        ],
        absent: &["b"],
    },
    Planted {
        what: "the chapter's samples.csv replaced by a FIFO",
        plant: |root, _| mkfifo(&root.join("book/src/b/data/samples.csv")),
        warnings: &[
            "warning: left book/src/b/data/samples.csv out of the HTML: it is a FIFO, not a regular file",
        ],
        absent: &["b/data/samples.csv"],
    },
    Planted {
        what: "an mdBook theme folder beside book.toml",
        plant: |root, _| {
            write(
                &root.join("book/theme/index.hbs"),
                "<html><script>PLANTED-PAYLOAD</script>{{{ content }}}</html>",
            )
        },
        warnings: &["warning: left book/theme/ out of the HTML: lab did not write this folder"],
        absent: &[],
    },
    Planted {
        what: "a link where lab writes SUMMARY.md, and one at its temporary file",
        plant: |root, outside| {
            link(&outside.join("index.md"), &root.join("book/src/SUMMARY.md"));
            link(
                &outside.join("index.md"),
                &root.join("book/src/SUMMARY.md.tmp"),
            );
        },
        // Both are replaced by the file lab writes, never written through.
        warnings: &[],
        absent: &[],
    },
];

#[test]
fn planted_files_and_links_are_left_out_and_named() {
    let base = two_chapters();
    for case in &PLANTED {
        let project = Project::with_fixtures(&[]);
        common::copy_dir(base.root(), project.root());
        let outside = tempfile::tempdir().unwrap();
        let outside_page = outside.path().join("index.md");
        write(&outside_page, "# Outside\n\nPLANTED-PAYLOAD\n");
        (case.plant)(project.root(), outside.path());

        let out = book(&project, &["--experiment", "a"]);
        assert_eq!(
            common::exit_of(&out),
            Exit::Ok,
            "{}: {}",
            case.what,
            stderr(&out)
        );
        assert_eq!(warnings(&out), case.warnings, "{}", case.what);
        assert_eq!(leaked(&project), Vec::<String>::new(), "{}", case.what);
        for path in case.absent {
            let built = project.path("book/book").join(path);
            assert!(
                std::fs::symlink_metadata(&built).is_err(),
                "{}: {path} published",
                case.what
            );
        }
        assert!(
            project.read("book/book/a/index.html").contains("hostile"),
            "{}",
            case.what
        );
        assert_eq!(
            std::fs::read_to_string(&outside_page).unwrap(),
            "# Outside\n\nPLANTED-PAYLOAD\n",
            "{}: the outside file was written",
            case.what
        );
    }
}

#[test]
fn a_chapter_page_replaced_by_a_link_is_left_out_with_the_charts_it_showed() {
    let project = two_chapters();
    let outside = tempfile::tempdir().unwrap();
    write(
        &outside.path().join("page.md"),
        "# Outside\n\nPLANTED-PAYLOAD\n",
    );
    let page = project.path("book/src/b/index.md");
    link(&outside.path().join("page.md"), &page);
    let mut charts: Vec<String> = std::fs::read_dir(project.path("book/src/b"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".svg"))
        .collect();
    charts.sort();
    assert!(charts.len() >= 2, "{charts:?}");

    let out = book(&project, &["--experiment", "a"]);
    common::assert_ended(&out, &["book"], Exit::Ok);
    let mut left_out = charts;
    left_out.push("index.md".into());
    left_out.sort();
    let expected: Vec<String> = left_out
        .iter()
        .map(|name| match name.as_str() {
            "index.md" => "warning: left book/src/b/index.md out of the HTML: it is a symbolic link, not a regular file".to_string(),
            chart => format!("warning: left book/src/b/{chart} out of the HTML: no page of its chapter shows it"),
        })
        .collect();
    assert_eq!(warnings(&out), expected);
    assert_eq!(leaked(&project), Vec::<String>::new());
    // The chapter is still listed, with the page mdBook makes for a missing one.
    assert!(project.read("book/book/b/index.html").contains("hostile"));
}

#[test]
fn files_a_run_plants_under_the_book_are_never_published() {
    // The payload is put together by the shell: the command itself is on the chapter's page.
    let plant = "p=PLANTED-; mkdir -p ../../book/src/exp; \
                 echo \"<script>$p\"PAYLOAD'</script>' > ../../book/src/planted.html; \
                 echo \"<svg><script>$p\"PAYLOAD'</script></svg>' > ../../book/src/exp/planted.svg; \
                 ln -sfn /etc ../../book/src/etc-link;";
    // With the default isolation the book is read-only to runs (hostile::sandbox): here the
    // run may write it, as a run of an `isolation = "none"` experiment may.
    let project = project_with("exp", &unprotected(&valid_run(plant)), &[]);
    project.lab_exits(&["run", "exp", "--quiet"], Exit::Ok);
    assert_eq!(
        project.read("book/src/planted.html"),
        "<script>PLANTED-PAYLOAD</script>\n"
    );
    // The chapter lab rendered after the runs replaced the folder the run wrote into.
    assert!(!project.path("book/src/exp/planted.svg").exists());

    let out = book(&project, &[]);
    common::assert_ended(&out, &["book"], Exit::Ok);
    assert_eq!(
        warnings(&out),
        [
            "warning: left book/src/etc-link out of the HTML: it is a symbolic link, and lab never follows one",
            "warning: left book/src/planted.html out of the HTML: lab did not write it",
        ]
    );
    assert_eq!(leaked(&project), Vec::<String>::new());
    for path in ["planted.html", "etc-link", "exp/planted.svg"] {
        assert!(!project.path("book/book").join(path).exists(), "{path}");
    }
    assert!(project.read("book/book/exp/index.html").contains("hostile"));
}

#[test]
fn an_include_a_run_prints_stays_text() {
    let variant_b = r#"
[[variant]]
name = "b"
run = ["sh", "-c", "sleep 0.3; echo '{{\"v\": 1, \"answer\": \"plain\"}}'", "{n}"]

[metric.answer]
json = "answer"
text = true

[[check]]
name = "same answer"
kind = "checksum"
metric = "answer"
"#;
    let lab_toml = minimal(
        "sleep 0.3; echo '{\"v\": 1, \"answer\": \"{{#include /etc/passwd}}\"}'",
        variant_b,
    );
    let project = project_with("exp", &lab_toml, &[]);
    // The two variants answer differently, so the checksum check fails.
    project.lab_exits(&["run", "exp", "--quiet"], Exit::CheckFailed);
    let out = book(&project, &["--quiet"]);
    common::assert_ended(&out, &["book"], Exit::Ok);
    let page = project.read("book/book/exp/index.html");
    assert!(page.contains("{{#include /etc/passwd}}"), "{page}");
    assert_eq!(leaked(&project), Vec::<String>::new());
}

#[test]
fn a_failed_build_leaves_the_previous_site_byte_identical() {
    let project = two_chapters();
    let before = common::tree(&project.path("book/book"));
    // Not UTF-8: mdBook cannot read the kept chapter's page, and the build fails.
    std::fs::write(project.path("book/src/b/index.md"), b"# b\n\xff\xfe\n").unwrap();

    let out = book(&project, &["--experiment", "a"]);
    common::assert_ended(&out, &["book"], Exit::Internal);
    let err = stderr(&out);
    assert!(
        err.contains(
            "error: building the book's HTML failed; book/book was left as it was: failed to read chapter `b/index.md`"
        ),
        "{err}"
    );
    assert_eq!(common::tree(&project.path("book/book")), before);
    assert_eq!(scratch_left(&project), Vec::<String>::new());
}

/// Entries a build left under book/ besides what lab writes there.
fn scratch_left(project: &Project) -> Vec<String> {
    let mut left: Vec<String> = std::fs::read_dir(project.path("book"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !["book", "book.toml", "lab.css", "src"].contains(&name.as_str()))
        .collect();
    left.sort();
    left
}

#[test]
fn a_rebuild_replaces_the_site_whole() {
    let project = two_chapters();
    write(&project.path("book/book/leftover.html"), PAYLOAD);
    write(&project.path("book/book/a/evil.js"), PAYLOAD);
    let out = book(&project, &[]);
    common::assert_ended(&out, &["book"], Exit::Ok);
    assert_eq!(warnings(&out), Vec::<String>::new());
    assert_eq!(leaked(&project), Vec::<String>::new());
    assert!(!project.path("book/book/leftover.html").exists());
    assert_eq!(scratch_left(&project), Vec::<String>::new());
}

#[test]
fn a_site_folder_replaced_by_a_link_is_replaced_and_its_target_untouched() {
    let project = two_chapters();
    let outside = tempfile::tempdir().unwrap();
    write(&outside.path().join("keep.txt"), "kept\n");
    link(outside.path(), &project.path("book/book"));
    let out = book(&project, &[]);
    common::assert_ended(&out, &["book"], Exit::Ok);
    assert_eq!(warnings(&out), Vec::<String>::new());
    let site = std::fs::symlink_metadata(project.path("book/book")).unwrap();
    assert!(site.is_dir(), "book/book is a folder again");
    assert!(project.read("book/book/b/index.html").contains("hostile"));
    let left: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(left.len(), 1);
    assert_eq!(
        std::fs::read_to_string(outside.path().join("keep.txt")).unwrap(),
        "kept\n"
    );
}

#[test]
fn a_link_at_a_chapters_staging_folder_leads_nowhere() {
    let project = two_chapters();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("made");
    // A staging folder is named after the rendering process; one of a process that is gone
    // is cleared, without following it.
    let planted = project.path("book/src/.a.staging-999999999");
    link(&target, &planted);
    let out = book(&project, &["--experiment", "a"]);
    common::assert_ended(&out, &["book"], Exit::Ok);
    assert!(
        !target.exists(),
        "the chapter was written outside the project"
    );
    assert!(std::fs::symlink_metadata(&planted).is_err());
    assert!(project.read("book/book/a/index.html").contains("hostile"));
}

#[test]
fn the_server_answers_404_through_every_link_in_the_site() {
    let project = Project::with_fixtures(&[]);
    let port = crate::serve::free_port();
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["book", "--serve", "--port", &port.to_string(), "--quiet"])
        .current_dir(project.root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    crate::serve::wait_for(port, "/", "Lab notebook");
    let site = project.path("book/book");
    symlink("/etc/passwd", site.join("passwd")).unwrap();
    symlink("/etc", site.join("etc")).unwrap();
    symlink(site.join("index.html"), site.join("home.html")).unwrap();
    let status = |path: &str| {
        let response = common::http_get(port, path).unwrap();
        let code = response.split_whitespace().nth(1).unwrap_or("none");
        format!("{path} {code}")
    };
    let answers: Vec<String> = [
        "/",
        "/index.html",
        "/passwd",
        "/etc/passwd",
        "/etc/",
        "/home.html",
    ]
    .into_iter()
    .map(status)
    .collect();
    server.kill().unwrap();
    server.wait().unwrap();
    assert_eq!(
        answers,
        [
            "/ 200",
            "/index.html 200",
            "/passwd 404",
            "/etc/passwd 404",
            "/etc/ 404",
            "/home.html 404",
        ]
    );
}
