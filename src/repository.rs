//! Which repositories a process indexes, and under which names.
//!
//! Roots come from the command line and from `[[repositories]]`. Each gets a name (its own,
//! `--repository` for a single command-line root, else the directory's name), a workspace and
//! its index rules. Names are the keys the chunks are stored under, so two roots may never
//! share one: [`resolve`] refuses that at start-up with advice, and the store refuses a name
//! recorded for another root that still exists ([`crate::store::StoreError::NameTaken`]).
//! Only the root that owns a name ever sweeps its files.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use thiserror::Error;

use crate::config::{Config, IndexConfig, check_repository_name, check_workspace_name};
use crate::scan::Classifier;
use crate::store::Origin;

#[derive(Debug, Error)]
pub enum RepositoryError {
    #[error("{path} is not a readable directory: {message}")]
    Root { path: String, message: String },
    #[error("invalid index rule for repository `{name}`: {source}")]
    Rules {
        name: String,
        source: globset::Error,
    },
    #[error("{0}")]
    Invalid(String),
    #[error(
        "two roots would both be repository `{name}`: {first} and {second}; each root needs a \
         name of its own: name them on the command line as NAME=PATH (`codesearch serve \
         one-{name}={first} two-{name}={second}`), or list them in the configuration as \
         [[repositories]] with `path` and `name`"
    )]
    NameClash {
        name: String,
        first: String,
        second: String,
    },
}

/// One repository: its name for its root, its workspace and its index rules. Cheap to clone.
#[derive(Clone)]
pub struct Repository {
    pub name: String,
    /// Canonical; or absolute as given, for a root awaited ([`root_or_awaited`]).
    pub root: PathBuf,
    pub workspace: String,
    pub origin: Origin,
    pub git_url: Option<String>,
    rules: Arc<Rules>,
}

struct Rules {
    cfg: IndexConfig,
    classifier: Classifier,
}

impl std::fmt::Debug for Repository {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repository")
            .field("name", &self.name)
            .field("root", &self.root)
            .field("workspace", &self.workspace)
            .field("origin", &self.origin)
            .finish()
    }
}

impl Repository {
    /// A repository of `root` (made canonical here) with these rules.
    pub fn new(
        name: &str,
        root: &Path,
        workspace: &str,
        origin: Origin,
        rules: IndexConfig,
    ) -> Result<Self, RepositoryError> {
        Self::at(name, canonical_root(root)?, workspace, origin, rules)
    }

    /// A repository of `root` as it is, already resolved ([`canonical_root`] or
    /// [`root_or_awaited`]), with these rules.
    pub fn at(
        name: &str,
        root: PathBuf,
        workspace: &str,
        origin: Origin,
        rules: IndexConfig,
    ) -> Result<Self, RepositoryError> {
        check_repository_name(name).map_err(RepositoryError::Invalid)?;
        check_workspace_name(workspace).map_err(RepositoryError::Invalid)?;
        let classifier = Classifier::new(&rules).map_err(|source| RepositoryError::Rules {
            name: name.to_owned(),
            source,
        })?;
        Ok(Self {
            name: name.to_owned(),
            root,
            workspace: workspace.to_owned(),
            origin,
            git_url: None,
            rules: Arc::new(Rules {
                cfg: rules,
                classifier,
            }),
        })
    }

    /// The same repository, cloned from `url`.
    pub fn with_git_url(mut self, url: &str) -> Self {
        self.git_url = Some(url.to_owned());
        self
    }

    /// The index rules (include and exclude paths, module and component rules, limits).
    pub fn rules(&self) -> &IndexConfig {
        &self.rules.cfg
    }

    pub fn classifier(&self) -> &Classifier {
        &self.rules.classifier
    }
}

/// The name a root gets when nothing names it: its directory's name.
pub fn default_name(root: &Path) -> String {
    root.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".to_owned())
}

/// What [`resolve`] does with a configured root that does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingRoot {
    /// Refuse it: a one-shot index of it has nothing to read.
    Refuse,
    /// Keep it ([`root_or_awaited`]): a daemon serves the other repositories, and this
    /// one's index, and indexes it once its root is there.
    Await,
}

/// The repositories of this run: the command-line `paths` (named by `index.repository` when
/// there is one path, else by their directories) and the configured `[[repositories]]`, in
/// the default workspace unless configured otherwise. With neither, the working directory if it
/// is a git repository's root (it holds `.git`), else none. Refuses two roots that would share
/// a name, and `index.repository` for several paths. A command-line path that does not exist is
/// always refused (a typo says so at once); a configured one as `missing` says.
pub fn resolve(
    config: &Config,
    paths: &[PathBuf],
    missing: MissingRoot,
) -> Result<Vec<Repository>, RepositoryError> {
    let default_ws = &config.workspaces.default;
    let mut out: Vec<Repository> = Vec::new();
    let named = !config.index.repository.is_empty();
    if named && paths.len() > 1 {
        return Err(RepositoryError::Invalid(format!(
            "--repository (index.repository = {:?}) names one repository, but {} roots were \
             given; several roots need a name each: list them as [[repositories]] with `path` \
             and `name` in the configuration",
            config.index.repository,
            paths.len()
        )));
    }
    // With nothing named, the working directory when it is a git repository's root: a daemon
    // started elsewhere (in /tmp, in a home directory) would index whatever lies there into
    // the shared index.
    let cli_paths: Vec<PathBuf> = if paths.is_empty() && config.repositories.is_empty() {
        if Path::new(".git").exists() {
            vec![PathBuf::from(".")]
        } else {
            Vec::new()
        }
    } else {
        paths.to_vec()
    };
    for path in &cli_paths {
        let (given, path) = named_path(path);
        let root = canonical_root(&path)?;
        let name = match given {
            Some(name) if named && name != config.index.repository => {
                return Err(RepositoryError::Invalid(format!(
                    "{} is named {name:?}, but --repository (index.repository) names it {:?}; \
                     give one name: drop --repository, or the NAME= before the path",
                    path.display(),
                    config.index.repository
                )));
            }
            Some(name) => name,
            None if named => config.index.repository.clone(),
            None => default_name(&root),
        };
        push(
            &mut out,
            Repository::new(
                &name,
                &root,
                default_ws,
                Origin::Local,
                config.index.clone(),
            )?,
        )?;
    }
    for r in &config.repositories {
        let ws = r.workspace.as_deref().unwrap_or(default_ws);
        let rules = r.rules(&config.index);
        let root = match missing {
            MissingRoot::Refuse => canonical_root(&r.path)?,
            MissingRoot::Await => root_or_awaited(&r.path)?,
        };
        let name = r.name.clone().unwrap_or_else(|| default_name(&root));
        let repo = Repository::at(&name, root, ws, Origin::Local, rules)?;
        if !repo.root.is_dir() {
            tracing::warn!(repository = %repo.name, root = %repo.root.display(),
                "a configured repository's root is not there: serving its index as it is, and \
                 indexing it once the root is there");
        }
        push(&mut out, repo)?;
    }
    Ok(out)
}

/// A command-line root as `NAME=PATH` (`one-app=~/one/app`): the name it is given and its
/// path. A path that exists as written is a path, `=` or not; so is one whose part before the
/// first `=` holds a `/`. A PATH starting `~/` is under `$HOME`: bash expands it after `=`,
/// other shells leave it.
fn named_path(arg: &Path) -> (Option<String>, PathBuf) {
    if arg.exists() {
        return (None, arg.to_owned());
    }
    match arg.to_str().and_then(|a| a.split_once('=')) {
        Some((name, path)) if !name.is_empty() && !name.contains('/') && !path.is_empty() => {
            let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
            let path = match (path.strip_prefix("~/"), home) {
                (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
                _ => PathBuf::from(path),
            };
            (Some(name.to_owned()), path)
        }
        _ => (None, arg.to_owned()),
    }
}

/// Adds `repo` unless its root is already there under the same name; refuses a name or a
/// root that two entries would share.
fn push(out: &mut Vec<Repository>, repo: Repository) -> Result<(), RepositoryError> {
    for seen in out.iter() {
        if seen.root == repo.root {
            if seen.name == repo.name && seen.workspace == repo.workspace {
                return Ok(()); // the same root given twice
            }
            return Err(RepositoryError::Invalid(format!(
                "{} is given twice, as repository `{}` ({}) and `{}` ({}); give it once",
                repo.root.display(),
                seen.name,
                seen.workspace,
                repo.name,
                repo.workspace
            )));
        }
        if seen.name == repo.name {
            return Err(RepositoryError::NameClash {
                name: repo.name.clone(),
                first: seen.root.display().to_string(),
                second: repo.root.display().to_string(),
            });
        }
    }
    out.push(repo);
    Ok(())
}

/// `root` resolved, or, when nothing is there (or a symlink to nothing), made absolute as given:
/// a daemon serves the repository's index, says the root is gone, and indexes it once it is
/// there (an unmounted volume at boot, a checkout being moved). A root that exists is still
/// refused when it is not a readable directory.
pub fn root_or_awaited(root: &Path) -> Result<PathBuf, RepositoryError> {
    match std::fs::metadata(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::path::absolute(root).map_err(|e| RepositoryError::Root {
                path: root.display().to_string(),
                message: e.to_string(),
            })
        }
        _ => canonical_root(root),
    }
}

/// `root` resolved (symlinks, `..`), and a directory.
pub fn canonical_root(root: &Path) -> Result<PathBuf, RepositoryError> {
    let canonical = std::fs::canonicalize(root).map_err(|e| RepositoryError::Root {
        path: root.display().to_string(),
        message: e.to_string(),
    })?;
    if !canonical.is_dir() {
        return Err(RepositoryError::Root {
            path: canonical.display().to_string(),
            message: "not a directory".into(),
        });
    }
    Ok(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(repository: &str, toml_repos: &str) -> Config {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("c.toml");
        std::fs::write(&file, toml_repos).expect("write");
        let mut c = Config::load(Some(&file), |_| None, &[]).expect("config");
        c.index.repository = repository.to_owned();
        c
    }

    fn resolve_refusing(c: &Config, paths: &[PathBuf]) -> Result<Vec<Repository>, RepositoryError> {
        resolve(c, paths, MissingRoot::Refuse)
    }

    #[test]
    fn roots_sharing_a_directory_name_are_refused_with_advice() {
        let base = tempfile::tempdir().expect("tempdir");
        let one = base.path().join("one/app");
        let two = base.path().join("two/app");
        std::fs::create_dir_all(&one).expect("mkdir");
        std::fs::create_dir_all(&two).expect("mkdir");
        let err = resolve_refusing(&config("", ""), &[one.clone(), two.clone()])
            .expect_err("two roots named app");
        let message = err.to_string();
        assert!(message.contains("`app`"), "{message}");
        assert!(message.contains("[[repositories]]"), "{message}");
        assert!(message.contains("NAME=PATH"), "{message}");

        // Named on the command line.
        let arg = |name: &str, path: &Path| PathBuf::from(format!("{name}={}", path.display()));
        let repos = resolve_refusing(
            &config("", ""),
            &[arg("one-app", &one), arg("two-app", &two)],
        )
        .expect("named roots");
        let names: Vec<(&str, &Path)> = repos
            .iter()
            .map(|r| (r.name.as_str(), r.root.as_path()))
            .collect();
        let canonical = |p: &Path| p.canonicalize().expect("canonical");
        assert_eq!(
            names,
            [
                ("one-app", canonical(&one).as_path()),
                ("two-app", canonical(&two).as_path())
            ]
        );
        // A directory whose name holds `=` is a path; a name is checked as any name is.
        let odd = base.path().join("a=b");
        std::fs::create_dir_all(&odd).expect("mkdir");
        let repos = resolve_refusing(&config("", ""), std::slice::from_ref(&odd)).expect("path");
        assert_eq!(repos[0].name, "a=b");
        assert!(resolve_refusing(&config("", ""), &[arg(" padded", &one)]).is_err());
        if let Some(home) = std::env::var_os("HOME") {
            assert_eq!(
                named_path(Path::new("h=~/src/app")),
                (Some("h".to_owned()), PathBuf::from(home).join("src/app"))
            );
        }

        let err = resolve_refusing(&config("shared", ""), &[one.clone(), two.clone()])
            .expect_err("--repository for two roots");
        assert!(err.to_string().contains("names one repository"), "{err}");
        // --repository beside a NAME=PATH: one name is fine twice, two names are refused.
        let repos = resolve_refusing(&config("one-app", ""), &[arg("one-app", &one)])
            .expect("the same name twice");
        assert_eq!(repos[0].name, "one-app");
        let err = resolve_refusing(&config("shared", ""), &[arg("one-app", &one)])
            .expect_err("two names for one root");
        let message = err.to_string();
        assert!(
            message.contains("\"one-app\"") && message.contains("\"shared\""),
            "{message}"
        );

        // Named in the configuration, both are fine, each in its workspace.
        let toml = format!(
            "[[repositories]]\npath = {:?}\nname = \"one-app\"\n\n[[repositories]]\npath = {:?}\nname = \"two-app\"\nworkspace = \"two\"\nexclude_paths = [\"fixtures\"]\n",
            one.display().to_string(),
            two.display().to_string()
        );
        let repos = resolve_refusing(&config("", &toml), &[]).expect("named roots");
        let names: Vec<(&str, &str)> = repos
            .iter()
            .map(|r| (r.name.as_str(), r.workspace.as_str()))
            .collect();
        assert_eq!(names, [("one-app", "default"), ("two-app", "two")]);
        assert!(
            repos[1]
                .rules()
                .exclude_paths
                .iter()
                .any(|p| p == "fixtures")
        );
        assert!(
            repos[1]
                .rules()
                .exclude_paths
                .iter()
                .any(|p| p == "node_modules")
        );

        // The same root on the command line and in the configuration under one name: once.
        let repos = resolve_refusing(&config("one-app", &toml), std::slice::from_ref(&one))
            .expect("deduplicated");
        assert_eq!(repos.len(), 2);
    }

    #[test]
    fn a_configured_root_that_is_not_there_is_awaited_by_a_daemon_and_refused_by_an_index() {
        let base = tempfile::tempdir().expect("tempdir");
        let here = base.path().join("here");
        std::fs::create_dir_all(&here).expect("mkdir");
        let away = base.path().join("mnt/away");
        let dangling = base.path().join("dangling");
        std::os::unix::fs::symlink(base.path().join("nothing"), &dangling).expect("symlink");
        let file = base.path().join("file");
        std::fs::write(&file, "x").expect("write");
        let toml = |paths: &[&Path]| {
            paths
                .iter()
                .map(|p| format!("[[repositories]]\npath = {:?}\n", p.display().to_string()))
                .collect::<String>()
        };
        let c = config("", &toml(&[&here, &away, &dangling]));
        let err = resolve(&c, &[], MissingRoot::Refuse).expect_err("index refuses");
        assert!(err.to_string().contains("away"), "{err}");
        let repos = resolve(&c, &[], MissingRoot::Await).expect("daemon awaits");
        let roots: Vec<(&str, &Path)> = repos
            .iter()
            .map(|r| (r.name.as_str(), r.root.as_path()))
            .collect();
        let here = here.canonicalize().expect("canonical");
        assert_eq!(
            roots,
            [
                ("here", here.as_path()),
                ("away", away.as_path()),
                ("dangling", dangling.as_path())
            ]
        );
        // What is there but is no directory is refused all the same, and so is a missing
        // command-line path (a typo).
        let c = config("", &toml(&[&file]));
        assert!(resolve(&c, &[], MissingRoot::Await).is_err());
        let c = config("", "");
        assert!(resolve(&c, std::slice::from_ref(&away), MissingRoot::Await).is_err());
    }
}
