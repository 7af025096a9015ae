//! Wires the stages and the adapters: `index` (one pass) and `serve` (index, then answer
//! searches until shutdown).
//!
//! Shutdown: the caller's `shutdown` future resolves (a signal in `main`, a channel in tests),
//! the cancellation token tells every task, indexing finishes the file in hand, the NATS
//! endpoint answers what it holds, then the connection is drained and the pool closed.

use std::future::Future;
use std::path::PathBuf;
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

/// Indexes every root once.
pub async fn index(
    config: &Config,
    store: Store,
    embedder: Arc<dyn Embedder>,
    roots: &[PathBuf],
    cancel: &CancellationToken,
    show_progress: bool,
) -> anyhow::Result<Vec<IndexReport>> {
    let indexer = Indexer::new(store, embedder, config.index.clone())?;
    let mut reports = Vec::new();
    for root in roots {
        let bar = show_progress.then(progress_bar);
        if let Some(bar) = &bar {
            bar.set_message(indexer.repository_name(root));
        }
        let report = indexer
            .index_root(root, bar.as_ref(), cancel)
            .await
            .with_context(|| format!("indexing {}", root.display()))?;
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

/// Serves searches over NATS and keeps `roots` indexed (reconcile, watch, backfill; see
/// [`crate::live`]), until `shutdown` resolves.
pub async fn serve(
    config: Config,
    roots: Vec<PathBuf>,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    // A mistyped root is an error now, not a reconcile retried forever.
    for root in &roots {
        anyhow::ensure!(
            root.is_dir(),
            "{} is not a readable directory",
            root.display()
        );
    }
    let (store, embedder) = open(&config).await?;
    let client = crate::bus::connect(&config.nats).await?;
    tracing::info!(url = %redact_url(&config.nats.url), "connected to NATS");
    let cancel = CancellationToken::new();
    let metrics = Arc::new(Metrics::new());
    let active_model = embedder.model_id().to_owned();
    let search = SearchService::new(store.clone(), Arc::clone(&embedder), config.search.clone());
    let bus = tokio::spawn(crate::bus::serve(
        client.clone(),
        search,
        config.nats.clone(),
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
        };
        match crate::http::bind(&config.health.http_addr, state, cancel.clone()).await {
            Ok((addr, task)) => {
                tracing::info!(%addr, "serving /health, /ready and /metrics");
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
    let indexer = Indexer::new(store.clone(), Arc::clone(&embedder), config.index.clone())?;
    let mut tasks = Vec::new();
    for root in roots {
        tasks.push(tokio::spawn(crate::live::keep_indexed(
            indexer.clone(),
            root,
            config.watch.clone(),
            Arc::clone(&metrics),
            cancel.clone(),
        )));
    }
    tasks.push(tokio::spawn(crate::backfill::run(
        store,
        embedder,
        indexer.backlog(),
        Duration::from_secs(config.watch.backfill_interval_secs.max(1)),
        Arc::clone(&metrics),
        cancel.clone(),
    )));

    shutdown.await;
    tracing::info!("shutting down");
    cancel.cancel();
    let wait = async {
        for task in tasks {
            if let Err(e) = task.await {
                tracing::error!(error = %e, "indexing task panicked");
            }
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
