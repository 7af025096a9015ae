//! What the index holds, per repository and in total, for health and status.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{Store, StoreError, q};

/// What the index holds, for health and status.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct IndexSummary {
    pub total_chunks: i64,
    pub total_files: i64,
    pub pending: i64,
    #[serde(default)]
    pub rejected: i64,
    pub errors: i64,
    pub last_indexed: Option<DateTime<Utc>>,
    pub repositories: Vec<RepositorySummary>,
}

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct RepositorySummary {
    pub name: String,
    pub root: Option<String>,
    pub files: i64,
    pub chunks: i64,
    /// Chunks stored without a vector yet, to be embedded by the backfill.
    pub pending: i64,
    /// Chunks whose input the model refused (see `embed_error`); retried now and then.
    #[serde(default)]
    pub rejected: i64,
    /// Files recorded as not indexed, with a reason (binary, too large, ...).
    pub errors: i64,
    pub last_indexed: Option<DateTime<Utc>>,
}

impl Store {
    /// Files, chunks, pending vectors and errors, per repository and in total. Cheap at any
    /// size (the heartbeat runs it every 30 s): chunks are counted from each file's
    /// `chunk_count`, written in the same transaction as its rows, and only the chunks without
    /// a vector are read, through their partial index.
    pub async fn index_summary(&self) -> Result<IndexSummary, StoreError> {
        let rows = sqlx::query(
            "WITH f AS (
               SELECT repository, count(*) FILTER (WHERE chunk_count > 0) AS files,
                      count(*) FILTER (WHERE error IS NOT NULL) AS errors,
                      sum(chunk_count)::int8 AS chunks, max(indexed_at) AS last_indexed
               FROM indexed_files GROUP BY repository),
             c AS (
               SELECT repository,
                      count(*) FILTER (WHERE embed_error IS NULL) AS pending,
                      count(*) FILTER (WHERE embed_error IS NOT NULL) AS rejected
               FROM codebase_index WHERE embedding IS NULL GROUP BY repository)
             SELECT coalesce(f.repository, c.repository) AS name, r.root_path AS root,
                    coalesce(f.files, 0) AS files, coalesce(f.errors, 0) AS errors,
                    f.last_indexed, coalesce(f.chunks, 0) AS chunks,
                    coalesce(c.pending, 0) AS pending, coalesce(c.rejected, 0) AS rejected
             FROM f FULL JOIN c ON c.repository = f.repository
             LEFT JOIN repositories r ON r.name = coalesce(f.repository, c.repository)
             ORDER BY name",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(q("summarising the index"))?;
        let repositories: Vec<RepositorySummary> = rows
            .iter()
            .map(|r| RepositorySummary {
                name: r.get("name"),
                root: r.get("root"),
                files: r.get("files"),
                chunks: r.get("chunks"),
                pending: r.get("pending"),
                rejected: r.get("rejected"),
                errors: r.get("errors"),
                last_indexed: r.get("last_indexed"),
            })
            .collect();
        Ok(IndexSummary {
            total_chunks: repositories.iter().map(|r| r.chunks).sum(),
            total_files: repositories.iter().map(|r| r.files).sum(),
            pending: repositories.iter().map(|r| r.pending).sum(),
            rejected: repositories.iter().map(|r| r.rejected).sum(),
            errors: repositories.iter().map(|r| r.errors).sum(),
            last_indexed: repositories.iter().filter_map(|r| r.last_indexed).max(),
            repositories,
        })
    }
}
