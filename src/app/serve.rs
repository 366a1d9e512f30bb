//! `lab book --serve`: the built HTML on a loopback port, rebuilt when data, notes, lab.toml or
//! an experiment's templates change (see `watch`), but never while a session is being written:
//! the book shows finished sessions. Requests are answered by a pool of threads, so one client
//! that stops reading stalls only its own thread.

use crate::layout::Layout;
use anyhow::{Result, anyhow};
use std::path::{Component, Path, PathBuf};

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
    std::thread::spawn(move || super::watch::watch(&Layout::new(root), quiet));
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

fn respond(site: &Path, url: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    match resolve(site, url).and_then(|p| read_beneath(site, &p).map(|bytes| (p, bytes))) {
        Some((path, bytes)) => {
            let header = tiny_http::Header::from_bytes("Content-Type", content_type(&path))
                .expect("static header is valid");
            tiny_http::Response::from_data(bytes).with_header(header)
        }
        None => tiny_http::Response::from_string("not found").with_status_code(404),
    }
}

/// The bytes of the regular file at `path` in `site`, opened in one step beneath the site with
/// no link on the way (`openat2`): a folder swapped for a link after [`resolve`] looked at it
/// leads nowhere.
fn read_beneath(site: &Path, path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let relative = path.strip_prefix(site).ok()?;
    let mut bytes = Vec::new();
    lab_store::regular::open_beneath(site, relative)
        .ok()?
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// The regular file a URL names inside the site, refusing anything that would leave it: no
/// `..`, and no symbolic link anywhere on the way, the site's own folder included. A folder's
/// URL names its index.html, under the same rule.
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
    let mut file = site.to_path_buf();
    if !real_folder(&file) {
        return None;
    }
    let mut names = relative.components().peekable();
    while let Some(name) = names.next() {
        file.push(name);
        if names.peek().is_some() && !real_folder(&file) {
            return None;
        }
    }
    if real_folder(&file) {
        file.push("index.html");
    }
    std::fs::symlink_metadata(&file)
        .is_ok_and(|m| m.is_file())
        .then_some(file)
}

/// Whether `path` is a folder itself, not a link to one.
fn real_folder(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
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

    /// A site with a regular page and chapter beside links a run planted: to /etc/passwd, to
    /// /etc, to a page outside, and a chapter whose index.html is a link.
    fn site_with_links() -> (tempfile::TempDir, tempfile::TempDir) {
        use std::os::unix::fs::symlink;
        let site = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = site.path();
        std::fs::write(outside.path().join("index.html"), "outside").unwrap();
        std::fs::write(root.join("index.html"), "home").unwrap();
        std::fs::create_dir_all(root.join("exp")).unwrap();
        std::fs::write(root.join("exp/page.html"), "chapter").unwrap();
        std::fs::create_dir_all(root.join("linked-index")).unwrap();
        symlink(
            outside.path().join("index.html"),
            root.join("linked-index/index.html"),
        )
        .unwrap();
        symlink("/etc/passwd", root.join("passwd")).unwrap();
        symlink("/etc", root.join("etc")).unwrap();
        symlink(outside.path(), root.join("outside")).unwrap();
        symlink(root.join("exp"), root.join("exp-link")).unwrap();
        (site, outside)
    }

    #[test]
    fn no_url_leads_through_a_symbolic_link() {
        let (site, _outside) = site_with_links();
        let root = site.path();
        assert_eq!(resolve(root, "/"), Some(root.join("index.html")));
        assert_eq!(
            resolve(root, "/exp/page.html"),
            Some(root.join("exp/page.html"))
        );
        for url in [
            "/passwd",
            "/etc/passwd",
            "/etc/",
            "/outside/",
            "/outside/index.html",
            "/exp-link/page.html",
            "/linked-index/",
            "/linked-index/index.html",
        ] {
            assert_eq!(resolve(root, url), None, "{url}");
        }
    }

    #[test]
    fn a_folder_swapped_for_a_link_after_it_was_resolved_serves_nothing() {
        let (site, _outside) = site_with_links();
        let root = site.path();
        let resolved = resolve(root, "/exp/page.html").unwrap();
        assert!(read_beneath(root, &resolved).is_some());
        // Between resolving and opening, the folder becomes a link to one holding the same name.
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("page.html"), "secret").unwrap();
        std::fs::rename(root.join("exp"), root.join("exp-was")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), root.join("exp")).unwrap();
        assert_eq!(read_beneath(root, &resolved), None);
    }

    #[test]
    fn a_site_folder_that_is_a_link_serves_nothing() {
        let (site, _outside) = site_with_links();
        let holder = tempfile::tempdir().unwrap();
        let linked = holder.path().join("book");
        std::os::unix::fs::symlink(site.path(), &linked).unwrap();
        assert_eq!(resolve(&linked, "/"), None);
        assert_eq!(resolve(&linked, "/exp/page.html"), None);
    }

    #[test]
    fn links_and_fifos_answer_404_and_regular_files_200() {
        let (site, _outside) = site_with_links();
        let root = site.path();
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("fifo.html"))
            .status()
            .unwrap();
        assert!(made.success());
        let status = |url: &str| respond(root, url).status_code().0;
        assert_eq!(status("/exp/page.html"), 200);
        assert_eq!(status("/"), 200);
        for url in [
            "/passwd",
            "/etc/passwd",
            "/outside/",
            "/fifo.html",
            "/missing",
        ] {
            assert_eq!(status(url), 404, "{url}");
        }
    }
}
