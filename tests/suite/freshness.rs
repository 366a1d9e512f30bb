//! A chapter says when the experiment changed since its session ran: the session records the
//! digest of each file that defines its measurement, `lab report` puts an "Out of date" banner
//! on the chapter naming what changed, and `lab check --fresh` fails.

use crate::common::Project;
use lab::Exit;
use pulldown_cmark::{BlockQuoteKind, Event, Options, Parser, Tag, TagEnd};

/// The tiny fixture with a build: bench.sh is copied to build/bench.sh, which the variants run.
fn built_project() -> Project {
    let project = Project::with_fixtures(&["tiny"]);
    let file = project.path("experiments/tiny/lab.toml");
    let toml = std::fs::read_to_string(&file)
        .unwrap()
        .replace(
            "[params]",
            "[build]\nrun = [\"cp\", \"bench.sh\", \"build/bench.sh\"]\ninputs = [\"*.sh\"]\noutputs = [\"build/bench.sh\"]\n\n[params]",
        )
        .replace("\"sh\", \"bench.sh\"", "\"sh\", \"build/bench.sh\"");
    std::fs::write(&file, toml).unwrap();
    project.lab_exits(&["run", "tiny", "--quiet"], Exit::CheckFailed);
    project
}

/// The text of the chapter's warnings (GitHub-style `> [!WARNING]` blockquotes, which mdBook
/// shows as admonitions) that begin "Out of date.", read through a Markdown parser.
fn banners(page: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut quote: Option<String> = None;
    for event in Parser::new_ext(page, Options::ENABLE_GFM) {
        match event {
            Event::Start(Tag::BlockQuote(Some(BlockQuoteKind::Warning))) => {
                quote = Some(String::new())
            }
            Event::End(TagEnd::BlockQuote(_)) => found.extend(quote.take()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(q) = quote.as_mut() {
                    q.push_str(&t);
                }
            }
            Event::SoftBreak => {
                if let Some(q) = quote.as_mut() {
                    q.push(' ');
                }
            }
            _ => {}
        }
    }
    found.retain(|q| q.starts_with("Out of date."));
    found
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_session_records_the_files_that_define_its_measurement() {
    let project = built_project();
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.session("tiny").join("manifest.json")).unwrap(),
    )
    .unwrap();
    let sources = manifest["sources"].as_object().expect("sources recorded");
    let paths: Vec<&str> = sources.keys().map(String::as_str).collect();
    assert_eq!(paths, ["bench.sh", "build/bench.sh"]);
    let bench = std::fs::read(project.path("experiments/tiny/bench.sh")).unwrap();
    let expected = format!("{:x}", <sha2::Sha256 as sha2::Digest>::digest(&bench));
    assert_eq!(sources["bench.sh"], expected.as_str());
    assert_eq!(
        sources["build/bench.sh"],
        expected.as_str(),
        "a copy: the same digest"
    );
}

#[test]
fn a_changed_source_puts_a_banner_on_the_chapter_and_fails_check_fresh() {
    let project = built_project();
    let name = project
        .session("tiny")
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let chapter = "book/src/tiny/index.md";
    let before = project.read(chapter);
    assert!(banners(&before).is_empty());
    let out = project.lab_exits(&["check", "tiny", "--fresh"], Exit::Ok);
    assert_eq!(
        stdout(&out),
        format!(
            "tiny: session {name} is up to date: the 2 files that define its measurement are as it ran them\n"
        )
    );

    let source = project.path("experiments/tiny/bench.sh");
    let original = std::fs::read(&source).unwrap();
    let mut edited = original.clone();
    edited.extend_from_slice(b"# faster now\n");
    std::fs::write(&source, &edited).unwrap();
    std::fs::write(project.path("experiments/tiny/extra.sh"), "true\n").unwrap();

    let out = project.lab_exits(&["check", "tiny", "--fresh"], Exit::CheckFailed);
    let sentence = format!(
        "Since session {name} ran, bench.sh changed and extra.sh is new. Its numbers describe the experiment as it was then; lab run tiny measures it again."
    );
    assert_eq!(
        stdout(&out),
        format!(
            "tiny: out of date: {}\n",
            sentence.replace("lab run tiny", "`lab run tiny`")
        )
    );
    let out = project.lab_exits(&["report", "tiny"], Exit::Ok);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("warning: out of date: Since session"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = project.read(chapter);
    assert_eq!(banners(&page), [format!("Out of date. {sentence}")]);
    a_rebuilt_binary_is_a_change_and_the_banner_goes_with_it(&project, &original, &edited, &before);
}

/// With the sources as they were, a built file that differs is a change; with it back, the
/// chapter is as it was before (`before`).
fn a_rebuilt_binary_is_a_change_and_the_banner_goes_with_it(
    project: &Project,
    original: &[u8],
    edited: &[u8],
    before: &str,
) {
    let (source, chapter) = (
        project.path("experiments/tiny/bench.sh"),
        "book/src/tiny/index.md",
    );
    // The build runs again for the next session; the old binary is not what it ran.
    std::fs::write(&source, original).unwrap();
    std::fs::remove_file(project.path("experiments/tiny/extra.sh")).unwrap();
    std::fs::write(project.path("experiments/tiny/build/bench.sh"), edited).unwrap();
    let out = project.lab_exits(&["check", "tiny", "--fresh"], Exit::CheckFailed);
    assert!(
        stdout(&out).contains("build/bench.sh was built again and differs."),
        "{}",
        stdout(&out)
    );

    std::fs::write(project.path("experiments/tiny/build/bench.sh"), original).unwrap();
    project.lab_exits(&["check", "tiny", "--fresh"], Exit::Ok);
    project.lab_exits(&["report", "tiny"], Exit::Ok);
    assert_eq!(
        project.read(chapter),
        before,
        "the banner goes with the change"
    );
}

#[test]
fn a_built_file_missing_here_is_not_a_change() {
    let project = built_project();
    std::fs::remove_file(project.path("experiments/tiny/build/bench.sh")).unwrap();
    project.lab_exits(&["check", "tiny", "--fresh"], Exit::Ok);
}
