//! `lab book --serve`: the built HTML on a loopback port, rebuilt when data, notes, lab.toml or
//! templates change, but never while a session is being written (its experiment's lock is
//! held): the book shows finished sessions, and the rebuild waits for the run to end.
//! Requests are answered by a pool of threads, so one client that stops reading stalls only
//! its own thread.

use super::Layout;
use anyhow::{Result, anyhow};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How often the watcher looks for changed inputs.
const POLL: Duration = Duration::from_secs(1);

/// Threads answering requests at once.
const WORKERS: usize = 16;

/// Serves `book/book/` on 127.0.0.1:`port` until interrupted.
pub fn serve(layout: &Layout, port: u16, quiet: bool) -> Result<()> {
    let server = tiny_http::Server::http(("127.0.0.1", port))
        .map_err(|e| anyhow!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    if !quiet {
        eprintln!("serving the book at http://127.0.0.1:{port}/ (Ctrl-C stops)");
    }
    let site = layout.book().join("book");
    let root = layout.root.clone();
    std::thread::spawn(move || watch(&Layout::new(root), quiet));
    let server = std::sync::Arc::new(server);
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (server, site) = (std::sync::Arc::clone(&server), site.clone());
            std::thread::spawn(move || {
                while let Ok(request) = server.recv() {
                    let response = respond(&site, request.url());
                    let _ = request.respond(response);
                }
            })
        })
        .collect();
    for worker in workers {
        let _ = worker.join();
    }
    Ok(())
}

/// True while some experiment's session is being written.
fn session_running(layout: &Layout) -> bool {
    layout
        .experiment_dirs()
        .iter()
        .any(|dir| crate::store::is_locked(&layout.data_dir(&crate::config::experiment_name(dir))))
}

/// Re-renders and rebuilds whenever the newest input file changes.
fn watch(layout: &Layout, quiet: bool) {
    let mut seen = newest_input(layout);
    loop {
        std::thread::sleep(POLL);
        let now = newest_input(layout);
        if now == seen || session_running(layout) {
            continue;
        }
        seen = now;
        let result = super::report::report(
            layout,
            &super::ReportOptions {
                only: &[],
                session: None,
                quiet: true,
            },
        )
        .map_err(|e| e.to_string())
        .and_then(|_| super::html::build_html(layout).map_err(|e| e.to_string()));
        match result {
            Ok(_) if !quiet => eprintln!("rebuilt the book"),
            Ok(_) => {}
            Err(e) => eprintln!("error: {e}"),
        }
    }
}

/// The latest modification time under experiments/ and data/.
fn newest_input(layout: &Layout) -> Option<SystemTime> {
    [layout.experiments(), layout.data()]
        .iter()
        .filter_map(|d| newest_in(d))
        .max()
}

fn newest_in(dir: &Path) -> Option<SystemTime> {
    let mut newest = std::fs::metadata(dir).and_then(|m| m.modified()).ok();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let time = if path.is_dir() {
            newest_in(&path)
        } else {
            entry.metadata().and_then(|m| m.modified()).ok()
        };
        newest = newest.max(time);
    }
    newest
}

fn respond(site: &Path, url: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    match resolve(site, url).and_then(|p| std::fs::read(&p).ok().map(|bytes| (p, bytes))) {
        Some((path, bytes)) => {
            let header = tiny_http::Header::from_bytes("Content-Type", content_type(&path))
                .expect("static header is valid");
            tiny_http::Response::from_data(bytes).with_header(header)
        }
        None => tiny_http::Response::from_string("not found").with_status_code(404),
    }
}

/// The file a URL names inside the site, refusing anything that would leave it.
pub fn resolve(site: &Path, url: &str) -> Option<PathBuf> {
    let path = url.split(['?', '#']).next().unwrap_or("/");
    let decoded = percent_decode(path)?;
    let relative = Path::new(decoded.trim_start_matches('/'));
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let mut file = site.join(relative);
    if file.is_dir() {
        file = file.join("index.html");
    }
    file.is_file().then_some(file)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css",
        "js" => "text/javascript",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "json" => "application/json",
        "csv" => "text/csv; charset=utf-8",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_resolve_inside_the_site_only() {
        let site = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(site.path().join("exp")).unwrap();
        std::fs::write(site.path().join("index.html"), "home").unwrap();
        std::fs::write(site.path().join("exp/index.html"), "chapter").unwrap();
        std::fs::write(site.path().join("exp/a b.svg"), "svg").unwrap();
        assert_eq!(
            resolve(site.path(), "/"),
            Some(site.path().join("index.html"))
        );
        assert_eq!(
            resolve(site.path(), "/exp/?x=1"),
            Some(site.path().join("exp/index.html"))
        );
        assert_eq!(
            resolve(site.path(), "/exp/a%20b.svg"),
            Some(site.path().join("exp/a b.svg"))
        );
        assert_eq!(resolve(site.path(), "/../etc/passwd"), None);
        assert_eq!(resolve(site.path(), "/exp/%2e%2e/%2e%2e/x"), None);
        assert_eq!(resolve(site.path(), "/missing.html"), None);
    }
}
