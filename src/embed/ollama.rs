//! Ollama's `/api/embed` over HTTP.
//!
//! Why not the `ollama-rs` crate: it drops the HTTP status of an error (a missing model, 404,
//! looks the same as a busy server, 503) and sets no timeout, and both decide what we do next
//! (tell the operator to pull the model, or retry). This client speaks the documented API with
//! reqwest directly: `POST /api/embed {model, input: [..], truncate: true}` ->
//! `{embeddings: [[..]]}`, errors as `{"error": "..."}` with a status.
//!
//! Transient failures (connection refused, timeout, 5xx, 429) are retried a few times with
//! backoff and jitter inside one call; everything else is returned at once. Every vector's
//! length is checked. Inputs longer than `ollama_max_input_chars` are cut here. The circuit
//! breaker, the query-first gate and the isolation of a bad input sit above this client, in
//! [`super::Guarded`].

use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use super::{EmbedError, Embedder, InputKind, normalize};
use crate::config::EmbedConfig;

/// Attempts per request for transient failures.
const ATTEMPTS: u32 = 3;

pub struct OllamaEmbedder {
    http: reqwest::Client,
    base: String,
    model: String,
    model_id: String,
    dimension: usize,
    timeout_secs: u64,
    batch_size: usize,
    max_input_chars: usize,
    /// nomic-embed-text and its kin were trained with task prefixes.
    prefixes: Option<(&'static str, &'static str)>,
}

#[derive(Serialize)]
struct EmbedRequest<'a> {
    model: &'a str,
    input: Vec<String>,
    truncate: bool,
}

#[derive(Deserialize)]
struct EmbedResponse {
    embeddings: Vec<Vec<f32>>,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: String,
}

#[derive(Deserialize)]
pub struct TagsResponse {
    pub models: Vec<TagModel>,
}

#[derive(Deserialize)]
pub struct TagModel {
    pub name: String,
}

impl OllamaEmbedder {
    pub fn new(cfg: &EmbedConfig) -> Result<Self, EmbedError> {
        let base = cfg.ollama_url.trim_end_matches('/').to_owned();
        let http = client(cfg.ollama_timeout_secs).map_err(|e| EmbedError::Unreachable {
            url: base.clone(),
            message: e.to_string(),
        })?;
        let model = cfg.ollama_model.clone();
        let name = model.split(':').next().unwrap_or(&model);
        let dimension = known_dimension(name).unwrap_or(768);
        let prefixes = name
            .starts_with("nomic-embed")
            .then_some(("search_document: ", "search_query: "));
        Ok(Self {
            http,
            model_id: format!("ollama/{name}"),
            base,
            model,
            dimension,
            timeout_secs: cfg.ollama_timeout_secs,
            batch_size: cfg.ollama_batch_size,
            max_input_chars: cfg.ollama_max_input_chars,
            prefixes,
        })
    }

    /// Checks that Ollama answers and has the configured model, with a short timeout.
    pub async fn probe(cfg: &EmbedConfig) -> Result<(), EmbedError> {
        let tags = list_models(&cfg.ollama_url, Duration::from_secs(3)).await?;
        if tags.iter().any(|m| model_matches(m, &cfg.ollama_model)) {
            Ok(())
        } else {
            Err(EmbedError::ModelMissing {
                url: cfg.ollama_url.clone(),
                model: cfg.ollama_model.clone(),
            })
        }
    }

    async fn embed_batch(&self, input: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut delay = Duration::from_millis(200);
        let mut attempt = 1;
        loop {
            match self.request(&input).await {
                Err(e) if e.is_transient() && attempt < ATTEMPTS => {
                    tracing::warn!(error = %e, attempt, "embedding request failed; retrying");
                    let jitter = delay.mul_f64(f64::from(super::guard::jitter_percent()) / 200.0);
                    tokio::time::sleep(delay + jitter).await;
                    delay *= 4;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    async fn request(&self, input: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let url = format!("{}/api/embed", self.base);
        let body = EmbedRequest {
            model: &self.model,
            input: input.to_vec(),
            truncate: true,
        };
        let response = self
            .http
            .post(&url)
            .json(&body)
            .send()
            .await
            .map_err(|e| self.transport_error(e))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| self.transport_error(e))?;
        if !status.is_success() {
            let message = serde_json::from_slice::<ErrorBody>(&bytes)
                .map(|b| b.error)
                .unwrap_or_else(|_| String::from_utf8_lossy(&bytes).chars().take(200).collect());
            if status.as_u16() == 404 && message.contains("not found") {
                return Err(EmbedError::ModelMissing {
                    url: self.base.clone(),
                    model: self.model.clone(),
                });
            }
            return Err(EmbedError::Server {
                url: self.base.clone(),
                status: status.as_u16(),
                message,
            });
        }
        let parsed: EmbedResponse =
            serde_json::from_slice(&bytes).map_err(|e| EmbedError::BadResponse {
                url: self.base.clone(),
                message: e.to_string(),
            })?;
        if parsed.embeddings.len() != input.len() {
            return Err(EmbedError::BadResponse {
                url: self.base.clone(),
                message: format!(
                    "{} embeddings for {} inputs",
                    parsed.embeddings.len(),
                    input.len()
                ),
            });
        }
        let mut out = parsed.embeddings;
        for v in &mut out {
            if v.len() != self.dimension {
                return Err(EmbedError::Dimension {
                    model: self.model.clone(),
                    got: v.len(),
                    expected: self.dimension,
                });
            }
            normalize(v);
        }
        Ok(out)
    }

    fn transport_error(&self, e: reqwest::Error) -> EmbedError {
        if e.is_timeout() {
            EmbedError::Timeout {
                url: self.base.clone(),
                secs: self.timeout_secs,
            }
        } else if e.is_decode() || e.is_body() {
            EmbedError::BadResponse {
                url: self.base.clone(),
                message: e.to_string(),
            }
        } else {
            EmbedError::Unreachable {
                url: self.base.clone(),
                message: error_chain(&e),
            }
        }
    }
}

impl Embedder for OllamaEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
        kind: InputKind,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(texts.len());
            for batch in texts.chunks(self.batch_size) {
                let input = batch
                    .iter()
                    .map(|t| {
                        let t = truncate_chars(t, self.max_input_chars);
                        match (self.prefixes, kind) {
                            (Some((doc, _)), InputKind::Document) => format!("{doc}{t}"),
                            (Some((_, query)), InputKind::Query) => format!("{query}{t}"),
                            (None, _) => t.to_owned(),
                        }
                    })
                    .collect();
                out.extend(self.embed_batch(input).await?);
            }
            Ok(out)
        })
    }
}

/// `text` cut to at most `max` characters, on a character boundary. Ollama would cut it too,
/// silently, at the model's context; cutting here makes it visible and predictable.
fn truncate_chars(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => {
            tracing::debug!(
                chars = text.chars().count(),
                max,
                "embedding input truncated"
            );
            &text[..at]
        }
        None => text,
    }
}

fn client(timeout_secs: u64) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(timeout_secs))
        .connect_timeout(Duration::from_secs(timeout_secs.min(5)))
        .build()
}

/// Names of the models Ollama has pulled (`GET /api/tags`).
pub async fn list_models(base: &str, timeout: Duration) -> Result<Vec<String>, EmbedError> {
    let base = base.trim_end_matches('/');
    let http = reqwest::Client::builder()
        .timeout(timeout)
        .build()
        .map_err(|e| EmbedError::Unreachable {
            url: base.to_owned(),
            message: e.to_string(),
        })?;
    let response = http
        .get(format!("{base}/api/tags"))
        .send()
        .await
        .map_err(|e| {
            if e.is_timeout() {
                EmbedError::Timeout {
                    url: base.to_owned(),
                    secs: timeout.as_secs(),
                }
            } else {
                EmbedError::Unreachable {
                    url: base.to_owned(),
                    message: error_chain(&e),
                }
            }
        })?;
    let status = response.status();
    if !status.is_success() {
        return Err(EmbedError::Server {
            url: base.to_owned(),
            status: status.as_u16(),
            message: "GET /api/tags failed".to_owned(),
        });
    }
    let tags: TagsResponse = response.json().await.map_err(|e| EmbedError::BadResponse {
        url: base.to_owned(),
        message: e.to_string(),
    })?;
    Ok(tags.models.into_iter().map(|m| m.name).collect())
}

/// `nomic-embed-text` matches `nomic-embed-text:latest`; an explicit tag must match exactly.
pub fn model_matches(available: &str, wanted: &str) -> bool {
    if wanted.contains(':') {
        available == wanted
    } else {
        available.split(':').next() == Some(wanted)
    }
}

fn known_dimension(model: &str) -> Option<usize> {
    match model {
        "nomic-embed-text" => Some(768),
        "mxbai-embed-large" => Some(1024),
        "all-minilm" => Some(384),
        "snowflake-arctic-embed" => Some(1024),
        "bge-m3" => Some(1024),
        _ => None,
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_inputs_are_cut_on_a_character_boundary() {
        assert_eq!(truncate_chars("héllo", 2), "hé");
        assert_eq!(truncate_chars("héllo", 5), "héllo");
        assert_eq!(truncate_chars("", 3), "");
    }

    #[test]
    fn model_names_match_with_and_without_tags() {
        assert!(model_matches("nomic-embed-text:latest", "nomic-embed-text"));
        assert!(model_matches(
            "nomic-embed-text:v1.5",
            "nomic-embed-text:v1.5"
        ));
        assert!(!model_matches(
            "nomic-embed-text:latest",
            "nomic-embed-text:v1.5"
        ));
        assert!(!model_matches("all-minilm:latest", "nomic-embed-text"));
    }
}
