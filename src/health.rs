//! What the daemon says about itself: counters, heartbeats on NATS, and the HTTP endpoints
//! `/health`, `/ready` and `/metrics`.
//!
//! [`Metrics`] is shared by the search adapter (requests, errors, latencies), the indexer
//! (runs, embedded chunks) and the readers: the heartbeat task, the HTTP server and the
//! `$SRV.STATS` handler. Index figures (files, chunks, pending vectors) are read from the
//! database when asked for, so they are true whichever daemon wrote them.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, EmbedBackend};
use crate::embed::ollama;
use crate::store::{IndexSummary, RepositorySummary, Store};

/// Upper bounds (seconds) of the latency histogram buckets.
const LATENCY_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];
/// Latencies kept for percentiles.
const RECENT: usize = 10_000;
/// A heartbeat publish that takes longer than this is dropped: it never holds the daemon.
const PUBLISH_TIMEOUT: Duration = Duration::from_secs(2);

/// Whether the daemon is indexing or idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexState {
    Starting,
    Indexing,
    Ready,
}

impl IndexState {
    pub fn as_str(self) -> &'static str {
        match self {
            IndexState::Starting => "starting",
            IndexState::Indexing => "indexing",
            IndexState::Ready => "ready",
        }
    }
}

/// Latency figures of one kind of operation.
#[derive(Debug, Clone, Default)]
struct Histogram {
    counts: [u64; LATENCY_BUCKETS.len()],
    count: u64,
    sum: f64,
    recent: VecDeque<f64>,
}

impl Histogram {
    fn observe(&mut self, secs: f64) {
        for (i, le) in LATENCY_BUCKETS.iter().enumerate() {
            if secs <= *le {
                self.counts[i] += 1;
            }
        }
        self.count += 1;
        self.sum += secs;
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(secs);
    }

    /// Percentiles (0..1) of the recent latencies, in milliseconds.
    fn percentiles(&self, ps: &[f64]) -> Vec<f64> {
        let mut v: Vec<f64> = self.recent.iter().copied().collect();
        v.sort_by(f64::total_cmp);
        ps.iter()
            .map(|p| {
                if v.is_empty() {
                    0.0
                } else {
                    v[((v.len() - 1) as f64 * p).round() as usize] * 1000.0
                }
            })
            .collect()
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (i, le) in LATENCY_BUCKETS.iter().enumerate() {
            out.push_str(&format!(
                "{name}_bucket{{{labels}{sep}le=\"{le}\"}} {}\n",
                self.counts[i]
            ));
        }
        out.push_str(&format!(
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}\n",
            self.count
        ));
        out.push_str(&format!("{name}_sum{{{labels}}} {}\n", self.sum));
        out.push_str(&format!("{name}_count{{{labels}}} {}\n", self.count));
    }
}

#[derive(Debug, Default)]
struct State {
    requests: u64,
    errors: BTreeMap<String, u64>,
    cache_hits: u64,
    search: Histogram,
    query_embedding: Histogram,
    index_state: Option<IndexState>,
    /// Full passes running now (one per repository at most).
    passes_running: usize,
    index_runs: u64,
    index_failures: u64,
    last_index_error: Option<String>,
    embedded_chunks: u64,
    embedding_secs: f64,
    backfilled_chunks: u64,
    reconciles: BTreeMap<&'static str, u64>,
    watch_events: u64,
    watch_batches: u64,
    watch_failures: u64,
    watch_lag: Histogram,
    last_watch_lag: Option<f64>,
}

/// Per-endpoint figures as `$SRV.STATS` and `codesearch stats` show them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct EndpointFigures {
    pub requests: u64,
    pub errors: u64,
    pub errors_by_code: BTreeMap<String, u64>,
    pub cache_hits: u64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub mean_ms: f64,
}

/// The daemon's view of itself. Cheap to share: `Arc<Metrics>`.
#[derive(Debug)]
pub struct Metrics {
    pub instance_id: String,
    started: Instant,
    state: Mutex<State>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        Self {
            instance_id: uuid::Uuid::new_v4().simple().to_string(),
            started: Instant::now(),
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records one answered search request.
    pub fn search_answered(
        &self,
        elapsed: Duration,
        error: Option<&str>,
        cached: bool,
        query_embedding: Option<Duration>,
    ) {
        let mut s = self.lock();
        s.requests += 1;
        if let Some(code) = error {
            *s.errors.entry(code.to_owned()).or_default() += 1;
        }
        if cached {
            s.cache_hits += 1;
        }
        s.search.observe(elapsed.as_secs_f64());
        if let Some(q) = query_embedding {
            s.query_embedding.observe(q.as_secs_f64());
        }
    }

    /// A repository's full pass started: the daemon is `indexing` until every pass that
    /// started has finished.
    pub fn pass_started(&self) {
        let mut s = self.lock();
        s.passes_running += 1;
        s.index_state = Some(IndexState::Indexing);
    }

    /// A repository's full pass finished (well or not); `ready` once none is running.
    pub fn pass_finished(&self) {
        let mut s = self.lock();
        s.passes_running = s.passes_running.saturating_sub(1);
        if s.passes_running == 0 {
            s.index_state = Some(IndexState::Ready);
        }
    }

    /// The daemon was given no repository to index: `ready` at once, not `starting` forever
    /// (a request that adds one makes it `indexing`).
    pub fn nothing_to_index(&self) {
        let mut s = self.lock();
        if s.index_state.is_none() && s.passes_running == 0 {
            s.index_state = Some(IndexState::Ready);
        }
    }

    pub fn index_state(&self) -> IndexState {
        self.lock().index_state.unwrap_or(IndexState::Starting)
    }

    /// Records a finished index (reconcile) run.
    pub fn index_run(&self, embedded: usize, embedding_time: Duration, error: Option<String>) {
        let mut s = self.lock();
        s.index_runs += 1;
        s.embedded_chunks += embedded as u64;
        s.embedding_secs += embedding_time.as_secs_f64();
        if error.is_some() {
            s.index_failures += 1;
            s.last_index_error = error;
        }
    }

    /// Records vectors filled in by the backfill.
    pub fn backfilled(&self, embedded: usize, embedding_time: Duration) {
        let mut s = self.lock();
        s.backfilled_chunks += embedded as u64;
        s.embedded_chunks += embedded as u64;
        s.embedding_secs += embedding_time.as_secs_f64();
    }

    /// Records the start of a full reconcile, by why it ran.
    pub fn reconcile_started(&self, reason: &'static str) {
        *self.lock().reconciles.entry(reason).or_default() += 1;
    }

    /// Records a batch of watched changes indexed: how many paths, and the time from the first
    /// change to the batch being searchable (`None` when indexing it failed).
    pub fn watch_batch(&self, paths: usize, lag: Option<Duration>) {
        let mut s = self.lock();
        s.watch_events += paths as u64;
        match lag {
            Some(lag) => {
                s.watch_batches += 1;
                s.watch_lag.observe(lag.as_secs_f64());
                s.last_watch_lag = Some(lag.as_secs_f64());
            }
            None => s.watch_failures += 1,
        }
    }

    /// Milliseconds from a change on disk to the last watched batch being searchable.
    pub fn last_watch_lag_ms(&self) -> Option<f64> {
        self.lock().last_watch_lag.map(|s| s * 1000.0)
    }

    pub fn search_figures(&self) -> EndpointFigures {
        let s = self.lock();
        let p = s.search.percentiles(&[0.5, 0.95, 0.99]);
        EndpointFigures {
            requests: s.requests,
            errors: s.errors.values().sum(),
            errors_by_code: s.errors.clone(),
            cache_hits: s.cache_hits,
            p50_ms: p[0],
            p95_ms: p[1],
            p99_ms: p[2],
            mean_ms: if s.search.count == 0 {
                0.0
            } else {
                s.search.sum / s.search.count as f64 * 1000.0
            },
        }
    }

    /// Prometheus text exposition (format 0.0.4).
    pub fn render(&self, index: Option<&IndexSummary>, pool: (u32, usize)) -> String {
        let s = self.lock();
        let mut out = String::new();
        let metric = |out: &mut String, name: &str, kind: &str, help: &str| {
            out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
        };
        metric(
            &mut out,
            "codesearch_build_info",
            "gauge",
            "Version and instance id of this daemon.",
        );
        out.push_str(&format!(
            "codesearch_build_info{{version=\"{}\",instance_id=\"{}\"}} 1\n",
            env!("CARGO_PKG_VERSION"),
            self.instance_id
        ));
        metric(
            &mut out,
            "codesearch_uptime_seconds",
            "gauge",
            "Seconds since the daemon started.",
        );
        out.push_str(&format!(
            "codesearch_uptime_seconds {}\n",
            self.started.elapsed().as_secs_f64()
        ));
        metric(
            &mut out,
            "codesearch_requests_total",
            "counter",
            "Requests answered, by endpoint.",
        );
        out.push_str(&format!(
            "codesearch_requests_total{{endpoint=\"search\"}} {}\n",
            s.requests
        ));
        metric(
            &mut out,
            "codesearch_request_errors_total",
            "counter",
            "Requests answered with an error, by endpoint and error code.",
        );
        for (code, n) in &s.errors {
            out.push_str(&format!(
                "codesearch_request_errors_total{{endpoint=\"search\",code=\"{code}\"}} {n}\n"
            ));
        }
        metric(
            &mut out,
            "codesearch_cache_hits_total",
            "counter",
            "Searches answered from the result cache.",
        );
        out.push_str(&format!(
            "codesearch_cache_hits_total{{endpoint=\"search\"}} {}\n",
            s.cache_hits
        ));
        metric(
            &mut out,
            "codesearch_request_duration_seconds",
            "histogram",
            "Time from request to reply, by endpoint.",
        );
        s.search.render(
            &mut out,
            "codesearch_request_duration_seconds",
            "endpoint=\"search\"",
        );
        metric(
            &mut out,
            "codesearch_query_embedding_duration_seconds",
            "histogram",
            "Time to embed a search query (cache misses).",
        );
        s.query_embedding
            .render(&mut out, "codesearch_query_embedding_duration_seconds", "");
        metric(
            &mut out,
            "codesearch_embedded_chunks_total",
            "counter",
            "Chunks embedded by the indexer.",
        );
        out.push_str(&format!(
            "codesearch_embedded_chunks_total {}\n",
            s.embedded_chunks
        ));
        metric(
            &mut out,
            "codesearch_embedding_seconds_total",
            "counter",
            "Time the indexer spent waiting for the embedder.",
        );
        out.push_str(&format!(
            "codesearch_embedding_seconds_total {}\n",
            s.embedding_secs
        ));
        metric(
            &mut out,
            "codesearch_backfilled_chunks_total",
            "counter",
            "Pending vectors filled in after the embedder came back.",
        );
        out.push_str(&format!(
            "codesearch_backfilled_chunks_total {}\n",
            s.backfilled_chunks
        ));
        metric(
            &mut out,
            "codesearch_reconcile_runs_total",
            "counter",
            "Full reconciles started, by reason (startup, periodic, watcher, recovery).",
        );
        for (reason, n) in &s.reconciles {
            out.push_str(&format!(
                "codesearch_reconcile_runs_total{{reason=\"{reason}\"}} {n}\n"
            ));
        }
        metric(
            &mut out,
            "codesearch_watch_events_total",
            "counter",
            "Changed paths reported by the file watcher (after filtering).",
        );
        out.push_str(&format!(
            "codesearch_watch_events_total {}\n",
            s.watch_events
        ));
        metric(
            &mut out,
            "codesearch_watch_batches_total",
            "counter",
            "Batches of watched changes indexed, and how many failed (a reconcile follows).",
        );
        out.push_str(&format!(
            "codesearch_watch_batches_total{{result=\"ok\"}} {}\n",
            s.watch_batches
        ));
        out.push_str(&format!(
            "codesearch_watch_batches_total{{result=\"failed\"}} {}\n",
            s.watch_failures
        ));
        metric(
            &mut out,
            "codesearch_watch_lag_seconds",
            "histogram",
            "Time from a change on disk to its batch being searchable.",
        );
        s.watch_lag
            .render(&mut out, "codesearch_watch_lag_seconds", "");
        metric(
            &mut out,
            "codesearch_index_runs_total",
            "counter",
            "Index (reconcile) passes run, and how many failed.",
        );
        out.push_str(&format!(
            "codesearch_index_runs_total{{result=\"ok\"}} {}\n",
            s.index_runs - s.index_failures
        ));
        out.push_str(&format!(
            "codesearch_index_runs_total{{result=\"failed\"}} {}\n",
            s.index_failures
        ));
        metric(
            &mut out,
            "codesearch_index_state",
            "gauge",
            "1 for the indexer's current state.",
        );
        let now = s.index_state.unwrap_or(IndexState::Starting);
        for st in [
            IndexState::Starting,
            IndexState::Indexing,
            IndexState::Ready,
        ] {
            out.push_str(&format!(
                "codesearch_index_state{{state=\"{}\"}} {}\n",
                st.as_str(),
                u8::from(st == now)
            ));
        }
        if let Some(index) = index {
            let per_repository: [(&str, &str, RepositoryFigure); 4] = [
                (
                    "codesearch_index_files",
                    "Files with chunks in the index, by repository.",
                    |r| r.files,
                ),
                (
                    "codesearch_index_chunks",
                    "Chunks in the index, by repository.",
                    |r| r.chunks,
                ),
                (
                    "codesearch_index_chunks_pending_embedding",
                    "Chunks stored without a vector yet, by repository.",
                    |r| r.pending,
                ),
                (
                    "codesearch_index_files_with_errors",
                    "Files recorded as not indexed (skipped or failed), by repository.",
                    |r| r.errors,
                ),
            ];
            for (name, help, value) in per_repository {
                metric(&mut out, name, "gauge", help);
                for r in &index.repositories {
                    out.push_str(&format!(
                        "{name}{{repository=\"{}\"}} {}\n",
                        escape(&r.name),
                        value(r)
                    ));
                }
            }
        }
        metric(
            &mut out,
            "codesearch_db_pool_connections",
            "gauge",
            "Database connections of all the daemon's pools, by state.",
        );
        let (size, idle) = pool;
        out.push_str(&format!(
            "codesearch_db_pool_connections{{state=\"idle\"}} {idle}\n"
        ));
        out.push_str(&format!(
            "codesearch_db_pool_connections{{state=\"in_use\"}} {}\n",
            (size as usize).saturating_sub(idle)
        ));
        out
    }
}

/// Reads one figure of a repository's summary.
type RepositoryFigure = fn(&RepositorySummary) -> i64;

fn escape(label: &str) -> String {
    label
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A heartbeat as published on `<prefix>.infrastructure.health.<component>`: the DESIGN
/// fields, plus when, who and which version.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Heartbeat {
    pub component: String,
    pub status: String,
    pub details: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub timestamp: DateTime<Utc>,
    pub instance_id: String,
    pub version: String,
}

/// Ollama's health: `healthy` when it answers and has the configured model, `degraded` when it
/// answers without it, `down` (with the error) when it does not answer. `inUse` says whether
/// this daemon embeds with Ollama at all (it may run on the in-process model).
pub async fn ollama_heartbeat(cfg: &Config, active_model: &str, metrics: &Metrics) -> Heartbeat {
    let in_use = active_model.starts_with("ollama/");
    let (status, details, error) =
        match ollama::list_models(&cfg.embed.ollama_url, Duration::from_secs(3)).await {
            Ok(models) => {
                let has = models
                    .iter()
                    .any(|m| ollama::model_matches(m, &cfg.embed.ollama_model));
                (
                    if has { "healthy" } else { "degraded" },
                    json!({ "available": true, "embeddingModel": has, "models": models }),
                    None,
                )
            }
            Err(e) => (
                "down",
                json!({ "available": false, "embeddingModel": false, "models": [] }),
                Some(e.to_string()),
            ),
        };
    let mut details = details;
    details["url"] = json!(crate::config::redact_url(&cfg.embed.ollama_url));
    details["model"] = json!(cfg.embed.ollama_model);
    details["inUse"] = json!(in_use);
    details["activeEmbedder"] = json!(active_model);
    if !in_use && cfg.embed.backend == EmbedBackend::Local {
        details["note"] = json!("this daemon is configured for the in-process model");
    }
    heartbeat("ollama", status, details, error, metrics)
}

/// The index's health: `healthy` with true counts, `empty` when nothing is indexed, `down`
/// (with the error) when the database does not answer.
pub async fn index_heartbeat(store: &Store, metrics: &Metrics) -> Heartbeat {
    match store.index_summary().await {
        Ok(s) => {
            let status = if s.total_chunks > 0 {
                "healthy"
            } else {
                "empty"
            };
            let details = json!({
                "total_chunks": s.total_chunks,
                "total_files": s.total_files,
                "last_indexed": s.last_indexed,
                "state": metrics.index_state().as_str(),
                "chunks_pending_embedding": s.pending,
                "chunks_rejected_by_model": s.rejected,
                "watcher_lag_ms": metrics.last_watch_lag_ms(),
                "files_with_errors": s.errors,
                "repositories": s.repositories,
            });
            heartbeat("codebase_index", status, details, None, metrics)
        }
        Err(e) => heartbeat(
            "codebase_index",
            "down",
            json!({ "state": metrics.index_state().as_str() }),
            Some(e.to_string()),
            metrics,
        ),
    }
}

fn heartbeat(
    component: &str,
    status: &str,
    details: serde_json::Value,
    error: Option<String>,
    metrics: &Metrics,
) -> Heartbeat {
    Heartbeat {
        component: component.to_owned(),
        status: status.to_owned(),
        details,
        error,
        timestamp: Utc::now(),
        instance_id: metrics.instance_id.clone(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

/// Publishes both heartbeats every `interval` until `cancel` fires. A publish that cannot
/// complete (NATS down) is dropped after a timeout and logged once per outage.
pub async fn publish_heartbeats(
    client: async_nats::Client,
    cfg: Config,
    store: Store,
    active_model: String,
    metrics: Arc<Metrics>,
    cancel: CancellationToken,
) {
    let interval = Duration::from_secs(cfg.health.interval_secs.max(1));
    let prefix = cfg.nats.subject_prefix.clone();
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failing = false;
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let beats = [
            ollama_heartbeat(&cfg, &active_model, &metrics).await,
            index_heartbeat(&store, &metrics).await,
        ];
        for beat in beats {
            let subject = format!("{prefix}.infrastructure.health.{}", beat.component);
            let Ok(body) = serde_json::to_vec(&beat) else {
                continue;
            };
            let sent =
                tokio::time::timeout(PUBLISH_TIMEOUT, client.publish(subject, body.into())).await;
            match sent {
                Ok(Ok(())) if failing => {
                    tracing::info!("heartbeats are being published again");
                    failing = false;
                }
                Ok(Err(e)) if !failing => {
                    tracing::warn!(error = %e, "cannot publish heartbeats");
                    failing = true;
                }
                Err(_) if !failing => {
                    tracing::warn!("heartbeat publish timed out (is NATS down?)");
                    failing = true;
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_daemon_with_nothing_to_index_is_ready_unless_a_pass_began() {
        let idle = Metrics::new();
        assert_eq!(idle.index_state(), IndexState::Starting);
        idle.nothing_to_index();
        assert_eq!(idle.index_state(), IndexState::Ready);

        // A repository request that arrived first keeps the daemon indexing.
        let busy = Metrics::new();
        busy.pass_started();
        busy.nothing_to_index();
        assert_eq!(busy.index_state(), IndexState::Indexing);
        busy.pass_finished();
        assert_eq!(busy.index_state(), IndexState::Ready);
    }
}
