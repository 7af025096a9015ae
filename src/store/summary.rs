//! What the index holds, per repository and in total, for health and status.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::lease::lease_held;
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
    /// The repository's stable id (absent for rows of a repository no longer recorded).
    #[serde(default)]
    pub id: Option<i64>,
    #[serde(default)]
    pub workspace: Option<String>,
    /// `initializing`, `indexing`, `ready` or `failed`.
    #[serde(default)]
    pub state: Option<String>,
    /// Why the last pass or clone failed, when `state` is `failed`.
    #[serde(default)]
    pub state_error: Option<String>,
    /// `local` (command line or configuration) or `request`.
    #[serde(default)]
    pub origin: Option<String>,
    #[serde(default)]
    pub git_url: Option<String>,
    pub files: i64,
    pub chunks: i64,
    /// Lines in the indexed files.
    #[serde(default)]
    pub lines: i64,
    /// Indexed files per language.
    #[serde(default)]
    pub languages: std::collections::BTreeMap<String, i64>,
    /// Chunks stored without a vector yet, to be embedded by the backfill.
    pub pending: i64,
    /// Chunks whose input the model refused (see `embed_error`); retried now and then.
    #[serde(default)]
    pub rejected: i64,
    /// Files recorded as not indexed, with a reason (binary, too large, ...).
    pub errors: i64,
    pub last_indexed: Option<DateTime<Utc>>,
    /// Whether a running daemon holds the repository's indexing lease, so keeps it up to date
    /// (absent from summaries of older versions). A repository no daemon watches is searched
    /// as it was last indexed.
    #[serde(default)]
    pub watched: Option<bool>,
}

impl Store {
    /// Files, chunks, lines, languages, pending vectors, errors and state, per repository
    /// and in total, for every workspace. Cheap at any size (the heartbeat runs it every
    /// 30 s): chunks are counted from each file's `chunk_count`, written in the same
    /// transaction as its rows, and only the chunks without a vector are read, through their
    /// partial index.
    pub async fn index_summary(&self) -> Result<IndexSummary, StoreError> {
        self.summary(None).await
    }

    /// [`Store::index_summary`] of one workspace's repositories.
    pub async fn workspace_summary(&self, workspace: &str) -> Result<IndexSummary, StoreError> {
        self.summary(Some(workspace)).await
    }

    async fn summary(&self, workspace: Option<&str>) -> Result<IndexSummary, StoreError> {
        let rows = sqlx::query(&format!(
            "WITH f AS (
               SELECT repository, count(*) FILTER (WHERE chunk_count > 0) AS files,
                      count(*) FILTER (WHERE error IS NOT NULL) AS errors,
                      sum(chunk_count)::int8 AS chunks, max(indexed_at) AS last_indexed,
                      coalesce(sum(line_count) FILTER (WHERE chunk_count > 0), 0)::int8 AS lines
               FROM indexed_files GROUP BY repository),
             l AS (
               SELECT repository, jsonb_object_agg(language, n) AS languages
               FROM (SELECT repository, language, count(*) AS n FROM indexed_files
                     WHERE chunk_count > 0 AND language IS NOT NULL
                     GROUP BY repository, language) x
               GROUP BY repository),
             c AS (
               SELECT repository,
                      count(*) FILTER (WHERE embed_error IS NULL) AS pending,
                      count(*) FILTER (WHERE embed_error IS NOT NULL) AS rejected
               FROM codebase_index WHERE embedding IS NULL GROUP BY repository),
             names AS (
               SELECT name FROM repositories
               UNION SELECT repository FROM f UNION SELECT repository FROM c)
             SELECT n.name, r.root_path AS root, r.id, r.workspace, r.state, r.state_error,
                    r.origin, r.git_url, coalesce(f.files, 0) AS files,
                    coalesce(f.errors, 0) AS errors, coalesce(f.lines, 0) AS lines,
                    coalesce(r.last_indexed, f.last_indexed) AS last_indexed,
                    coalesce(f.chunks, 0) AS chunks,
                    coalesce(c.pending, 0) AS pending, coalesce(c.rejected, 0) AS rejected,
                    coalesce(l.languages, '{{}}'::jsonb)::text AS languages,
                    {} AS watched
             FROM names n
             LEFT JOIN repositories r ON r.name = n.name
             LEFT JOIN f ON f.repository = n.name
             LEFT JOIN c ON c.repository = n.name
             LEFT JOIN l ON l.repository = n.name
             WHERE $1::text IS NULL OR r.workspace = $1
             ORDER BY n.name",
            lease_held("n.name")
        ))
        .bind(workspace)
        .fetch_all(&self.pool)
        .await
        .map_err(q("summarising the index"))?;
        let repositories: Vec<RepositorySummary> = rows
            .iter()
            .map(|r| RepositorySummary {
                name: r.get("name"),
                root: r.get("root"),
                id: r.get("id"),
                workspace: r.get("workspace"),
                state: r.get("state"),
                state_error: r.get("state_error"),
                origin: r.get("origin"),
                git_url: r.get("git_url"),
                files: r.get("files"),
                chunks: r.get("chunks"),
                lines: r.get("lines"),
                languages: serde_json::from_str(r.get::<&str, _>("languages")).unwrap_or_default(),
                pending: r.get("pending"),
                rejected: r.get("rejected"),
                errors: r.get("errors"),
                last_indexed: r.get("last_indexed"),
                watched: Some(r.get("watched")),
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
