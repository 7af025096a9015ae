//! Query to ranked results.
//!
//! In: a validated [`SearchRequest`]. Out: hits with cosine similarity, and how long the query
//! embedding and the search took. The adapters (NATS, CLI) go through [`SearchService`] only.
//! Errors say whose fault they are: [`SearchError::Invalid`] is the caller's; embedder and
//! database errors are passing faults when their source says so.

use std::sync::Arc;
use std::time::Instant;

use thiserror::Error;

use crate::config::SearchConfig;
use crate::embed::{EmbedError, Embedder, InputKind};
use crate::store::{Hit, Store, StoreError, VectorQuery};

#[derive(Debug, Error)]
pub enum SearchError {
    #[error("{0}")]
    Invalid(String),
    #[error("query embedding failed: {0}")]
    Embedding(#[from] EmbedError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A search as the service understands it; built from a wire request by [`SearchRequest::new`].
#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub query: String,
    pub file_types: Option<Vec<String>>,
    pub modules: Option<Vec<String>>,
    pub limit: usize,
    pub min_similarity: f64,
}

impl SearchRequest {
    /// Validates the raw fields against the configured limits.
    pub fn new(
        query: &str,
        file_types: Option<Vec<String>>,
        modules: Option<Vec<String>>,
        limit: Option<i64>,
        min_similarity: Option<f64>,
        cfg: &SearchConfig,
    ) -> Result<Self, SearchError> {
        let invalid = |m: String| Err(SearchError::Invalid(m));
        let query = query.trim();
        if query.is_empty() {
            return invalid("query must not be empty".into());
        }
        if query.chars().count() > cfg.max_query_chars {
            return invalid(format!(
                "query is longer than {} characters",
                cfg.max_query_chars
            ));
        }
        let limit = match limit {
            None => cfg.default_limit,
            Some(n) if n >= 1 && n as u64 <= cfg.max_limit as u64 => n as usize,
            Some(n) => {
                return invalid(format!(
                    "limit must be between 1 and {}, got {n}",
                    cfg.max_limit
                ));
            }
        };
        let min_similarity = match min_similarity {
            None => -1.0,
            Some(s) if (-1.0..=1.0).contains(&s) => s,
            Some(s) => return invalid(format!("minSimilarity must be between -1 and 1, got {s}")),
        };
        let clean =
            |name: &str, list: Option<Vec<String>>| -> Result<Option<Vec<String>>, SearchError> {
                let Some(list) = list else { return Ok(None) };
                if list.len() > 100 {
                    return Err(SearchError::Invalid(format!(
                        "{name} has more than 100 entries"
                    )));
                }
                let list: Vec<String> = list
                    .into_iter()
                    .map(|s| s.trim().trim_start_matches('.').to_owned())
                    .collect();
                if list.iter().any(String::is_empty) {
                    return Err(SearchError::Invalid(format!(
                        "{name} must not contain empty strings"
                    )));
                }
                Ok((!list.is_empty()).then_some(list))
            };
        let file_types = clean("fileTypes", file_types)?
            .map(|l| l.into_iter().map(|s| s.to_ascii_lowercase()).collect());
        Ok(Self {
            query: query.to_owned(),
            file_types,
            modules: clean("modules", modules)?,
            limit,
            min_similarity,
        })
    }
}

/// Results and timings of one search.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    pub hits: Vec<Hit>,
    pub query_embedding_ms: u64,
    pub search_ms: u64,
}

/// The search service shared by every front end.
#[derive(Clone)]
pub struct SearchService {
    store: Store,
    embedder: Arc<dyn Embedder>,
    cfg: SearchConfig,
}

impl SearchService {
    pub fn new(store: Store, embedder: Arc<dyn Embedder>, cfg: SearchConfig) -> Self {
        Self {
            store,
            embedder,
            cfg,
        }
    }

    pub fn config(&self) -> &SearchConfig {
        &self.cfg
    }

    pub async fn search(&self, req: &SearchRequest) -> Result<SearchOutcome, SearchError> {
        let started = Instant::now();
        let query = [req.query.clone()];
        let mut vectors = self.embedder.embed(&query, InputKind::Query).await?;
        let embedding = vectors
            .pop()
            .ok_or_else(|| EmbedError::Inference("no vector for the query".into()))?;
        let query_embedding_ms = started.elapsed().as_millis() as u64;
        let started = Instant::now();
        let hits = self
            .store
            .vector_search(&VectorQuery {
                embedding: &embedding,
                model: self.embedder.model_id(),
                file_types: req.file_types.as_deref(),
                modules: req.modules.as_deref(),
                min_similarity: req.min_similarity,
                limit: req.limit as i64,
            })
            .await?;
        Ok(SearchOutcome {
            hits,
            query_embedding_ms,
            search_ms: started.elapsed().as_millis() as u64,
        })
    }
}

/// The words of a text as code search sees them: lower-cased, identifiers split at case
/// changes, digits and underscores (`getUserById` -> get, user, by, id), whole identifiers kept
/// too (`getuserbyid`).
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|t| !t.is_empty())
        .flat_map(|token| {
            let parts = split_identifier(token);
            let whole = (parts.len() > 1).then(|| token.replace('_', "").to_lowercase());
            parts.into_iter().chain(whole)
        })
}

fn split_identifier(token: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = token.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            if !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        let boundary = match prev {
            Some(p) if p.is_lowercase() && c.is_uppercase() => true,
            Some(p) if p.is_uppercase() && c.is_uppercase() => {
                next.is_some_and(|n| n.is_lowercase())
            }
            Some(p) if p.is_alphabetic() != c.is_alphabetic() => true,
            _ => false,
        };
        if boundary && !current.is_empty() {
            parts.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn identifiers_split() {
        let w: Vec<String> = words("getUserById parse_HTTPResponse v2").collect();
        assert_eq!(
            w,
            [
                "get",
                "user",
                "by",
                "id",
                "getuserbyid",
                "parse",
                "http",
                "response",
                "parsehttpresponse",
                "v",
                "2",
                "v2"
            ]
        );
    }

    #[test]
    fn requests_are_validated() {
        let cfg = Config::defaults().expect("defaults").search;
        let ok = SearchRequest::new(" find ", Some(vec![".TS".into()]), None, None, None, &cfg)
            .expect("valid");
        assert_eq!(ok.query, "find");
        assert_eq!(ok.limit, 5);
        assert_eq!(ok.file_types.as_deref(), Some(&["ts".to_string()][..]));
        for (q, limit, sim) in [
            ("", None, None),
            ("x", Some(0), None),
            ("x", Some(100_000), None),
            ("x", None, Some(2.0)),
        ] {
            assert!(
                matches!(
                    SearchRequest::new(q, None, None, limit, sim, &cfg),
                    Err(SearchError::Invalid(_))
                ),
                "{q:?} {limit:?} {sim:?}"
            );
        }
    }
}
