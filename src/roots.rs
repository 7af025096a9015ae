//! The repositories a serving daemon keeps indexed, and the repository requests that change
//! them.
//!
//! Each repository has one keeper task ([`crate::live::keep_indexed`]) with a cancellation
//! token of its own, a child of the daemon's. Requests add a local path (only under the
//! configured `workspaces.allowed_roots`, compared after resolving symlinks and `..`) or a git
//! URL (cloned with the `git` program into `workspaces.clone_dir`); the reply comes at once
//! and the repository's state says how far it is. Requested repositories are recorded with
//! origin `request` and started again when the daemon starts.
//!
//! Several daemons may share one index (a fleet); a request reaches one of them. Every daemon
//! keeps every requested repository ([`Roots::follow`] picks up, within
//! `watch.lease_check_secs`, those another daemon was asked to add), so that another one takes
//! it over when its indexer stops. Removing one marks it `removing`: each daemon's keeper lets
//! go, and whoever takes its lease then deletes its rows (and its clone), so rows are never
//! deleted under a running pass nor written again after. [`remove_unattended`] removes from
//! the command line when no daemon answers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use thiserror::Error;
use tokio::sync::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, check_repository_name, check_workspace_name, redact_url};
use crate::health::Metrics;
use crate::lock;
use crate::pipeline::{IndexError, Indexer};
use crate::repository::{Repository, RepositoryError, default_name, root_or_awaited};
use crate::store::{Origin, RepoRecord, RepoState, RepositorySummary, Store, StoreError};

/// Longest a clone may take.
const CLONE_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// How long after a failed clone a daemon tries that repository's clone again.
const CLONE_RETRY: Duration = Duration::from_secs(5 * 60);

/// Longest a removal waits for the daemon indexing the repository to let go before its reply
/// (under `nats.request_timeout_secs`' default, 30 s).
const REMOVAL_WAIT_SECS: u64 = 20;

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

/// How far a removal got before its reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// The rows (and the clone) are deleted.
    Done,
    /// Marked `removing`: a daemon still indexing it did not let go in time; its rows are
    /// deleted as soon as it does.
    Pending,
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
    /// Each repository's keeper, or its clone while it is being cloned.
    running: Mutex<HashMap<String, Running>>,
    /// When a clone of each repository last failed here, to try again after [`CLONE_RETRY`].
    clone_failures: std::sync::Mutex<HashMap<String, Instant>>,
}

struct Running {
    cancel: CancellationToken,
    task: JoinHandle<()>,
}

/// Records `task` as repository `name`'s, stopping the one it replaces.
fn replace_task(running: &mut HashMap<String, Running>, name: String, task: Running) {
    if let Some(old) = running.insert(name, task) {
        old.cancel.cancel();
    }
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
                clone_failures: std::sync::Mutex::new(HashMap::new()),
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
        let mut running = self.inner.running.lock().await;
        replace_task(&mut running, repo.name.clone(), Running { cancel, task });
    }

    /// Starts again the repositories that requests added before the daemon last stopped.
    pub async fn restore_requested(&self) -> Result<usize, StoreError> {
        let records = self.inner.indexer.store().repositories(None).await?;
        self.keep_requested(records, true).await
    }

    /// Every `watch.lease_check_secs` until the daemon stops: keeps the requested repositories
    /// another daemon of the index was asked to add, and finishes the removals other daemons
    /// were asked for.
    pub async fn follow(self) {
        let every = Duration::from_secs(self.inner.config.watch.lease_check_secs.max(1));
        let mut outage = crate::outage::Outage::default();
        loop {
            tokio::select! {
                _ = self.inner.cancel.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
            let result = async {
                let records = self.inner.indexer.store().repositories(None).await?;
                self.finish_removals(&records).await?;
                self.keep_requested(records, false).await
            }
            .await;
            match result {
                Ok(started) => {
                    outage.end(Instant::now());
                    if started > 0 {
                        tracing::info!(
                            repositories = started,
                            "keeping repositories another daemon was asked to add"
                        );
                    }
                }
                Err(e) => match outage.failed(Instant::now()) {
                    Some((secs, attempts)) => tracing::warn!(error = %e, down_secs = secs,
                        attempts, "cannot read the recorded repositories; retrying"),
                    None => tracing::debug!(error = %e,
                        "cannot read the recorded repositories; retrying"),
                },
            }
        }
    }

    /// Starts keepers for the requested repositories of `records` this daemon does not keep
    /// (one being removed is left alone), cloning a git URL's repository where its clone is
    /// missing here (a replica's own volume, a cleaned cache, a clone that failed
    /// [`CLONE_RETRY`] ago). `at_start`: all of them; afterwards not one whose first clone is
    /// still under way (`initializing`, its lease held by the daemon cloning it).
    async fn keep_requested(
        &self,
        records: Vec<RepoRecord>,
        at_start: bool,
    ) -> Result<usize, StoreError> {
        let store = self.inner.indexer.store();
        let mut restored = 0;
        for record in records {
            let cloned = Path::new(&record.root).join(".git").is_dir();
            let skip = record.origin != Origin::Request
                || record.state == RepoState::Removing
                || self
                    .inner
                    .running
                    .lock()
                    .await
                    .get(&record.name)
                    .is_some_and(|r| !r.task.is_finished());
            if skip {
                continue;
            }
            // A first clone under way holds the lease (`add`); one whose daemon died is
            // `initializing` with the lease free, and is cloned here.
            if !at_start
                && record.git_url.is_some()
                && record.state == RepoState::Initializing
                && store.lease_is_held(&record.name).await?
            {
                continue;
            }
            // A clone that is missing here is cloned again; its rows stay, so unchanged files
            // are not embedded twice. While another daemon indexes it (holds its lease), its
            // state is that daemon's to say.
            if let Some(url) = &record.git_url
                && !cloned
            {
                if !at_start && self.clone_failed_lately(&record.name) {
                    continue;
                }
                tracing::info!(repository = %record.name, url = %redact_url(url),
                    "the clone of a requested repository is missing here; cloning it");
                if !store.lease_is_held(&record.name).await? {
                    store
                        .set_repository_state(&record.name, RepoState::Initializing, None)
                        .await?;
                }
                self.spawn_clone(
                    url.clone(),
                    PathBuf::from(&record.root),
                    record.workspace.clone(),
                    record.name.clone(),
                    false,
                )
                .await;
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
                Err(e) if at_start => {
                    tracing::error!(repository = %record.name, error = %e,
                        "a requested repository cannot be restored");
                    store
                        .set_repository_state(&record.name, RepoState::Failed, Some(&e.to_string()))
                        .await?;
                }
                // Said once, at start-up.
                Err(e) => tracing::debug!(repository = %record.name, error = %e,
                    "a requested repository cannot be kept"),
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
            if existing.state == RepoState::Removing {
                return Err(RootsError::Invalid(format!(
                    "repository `{name}` is being removed; add it again once it is gone"
                )));
            }
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
                self.spawn_clone(url, root, workspace.to_owned(), name.clone(), true)
                    .await;
            }
        }
        store
            .repository(&name)
            .await?
            .ok_or_else(|| RootsError::NotFound(format!("repository `{name}` vanished")))
    }

    /// Clones `url` into `dir` (unless it holds a clone already) and starts the repository,
    /// in the background, as the repository's task until its keeper starts (so a removal or
    /// the daemon's end stops the clone); a failure is recorded in the repository's state
    /// unless another daemon indexes it. A `first` clone (the one a request asked for) holds the
    /// repository's lease while it clones, so the other daemons know it is under way.
    async fn spawn_clone(
        &self,
        url: String,
        dir: PathBuf,
        workspace: String,
        name: String,
        first: bool,
    ) {
        let roots = self.clone();
        let cancel = self.inner.cancel.child_token();
        let stop = cancel.clone();
        let key = name.clone();
        // Held while the task is spawned: the keeper it starts is recorded after it.
        let mut running = self.inner.running.lock().await;
        let task = tokio::spawn(async move {
            roots
                .clone_and_start(&url, &dir, &workspace, &name, first, &stop)
                .await
        });
        replace_task(&mut running, key, Running { cancel, task });
    }

    async fn clone_and_start(
        &self,
        url: &str,
        dir: &Path,
        workspace: &str,
        name: &str,
        first: bool,
        stop: &CancellationToken,
    ) {
        let store = self.inner.indexer.store();
        let mut lease = if first {
            store.try_lease(name).await.ok().flatten()
        } else {
            None
        };
        let result = async {
            if !dir.join(".git").is_dir() {
                let clones = self.clone_dir().map_err(|e| e.to_string())?;
                tokio::select! {
                    // Dropping the clone kills git.
                    _ = stop.cancelled() => return Ok(None),
                    cloned = git_clone(url, &clones, dir) => cloned?,
                }
            }
            // Removed while it was being cloned: not recorded again.
            let wanted = store
                .repository(name)
                .await
                .map_err(|e| e.to_string())?
                .is_some_and(|r| r.state != RepoState::Removing);
            if !wanted {
                return Ok(None);
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
            Ok::<_, String>(Some(repo))
        }
        .await;
        match result {
            Ok(Some(_)) if stop.is_cancelled() => {}
            Ok(Some(repo)) => {
                lock(&self.inner.clone_failures).remove(name);
                // Let go before the keeper takes it.
                if let Some(lease) = lease.take() {
                    lease.release().await;
                }
                self.start(repo).await;
            }
            Ok(None) if stop.is_cancelled() => {
                tracing::info!(repository = %name, "cloning stopped");
            }
            Ok(None) => {
                tracing::info!(repository = %name, "removed while it was being cloned");
                delete_clone_at(&self.inner.config, name, dir).await;
            }
            Err(e) => {
                let url = redact_url(url);
                tracing::error!(repository = %name, %url, error = %e,
                    "cloning a requested repository failed; trying again in {}s",
                    CLONE_RETRY.as_secs());
                lock(&self.inner.clone_failures).insert(name.to_owned(), Instant::now());
                // Another daemon that holds the lease indexes it from a clone of its own.
                let ours = lease.is_some();
                let recorded = async {
                    if ours || !store.lease_is_held(name).await? {
                        store
                            .set_repository_state(name, RepoState::Failed, Some(&e))
                            .await?;
                    }
                    Ok::<_, StoreError>(())
                }
                .await;
                if let Err(e) = recorded {
                    tracing::warn!(error = %e, "could not record the failed clone");
                }
            }
        }
        if let Some(lease) = lease {
            lease.release().await;
        }
    }

    /// Whether a clone of repository `name` failed here less than [`CLONE_RETRY`] ago.
    fn clone_failed_lately(&self, name: &str) -> bool {
        lock(&self.inner.clone_failures)
            .get(name)
            .is_some_and(|at| at.elapsed() < CLONE_RETRY)
    }

    /// Removes a repository of `workspace`. A requested one is marked `removing`: every
    /// daemon's keeper lets go (this one's at once, the others' within
    /// `watch.lease_check_secs`), and the rows (and the clone) are deleted under its lease,
    /// waited for up to that and 5 s (at most [`REMOVAL_WAIT_SECS`]); after that the reply
    /// says `removing`, and whichever daemon takes the lease next deletes them. A repository
    /// kept from a daemon's command line or configuration is refused (it would come back); one
    /// no longer configured (renamed, say) is removed when no one holds its lease.
    pub async fn remove(&self, workspace: &str, name: &str) -> Result<Removal, RootsError> {
        let store = self.inner.indexer.store();
        let record = store
            .repository(name)
            .await?
            .filter(|r| r.workspace == workspace)
            .ok_or_else(|| {
                RootsError::NotFound(format!("no repository `{name}` in workspace `{workspace}`"))
            })?;
        if record.origin == Origin::Local {
            if self.inner.running.lock().await.contains_key(name) {
                return Err(RootsError::Invalid(format!(
                    "repository `{name}` is indexed from this daemon's command line or \
                     configuration; remove it there and restart first"
                )));
            }
            let Some(lease) = store.try_lease(name).await? else {
                return Err(RootsError::Invalid(format!(
                    "repository `{name}` is indexed from another daemon's command line or \
                     configuration, or by a running `codesearch index` (it holds the \
                     repository's lease); remove it there first"
                )));
            };
            let removed = store.remove_repository(name).await;
            lease.release().await;
            removed?;
            tracing::info!(repository = %name, %workspace, "repository removed");
            return Ok(Removal::Done);
        }
        store
            .set_repository_state(name, RepoState::Removing, None)
            .await?;
        let every = self.inner.config.watch.lease_check_secs.max(1);
        let deadline = Instant::now() + Duration::from_secs((every + 5).min(REMOVAL_WAIT_SECS));
        loop {
            if self.finish_removal(name, record.id).await? {
                return Ok(Removal::Done);
            }
            if Instant::now() >= deadline {
                tracing::warn!(repository = %name, %workspace,
                    "another daemon still indexes the repository; it is removed once that one \
                     lets it go");
                return Ok(Removal::Pending);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Finishes the removals marked `removing` (by a request another daemon answered, or one
    /// whose reply came before the indexer let go).
    async fn finish_removals(&self, records: &[RepoRecord]) -> Result<(), StoreError> {
        for record in records {
            if record.state == RepoState::Removing {
                self.finish_removal(&record.name, record.id).await?;
            }
        }
        Ok(())
    }

    /// Stops this daemon's keeper of repository `name` (record `id`, marked `removing`), then,
    /// if its lease is free, deletes its rows and its clone. True once record `id` is gone.
    async fn finish_removal(&self, name: &str, id: i64) -> Result<bool, StoreError> {
        let keeper = self.inner.running.lock().await.remove(name);
        if let Some(running) = keeper {
            running.cancel.cancel();
            if tokio::time::timeout(Duration::from_secs(30), running.task)
                .await
                .is_err()
            {
                tracing::warn!(repository = %name, "its indexing did not stop within 30s");
            }
        }
        let store = self.inner.indexer.store();
        // Asked on the pool first: a removal waiting for another daemon polls this.
        if store.lease_is_held(name).await? {
            return Ok(false);
        }
        let Some(lease) = store.try_lease(name).await? else {
            return Ok(false);
        };
        let removed = async {
            match store.repository(name).await? {
                Some(record) if record.id == id && record.state == RepoState::Removing => {
                    store.remove_repository(name).await?;
                    delete_clone(&self.inner.config, &record).await;
                    tracing::info!(repository = %name, workspace = %record.workspace,
                        "repository removed");
                    Ok(true)
                }
                // Removed by another daemon (and perhaps added again since).
                Some(record) => Ok(record.id != id),
                None => Ok(true),
            }
        }
        .await;
        lease.release().await;
        removed
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
    if record.git_url.is_some() {
        delete_clone_at(config, &record.name, Path::new(&record.root)).await;
    }
}

/// Deletes repository `name`'s clone at `root` (and what is left of an unfinished one, and its
/// lock), if it is inside `workspaces.clone_dir`.
async fn delete_clone_at(config: &Config, name: &str, root: &Path) {
    let Ok(clones) = std::fs::canonicalize(&config.workspaces.clone_dir) else {
        return;
    };
    if !root.starts_with(&clones) {
        return;
    }
    for dir in [Some(root.to_owned()), unfinished(root)]
        .into_iter()
        .flatten()
    {
        if dir.exists()
            && let Err(e) = tokio::fs::remove_dir_all(&dir).await
        {
            tracing::warn!(repository = %name, dir = %dir.display(), error = %e,
                "could not delete the clone");
        }
    }
    if let Some(lock) = clone_lock(root) {
        let _ = tokio::fs::remove_file(lock).await;
    }
}

/// Where the clone of `dir` is made before it is moved there: `.NAME.cloning` beside it, so
/// that a clone the daemon did not finish (killed, the machine gone) is never taken for one.
fn unfinished(dir: &Path) -> Option<PathBuf> {
    beside(dir, "cloning")
}

/// `.NAME.lock` beside `dir`: the lock every process cloning into `dir` holds.
fn clone_lock(dir: &Path) -> Option<PathBuf> {
    beside(dir, "lock")
}

/// `.NAME.SUFFIX` beside `dir` (named NAME): hidden, and never a repository's own name.
fn beside(dir: &Path, suffix: &str) -> Option<PathBuf> {
    let name = dir.file_name()?.to_str()?;
    Some(dir.with_file_name(format!(".{name}.{suffix}")))
}

/// Waits for this process's turn to clone into `dir`: an exclusive lock (`flock`) on
/// [`clone_lock`], held until the returned file is dropped. The kernel lets go of it when
/// its holder dies, so a killed daemon leaves no stale lock. A file system without locks is
/// used without one (as before replicas shared volumes), with a warning.
async fn clone_turn(dir: &Path) -> Result<Option<std::fs::File>, String> {
    let Some(path) = clone_lock(dir) else {
        return Ok(None);
    };
    // Made by whichever daemon clones first; another user's (replicas of different uids on
    // one volume) is locked read-only, which `flock` allows.
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .or_else(|_| std::fs::File::open(&path))
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut said = false;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Some(file)),
            Err(std::fs::TryLockError::WouldBlock) => {
                if !said {
                    tracing::info!(dir = %dir.display(),
                        "another process is cloning into this directory; waiting for it");
                    said = true;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(std::fs::TryLockError::Error(e)) => {
                tracing::warn!(lock = %path.display(), error = %e,
                    "cannot lock the clone; cloning without (two daemons sharing this \
                     directory could clone into it at once)");
                return Ok(None);
            }
        }
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
/// [`CLONE_TIMEOUT`]: into [`unfinished`] first, moved to `dir` once complete.
async fn git_clone(url: &str, clones: &Path, dir: &Path) -> Result<(), String> {
    // Only a directory of the clone directory's own is ever cleared.
    let inside =
        dir.parent() == Some(clones) && dir.file_name().is_some_and(|n| n != "." && n != "..");
    let Some(partial) = unfinished(dir).filter(|_| inside) else {
        return Err(format!(
            "{} is not a directory of the clone directory {}",
            dir.display(),
            clones.display()
        ));
    };
    // Replicas may share the clone directory (one volume): one clones at a time, and a
    // later one finds the clone made.
    let _turn = clone_turn(dir).await?;
    if dir.join(".git").is_dir() {
        return Ok(());
    }
    let clear = |d: PathBuf| async move {
        if d.exists() {
            tokio::fs::remove_dir_all(&d)
                .await
                .map_err(|e| format!("cannot clear {}: {e}", d.display()))?;
        }
        Ok::<_, String>(())
    };
    clear(partial.clone()).await?;
    let mut cmd = tokio::process::Command::new("git");
    cmd.args(["clone", "--quiet", "--"])
        .arg(url)
        .arg(&partial)
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
        // git may repeat the URL, with the password or token it holds.
        let stderr = String::from_utf8_lossy(&out.stderr).replace(url, &redact_url(url));
        return Err(format!("git clone failed: {}", stderr.trim()));
    }
    clear(dir.to_owned()).await?;
    tokio::fs::rename(&partial, dir)
        .await
        .map_err(|e| format!("cannot move the clone to {}: {e}", dir.display()))
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

    /// Two daemons sharing a clone directory (replicas on one volume) that clone the same
    /// repository at once: one clones, the other waits for it and finds the clone made.
    #[tokio::test]
    async fn clones_of_one_directory_at_once_take_turns() {
        use crate::scan::history::tests::{commit, git};
        let tmp = tempfile::tempdir().expect("tempdir");
        let origin = tmp.path().join("origin");
        std::fs::create_dir_all(&origin).expect("origin");
        git(&origin, &["init", "-q"]);
        let files: Vec<(String, String)> = (0..200)
            .map(|i| (format!("f{i}.txt"), "x".repeat(10_000)))
            .collect();
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        commit(&origin, &files, "files");
        let clones = tmp.path().join("clones");
        std::fs::create_dir_all(&clones).expect("clones");
        let url = format!("file://{}", origin.display());
        let dir = clones.join("app");
        let (a, b) = tokio::join!(
            git_clone(&url, &clones, &dir),
            git_clone(&url, &clones, &dir)
        );
        assert_eq!((a, b), (Ok(()), Ok(())));
        assert!(dir.join(".git").is_dir());
        assert_eq!(std::fs::read_dir(&dir).expect("clone").count(), 201);
        assert!(!unfinished(&dir).expect("named").exists());
    }
}
