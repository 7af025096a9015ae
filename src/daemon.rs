//! Wires the stages and the adapters: `index` (one pass) and `serve` (index, then answer
//! searches until shutdown).
//!
//! Shutdown: the caller's `shutdown` future resolves (a signal in `main`, a channel in tests),
//! the cancellation token tells every task, indexing finishes the file in hand, the NATS
//! endpoint answers what it holds, then the connection is drained and the pool closed.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use tokio_util::sync::CancellationToken;

use crate::config::{Config, redact_url};
use crate::embed::{self, Embedder};
use crate::health::Metrics;
use crate::http::HttpState;
use crate::pipeline::{IndexReport, Indexer};
use crate::repository::Repository;
use crate::roots::Roots;
use crate::search::SearchService;
use crate::store::Store;

/// How long shutdown waits for tasks before giving up on them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(20);

/// Connects to the database, applies migrations and picks the embedder.
pub async fn open(config: &Config) -> anyhow::Result<(Store, Arc<dyn Embedder>)> {
    let store = Store::connect(&config.database).await?;
    store.migrate().await?;
    let indexed = store.indexed_model().await?;
    let chosen = embed::from_config(&config.embed, indexed.as_deref()).await?;
    tracing::info!(
        model = chosen.embedder.model_id(),
        dimension = chosen.embedder.dimension(),
        reason = %chosen.reason,
        "embedder ready"
    );
    if let Some(indexed) = indexed.filter(|m| m != chosen.embedder.model_id()) {
        tracing::warn!(
            indexed = %indexed,
            configured = chosen.embedder.model_id(),
            "the index holds vectors of another model; files are re-embedded as they are indexed, and searches see only the new model's vectors"
        );
    }
    Ok((store, chosen.embedder))
}

fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} {msg} {pos}/{len} files [{wide_bar}] {elapsed} (eta {eta})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Indexes every repository once. Every name is claimed before any is indexed, so a name
/// taken by another root fails the run before anything is written.
pub async fn index(
    config: &Config,
    store: Store,
    embedder: Arc<dyn Embedder>,
    repos: &[Repository],
    cancel: &CancellationToken,
    show_progress: bool,
) -> anyhow::Result<Vec<IndexReport>> {
    let indexer = Indexer::new(store, embedder, config.index.clone())?;
    for repo in repos {
        indexer.claim(repo).await?;
    }
    let mut reports = Vec::new();
    for repo in repos {
        let bar = show_progress.then(progress_bar);
        if let Some(bar) = &bar {
            bar.set_message(repo.name.clone());
        }
        let report = indexer
            .index_repository(repo, bar.as_ref(), cancel)
            .await
            .with_context(|| format!("indexing {} ({})", repo.name, repo.root.display()))?;
        let state = if cancel.is_cancelled() {
            crate::store::RepoState::Initializing
        } else {
            crate::store::RepoState::Ready
        };
        indexer
            .store()
            .set_repository_state(&repo.name, state, None)
            .await?;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        report.log("index");
        reports.push(report);
        if cancel.is_cancelled() {
            break;
        }
    }
    if !cancel.is_cancelled() {
        let changed = reports.iter().map(|r| r.indexed + r.removed as usize).sum();
        indexer.store().after_index_pass(changed).await?;
    }
    Ok(reports)
}

/// Says which repositories of the index nobody keeps up to date: indexed from another
/// command line or configuration (an earlier `scripts/run.sh PATH`, say), not this daemon's,
/// and no other daemon holds their lease. Searches still return them, as last indexed.
async fn warn_unwatched(store: &Store, ours: &[String]) {
    let summary = match store.index_summary().await {
        Ok(s) => s,
        Err(e) => {
            tracing::debug!(error = %e, "cannot list the index's repositories");
            return;
        }
    };
    let unwatched: Vec<String> = summary
        .repositories
        .into_iter()
        .filter(|r| {
            r.origin.as_deref() == Some(crate::store::Origin::Local.as_str())
                && r.watched == Some(false)
                && !ours.contains(&r.name)
        })
        .map(|r| r.name)
        .collect();
    if !unwatched.is_empty() {
        tracing::warn!(
            repositories = %unwatched.join(", "),
            "repositories in the index that no running daemon watches: searches return them \
             as last indexed; serve their paths again to keep them current, or remove them \
             (`codesearch repo remove NAME`)"
        );
    }
}

/// Serves searches over NATS and keeps `repos` indexed (reconcile, watch, backfill; see
/// [`crate::live`]), and the repositories requests added, until `shutdown` resolves.
pub async fn serve(
    config: Config,
    repos: Vec<Repository>,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let (store, embedder) = open(&config).await?;
    // A name another root holds is an error now, before anything is swept.
    let indexer = Indexer::new(store.clone(), Arc::clone(&embedder), config.index.clone())?;
    for repo in &repos {
        indexer.claim(repo).await?;
    }
    let client = crate::bus::connect(&config.nats).await?;
    tracing::info!(url = %redact_url(&config.nats.url), "connected to NATS");
    let cancel = CancellationToken::new();
    let metrics = Arc::new(Metrics::new());
    let active_model = embedder.model_id().to_owned();
    let search = SearchService::new(store.clone(), Arc::clone(&embedder), config.search.clone())
        .with_default_workspace(&config.workspaces.default);
    let roots = Roots::new(
        indexer.clone(),
        config.clone(),
        Arc::clone(&metrics),
        cancel.clone(),
    );
    let services = crate::bus::Services::new(search, roots.clone(), &config);
    let bus = tokio::spawn(crate::bus::serve(
        client.clone(),
        services.clone(),
        config.clone(),
        Arc::clone(&metrics),
        cancel.clone(),
    ));
    let heartbeats = tokio::spawn(crate::health::publish_heartbeats(
        client.clone(),
        config.clone(),
        store.clone(),
        active_model.clone(),
        Arc::clone(&metrics),
        cancel.clone(),
    ));
    let http = if config.health.http_addr.trim().is_empty() {
        None
    } else {
        let state = HttpState {
            metrics: Arc::clone(&metrics),
            store: store.clone(),
            nats: client.clone(),
            config: config.clone(),
            active_model,
            services: Some(services),
        };
        match crate::http::bind(&config.health.http_addr, state, cancel.clone()).await {
            Ok((addr, task)) => {
                tracing::info!(%addr, mcp = config.mcp.http, "serving /health, /ready, /metrics and /mcp");
                Some(task)
            }
            Err(e) => {
                // Searches matter more than metrics: say so loudly and keep serving.
                tracing::error!(addr = %config.health.http_addr, error = %e,
                    "cannot listen for HTTP health and metrics; serving without them");
                None
            }
        }
    };
    let given: Vec<String> = repos.iter().map(|r| r.name.clone()).collect();
    for repo in repos {
        roots.start(repo).await;
    }
    match roots.restore_requested().await {
        Ok(0) if given.is_empty() => metrics.nothing_to_index(),
        Ok(0) => {}
        Ok(n) => tracing::info!(repositories = n, "requested repositories restored"),
        Err(e) => tracing::error!(error = %e, "cannot restore requested repositories"),
    }
    warn_unwatched(&store, &given).await;
    let following = tokio::spawn(roots.clone().follow());
    let backfill = tokio::spawn(crate::backfill::run(
        store,
        embedder,
        indexer.backlog(),
        Duration::from_secs(config.watch.backfill_interval_secs.max(1)),
        Arc::clone(&metrics),
        cancel.clone(),
    ));

    shutdown.await;
    tracing::info!("shutting down");
    cancel.cancel();
    let wait = async {
        if let Err(e) = following.await {
            tracing::error!(error = %e, "the task following the recorded repositories panicked");
        }
        roots.wait().await;
        if let Err(e) = backfill.await {
            tracing::error!(error = %e, "the backfill task panicked");
        }
        match bus.await {
            Ok(Err(e)) => tracing::error!(error = %e, "NATS service failed"),
            Err(e) => tracing::error!(error = %e, "NATS task panicked"),
            Ok(Ok(())) => {}
        }
        let _ = heartbeats.await;
        if let Some(http) = http {
            let _ = http.await;
        }
    };
    if tokio::time::timeout(SHUTDOWN_GRACE, wait).await.is_err() {
        tracing::warn!("tasks did not stop within {SHUTDOWN_GRACE:?}");
    }
    if let Err(e) = client.drain().await {
        tracing::warn!(error = %e, "draining NATS failed");
    }
    Ok(())
}
