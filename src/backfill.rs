//! Embeds the chunks stored with pending vectors.
//!
//! The indexer stores a file's chunks even when the embedder cannot embed them (it is down,
//! or its circuit breaker paused it): lexical search finds them at once. This task finds those
//! rows and gives them vectors as soon as the embedder answers, without a restart or a
//! re-index. It wakes when a run leaves vectors pending and every `interval` besides; while
//! the embedder stays unavailable each look costs one cheap query (the breaker answers without
//! calling the server).
//!
//! A stored row's embedding input is rebuilt from its parts ([`crate::pipeline::input_of`]);
//! vectors already stored for the same input are copied rather than recomputed. A row replaced
//! meanwhile by a newer version of its file is left alone (the update matches on `id` and a
//! NULL vector). Inputs the model refuses are recorded and tried again after
//! [`RETRY_REJECTED_AFTER`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::embed::Embedder;
use crate::health::Metrics;
use crate::outage::Outage;
use crate::pipeline::{Vectored, input_of, vectors_for};
use crate::store::{Store, StoreError};

/// Rows read per round.
const ROUND: i64 = 256;
/// How long an input the model refused waits before it is tried again.
pub const RETRY_REJECTED_AFTER: Duration = Duration::from_secs(3600);

/// What one drain did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Drained {
    pub stored: u64,
    pub embedded: usize,
    pub embed_time: Duration,
    pub rejected: usize,
    /// Rows left because the embedder was unavailable.
    pub waiting: bool,
}

/// Runs until `cancel` fires: drains the backlog whenever woken or every `interval`.
pub async fn run(
    store: Store,
    embedder: Arc<dyn Embedder>,
    wake: Arc<Notify>,
    interval: Duration,
    metrics: Arc<Metrics>,
    cancel: CancellationToken,
) {
    // A dead database or embedder fails every pass: said once, then once a minute.
    let mut failing = Outage::default();
    loop {
        match drain(&store, embedder.as_ref(), &cancel).await {
            Ok(d) => {
                if let Some((secs, attempts)) = failing.end(Instant::now()) {
                    tracing::info!(
                        failing_secs = secs,
                        attempts,
                        "backfill of pending vectors works again"
                    );
                }
                metrics.backfilled(d.embedded, d.embed_time);
                if d.stored > 0 {
                    tracing::info!(
                        vectors = d.stored,
                        embedded = d.embedded,
                        "pending vectors filled"
                    );
                }
                if d.rejected > 0 {
                    tracing::warn!(
                        chunks = d.rejected,
                        "the model refused some chunks; recorded in codebase_index.embed_error"
                    );
                }
            }
            Err(e) => match failing.failed(Instant::now()) {
                Some((secs, attempts)) => tracing::warn!(error = %e, failing_secs = secs, attempts,
                    "backfill of pending vectors failed; will retry"),
                None => {
                    tracing::debug!(error = %e, "backfill of pending vectors failed; will retry")
                }
            },
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = wake.notified() => {}
            _ = tokio::time::sleep(interval) => {}
        }
    }
}

/// Embeds pending rows until none is left, the embedder is unavailable, or `cancel` fires.
pub async fn drain(
    store: &Store,
    embedder: &dyn Embedder,
    cancel: &CancellationToken,
) -> Result<Drained, StoreError> {
    let mut total = Drained::default();
    let model = embedder.model_id();
    let dimension = embedder.dimension() as i32;
    while !cancel.is_cancelled() {
        let rows = store.pending_chunks(ROUND, RETRY_REJECTED_AFTER).await?;
        if rows.is_empty() {
            break;
        }
        let texts: Vec<String> = rows
            .iter()
            .map(|r| input_of(&r.file_path, &r.kind, r.symbol.as_deref(), &r.content))
            .collect();
        let inputs: Vec<(&str, &str)> = rows
            .iter()
            .zip(&texts)
            .map(|(r, t)| (r.content_hash.as_str(), t.as_str()))
            .collect();
        let got = vectors_for(store, embedder, &inputs).await?;
        total.embed_time += got.embed_time;
        let mut vectors: Vec<(Uuid, Vec<f32>)> = Vec::new();
        let mut rejected: Vec<(Uuid, String)> = Vec::new();
        for r in &rows {
            match got.by_hash.get(&r.content_hash) {
                Some(Vectored::Vector(v)) => vectors.push((r.id, v.clone())),
                Some(Vectored::Rejected(e)) => rejected.push((r.id, e.clone())),
                Some(Vectored::Pending) | None => {}
            }
        }
        let stored = store
            .fill_vectors(model, dimension, &vectors, &rejected)
            .await?;
        total.stored += stored;
        total.embedded += got.embedded;
        total.rejected += rejected.len();
        if got.unavailable.is_some() {
            total.waiting = true;
            break;
        }
        if vectors.is_empty() && rejected.is_empty() {
            break; // nothing could change: do not spin
        }
    }
    Ok(total)
}
