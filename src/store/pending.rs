//! Chunks stored without a vector (the embedder was unavailable), and their backfill.

use std::time::Duration;

use sqlx::Row;
use uuid::Uuid;

use super::{Store, StoreError, VECTOR_WIDTH, bump_generation, pad, q};

/// A stored chunk waiting for its vector, with what is needed to rebuild its embedding input.
#[derive(Debug, Clone)]
pub struct PendingChunk {
    pub id: Uuid,
    pub file_path: String,
    pub symbol: Option<String>,
    pub kind: String,
    pub content: String,
    pub content_hash: String,
}

impl Store {
    /// Chunks whose vector is pending, oldest failure last: never-tried rows first, rows the
    /// model refused again only once `retry_rejected_after` has passed.
    pub async fn pending_chunks(
        &self,
        limit: i64,
        retry_rejected_after: Duration,
    ) -> Result<Vec<PendingChunk>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, file_path, symbol, chunk_kind, chunk_content, content_hash
             FROM codebase_index
             WHERE embedding IS NULL
               AND (embed_failed_at IS NULL OR embed_failed_at < now() - make_interval(secs => $2))
             ORDER BY embed_failed_at NULLS FIRST
             LIMIT $1",
        )
        .bind(limit)
        .bind(retry_rejected_after.as_secs_f64())
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading chunks with pending vectors"))?;
        Ok(rows
            .into_iter()
            .map(|r| PendingChunk {
                id: r.get("id"),
                file_path: r.get("file_path"),
                symbol: r.get("symbol"),
                kind: r.get::<Option<String>, _>("chunk_kind").unwrap_or_default(),
                content: r.get("chunk_content"),
                content_hash: r.get("content_hash"),
            })
            .collect())
    }

    /// Stores vectors for pending chunks (rows replaced meanwhile are left alone) and records
    /// the inputs the model refused. Returns how many vectors were stored.
    pub async fn fill_vectors(
        &self,
        model: &str,
        dimension: i32,
        vectors: &[(Uuid, Vec<f32>)],
        rejected: &[(Uuid, String)],
    ) -> Result<u64, StoreError> {
        if dimension as usize > VECTOR_WIDTH {
            return Err(StoreError::TooWide {
                model: model.to_owned(),
                dimension: dimension as usize,
            });
        }
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(q("starting a transaction"))?;
        let mut stored = 0;
        for (id, v) in vectors {
            stored += sqlx::query(
                "UPDATE codebase_index SET embedding = $2, embedding_model = $3,
                   embedding_dim = $4, embed_error = NULL, embed_failed_at = NULL
                 WHERE id = $1 AND embedding IS NULL",
            )
            .bind(id)
            .bind(pad(v))
            .bind(model)
            .bind(dimension)
            .execute(&mut *tx)
            .await
            .map_err(q("storing backfilled vectors"))?
            .rows_affected();
        }
        for (id, error) in rejected {
            sqlx::query(
                "UPDATE codebase_index SET embed_error = $2, embed_failed_at = now()
                 WHERE id = $1 AND embedding IS NULL",
            )
            .bind(id)
            .bind(error)
            .execute(&mut *tx)
            .await
            .map_err(q("recording refused inputs"))?;
        }
        if stored > 0 {
            let repositories: Vec<String> = sqlx::query_scalar(
                "SELECT DISTINCT repository FROM codebase_index WHERE id = ANY($1) ORDER BY 1",
            )
            .bind(vectors.iter().map(|(id, _)| *id).collect::<Vec<_>>())
            .fetch_all(&mut *tx)
            .await
            .map_err(q("storing backfilled vectors"))?;
            for repository in &repositories {
                bump_generation(&mut tx, repository).await?;
            }
        }
        tx.commit()
            .await
            .map_err(q("committing backfilled vectors"))?;
        Ok(stored)
    }
}
