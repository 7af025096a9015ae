//! Keeps one repository indexed while the daemon serves: reconcile, then follow the watcher.
//! Its state (`initializing`, `indexing`, `ready`, `failed` with the reason) is recorded on its
//! `repositories` row, where status, heartbeats and repository requests read it.
//!
//! 1. The watcher starts first, so nothing changed during the start-up reconcile is missed.
//! 2. A full reconcile (walk, hash compare, sweep) runs at start-up, whenever the watcher lost
//!    events or failed, every `reconcile_interval_secs`, and after any failure (the database
//!    restarting, say), retried with backoff until it succeeds. It is the truth.
//! 3. In between, each batch of changed paths from the watcher is indexed through the same
//!    stages ([`Indexer::index_paths`]); a failed batch turns into a reconcile.
//! 4. After each reconcile, and whenever the git history moves (a commit, a checkout), the
//!    change counts are read again, in a task of their own so that a slow git delays no file.
//!
//! Nothing here gives up: errors are logged, counted in [`Metrics`], and retried.
//!
//! All of it happens under the repository's indexing lease ([`crate::store::Lease`]): with
//! several daemons on one index, one indexes each repository and the others serve its
//! searches and stand by, taking it over within `watch.lease_check_secs` of its holder's end.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::config::WatchConfig;
use crate::health::Metrics;
use crate::pipeline::{IndexError, Indexer};
use crate::repository::Repository;
use crate::store::{Lease, RepoState};
use crate::watch::{Change, INOTIFY_ADVICE, RootWatcher};

/// Longest wait between two attempts of a failing reconcile.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Runs until `cancel` fires or the repository is removed: takes the repository's indexing
/// lease (waiting while another daemon holds it), keeps the repository indexed while the lease
/// holds, and starts over when it is lost.
pub async fn keep_indexed(
    indexer: Indexer,
    repo: Repository,
    cfg: WatchConfig,
    metrics: Arc<Metrics>,
    cancel: CancellationToken,
) {
    let every = Duration::from_secs(cfg.lease_check_secs.max(1));
    // The first pass after the lease is taken again (its connection failed) is a recovery.
    let mut first_pass = "startup";
    loop {
        let Some(lease) = acquire(&indexer, &repo, every, &cancel).await else {
            return;
        };
        // Checked under the lease, which whoever deletes the rows holds too: a repository
        // removed (or being removed) while this keeper stood by is never written again.
        match indexer.store().repository(&repo.name).await {
            Ok(Some(record)) if record.state != RepoState::Removing => {}
            Ok(_) => {
                lease.release().await;
                tracing::info!(repository = %repo.name,
                    "the repository was removed from the index; no longer keeping it");
                return;
            }
            Err(e) => {
                lease.release().await;
                tracing::warn!(repository = %repo.name, error = %e,
                    "cannot read the repository's record; retrying");
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = tokio::time::sleep(every) => continue,
                }
            }
        }
        // The work stops when the keeper is cancelled or the lease is lost; the lease is given
        // up only once the work has stopped, so nobody who takes it next (a daemon removing
        // the repository, say) overlaps a write still in flight.
        let work = cancel.child_token();
        let stopped = CancellationToken::new();
        let guard = tokio::spawn(hold(lease, every, work.clone(), stopped.clone()));
        keep_while_held(&indexer, &repo, &cfg, &metrics, first_pass, &work).await;
        first_pass = "recovery";
        stopped.cancel();
        let _ = guard.await;
        if cancel.is_cancelled() {
            return;
        }
        tracing::warn!(repository = %repo.name,
            "the indexing lease was lost (its database connection failed); taking it again");
    }
}

/// Waits for the repository's lease; `None` when cancelled first.
async fn acquire(
    indexer: &Indexer,
    repo: &Repository,
    every: Duration,
    cancel: &CancellationToken,
) -> Option<Lease> {
    let mut standing_by = false;
    let mut outage = crate::outage::Outage::default();
    loop {
        let result = indexer.store().try_lease(&repo.name).await;
        if result.is_ok()
            && let Some((secs, attempts)) = outage.end(Instant::now())
        {
            tracing::info!(repository = %repo.name, down_secs = secs, attempts,
                "the database answers again; taking the indexing lease");
        }
        match result {
            Ok(Some(lease)) => {
                if standing_by {
                    tracing::info!(repository = %repo.name, "took over indexing from another daemon");
                }
                return Some(lease);
            }
            Ok(None) if !standing_by => {
                standing_by = true;
                tracing::info!(repository = %repo.name, retry_secs = every.as_secs(),
                    "another daemon indexes this repository; serving its searches and standing by");
            }
            Ok(None) => {}
            Err(e) => match outage.failed(Instant::now()) {
                Some((secs, attempts)) => tracing::warn!(repository = %repo.name, error = %e,
                    down_secs = secs, attempts, "cannot take the indexing lease; retrying"),
                None => tracing::debug!(repository = %repo.name, error = %e,
                    "cannot take the indexing lease; retrying"),
            },
        }
        tokio::select! {
            _ = cancel.cancelled() => return None,
            _ = tokio::time::sleep(every) => {}
        }
    }
}

/// Holds `lease` until `stopped` is cancelled (the work under it has ended), then releases it;
/// checks it every `every` meanwhile, and a lease found lost cancels `work`.
async fn hold(
    mut lease: Lease,
    every: Duration,
    work: CancellationToken,
    stopped: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = stopped.cancelled() => {
                lease.release().await;
                return;
            }
            _ = tokio::time::sleep(every) => {
                if !lease.check().await {
                    work.cancel();
                    return;
                }
            }
        }
    }
}

/// The work under a lease: reconcile, then follow the watcher, until `cancel` fires.
async fn keep_while_held(
    indexer: &Indexer,
    repo: &Repository,
    cfg: &WatchConfig,
    metrics: &Metrics,
    first_pass: &'static str,
    cancel: &CancellationToken,
) {
    let mut watcher = None;
    let periodic =
        (cfg.reconcile_interval_secs > 0).then(|| Duration::from_secs(cfg.reconcile_interval_secs));
    let mut due: Option<&'static str> = Some(first_pass);
    let mut backoff = Duration::from_secs(1);
    // A root that stays gone, or a database that stays down, fails every retry: said once,
    // then once a minute.
    let mut failing = crate::outage::Outage::default();
    let mut next_periodic = periodic.map(|p| tokio::time::Instant::now() + p);
    // The change counts are read beside the loop: a git that takes its time (a huge history,
    // a stuck network disk) holds up no file change, and commits made while it reads coalesce
    // into one more read.
    let history = Arc::new(Notify::new());
    tokio::spawn(follow_history(
        indexer.clone(),
        repo.clone(),
        history.clone(),
        cancel.clone(),
    ));
    loop {
        if let Some(reason) = due {
            // The watcher could not start, died, or lost its root: start it again before the
            // pass, so that a change made while the pass runs is not missed.
            if watcher.is_none() && cfg.enabled && repo.root.is_dir() {
                watcher = start_watcher(indexer, repo, cfg).await;
            }
            metrics.reconcile_started(reason);
            metrics.pass_started();
            record_state(indexer, repo, RepoState::Indexing, None).await;
            let result = indexer.reconcile(repo, None, cancel).await;
            metrics.pass_finished();
            match result {
                Ok(report) => {
                    if let Some((secs, attempts)) = failing.end(Instant::now()) {
                        tracing::info!(repository = %repo.name, failing_secs = secs, attempts,
                            "reconcile works again");
                    }
                    metrics.index_run(report.embedded, report.embed_time, None);
                    report.log(reason);
                    due = None;
                    backoff = Duration::from_secs(1);
                    if !cancel.is_cancelled() {
                        record_state(indexer, repo, RepoState::Ready, None).await;
                    }
                    history.notify_one();
                    let changed = report.indexed + report.removed as usize;
                    if let Err(e) = indexer.store().after_index_pass(changed).await {
                        tracing::warn!(error = %e, "index upkeep failed; next pass retries");
                    }
                }
                Err(e) => {
                    if matches!(e, IndexError::RootGone { .. }) {
                        // The watcher follows the directory it watched, wherever it went: a
                        // new one is started on the root once it is back.
                        watcher = None;
                    }
                    metrics.index_run(0, Duration::ZERO, Some(e.to_string()));
                    match failing.failed(Instant::now()) {
                        Some((secs, attempts)) => tracing::error!(repository = %repo.name,
                            root = %repo.root.display(), error = %e, failing_secs = secs, attempts,
                            retry_in_secs = backoff.as_secs(), "reconcile failed; retrying"),
                        None => tracing::debug!(repository = %repo.name, error = %e,
                            retry_in_secs = backoff.as_secs(), "reconcile failed; retrying"),
                    }
                    record_state(indexer, repo, RepoState::Failed, Some(&e.to_string())).await;
                    due = Some("recovery");
                    tokio::select! {
                        _ = cancel.cancelled() => return,
                        _ = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            }
        }
        if cancel.is_cancelled() {
            return;
        }
        let change = async {
            match watcher.as_mut() {
                Some(w) => w.next().await,
                None => std::future::pending().await,
            }
        };
        let tick = async {
            match next_periodic {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tick => {
                due = Some("periodic");
                next_periodic = periodic.map(|p| tokio::time::Instant::now() + p);
            }
            change = change => match change {
                None => {
                    tracing::warn!(repository = %repo.name, "the file watcher stopped; reconciling and restarting it");
                    watcher = None;
                    due = Some("watcher");
                }
                Some(Change::RootGone { reason }) => {
                    tracing::warn!(repository = %repo.name, %reason, "the root went away; its index is kept, and watched again once the root is back");
                    watcher = None;
                    due = Some("watcher");
                }
                Some(Change::Rescan { reason }) => {
                    tracing::warn!(repository = %repo.name, %reason, "file events were lost; reconciling");
                    due = Some("watcher");
                }
                Some(Change::History) => {
                    tracing::debug!(repository = %repo.name, "the git history moved; reading the change counts");
                    history.notify_one();
                }
                Some(Change::Paths { paths, since }) => {
                    let count = paths.len();
                    match indexer.index_paths(repo, paths, cancel).await {
                        Ok(report) => {
                            metrics.watch_batch(count, Some(since.elapsed()));
                            metrics.index_run(report.embedded, report.embed_time, None);
                            tracing::info!(
                                paths = count,
                                indexed = report.indexed,
                                removed = report.removed,
                                embedded = report.embedded,
                                pending = report.pending,
                                lag_ms = since.elapsed().as_millis() as u64,
                                "changes indexed"
                            );
                        }
                        Err(e) => {
                            metrics.watch_batch(count, None);
                            tracing::warn!(error = %e, paths = count, "indexing changed files failed; a reconcile will catch up");
                            due = Some("recovery");
                        }
                    }
                }
            }
        }
    }
}

/// Reads the repository's change counts each time `due` is notified, until `cancel` fires
/// (which also stops a read under way, killing git).
async fn follow_history(
    indexer: Indexer,
    repo: Repository,
    due: Arc<Notify>,
    cancel: CancellationToken,
) {
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = due.notified() => indexer.record_history(&repo, &cancel).await,
        }
    }
}

/// Records the repository's state; a database that does not answer only costs the record.
async fn record_state(indexer: &Indexer, repo: &Repository, state: RepoState, error: Option<&str>) {
    if let Err(e) = indexer
        .store()
        .set_repository_state(&repo.name, state, error)
        .await
    {
        tracing::debug!(repository = %repo.name, error = %e, "could not record the repository's state");
    }
}

async fn start_watcher(
    indexer: &Indexer,
    repo: &Repository,
    cfg: &WatchConfig,
) -> Option<RootWatcher> {
    let walker = match indexer.walker(repo) {
        Ok(w) => w,
        Err(e) => {
            tracing::error!(repository = %repo.name, error = %e, "cannot watch");
            return None;
        }
    };
    let cfg = cfg.clone();
    // The reflog, to read the change history again after a commit; a git that does not answer
    // costs only that (the periodic reconcile reads it).
    let reflog = tokio::time::timeout(
        Duration::from_secs(10),
        crate::scan::history::reflog_dir(&repo.root),
    )
    .await
    .ok()
    .flatten()
    .filter(|_| repo.rules().history_commits > 0);
    let started =
        tokio::task::spawn_blocking(move || RootWatcher::start(walker, &cfg, reflog.as_deref()))
            .await;
    match started {
        Ok(Ok(w)) => {
            tracing::info!(repository = %repo.name, directories = w.watched(), "watching for changes");
            Some(w)
        }
        Ok(Err(e)) => {
            let advice = matches!(e.kind, notify::ErrorKind::MaxFilesWatch)
                .then_some(INOTIFY_ADVICE)
                .unwrap_or("changes are picked up by the periodic reconcile only");
            tracing::error!(repository = %repo.name, error = %e, advice, "cannot watch for changes");
            None
        }
        Err(e) => {
            tracing::error!(error = %e, "watcher start-up panicked");
            None
        }
    }
}
