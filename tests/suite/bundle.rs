//! A session sent to another project and back: `lab bundle` writes it as one file, `lab
//! import lab` verifies and adds it, refusing a hostile bundle with its reason and writing
//! nothing, and an experiment with sessions of several machines gets a Replications page.

use crate::common::{self, FakeRunner, Project, Reply};
use lab::Exit;
use lab::bundle::archive;
use lab::layout::Layout;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};

/// One session of the `sampled` fixture (12 runs of each variant) whose slow variant takes
/// `slow` times what fast takes, about 10 ms with 8% noise from the seeded stream `seed`.
fn session_at(project: &Project, slow: f64, seed: u64) -> PathBuf {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut runner = FakeRunner::new(move |run| match run.request.argv {
        [_, _, variant, _] => {
            let factor = if variant == "slow" { slow } else { 1.0 };
            Reply::ms(10.0 * factor * (1.0 + 0.08 * common::twelve_uniforms(&mut rng)))
        }
        _ => Reply::ms(0.001),
    });
    let layout = Layout::new(project.root());
    lab::app::run(
        &layout,
        Path::new("sampled"),
        &common::quiet_run("sampled"),
        &mut runner,
    )
    .unwrap();
    // Session folders are named by the second they start in.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    project.session("sampled")
}

/// `lab bundle sampled --session ID -o FILE` in `project`; the bundle's bytes.
fn bundle(project: &Project, session: &Path, file: &Path) -> Vec<u8> {
    let id = session.file_name().unwrap().to_str().unwrap();
    let file = file.to_str().unwrap();
    project.lab_exits(
        &["bundle", "sampled", "--session", id, "-o", file],
        Exit::Ok,
    );
    std::fs::read(file).unwrap()
}

/// A bundle's members in order, as (path, bytes).
fn members(bundle: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut reader = archive::Reader::new(bundle);
    let mut out = Vec::new();
    while let Some(h) = reader.next_header().unwrap() {
        let mut data = Vec::new();
        reader.copy_data(h.size, &mut data, &h.path).unwrap();
        out.push((h.path, data));
    }
    out
}

/// A tar header written here, independently of lab's writer: `name`, type `flag`, a claimed
/// `size`, a link target.
fn header(name: &str, flag: u8, size: u64, link: &str) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    h[100..108].copy_from_slice(b"0000644\0");
    h[108..116].copy_from_slice(b"0000000\0");
    h[116..124].copy_from_slice(b"0000000\0");
    h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    h[136..148].copy_from_slice(b"00000000000\0");
    h[156] = flag;
    h[157..157 + link.len()].copy_from_slice(link.as_bytes());
    h[257..265].copy_from_slice(b"ustar\x0000");
    h[148..156].copy_from_slice(b"        ");
    let sum: u64 = h.iter().map(|&b| u64::from(b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

/// One member of a hand-made archive.
struct Entry {
    name: String,
    flag: u8,
    data: Vec<u8>,
    /// The size the header claims, when not the data's.
    claimed: Option<u64>,
    link: String,
}

fn file(name: &str, data: Vec<u8>) -> Entry {
    Entry {
        name: name.into(),
        flag: b'0',
        data,
        claimed: None,
        link: String::new(),
    }
}

/// The archive of `entries`, ended as tar ends one.
fn pack(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in entries {
        let size = e.claimed.unwrap_or(e.data.len() as u64);
        out.extend_from_slice(&header(&e.name, e.flag, size, &e.link));
        out.extend_from_slice(&e.data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

fn sha256(bytes: &[u8]) -> String {
    lab::store::sha256_hex(bytes)
}

/// The bundle's entries with its index rewritten to the members' present sizes and digests.
fn reindexed(entries: Vec<(String, Vec<u8>)>) -> Vec<Entry> {
    let mut index: serde_json::Value = serde_json::from_slice(&entries[0].1).unwrap();
    for m in index["members"].as_array_mut().unwrap() {
        let path = m["path"].as_str().unwrap().to_string();
        let (_, data) = entries.iter().find(|(p, _)| *p == path).unwrap();
        m["bytes"] = data.len().into();
        m["sha256"] = sha256(data).into();
    }
    let text = serde_json::to_vec_pretty(&index).unwrap();
    std::iter::once(file("bundle.json", text))
        .chain(entries.into_iter().skip(1).map(|(p, d)| file(&p, d)))
        .collect()
}

/// The bundle with member `path` changed by `change`, its index made to match.
fn edited(bundle: &[u8], path: &str, change: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut entries = members(bundle);
    let (_, data) = entries.iter_mut().find(|(p, _)| p == path).unwrap();
    change(data);
    pack(&reindexed(entries))
}

/// The bundle's manifest moved to another machine: its host, CPU model, CPU count and clock
/// source (`None`: a session stored before clock sources were recorded).
fn on_machine(bundle: &[u8], host: &str, cpu: &str, cpus: usize, clock: Option<&str>) -> Vec<u8> {
    edited(bundle, "manifest.json", |data| {
        let mut m: serde_json::Value = serde_json::from_slice(data).unwrap();
        m["host"]["name"] = host.into();
        m["host"]["cpu_model"] = cpu.into();
        m["host"]["logical_cpus"] = cpus.into();
        m["host"]["kernel"] = "6.1.0-18-amd64".into();
        m["host"]["governor"] = "performance".into();
        let host = m["host"].as_object_mut().unwrap();
        match clock {
            Some(source) => host.insert("clocksource".into(), source.into()),
            None => host.remove("clocksource"),
        };
        *data = serde_json::to_vec_pretty(&m).unwrap();
    })
}

/// A project with the `sampled` fixture and one session in it, and that session's bundle.
fn sent() -> (Project, PathBuf, Vec<u8>) {
    let project = common::sampled_project();
    let session = session_at(&project, 1.1, 7);
    let bytes = bundle(&project, &session, &project.path("sent.tar"));
    (project, session, bytes)
}

/// `lab bundle` says what it wrote, and writes the same bytes as before, its members in order.
fn written_the_same_twice(project: &Project, first: &[u8]) {
    let out = project.lab_exits(
        &[
            "bundle",
            "sampled",
            "-o",
            project.path("again.tar").to_str().unwrap(),
        ],
        Exit::Ok,
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with(&format!("wrote {}: ", project.path("again.tar").display())),
        "{said}"
    );
    assert!(said.contains(&format!("({} bytes)", first.len())), "{said}");
    assert!(said.contains("runs.csv"), "{said}");
    assert_eq!(std::fs::read(project.path("again.tar")).unwrap(), first);
    let names: Vec<String> = members(first).into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        names,
        [
            "bundle.json",
            "manifest.json",
            "plan.json",
            "runs.csv",
            "samples.csv",
            "sealed/lab.toml",
            "logs/stdout.pack",
            "logs/stderr.pack"
        ]
    );
}

/// The received session judges as the sent one, and its manifest names the bundle.
fn assert_received_as_sent(project: &Project, receiver: &Project, here: &Path, first: &[u8]) {
    let verdicts = |p: &Project| -> Vec<(String, String, String)> {
        common::verdicts(p, "sampled")
            .iter()
            .map(|c| {
                let text = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                (text("name"), text("verdict"), text("evidence"))
            })
            .collect()
    };
    let theirs = verdicts(project);
    assert_eq!(verdicts(receiver), theirs);
    assert!(
        theirs
            .iter()
            .any(|(n, v, _)| n == "slow takes longer than fast" && v == "pass"),
        "{theirs:?}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(here.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["received"]["bundle"], "sent.tar");
    assert_eq!(
        manifest["received"]["index_sha256"],
        sha256(&members(first)[0].1)
    );
}

#[test]
fn a_bundle_round_trips_to_identical_rows_and_verdicts_and_is_written_the_same_twice() {
    let (project, session, first) = sent();
    written_the_same_twice(&project, &first);

    let receiver = common::sampled_project();
    let out = receiver.lab_exits(
        &["import", "lab", project.path("sent.tar").to_str().unwrap()],
        Exit::Ok,
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("received"), "{said}");
    let here = receiver.session("sampled");
    assert_eq!(here.file_name(), session.file_name());
    for name in ["runs.csv", "samples.csv", "plan.json", "sealed/lab.toml"] {
        assert_eq!(
            std::fs::read(here.join(name)).unwrap(),
            std::fs::read(session.join(name)).unwrap(),
            "{name}"
        );
    }
    assert_received_as_sent(&project, &receiver, &here, &first);

    let again = receiver.lab_exits(
        &["import", "lab", project.path("sent.tar").to_str().unwrap()],
        Exit::Ok,
    );
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        format!(
            "{} is already here as session {}: nothing was written\n",
            project.path("sent.tar").display(),
            Path::new("data/sampled")
                .join(session.file_name().unwrap())
                .display()
        )
    );
    assert_eq!(receiver.sessions("sampled").len(), 1);
}

/// Imports `bytes` as a bundle into a fresh project; its stderr, insisting it was refused
/// with exit 2 and that nothing was written under data/.
fn refused(bytes: &[u8], receiver_toml: Option<(&str, &str)>) -> String {
    let receiver = common::sampled_project();
    if let Some((from, to)) = receiver_toml {
        let path = receiver.path("experiments/sampled/lab.toml");
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replacen(from, to, 1);
        std::fs::write(path, text).unwrap();
    }
    let path = receiver.path("hostile.tar");
    std::fs::write(&path, bytes).unwrap();
    let out = receiver.lab_exits(&["import", "lab", path.to_str().unwrap()], Exit::Usage);
    assert!(!receiver.path("data").exists(), "data/ was written");
    assert!(!receiver.path("book").exists(), "book/ was written");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    // Shown when a test fails (and with --nocapture): every refusal as the user reads it.
    eprintln!("{err}");
    let prefix = format!("error: refused {}: ", path.display());
    assert!(err.starts_with(&prefix), "{err}");
    assert!(err.ends_with("  nothing was written\n"), "{err}");
    err[prefix.len()..].to_string()
}

/// The members of a bundle as regular files.
fn files(members: Vec<(String, Vec<u8>)>) -> Vec<Entry> {
    members.into_iter().map(|(p, d)| file(&p, d)).collect()
}

/// The first line of why a bundle was refused.
fn first_line(why: String) -> String {
    why.lines().next().unwrap().to_string()
}

/// A member written over after the seal, or placed outside the session folder.
fn tampered_and_misplaced_members_are_refused(good: &[u8]) {
    let tampered = edited(good, "runs.csv", |data| {
        let at = data.iter().rposition(|&b| b == b'1').unwrap();
        data[at] = b'2';
    });
    let why = first_line(refused(&tampered, None));
    assert!(why.starts_with("the session in the bundle does not hold its seal: runs.csv is not the file the session was sealed with"), "{why}");

    let mut entries = members(good);
    entries.insert(1, ("../../evil.sh".into(), b"rm -rf ~\n".to_vec()));
    assert_eq!(
        first_line(refused(&pack(&files(entries)), None)),
        "member 2, \"../../evil.sh\", climbs out of the session folder with `..`"
    );

    let mut entries = members(good);
    entries.insert(
        1,
        ("/etc/cron.d/evil".into(), b"* * * * * root true\n".to_vec()),
    );
    assert_eq!(
        first_line(refused(&pack(&files(entries)), None)),
        "member 2, \"/etc/cron.d/evil\", is an absolute path"
    );
}

/// Links and devices in place of a member.
fn members_that_are_no_regular_file_are_refused(good: &[u8]) {
    for (flag, words) in [
        (b'2', "a symbolic link to \"/etc/passwd\""),
        (b'1', "a hard link to \"/etc/passwd\""),
        (b'3', "a character device"),
    ] {
        let mut entries = files(members(good));
        entries[1] = Entry {
            flag,
            data: Vec::new(),
            link: "/etc/passwd".into(),
            ..file("manifest.json", Vec::new())
        };
        assert_eq!(
            first_line(refused(&pack(&entries), None)),
            format!("member manifest.json is {words}: a bundle holds regular files only")
        );
    }
}

/// Members that claim more than a member may hold or than the index lists, or whose bytes
/// are not the ones the index lists.
fn members_unlike_their_index_are_refused(good: &[u8]) {
    let mut entries = members(good);
    let mut index: serde_json::Value = serde_json::from_slice(&entries[0].1).unwrap();
    index["members"][2]["bytes"] = (5u64 << 30).into();
    entries[0].1 = serde_json::to_vec_pretty(&index).unwrap();
    let mut huge = files(entries);
    huge[3].claimed = Some(5 << 30);
    assert_eq!(
        first_line(refused(&pack(&huge), None)),
        "member runs.csv claims 5.0 GiB, over the 1.0 GiB a member may hold"
    );
    let mut claims = files(members(good));
    claims[3].claimed = Some(5 << 30);
    let why = first_line(refused(&pack(&claims), None));
    assert!(
        why.starts_with("member runs.csv claims 5.0 GiB where the index lists "),
        "{why}"
    );

    let mut entries = members(good);
    let mut index: serde_json::Value = serde_json::from_slice(&entries[0].1).unwrap();
    index["members"][3]["sha256"] = sha256(b"something else").into();
    entries[0].1 = serde_json::to_vec_pretty(&index).unwrap();
    let why = first_line(refused(&pack(&files(entries)), None));
    assert!(
        why.starts_with("member samples.csv does not match its digest: its SHA-256 is "),
        "{why}"
    );
}

#[test]
fn hostile_bundles_are_refused_with_their_reason_and_nothing_written() {
    let (_project, _session, good) = sent();
    tampered_and_misplaced_members_are_refused(&good);
    members_that_are_no_regular_file_are_refused(&good);
    members_unlike_their_index_are_refused(&good);

    let truncated = &good[..good.len() / 2];
    let why = first_line(refused(truncated, None));
    assert!(why.starts_with("the file ends inside "), "{why}");
    assert!(why.ends_with(": the bundle is truncated"), "{why}");

    assert_eq!(
        first_line(refused(&good, Some(("gap = [10]", "gap = [20]")))),
        format!(
            "its sealed lab.toml measures something else than experiments/sampled/lab.toml: `params.gap[0]` is 10 in the bundle and 20 here"
        )
    );
}

/// The replications page names the experiment and describes each machine.
fn assert_machines_described(page: &str) {
    assert!(
        page.starts_with("# Replications: Sampled: runs added until the answer is known\n"),
        "{page}"
    );
    assert!(
        page.contains("This experiment was measured on 3 machines (3 of them received as bundles)"),
        "{page}"
    );
    for (host, cpu, cpus, clock) in [
        ("alpha", "Intel Xeon Gold 6230", 8, "tsc"),
        ("beta", "AMD EPYC 7B13", 2, "kvm-clock"),
        ("gamma", "Apple M1", 4, "not recorded"),
    ] {
        assert!(
            page.contains(&format!(
                " | {cpu} | {cpus} | 6.1.0-18-amd64 | performance | {clock} |"
            )),
            "{host}: {page}"
        );
    }
}

/// Each hypothesis gets a section: where it held, a verdict per machine, and a chart.
fn assert_verdict_per_machine(receiver: &Project, page: &str) {
    assert!(page.contains("## slow takes longer than fast"), "{page}");
    let line = page
        .lines()
        .find(|l| l.starts_with("held on "))
        .unwrap_or_else(|| panic!("{page}"));
    // The page's text is HTML-escaped like every value lab puts in a page.
    assert_eq!(
        line,
        "held on 2 of 3 machines; failed on beta (0.774× where a/b &gt; 1.00 was needed)."
    );
    let rows: Vec<&str> = page
        .lines()
        .filter(|l| {
            l.starts_with(r#"| alpha | <span class="lab-verdict lab-pass">pass</span> |"#)
                || l.starts_with(r#"| beta | <span class="lab-verdict lab-fail">fail</span> |"#)
                || l.starts_with(r#"| gamma | <span class="lab-verdict lab-pass">pass</span> |"#)
        })
        .collect();
    assert_eq!(rows.len(), 3, "{page}");
    assert!(page.contains("src=\"replication-1.svg\""), "{page}");
    let svg = receiver.read("book/src/sampled/replication-1.svg");
    for host in ["alpha", "beta", "gamma", "FAIL", "PASS"] {
        assert!(svg.contains(host), "{host} not in the chart");
    }
}

#[test]
fn sessions_of_three_machines_get_a_replications_page_with_verdicts_and_a_chart() {
    let project = common::sampled_project();
    let held = session_at(&project, 1.1, 7);
    let failed = session_at(&project, 0.8, 8);
    let again = session_at(&project, 1.2, 9);
    let sent = [
        ("alpha", "Intel Xeon Gold 6230", 8, Some("tsc"), &held),
        ("beta", "AMD EPYC 7B13", 2, Some("kvm-clock"), &failed),
        ("gamma", "Apple M1", 4, None, &again),
    ]
    .map(|(host, cpu, cpus, clock, session)| {
        let bytes = bundle(&project, session, &project.path("tmp.tar"));
        let path = project.path(&format!("{host}.tar"));
        std::fs::write(&path, on_machine(&bytes, host, cpu, cpus, clock)).unwrap();
        path.to_str().unwrap().to_string()
    });
    let receiver = common::sampled_project();
    let mut args = vec!["import", "lab"];
    args.extend(sent.iter().map(String::as_str));
    receiver.lab_exits(&args, Exit::Ok);
    assert_eq!(receiver.sessions("sampled").len(), 3);

    let page = receiver.read("book/src/sampled/replications.md");
    assert_machines_described(&page);
    assert_verdict_per_machine(&receiver, &page);
    let summary = receiver.read("book/src/SUMMARY.md");
    assert!(
        summary.contains("  - [Replications](sampled/replications.md)\n"),
        "{summary}"
    );
    let chapter = receiver.read("book/src/sampled/index.md");
    assert!(
        chapter.contains("> **Replications.** Measured on 3 machines"),
        "{chapter}"
    );

    // One machine: no page, and the chapter stays as it was.
    assert!(!project.path("book/src/sampled/replications.md").exists());
}
