//! Adapter: the NATS service.
//!
//! In: requests on `<prefix>.codebase.search` (queue group `codesearch` by default, so several
//! daemons share the load). Out: the JSON replies of [`wire`]. Built on async-nats' service
//! API, so `$SRV.PING`, `$SRV.INFO` and `$SRV.STATS` answer for free. A request is answered
//! whatever it holds: bad input gets `success: false` with a code, internal details stay in
//! the log under the request id. Requests are handled concurrently, at most
//! [`MAX_IN_FLIGHT`] at a time. On cancel the endpoint stops taking requests and the ones in
//! hand are answered.

pub mod wire;

use std::sync::Arc;
use std::time::Duration;

use async_nats::service::ServiceExt;
use bytes::Bytes;
use futures::StreamExt;
use thiserror::Error;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::{NatsConfig, redact_url};
use crate::health::Metrics;
use crate::search::{RawSearch, SearchError, SearchRequest, SearchService};
use wire::{ErrorCode, ErrorResponse, ScoreParts, SearchResponse, SearchResult};

/// Requests handled at once; more wait in the subscription buffer.
pub const MAX_IN_FLIGHT: usize = 32;
/// Largest request accepted, in bytes.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;
/// Name of the service in `$SRV` discovery.
pub const SERVICE_NAME: &str = "codesearch";

#[derive(Debug, Error)]
pub enum BusError {
    #[error("cannot connect to NATS at {url}: {message}")]
    Connect { url: String, message: String },
    #[error("cannot start the NATS service: {0}")]
    Service(String),
}

/// Connects to NATS, naming the connection so operators can see it in `nats server report`.
pub async fn connect(cfg: &NatsConfig) -> Result<async_nats::Client, BusError> {
    async_nats::ConnectOptions::new()
        .name("codesearch")
        .connection_timeout(Duration::from_secs(5))
        .connect(&cfg.url)
        .await
        .map_err(|e| BusError::Connect {
            url: redact_url(&cfg.url),
            message: e.to_string(),
        })
}

/// Serves searches until `cancel` fires.
pub async fn serve(
    client: async_nats::Client,
    search: SearchService,
    cfg: NatsConfig,
    metrics: Arc<Metrics>,
    cancel: CancellationToken,
) -> Result<(), BusError> {
    let figures = Arc::clone(&metrics);
    let service = client
        .service_builder()
        .description("Semantic code search over indexed repositories")
        // Error replies carry a JSON body (the contract), which the service API counts as
        // successes: our own figures, errors included, go in each endpoint's `data`.
        .stats_handler(move |_endpoint, _stats| {
            serde_json::to_value(figures.search_figures()).unwrap_or_default()
        })
        .queue_group(&cfg.queue_group)
        .start(SERVICE_NAME, env!("CARGO_PKG_VERSION"))
        .await
        .map_err(|e| BusError::Service(e.to_string()))?;
    let subject = cfg.search_subject();
    let mut endpoint = service
        .endpoint_builder()
        .name("search")
        .add(&subject)
        .await
        .map_err(|e| BusError::Service(e.to_string()))?;
    tracing::info!(%subject, queue_group = %cfg.queue_group, "serving searches");

    let permits = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let tracker = TaskTracker::new();
    loop {
        let request = tokio::select! {
            _ = cancel.cancelled() => break,
            r = endpoint.next() => match r {
                Some(r) => r,
                None => break,
            },
        };
        let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
            break;
        };
        let search = search.clone();
        let metrics = Arc::clone(&metrics);
        tracker.spawn(async move {
            let _permit = permit;
            let started = std::time::Instant::now();
            let Handled {
                body,
                error,
                cached,
                query_embedding,
            } = handle(&search, &request.message.payload).await;
            let mut headers = async_nats::HeaderMap::new();
            if let Some(code) = error {
                headers.insert("Nats-Service-Error", code.as_str());
                headers.insert(
                    "Nats-Service-Error-Code",
                    code.status().to_string().as_str(),
                );
            }
            if let Err(e) = request.respond_with_headers(Ok(body), headers).await {
                tracing::warn!(error = %e, "could not send a reply");
            }
            metrics.search_answered(
                started.elapsed(),
                error.map(ErrorCode::as_str),
                cached,
                query_embedding,
            );
        });
    }
    tracker.close();
    let _ = endpoint.stop().await;
    if tokio::time::timeout(Duration::from_secs(10), tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!("searches still running after 10s at shutdown; leaving them");
    }
    let _ = service.stop().await;
    Ok(())
}

/// One answered request.
pub struct Handled {
    pub body: Bytes,
    /// The error code when the reply is a failure.
    pub error: Option<ErrorCode>,
    /// Whether the result came from the result cache.
    pub cached: bool,
    /// How long the query embedding took, when one was computed.
    pub query_embedding: Option<Duration>,
}

/// Answers one request.
pub async fn handle(search: &SearchService, payload: &[u8]) -> Handled {
    match answer(search, payload).await {
        Ok(response) => Handled {
            cached: response.cached,
            query_embedding: (!response.cached && response.query_embedding_time > 0)
                .then(|| Duration::from_millis(response.query_embedding_time)),
            body: to_bytes(&response),
            error: None,
        },
        Err((code, message)) => Handled {
            body: to_bytes(&ErrorResponse::new(code, message)),
            error: Some(code),
            cached: false,
            query_embedding: None,
        },
    }
}

async fn answer(
    search: &SearchService,
    payload: &[u8],
) -> Result<SearchResponse, (ErrorCode, String)> {
    if payload.len() > MAX_REQUEST_BYTES {
        return Err((
            ErrorCode::BadRequest,
            format!("request is larger than {MAX_REQUEST_BYTES} bytes"),
        ));
    }
    let bad = |m: String| (ErrorCode::BadRequest, m);
    let value: serde_json::Value = serde_json::from_slice(payload)
        .map_err(|e| bad(format!("request is not valid JSON: {e}")))?;
    // serde would read a JSON array positionally into the struct: insist on an object.
    if !value.is_object() {
        return Err(bad(
            "request must be a JSON object with a `query` field".into()
        ));
    }
    let raw: wire::SearchRequest = serde_json::from_value(value)
        .map_err(|e| bad(format!("request is not a valid search request: {e}")))?;
    let request = SearchRequest::new(
        RawSearch {
            query: raw.query,
            file_types: raw.file_types,
            modules: raw.modules,
            component_types: raw.component_types,
            languages: raw.languages,
            repository: raw.repository,
            path_glob: raw.path_glob,
            limit: raw.limit,
            offset: raw.offset,
            min_similarity: raw.min_similarity,
            mode: raw.mode,
            max_per_file: raw.max_per_file,
        },
        search.config(),
    )
    .map_err(|e| fault(&e))?;
    let outcome = search.search(&request).await.map_err(|e| fault(&e))?;
    let results: Vec<SearchResult> = outcome
        .hits
        .into_iter()
        .map(|s| {
            let h = s.hit;
            SearchResult {
                file_path: h.file_path,
                chunk_index: h.chunk_index,
                content: h.content,
                similarity: h.similarity.unwrap_or(0.0),
                module: h.module,
                component_type: h.component_type,
                start_line: h.start_line,
                end_line: h.end_line,
                language: h.language,
                symbol: h.symbol,
                repository: Some(h.repository),
                file_type: h.file_type,
                score: Some(s.score),
                scores: Some(ScoreParts {
                    vector: h.similarity,
                    vector_rank: s.vector_rank,
                    lexical: h.lexical,
                    lexical_rank: s.lexical_rank,
                    file_lexical: s.file_lexical,
                    file_lexical_rank: s.file_lexical_rank,
                    definition: s.definition,
                }),
            }
        })
        .collect();
    Ok(SearchResponse {
        success: true,
        total_found: results.len(),
        results,
        query_embedding_time: outcome.query_embedding_ms,
        search_time: outcome.search_ms,
        mode: Some(outcome.mode.as_str().to_owned()),
        warning: outcome.warning,
        cached: outcome.cached,
    })
}

/// Maps a service error to what the caller is told; details go to the log.
fn fault(e: &SearchError) -> (ErrorCode, String) {
    match e {
        SearchError::Invalid(m) => (ErrorCode::InvalidArgument, m.clone()),
        SearchError::Embedding(inner) if inner.is_transient() => {
            tracing::warn!(error = %e, "search failed");
            (
                ErrorCode::EmbeddingUnavailable,
                "the embedding model is unavailable; retry later".into(),
            )
        }
        SearchError::Store(inner) if inner.is_transient() => {
            tracing::warn!(error = %e, "search failed");
            (
                ErrorCode::IndexUnavailable,
                "the index database is unavailable; retry later".into(),
            )
        }
        other => {
            let id = uuid::Uuid::new_v4().simple().to_string();
            tracing::error!(request_id = %id, error = %other, "search failed");
            (
                ErrorCode::Internal,
                format!("internal error (request id {id})"),
            )
        }
    }
}

fn to_bytes<T: serde::Serialize>(value: &T) -> Bytes {
    // Serialising these plain structs cannot fail; fall back to a fixed error body anyway.
    serde_json::to_vec(value)
        .map(Bytes::from)
        .unwrap_or_else(|_| {
            Bytes::from_static(
            br#"{"success":false,"error":{"code":"internal","message":"reply encoding failed"}}"#,
        )
        })
}
