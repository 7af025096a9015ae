//! Chunks to vectors.
//!
//! In: texts (chunk embedding inputs, or a query). Out: one unit-length vector per text, in
//! order, of [`Embedder::dimension`] floats. Backends: Ollama over HTTP (production), the
//! in-process all-MiniLM-L6-v2 on candle (no server needed), and a deterministic hashing
//! embedder for tests and for benchmarks of everything but the model.
//!
//! Every backend names its model with a stable id (`ollama/nomic-embed-text`,
//! `local/all-MiniLM-L6-v2`, `hash/v1`); the store keeps that id beside each vector so that
//! vectors of two models are never compared. Errors say whose fault they are
//! ([`EmbedError::is_transient`]): a transient error is retried later, a permanent one needs
//! an operator (pull the model, fix the model directory).

mod guard;
mod hash;
mod local;
pub mod ollama;
mod onnx;
mod query_map;

use std::sync::Arc;

use futures::future::BoxFuture;
use thiserror::Error;

pub use guard::{Documents, Guarded, embed_documents};
pub use hash::HashEmbedder;
pub use local::LocalEmbedder;
pub use ollama::OllamaEmbedder;

use crate::config::{EmbedBackend, EmbedConfig};

/// Whether a text is a document to index or a query to search with. Models such as
/// nomic-embed-text expect a different task prefix for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    Document,
    Query,
}

#[derive(Debug, Error)]
pub enum EmbedError {
    #[error("model `{model}` is not available on Ollama at {url}: run `ollama pull {model}`")]
    ModelMissing { url: String, model: String },
    #[error("Ollama at {url} is unreachable: {message}")]
    Unreachable { url: String, message: String },
    #[error("Ollama at {url} did not answer within {secs}s")]
    Timeout { url: String, secs: u64 },
    #[error("Ollama at {url} answered {status}: {message}")]
    Server {
        url: String,
        status: u16,
        message: String,
    },
    #[error("Ollama at {url} sent an unreadable answer: {message}")]
    BadResponse { url: String, message: String },
    #[error("model `{model}` returned vectors of {got} dimensions, expected {expected}")]
    Dimension {
        model: String,
        got: usize,
        expected: usize,
    },
    #[error("cannot load the local model from {dir}: {message}")]
    Load { dir: String, message: String },
    #[error("local model failed: {0}")]
    Inference(String),
    #[error(
        "the embedder is paused after repeated failures (retrying in {retry_in_secs}s); last error: {last}"
    )]
    CircuitOpen { retry_in_secs: u64, last: String },
    #[error("the query embedding did not finish within its deadline of {ms} ms")]
    QueryDeadline { ms: u64 },
}

impl EmbedError {
    /// A passing fault (server busy, down, slow): the same call may succeed later.
    pub fn is_transient(&self) -> bool {
        match self {
            EmbedError::Unreachable { .. }
            | EmbedError::Timeout { .. }
            | EmbedError::CircuitOpen { .. }
            | EmbedError::QueryDeadline { .. } => true,
            EmbedError::Server { status, .. } => *status >= 500 || *status == 429,
            _ => false,
        }
    }

    /// The server (or the model) is failing as a whole: counts toward opening the breaker.
    pub fn is_server_level(&self) -> bool {
        match self {
            EmbedError::Unreachable { .. }
            | EmbedError::Timeout { .. }
            | EmbedError::ModelMissing { .. }
            | EmbedError::Load { .. } => true,
            EmbedError::Server { status, .. } => *status >= 500 || *status == 429,
            _ => false,
        }
    }

    /// The failure may be caused by one of the inputs (Ollama answers 500 for an input that
    /// makes the model produce NaN, 400 for one it cannot read): worth splitting the batch.
    pub fn may_be_input_specific(&self) -> bool {
        match self {
            EmbedError::Server { status, .. } => {
                *status == 500 || (400..500).contains(status) && ![408, 429].contains(status)
            }
            EmbedError::BadResponse { .. } | EmbedError::Inference(_) => true,
            _ => false,
        }
    }
}

/// A source of embeddings. Implementations are cheap to share (`Arc`) and safe to call
/// concurrently; CPU-bound work runs off the async reactor.
pub trait Embedder: Send + Sync {
    /// Stable id of the model, stored with every vector.
    fn model_id(&self) -> &str;
    /// Length of every returned vector.
    fn dimension(&self) -> usize;
    /// Texts per backend call that bulk work should send.
    fn batch_size(&self) -> usize {
        32
    }
    /// Whether queries run on a model of their own, beside the documents' (the local model's
    /// 8-bit copy): then a query need not wait for a batch of documents to finish.
    fn queries_apart(&self) -> bool {
        false
    }
    /// Embeds `texts` in order. The vectors have unit length.
    fn embed<'a>(
        &'a self,
        texts: &'a [String],
        kind: InputKind,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>>;
}

/// Which backend `auto` chose, and why, for the log.
pub struct Chosen {
    pub embedder: Arc<dyn Embedder>,
    pub reason: String,
}

/// Builds the configured embedder. `indexed_model` is the model id that made the vectors
/// already in the index, if any: `auto` keeps using it so an index is never re-embedded by
/// surprise. `auto` never chooses the hash embedder, whatever the index holds: it is for tests.
pub async fn from_config(
    cfg: &EmbedConfig,
    indexed_model: Option<&str>,
) -> Result<Chosen, EmbedError> {
    let (backend, reason) = match cfg.backend {
        EmbedBackend::Auto => match indexed_model {
            Some(m) if m.starts_with("ollama/") => (
                EmbedBackend::Ollama,
                "the index holds Ollama vectors".to_owned(),
            ),
            Some(m) if m.starts_with("local/") => (
                EmbedBackend::Local,
                "the index holds local-model vectors".to_owned(),
            ),
            _ => match OllamaEmbedder::probe(cfg).await {
                Ok(()) => (
                    EmbedBackend::Ollama,
                    format!(
                        "Ollama answers at {} with `{}`",
                        cfg.ollama_url, cfg.ollama_model
                    ),
                ),
                Err(e) => (EmbedBackend::Local, format!("no usable Ollama ({e})")),
            },
        },
        explicit => (explicit, "configured".to_owned()),
    };
    let (inner, batch_size): (Box<dyn Embedder>, usize) = match backend {
        EmbedBackend::Ollama => (Box::new(OllamaEmbedder::new(cfg)?), cfg.ollama_batch_size),
        EmbedBackend::Local => {
            let owned = cfg.clone();
            let model = tokio::task::spawn_blocking(move || LocalEmbedder::load(&owned))
                .await
                .map_err(|e| EmbedError::Inference(e.to_string()))??;
            (Box::new(model), cfg.local_batch_size)
        }
        EmbedBackend::Hash => (Box::new(HashEmbedder::new(384)), 64),
        EmbedBackend::Auto => unreachable!("auto is resolved above"),
    };
    let embedder = Arc::new(Guarded::new(inner, batch_size, cfg.concurrency));
    Ok(Chosen { embedder, reason })
}

/// Scales `v` to unit length (a zero vector stays zero).
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}
