//! The repositories a serving daemon keeps indexed, and the repository requests that change
//! them.
//!
//! Each repository has one keeper task ([`crate::live::keep_indexed`]) with a cancellation
//! token of its own, a child of the daemon's. Requests add a local path (only under the
//! configured `workspaces.allowed_roots`, compared after resolving symlinks and `..`) or a git
//! URL (cloned with the `git` program into `workspaces.clone_dir`); the reply comes at once
//! and the repository's state says how far it is. Requested repositories are recorded with
//! origin `request` and started again when the daemon starts. Removing one stops its keeper,
//! then deletes its rows (and its clone); [`remove_unattended`] does that from the command
//! line when no daemon answers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;
use tokio::sync::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, check_repository_name, check_workspace_name, redact_url};
use crate::health::Metrics;
use crate::pipeline::{IndexError, Indexer};
use crate::repository::{Repository, RepositoryError, default_name, root_or_awaited};
use crate::store::{Origin, RepoRecord, RepoState, RepositorySummary, Store, StoreError};

/// Longest a clone may take.
const CLONE_TIMEOUT: Duration = Duration::from_secs(15 * 60);

#[derive(Debug, Error)]
pub enum RootsError {
    /// The caller's: a bad path, name, URL or workspace, or a name taken.
    #[error("{0}")]
    Invalid(String),
    /// No such repository in the caller's workspace.
    #[error("{0}")]
    NotFound(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<RepositoryError> for RootsError {
    fn from(e: RepositoryError) -> Self {
        RootsError::Invalid(e.to_string())
    }
}

impl From<IndexError> for RootsError {
    fn from(e: IndexError) -> Self {
        match e {
            IndexError::Store(StoreError::NameTaken { .. }) | IndexError::Repository(_) => {
                RootsError::Invalid(e.to_string())
            }
            IndexError::Store(s) => RootsError::Store(s),
            other => RootsError::Invalid(other.to_string()),
        }
    }
}

/// What a repository request adds: a local path or a git URL.
#[derive(Debug, Clone)]
pub enum Source {
    Path(PathBuf),
    Git(String),
}

/// The live set. Cheap to clone.
#[derive(Clone)]
pub struct Roots {
    inner: Arc<Inner>,
}

struct Inner {
    indexer: Indexer,
    config: Config,
    metrics: Arc<Metrics>,
    cancel: CancellationToken,
    running: Mutex<HashMap<String, Running>>,
}

struct Running {
    cancel: CancellationToken,
    task: JoinHandle<()>,
}

impl Roots {
    pub fn new(
        indexer: Indexer,
        config: Config,
        metrics: Arc<Metrics>,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                indexer,
                config,
                metrics,
                cancel,
                running: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The workspace of requests that name none.
    pub fn default_workspace(&self) -> &str {
        &self.inner.config.workspaces.default
    }

    pub fn indexer(&self) -> &Indexer {
        &self.inner.indexer
    }

    /// Keeps `repo` indexed from now on (its name must be claimed already).
    pub async fn start(&self, repo: Repository) {
        let cancel = self.inner.cancel.child_token();
        let task = tokio::spawn(crate::live::keep_indexed(
            self.inner.indexer.clone(),
            repo.clone(),
            self.inner.config.watch.clone(),
            Arc::clone(&self.inner.metrics),
            cancel.clone(),
        ));
        let old = self
            .inner
            .running
            .lock()
            .await
            .insert(repo.name.clone(), Running { cancel, task });
        if let Some(old) = old {
            old.cancel.cancel();
        }
    }

    /// Starts again the repositories that requests added before the daemon last stopped.
    pub async fn restore_requested(&self) -> Result<usize, StoreError> {
        let store = self.inner.indexer.store();
        let mut restored = 0;
        for record in store.repositories(None).await? {
            if record.origin != Origin::Request
                || self.inner.running.lock().await.contains_key(&record.name)
            {
                continue;
            }
            // A clone that is gone (a fresh volume, a cleaned cache) or never finished is
            // cloned again; its rows stay, so unchanged files are not embedded twice.
            if let Some(url) = &record.git_url
                && !Path::new(&record.root).join(".git").is_dir()
            {
                tracing::info!(repository = %record.name, url = %redact_url(url),
                    "the clone of a requested repository is missing; cloning it again");
                store
                    .set_repository_state(&record.name, RepoState::Initializing, None)
                    .await?;
                self.spawn_clone(
                    url.clone(),
                    PathBuf::from(&record.root),
                    record.workspace.clone(),
                    record.name.clone(),
                );
                restored += 1;
                continue;
            }
            // A root that is not there (yet) is started all the same: its index is served,
            // and it is indexed once the root is back, as when a root goes away while watched.
            let repo = root_or_awaited(Path::new(&record.root)).and_then(|root| {
                Repository::at(
                    &record.name,
                    root,
                    &record.workspace,
                    Origin::Request,
                    self.inner.config.index.clone(),
                )
            });
            match repo {
                Ok(repo) => {
                    let repo = match &record.git_url {
                        Some(url) => repo.with_git_url(url),
                        None => repo,
                    };
                    self.start(repo).await;
                    restored += 1;
                }
                Err(e) => {
                    tracing::error!(repository = %record.name, error = %e,
                        "a requested repository cannot be restored");
                    store
                        .set_repository_state(&record.name, RepoState::Failed, Some(&e.to_string()))
                        .await?;
                }
            }
        }
        Ok(restored)
    }

    /// Adds a repository: checks the request, records the name, and starts indexing (after
    /// cloning, for a git URL) in the background. Returns the record as it is now. Adding the
    /// same source under the same name again returns the existing record.
    pub async fn add(
        &self,
        workspace: &str,
        source: Source,
        name: Option<&str>,
    ) -> Result<crate::store::RepoRecord, RootsError> {
        check_workspace_name(workspace).map_err(RootsError::Invalid)?;
        let store = self.inner.indexer.store().clone();
        let (root, name, git_url) = match &source {
            Source::Path(path) => {
                let root = self.allowed_path(path)?;
                let name = name.map_or_else(|| default_name(&root), str::to_owned);
                (root, name, None)
            }
            Source::Git(url) => {
                check_git_url(url)?;
                let name = name.map_or_else(|| name_of_url(url), str::to_owned);
                check_repository_name(&name).map_err(RootsError::Invalid)?;
                let dir = self.clone_dir()?.join(&name);
                (dir, name, Some(url.clone()))
            }
        };
        check_repository_name(&name).map_err(RootsError::Invalid)?;
        if git_url.is_none()
            && let Some(other) = store
                .repositories(None)
                .await?
                .into_iter()
                .find(|r| Path::new(&r.root) == root && r.name != name)
        {
            return Err(RootsError::Invalid(format!(
                "{} is already indexed as repository `{}` (workspace `{}`)",
                root.display(),
                other.name,
                other.workspace
            )));
        }
        if let Some(existing) = store.repository(&name).await? {
            let same = existing.workspace == workspace
                && existing.git_url == git_url
                && (git_url.is_some() || Path::new(&existing.root) == root);
            if same {
                return Ok(existing);
            }
            return Err(RootsError::Invalid(format!(
                "repository name `{name}` is taken; pass another `name`"
            )));
        }
        match source {
            Source::Path(_) => {
                let repo = Repository::new(
                    &name,
                    &root,
                    workspace,
                    Origin::Request,
                    self.inner.config.index.clone(),
                )?;
                self.inner.indexer.claim(&repo).await?;
                self.start(repo).await;
            }
            Source::Git(url) => {
                // Recorded before cloning, so the name is taken and status shows the clone.
                store
                    .claim_repository(&crate::store::RepoClaim {
                        name: &name,
                        root: &root.to_string_lossy(),
                        workspace,
                        origin: Origin::Request,
                        git_url: Some(&url),
                    })
                    .await?;
                self.spawn_clone(url, root, workspace.to_owned(), name.clone());
            }
        }
        store
            .repository(&name)
            .await?
            .ok_or_else(|| RootsError::NotFound(format!("repository `{name}` vanished")))
    }

    /// Clones `url` into `dir` (unless it holds a clone already) and starts the repository,
    /// in the background; a failure is recorded in the repository's state.
    fn spawn_clone(&self, url: String, dir: PathBuf, workspace: String, name: String) {
        let roots = self.clone();
        tokio::spawn(async move { roots.clone_and_start(&url, &dir, &workspace, &name).await });
    }

    async fn clone_and_start(&self, url: &str, dir: &Path, workspace: &str, name: &str) {
        let store = self.inner.indexer.store();
        let result = async {
            if !dir.join(".git").is_dir() {
                let clones = self.clone_dir().map_err(|e| e.to_string())?;
                git_clone(url, &clones, dir).await?;
            }
            let repo = Repository::new(
                name,
                dir,
                workspace,
                Origin::Request,
                self.inner.config.index.clone(),
            )
            .map_err(|e| e.to_string())?
            .with_git_url(url);
            self.inner
                .indexer
                .claim(&repo)
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(repo)
        }
        .await;
        match result {
            Ok(repo) => self.start(repo).await,
            Err(e) => {
                tracing::error!(repository = %name, %url, error = %e, "cloning a requested repository failed");
                if let Err(e) = store
                    .set_repository_state(name, RepoState::Failed, Some(&e))
                    .await
                {
                    tracing::warn!(error = %e, "could not record the failed clone");
                }
            }
        }
    }

    /// Removes a repository of `workspace`: stops its keeper, then deletes its rows and its
    /// clone. A repository this daemon keeps from its command line or configuration is
    /// refused (it would come back); one no longer configured (renamed, say) can be removed.
    pub async fn remove(&self, workspace: &str, name: &str) -> Result<(), RootsError> {
        let store = self.inner.indexer.store();
        let record = store
            .repository(name)
            .await?
            .filter(|r| r.workspace == workspace)
            .ok_or_else(|| {
                RootsError::NotFound(format!("no repository `{name}` in workspace `{workspace}`"))
            })?;
        let mut running = self.inner.running.lock().await;
        if record.origin == Origin::Local && running.contains_key(name) {
            return Err(RootsError::Invalid(format!(
                "repository `{name}` is indexed from this daemon's command line or \
                 configuration; remove it there and restart first"
            )));
        }
        let keeper = running.remove(name);
        drop(running);
        if let Some(running) = keeper {
            running.cancel.cancel();
            if tokio::time::timeout(Duration::from_secs(30), running.task)
                .await
                .is_err()
            {
                tracing::warn!(repository = %name, "its indexing did not stop within 30s; removing anyway");
            }
        }
        store.remove_repository(name).await?;
        delete_clone(&self.inner.config, &record).await;
        tracing::info!(repository = %name, %workspace, "repository removed");
        Ok(())
    }

    /// Waits for every keeper to stop (after the daemon's token was cancelled).
    pub async fn wait(&self) {
        let running: Vec<Running> = self
            .inner
            .running
            .lock()
            .await
            .drain()
            .map(|(_, r)| r)
            .collect();
        for r in running {
            if let Err(e) = r.task.await {
                tracing::error!(error = %e, "indexing task panicked");
            }
        }
    }

    /// `path` resolved, if it is a directory under one of the allowed roots.
    fn allowed_path(&self, path: &Path) -> Result<PathBuf, RootsError> {
        let allowed = &self.inner.config.workspaces.allowed_roots;
        if allowed.is_empty() {
            return Err(RootsError::Invalid(
                "this daemon accepts no local paths (workspaces.allowed_roots is empty); add a git URL instead".into(),
            ));
        }
        if !path.is_absolute() {
            return Err(RootsError::Invalid(format!(
                "path {} is relative; give an absolute path under {}",
                path.display(),
                list(allowed)
            )));
        }
        let root = crate::repository::canonical_root(path)?;
        let inside = allowed
            .iter()
            .any(|base| std::fs::canonicalize(base).is_ok_and(|base| root.starts_with(base)));
        if !inside {
            return Err(RootsError::Invalid(format!(
                "path {} resolves to {}, which is outside the allowed roots ({})",
                path.display(),
                root.display(),
                list(allowed)
            )));
        }
        Ok(root)
    }

    /// The clone directory, made absolute (and created).
    fn clone_dir(&self) -> Result<PathBuf, RootsError> {
        let dir = &self.inner.config.workspaces.clone_dir;
        std::fs::create_dir_all(dir).map_err(|e| {
            RootsError::Invalid(format!(
                "cannot create the clone directory {}: {e}",
                dir.display()
            ))
        })?;
        std::fs::canonicalize(dir)
            .map_err(|e| RootsError::Invalid(format!("clone directory {}: {e}", dir.display())))
    }
}

/// Removes a repository of `workspace` when no daemon answers to do it (`codesearch repo
/// remove` with NATS down or no daemon running): its rows, and its clone when a request cloned
/// it. Refused while a daemon (or a `codesearch index`) holds the repository's lease, so rows
/// are never deleted under a running pass. Returns the repository's figures before removal.
pub async fn remove_unattended(
    config: &Config,
    workspace: &str,
    name: &str,
) -> Result<RepositorySummary, RootsError> {
    let store = Store::connect(&config.database).await?;
    let not_found =
        || RootsError::NotFound(format!("no repository `{name}` in workspace `{workspace}`"));
    let summary = store
        .workspace_summary(workspace)
        .await?
        .repositories
        .into_iter()
        .find(|r| r.name == name)
        .ok_or_else(not_found)?;
    let record = store.repository(name).await?.ok_or_else(not_found)?;
    let Some(lease) = store.try_lease(name).await? else {
        return Err(RootsError::Invalid(format!(
            "repository `{name}` is being indexed by a running daemon or `codesearch index` \
             (it holds the repository's lease) that no request reached; remove it through that \
             daemon once NATS answers, or stop it first"
        )));
    };
    let removed = store.remove_repository(name).await;
    lease.release().await;
    removed?;
    delete_clone(config, &record).await;
    if record.origin == Origin::Local {
        tracing::warn!(repository = %name, root = %record.root,
            "removed; it was indexed from a command line or configuration, and comes back when a \
             daemon or `codesearch index` is given that root again");
    }
    Ok(summary)
}

/// Deletes a removed repository's clone: only a directory a request cloned, inside
/// `workspaces.clone_dir`.
async fn delete_clone(config: &Config, record: &RepoRecord) {
    if record.git_url.is_none() {
        return;
    }
    let Ok(clones) = std::fs::canonicalize(&config.workspaces.clone_dir) else {
        return;
    };
    if Path::new(&record.root).starts_with(&clones)
        && let Err(e) = tokio::fs::remove_dir_all(&record.root).await
    {
        tracing::warn!(repository = %record.name, error = %e, "could not delete the clone");
    }
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Refuses what git would read as an option, and what is not a URL or scp-like address.
fn check_git_url(url: &str) -> Result<(), RootsError> {
    let bad = |m: &str| Err(RootsError::Invalid(format!("url {url:?}: {m}")));
    if url.is_empty() || url.len() > 2048 {
        return bad("must have 1 to 2048 characters");
    }
    if url.starts_with('-') || url.chars().any(char::is_control) {
        return bad("is not a git URL");
    }
    if url.starts_with("ext::") || url.starts_with("fd::") {
        return bad("transport not allowed");
    }
    let looks_like_url = url.contains("://") || (url.contains(':') && url.contains('@'));
    if !looks_like_url {
        return bad("is not a git URL (https://..., ssh://..., git@host:path or file:///...)");
    }
    Ok(())
}

/// A URL's last path segment without `.git`: `https://host/org/app.git` -> `app`.
fn name_of_url(url: &str) -> String {
    let tail = url
        .trim_end_matches('/')
        .rsplit(['/', ':'])
        .next()
        .unwrap_or("repository");
    let name = tail.strip_suffix(".git").unwrap_or(tail);
    if name.is_empty() {
        "repository".to_owned()
    } else {
        name.to_owned()
    }
}

/// `git clone` into `dir`, a directory of `clones`, without prompts, within
/// [`CLONE_TIMEOUT`].
async fn git_clone(url: &str, clones: &Path, dir: &Path) -> Result<(), String> {
    // Only a directory of the clone directory's own is ever cleared.
    if dir.parent() != Some(clones) || dir.file_name().is_none_or(|n| n == "." || n == "..") {
        return Err(format!(
            "{} is not a directory of the clone directory {}",
            dir.display(),
            clones.display()
        ));
    }
    if dir.exists() {
        tokio::fs::remove_dir_all(dir)
            .await
            .map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    let mut cmd = tokio::process::Command::new("git");
    cmd.args(["clone", "--quiet", "--"])
        .arg(url)
        .arg(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot run git (is it installed?): {e}"))?;
    let out = tokio::time::timeout(CLONE_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| format!("git clone took longer than {}s", CLONE_TIMEOUT.as_secs()))?
        .map_err(|e| format!("git clone failed: {e}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!("git clone failed: {}", stderr.trim()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_urls_are_checked_and_named() {
        for ok in [
            "https://github.com/org/app.git",
            "file:///srv/git/app",
            "git@github.com:org/app.git",
        ] {
            assert!(check_git_url(ok).is_ok(), "{ok}");
        }
        for bad in ["--upload-pack=touch /tmp/x", "ext::sh -c x", "app", ""] {
            assert!(check_git_url(bad).is_err(), "{bad}");
        }
        assert_eq!(name_of_url("https://github.com/org/app.git"), "app");
        assert_eq!(name_of_url("git@github.com:org/tool"), "tool");
        assert_eq!(name_of_url("file:///srv/git/lib/"), "lib");
    }
}
