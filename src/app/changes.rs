//! What a changed path asks `lab book --serve` to rebuild: `experiments/FOLDER/…` and
//! `data/NAME/…` belong to one experiment, whose chapter alone is re-rendered; anything else
//! under them (an experiment folder appearing or going, a file beside the folders) rebuilds
//! every chapter. lab's own working files (the writer's lock, spool files, a session folder
//! being assembled) are no change: a session rewrites them on every run.

use crate::layout::Layout;
use lab_config as config;
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// The experiment a change belongs to, as its path names it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Owner {
    /// Under `experiments/FOLDER/`: its lab.toml, notes.md, templates.
    Folder(String),
    /// Under `data/NAME/`: its sessions, noise measurements and baselines.
    Data(String),
}

/// What one changed path asks for.
#[derive(Debug, PartialEq)]
pub(super) enum Change {
    Nothing,
    Chapter(Owner),
    Everything,
}

/// The changes gathered since the last rebuild.
#[derive(Debug, Default, PartialEq)]
pub(super) enum Pending {
    #[default]
    Nothing,
    Chapters(BTreeSet<Owner>),
    Everything,
}

impl Pending {
    pub(super) fn add(&mut self, change: Change) {
        match (&mut *self, change) {
            (_, Change::Nothing) | (Pending::Everything, _) => {}
            (_, Change::Everything) => *self = Pending::Everything,
            (Pending::Chapters(owners), Change::Chapter(owner)) => {
                owners.insert(owner);
            }
            (Pending::Nothing, Change::Chapter(owner)) => {
                *self = Pending::Chapters(BTreeSet::from([owner]));
            }
        }
    }

    pub(super) fn merge(&mut self, other: Pending) {
        match other {
            Pending::Nothing => {}
            Pending::Everything => self.add(Change::Everything),
            Pending::Chapters(owners) => {
                for owner in owners {
                    self.add(Change::Chapter(owner));
                }
            }
        }
    }
}

/// What a change at `path` (under experiments/ or data/, as the watcher names it) asks for.
pub(super) fn change_at(layout: &Layout, path: &Path) -> Change {
    let (rest, owner): (&Path, fn(String) -> Owner) =
        if let Ok(rest) = path.strip_prefix(layout.experiments()) {
            (rest, Owner::Folder)
        } else if let Ok(rest) = path.strip_prefix(layout.data()) {
            (rest, Owner::Data)
        } else {
            return Change::Nothing;
        };
    if rest
        .components()
        .any(|c| lab_store::is_working_name(c.as_os_str()))
    {
        return Change::Nothing;
    }
    change_under(rest, owner)
}

/// A change somewhere inside `folder`, an entry of experiments/ or data/: that experiment's.
pub(super) fn change_inside(layout: &Layout, folder: &Path) -> Change {
    let name = folder.file_name().map(|n| n.to_string_lossy().into_owned());
    match (folder.parent(), name) {
        (Some(tree), Some(name)) if tree == layout.experiments() => {
            Change::Chapter(Owner::Folder(name))
        }
        (Some(tree), Some(name)) if tree == layout.data() => Change::Chapter(Owner::Data(name)),
        _ => Change::Everything,
    }
}

/// A change at `rest` below experiments/ or data/: inside one experiment's folder it is that
/// experiment's; the folders themselves, or anything beside them, are everyone's.
fn change_under(rest: &Path, owner: fn(String) -> Owner) -> Change {
    let mut names = rest.components();
    match (names.next(), names.next()) {
        (Some(Component::Normal(name)), Some(_)) => {
            Change::Chapter(owner(name.to_string_lossy().into_owned()))
        }
        _ => Change::Everything,
    }
}

/// What a rebuild re-renders.
#[derive(Debug, PartialEq)]
pub(super) enum Render {
    /// No chapter that changed has a session to show.
    Nothing,
    /// These experiment folders' chapters.
    Only(Vec<PathBuf>),
    Everything,
}

/// The experiment folders whose chapters `pending` asks for, left out those with no session
/// to show (a full rebuild skips them too); an owner that is no experiment now (a folder just
/// made or removed) asks for everything.
pub(super) fn to_render(layout: &Layout, pending: &Pending) -> Render {
    let owners = match pending {
        Pending::Nothing => return Render::Nothing,
        Pending::Everything => return Render::Everything,
        Pending::Chapters(owners) => owners,
    };
    let experiments = layout.experiment_dirs();
    let mut dirs = BTreeSet::new();
    for owner in owners {
        match experiment_of(&experiments, owner) {
            Some(dir) => dirs.insert(dir),
            None => return Render::Everything,
        };
    }
    dirs.retain(|dir| has_session(layout, dir));
    if dirs.is_empty() {
        Render::Nothing
    } else {
        Render::Only(dirs.into_iter().collect())
    }
}

/// The experiment folder among `experiments` that `owner` names.
fn experiment_of(experiments: &[PathBuf], owner: &Owner) -> Option<PathBuf> {
    experiments
        .iter()
        .find(|dir| match owner {
            Owner::Folder(folder) => dir.file_name().is_some_and(|n| n == folder.as_str()),
            Owner::Data(name) => config::experiment_name(dir) == *name,
        })
        .cloned()
}

fn has_session(layout: &Layout, dir: &Path) -> bool {
    !lab_store::sessions(&layout.data_dir(&config::experiment_name(dir))).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chapter(owner: Owner) -> Change {
        Change::Chapter(owner)
    }

    #[test]
    fn a_path_inside_an_experiment_belongs_to_it() {
        let layout = Layout::new(".");
        let folder = |name: &str| chapter(Owner::Folder(name.into()));
        let data = |name: &str| chapter(Owner::Data(name.into()));
        for (path, change) in [
            ("experiments/a/notes.md", folder("a")),
            ("experiments/a/templates/chapter.md", folder("a")),
            ("data/a/20261130T000000Z-h/runs.csv", data("a")),
            ("data/a/20261130T000000Z-h/logs/r1.out", data("a")),
            ("data/a/noise/20261130T000000Z-h", data("a")),
            ("experiments/new", Change::Everything),
            ("data/new", Change::Everything),
            ("experiments", Change::Everything),
            ("experiments/README.md", Change::Everything),
            ("book/src/a/index.md", Change::Nothing),
            ("Cargo.toml", Change::Nothing),
        ] {
            assert_eq!(change_at(&layout, Path::new(path)), change, "{path}");
        }
    }

    #[test]
    fn labs_working_files_are_no_change() {
        let layout = Layout::new(".");
        for path in [
            "data/a/.lock",
            "data/a/20261130T000000Z-h/logs/.spool.out",
            "data/a/20261130T000000Z-h/logs/.spool.err",
            "data/a/.20261130T000000Z-h.partial",
            "data/a/.20261130T000000Z-h.partial/logs/r1.out",
            "data/a/20261130T000000Z-h/logs/.r0007.out",
            "data/a/20261130T000000Z-h/logs/.r0007.err",
            "data/a/.20261202T000000Z-h.derived/runs.csv",
        ] {
            assert_eq!(
                change_at(&layout, Path::new(path)),
                Change::Nothing,
                "{path}"
            );
        }
        assert_eq!(
            change_at(&layout, Path::new("data/a/20261130T000000Z-h/partial")),
            chapter(Owner::Data("a".into()))
        );
    }

    #[test]
    fn paths_under_another_root_are_read_against_it() {
        let layout = Layout::new("/p");
        assert_eq!(
            change_at(&layout, Path::new("/p/experiments/a/lab.toml")),
            chapter(Owner::Folder("a".into()))
        );
        assert_eq!(
            change_at(&layout, Path::new("/q/experiments/a/lab.toml")),
            Change::Nothing
        );
    }

    #[test]
    fn pending_gathers_chapters_until_one_change_asks_for_everything() {
        let mut pending = Pending::default();
        pending.add(Change::Nothing);
        assert_eq!(pending, Pending::Nothing);
        pending.add(chapter(Owner::Folder("b".into())));
        pending.add(chapter(Owner::Data("a".into())));
        pending.add(chapter(Owner::Folder("b".into())));
        let owners = BTreeSet::from([Owner::Folder("b".into()), Owner::Data("a".into())]);
        assert_eq!(pending, Pending::Chapters(owners.clone()));
        let mut merged = Pending::default();
        merged.merge(pending);
        merged.merge(Pending::Nothing);
        assert_eq!(merged, Pending::Chapters(owners));
        merged.add(Change::Everything);
        merged.add(chapter(Owner::Folder("c".into())));
        assert_eq!(merged, Pending::Everything);
    }

    /// A project with experiments `a` (one session), `b` (none) and `c` (one session).
    fn project() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for name in ["a", "b", "c"] {
            let dir = root.path().join("experiments").join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(config::FILE_NAME), "").unwrap();
        }
        for name in ["a", "c"] {
            let session = root.path().join("data").join(name).join("s1");
            std::fs::create_dir_all(&session).unwrap();
            std::fs::write(session.join(lab_store::MANIFEST), "{}").unwrap();
        }
        root
    }

    #[test]
    fn only_the_changed_experiments_with_a_session_are_rendered() {
        let root = project();
        let layout = Layout::new(root.path());
        let pending = |owners: &[Owner]| Pending::Chapters(owners.iter().cloned().collect());
        let dir = |name: &str| layout.experiments().join(name);
        assert_eq!(
            to_render(
                &layout,
                &pending(&[Owner::Folder("a".into()), Owner::Data("c".into())])
            ),
            Render::Only(vec![dir("a"), dir("c")])
        );
        assert_eq!(
            to_render(&layout, &pending(&[Owner::Folder("b".into())])),
            Render::Nothing
        );
        assert_eq!(
            to_render(&layout, &pending(&[Owner::Data("gone".into())])),
            Render::Everything
        );
        assert_eq!(to_render(&layout, &Pending::Nothing), Render::Nothing);
        assert_eq!(to_render(&layout, &Pending::Everything), Render::Everything);
    }
}
