//! Directory walking with the include and exclude rules.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::{SkipReason, Skipped};
use crate::config::IndexConfig;

/// Files not indexed because their type is not listed (`index.include_extensions`,
/// `index.include_file_names`), by extension (or by name, without one).
pub type Unlisted = std::collections::BTreeMap<String, usize>;

/// A file that passed the path rules; its content is not read yet.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub abs_path: PathBuf,
    /// Relative to the root, `/`-separated.
    pub rel_path: String,
}

/// Walks one root with the configured rules.
#[derive(Debug, Clone)]
pub struct Walker {
    root: PathBuf,
    include_paths: Vec<String>,
    extensions: HashSet<String>,
    file_names: HashSet<String>,
    exclude_names: HashSet<String>,
    exclude_globs: GlobSet,
    secret_names: HashSet<String>,
    secret_globs: GlobSet,
    respect_gitignore: bool,
}

impl Walker {
    pub fn new(root: &Path, cfg: &IndexConfig) -> Result<Self, globset::Error> {
        let (exclude_names, exclude_globs) = names_and_globs(&cfg.exclude_paths, false)?;
        let (secret_names, secret_globs) = names_and_globs(&cfg.secret_files, true)?;
        Ok(Self {
            root: root.to_owned(),
            secret_names,
            secret_globs,
            include_paths: cfg.include_paths.clone(),
            extensions: cfg
                .include_extensions
                .iter()
                .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
                .collect(),
            file_names: cfg.include_file_names.iter().cloned().collect(),
            exclude_names,
            exclude_globs,
            respect_gitignore: cfg.respect_gitignore,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether a relative path passes the exclude rules (every component is checked).
    pub fn is_excluded(&self, rel_path: &str) -> bool {
        rel_path.split('/').any(|c| self.exclude_names.contains(c))
            || self.exclude_globs.is_match(rel_path)
    }

    /// Whether a file is one of `index.secret_files`: by its name, or by its path for a
    /// pattern with a `/`.
    pub fn is_secret(&self, rel_path: &str) -> bool {
        let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
        self.secret_names.contains(name)
            || self.secret_globs.is_match(name)
            || self.secret_globs.is_match(rel_path)
    }

    /// Whether a file name is one we index (by extension or by name). Editors' temporary
    /// files never are.
    pub fn is_included_name(&self, rel_path: &str) -> bool {
        let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
        if is_editor_temp(name) {
            return false;
        }
        if self.file_names.contains(name) {
            return true;
        }
        let ext = super::file_type_of(rel_path);
        !ext.is_empty() && self.extensions.contains(&ext)
    }

    /// Whether a relative path lies inside the configured `include_paths` (all paths do when
    /// there are none).
    pub fn is_in_scope(&self, rel_path: &str) -> bool {
        self.include_paths.is_empty()
            || self.include_paths.iter().any(|p| {
                let p = p.trim_matches('/');
                p.is_empty() || within(rel_path, p)
            })
    }

    /// Walks the root: the candidates, the files skipped with a reason, and how many files of
    /// each unlisted type (extension, or the name when it has none) the walk passed over.
    /// Blocking: run it on a blocking thread.
    pub fn walk(&self) -> (Vec<Candidate>, Vec<Skipped>, Unlisted) {
        let starts: Vec<PathBuf> = if self.include_paths.is_empty() {
            vec![self.root.clone()]
        } else {
            self.include_paths
                .iter()
                .map(|p| self.root.join(p))
                .collect()
        };
        self.walk_from(starts, |_| true)
    }

    /// The candidates among `paths` (relative; files or directories, present or not), by
    /// exactly the rules of [`Walker::walk`]: the walk descends only into the directories on the
    /// way to a named path, so every `.gitignore` on the way applies. Blocking.
    pub fn walk_paths(&self, paths: &[String]) -> (Vec<Candidate>, Vec<Skipped>) {
        let targets: Vec<String> = paths
            .iter()
            .map(|p| p.trim_matches('/').to_owned())
            .filter(|p| !p.is_empty() && !self.is_excluded(p) && self.is_in_scope(p))
            .collect();
        if targets.is_empty() {
            return (Vec::new(), Vec::new());
        }
        // A file is kept when it is a target or inside one; a directory is entered when it is
        // either, or leads to a target.
        let wanted = move |rel: &str| targets.iter().any(|t| within(rel, t) || within(t, rel));
        let (candidates, skipped, _) = self.walk_from(vec![self.root.clone()], wanted);
        (candidates, skipped)
    }

    /// The directories under `start` (itself included) that a walk enters: the ones a watcher
    /// needs. Ignored and excluded directories are left out. Blocking.
    pub fn directories(&self, start: &Path) -> Vec<PathBuf> {
        // A directory made inside an environment (pip filling it): the walk would not enter it.
        if self.in_environment(start) {
            return Vec::new();
        }
        self.builder(start, |_| true)
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_dir()))
            .map(ignore::DirEntry::into_path)
            .collect()
    }

    /// A walk from `start` with the configured rules, entering only what passes `wanted`.
    fn builder(
        &self,
        start: &Path,
        wanted: impl Fn(&str) -> bool + Send + Sync + 'static,
    ) -> ignore::WalkBuilder {
        let mut builder = ignore::WalkBuilder::new(start);
        builder
            .follow_links(false)
            .hidden(false)
            .git_ignore(self.respect_gitignore)
            .git_global(self.respect_gitignore)
            .git_exclude(self.respect_gitignore)
            .ignore(self.respect_gitignore)
            .parents(self.respect_gitignore)
            // Honour .gitignore even outside a git repository (an unpacked tarball).
            .require_git(false);
        let this = self.clone();
        builder.filter_entry(move |entry| match this.rel(entry.path()) {
            Some(rel) if !rel.is_empty() => {
                !this.is_excluded(&rel)
                    && wanted(&rel)
                    && !(entry.file_type().is_some_and(|t| t.is_dir())
                        && is_environment(entry.path()))
            }
            _ => true,
        });
        builder
    }

    /// Whether `dir` is inside a Python or conda environment below the root (the root itself
    /// may be one: it was asked for).
    fn in_environment(&self, dir: &Path) -> bool {
        dir.ancestors()
            .take_while(|d| *d != self.root && d.starts_with(&self.root))
            .any(is_environment)
    }

    /// Walks from each start, visiting only entries whose relative path passes `wanted` (and
    /// the exclude rules).
    fn walk_from(
        &self,
        starts: Vec<PathBuf>,
        wanted: impl Fn(&str) -> bool + Clone + Send + Sync + 'static,
    ) -> (Vec<Candidate>, Vec<Skipped>, Unlisted) {
        let mut candidates = Vec::new();
        let mut skipped = Vec::new();
        let mut unlisted = Unlisted::new();
        for start in starts {
            let builder = self.builder(&start, wanted.clone());
            for entry in builder.build() {
                let entry = match entry {
                    Ok(e) => e,
                    Err(err) => {
                        tracing::warn!(error = %err, "walk error");
                        continue;
                    }
                };
                let Some(file_type) = entry.file_type() else {
                    continue;
                };
                if file_type.is_dir() {
                    continue;
                }
                let Some(rel_path) = self.rel(entry.path()) else {
                    continue;
                };
                if !self.is_included_name(&rel_path) {
                    let name = rel_path.rsplit('/').next().unwrap_or(&rel_path);
                    if file_type.is_file() && !is_editor_temp(name) {
                        let ext = super::file_type_of(&rel_path);
                        let kind = if ext.is_empty() { name.to_owned() } else { ext };
                        *unlisted.entry(kind).or_default() += 1;
                    }
                    continue;
                }
                if self.is_secret(&rel_path) {
                    skipped.push(Skipped {
                        rel_path,
                        reason: SkipReason::Secret,
                    });
                    continue;
                }
                // `rel` read its undecodable bytes as U+FFFD: two such names could be one path.
                if entry
                    .path()
                    .strip_prefix(&self.root)
                    .is_ok_and(|r| r.to_str().is_none())
                {
                    skipped.push(Skipped {
                        rel_path,
                        reason: SkipReason::NameNotUtf8,
                    });
                    continue;
                }
                if file_type.is_symlink() {
                    let reason = match std::fs::metadata(entry.path()) {
                        Err(_) => SkipReason::BrokenSymlink,
                        Ok(_) => SkipReason::Symlink,
                    };
                    skipped.push(Skipped { rel_path, reason });
                    continue;
                }
                if !file_type.is_file() {
                    continue;
                }
                candidates.push(Candidate {
                    abs_path: entry.into_path(),
                    rel_path,
                });
            }
        }
        candidates.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
        candidates.dedup_by(|a, b| a.rel_path == b.rel_path);
        (candidates, skipped, unlisted)
    }

    /// The `/`-separated path of `path` relative to the root, if it is inside it.
    pub fn rel(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.root).ok()?;
        let mut out = String::new();
        for (i, part) in rel.components().enumerate() {
            if i > 0 {
                out.push('/');
            }
            out.push_str(&part.as_os_str().to_string_lossy());
        }
        Some(out)
    }
}

/// Path patterns split as the exclude and secret-file rules read them: bare names (matched
/// against a path component or a file name) and globs (anything with `*`, `?`, `[`, `{` or
/// `/`; `literal_separator`: whether `*` stops at `/`).
fn names_and_globs(
    patterns: &[String],
    literal_separator: bool,
) -> Result<(HashSet<String>, GlobSet), globset::Error> {
    let mut names = HashSet::new();
    let mut globs = GlobSetBuilder::new();
    for pattern in patterns {
        if pattern.contains(['*', '?', '[', '{', '/']) {
            let pattern = pattern.trim_start_matches('/');
            globs.add(
                GlobBuilder::new(pattern)
                    .literal_separator(literal_separator)
                    .build()?,
            );
        } else {
            names.insert(pattern.clone());
        }
    }
    Ok((names, globs.build()?))
}

/// Whether `path` is `dir` or lies inside it (both relative, `/`-separated).
fn within(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Whether a directory is a Python virtual environment (`python -m venv`, virtualenv, uv, tox's
/// environments: each has `pyvenv.cfg` at its top, PEP 405) or a conda environment
/// (`conda-meta/`). Such a directory holds installed packages, thousands of files that are
/// not the project's (714 Python files in a fresh venv of Python 3.11), and is not indexed
/// whether or not a `.gitignore` names it: venvs made before Python 3.13 carry none.
fn is_environment(dir: &Path) -> bool {
    let found = dir.join("pyvenv.cfg").is_file() || dir.join("conda-meta").is_dir();
    if found {
        tracing::debug!(dir = %dir.display(), "not indexed: a Python or conda environment");
    }
    found
}

/// Temporary files editors write beside the real one: vim's `4913` probe, `name~` backups and
/// `.name.swp` swap files, Emacs' `.#name` locks and `#name#` autosaves, JetBrains'
/// `name___jb_tmp___` / `name___jb_old___` safe-write copies.
pub fn is_editor_temp(name: &str) -> bool {
    name == "4913"
        || name.ends_with('~')
        || name.starts_with(".#")
        || (name.starts_with('#') && name.ends_with('#'))
        || name.ends_with("___jb_tmp___")
        || name.ends_with("___jb_old___")
        || (name.starts_with('.') && [".swp", ".swo", ".swx"].iter().any(|s| name.ends_with(s)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::fs;

    #[test]
    fn walks_with_rules_gitignore_and_symlinks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let write = |p: &str, s: &str| {
            let path = root.join(p);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(path, s).expect("write");
        };
        write("src/a.ts", "export const a = 1;");
        write("src/b.png", "x");
        write("node_modules/x/index.js", "x");
        write("dist/out.js", "x");
        write("lib/gen.min.js", "x");
        write("ignored/c.ts", "x");
        write(".gitignore", "ignored/\n");
        write("Makefile", "all:");
        std::os::unix::fs::symlink(root.join("nowhere.ts"), root.join("src/broken.ts"))
            .expect("symlink");
        std::os::unix::fs::symlink(root.join("src"), root.join("loop")).expect("symlink");

        let cfg = Config::defaults().expect("defaults");
        let w = Walker::new(root, &cfg.index).expect("walker");
        let (cands, skipped, unlisted) = w.walk();
        let paths: Vec<_> = cands.iter().map(|c| c.rel_path.as_str()).collect();
        assert_eq!(paths, vec!["Makefile", "src/a.ts"]);
        // Counted: files the rules let through but whose type is not indexed (not the ignored
        // or excluded ones).
        let unlisted: Vec<(&str, usize)> = unlisted.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        assert_eq!(unlisted, vec![(".gitignore", 1), ("png", 1)]);
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].rel_path, "src/broken.ts");
        assert_eq!(skipped[0].reason, SkipReason::BrokenSymlink);

        // The same rules for named paths: a changed file, an ignored one, a directory, a gone one.
        write("src/deep/d.ts", "x");
        write("src/a.ts~", "x");
        write("src/.#a.ts", "x");
        let (cands, _) = w.walk_paths(&[
            "src/a.ts".into(),
            "src/a.ts~".into(),
            "src/.#a.ts".into(),
            "ignored/c.ts".into(),
            "node_modules/x/index.js".into(),
            "src/deep".into(),
            "src/gone.ts".into(),
        ]);
        let paths: Vec<_> = cands.iter().map(|c| c.rel_path.as_str()).collect();
        assert_eq!(paths, vec!["src/a.ts", "src/deep/d.ts"]);
    }

    #[test]
    fn python_and_conda_environments_are_not_walked_unless_they_are_the_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let write = |p: &str| {
            let path = root.join(p);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(path, "x = 1\n").expect("write");
        };
        write("app/main.py");
        write(".venv/pyvenv.cfg");
        write(".venv/lib/python3.11/site-packages/pip/__init__.py");
        write("env/pyvenv.cfg");
        write("env/lib/python3.11/site-packages/six.py");
        write(".tox/py311/pyvenv.cfg");
        write(".tox/py311/lib/python3.11/site-packages/attr/__init__.py");
        write("conda/conda-meta/history");
        write("conda/lib/python3.12/site-packages/numpy/__init__.py");
        // A file merely named like the marker is no environment's.
        write("docs/pyvenv.cfg.py");

        let cfg = Config::defaults().expect("defaults");
        let w = Walker::new(root, &cfg.index).expect("walker");
        let paths = |cands: Vec<Candidate>| -> Vec<String> {
            cands.into_iter().map(|c| c.rel_path).collect()
        };
        assert_eq!(paths(w.walk().0), vec!["app/main.py", "docs/pyvenv.cfg.py"]);
        let (named, _) = w.walk_paths(&[
            ".venv/lib/python3.11/site-packages/pip/__init__.py".into(),
            "env".into(),
            "app/main.py".into(),
        ]);
        assert_eq!(paths(named), vec!["app/main.py"]);
        // What a watcher would watch: nothing inside an environment, even from within it.
        assert!(w.directories(&root.join(".venv/lib")).is_empty());
        assert!(
            w.directories(root)
                .iter()
                .all(|d| !d.starts_with(root.join(".venv")) && !d.starts_with(root.join("conda")))
        );
        // Asked for as the root, an environment is walked.
        let venv = Walker::new(&root.join(".venv"), &cfg.index).expect("walker");
        assert_eq!(
            paths(venv.walk().0),
            vec!["lib/python3.11/site-packages/pip/__init__.py"]
        );
    }

    #[test]
    fn a_file_whose_name_is_not_utf8_is_skipped_and_said_so() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        fs::create_dir_all(root.join("src")).expect("mkdir");
        fs::write(root.join("src/ok.py"), "x = 1\n").expect("write");
        // `café.py` and `cafè.py` in Latin-1: both would read `caf\u{FFFD}.py`.
        for name in [&b"caf\xe9.py"[..], &b"caf\xe8.py"[..]] {
            let path = root.join("src").join(std::ffi::OsStr::from_bytes(name));
            fs::write(path, "y = 2\n").expect("write");
        }
        let cfg = Config::defaults().expect("defaults");
        let w = Walker::new(root, &cfg.index).expect("walker");
        let (cands, skipped, _) = w.walk();
        let paths: Vec<_> = cands.iter().map(|c| c.rel_path.as_str()).collect();
        assert_eq!(paths, ["src/ok.py"]);
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert!(skipped.iter().all(|s| s.reason == SkipReason::NameNotUtf8));
        assert_eq!(skipped[0].rel_path, "src/caf\u{FFFD}.py");
    }

    #[test]
    fn editor_temp_files() {
        for name in [
            "4913",
            "a.rs~",
            ".#a.rs",
            "#a.rs#",
            "a.rs___jb_tmp___",
            ".a.rs.swp",
        ] {
            assert!(is_editor_temp(name), "{name}");
        }
        for name in ["a.rs", "main.go", ".gitignore", "4914"] {
            assert!(!is_editor_temp(name), "{name}");
        }
    }
}
