//! Upkeep of the tables: the HNSW vector index, vacuum and statistics after bulk passes,
//! emptying the index.

use super::{Store, StoreError, q};

/// Below this many vectors an exact scan is as fast as an approximate index, and a bulk load
/// without the index is much faster: the HNSW index is built once the table reaches it.
pub const ANN_MIN_ROWS: i64 = 2000;
/// Files an index pass must change for the tables to be vacuumed and analyzed at once.
const VACUUM_AFTER_FILES: usize = 200;
const ANN_INDEX: &str = "idx_codebase_index_embedding_hnsw";
/// Advisory lock key of the vector index build ("csANN" in ASCII).
const ANN_BUILD_LOCK: i64 = 0x63_73_41_4e_4e;

impl Store {
    /// The model that made most of the vectors in the index, if any.
    pub async fn indexed_model(&self) -> Result<Option<String>, StoreError> {
        sqlx::query_scalar(
            "SELECT embedding_model FROM indexed_files WHERE chunk_count > 0
             GROUP BY embedding_model ORDER BY count(*) DESC LIMIT 1",
        )
        .fetch_optional(&self.pool)
        .await
        .map_err(q("reading the indexed model"))
    }

    /// Upkeep after an index pass that changed `changed_files` files: a vacuum with fresh
    /// planner statistics after a bulk change, and the vector index once the table is big
    /// enough.
    pub async fn after_index_pass(&self, changed_files: usize) -> Result<(), StoreError> {
        if changed_files >= VACUUM_AFTER_FILES {
            self.vacuum_analyze().await?;
        }
        self.ensure_ann_index().await?;
        Ok(())
    }

    /// Builds the HNSW index once the table holds [`ANN_MIN_ROWS`] vectors (and rebuilds it if
    /// an interrupted build left it invalid). Returns whether it built one. Built concurrently:
    /// searches and writes go on meanwhile. One builder at a time, across daemons: the build
    /// holds an advisory lock, and a pass that finds it taken leaves the build to its holder
    /// (two concurrent `CREATE INDEX CONCURRENTLY` deadlock, which every repository's first
    /// pass finishing together used to cause).
    pub async fn ensure_ann_index(&self) -> Result<bool, StoreError> {
        let built = |e| q("building the vector index")(e);
        // The lock and the memory setting belong to this connection, closed after the build.
        let mut conn = self.pool.acquire().await.map_err(built)?;
        conn.close_on_drop();
        let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
            .bind(ANN_BUILD_LOCK)
            .fetch_one(&mut *conn)
            .await
            .map_err(built)?;
        if !locked {
            tracing::debug!("another pass is building the vector index");
            return Ok(false);
        }
        let valid: Option<bool> = sqlx::query_scalar(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
             WHERE c.relname = $1",
        )
        .bind(ANN_INDEX)
        .fetch_optional(&mut *conn)
        .await
        .map_err(q("checking the vector index"))?;
        match valid {
            Some(true) => return Ok(false),
            Some(false) => {
                tracing::warn!("the vector index is invalid (an interrupted build); rebuilding it");
                sqlx::query(&format!("DROP INDEX CONCURRENTLY IF EXISTS {ANN_INDEX}"))
                    .execute(&mut *conn)
                    .await
                    .map_err(q("dropping an invalid vector index"))?;
            }
            None => {}
        }
        let rows: i64 =
            sqlx::query_scalar("SELECT count(*) FROM codebase_index WHERE embedding IS NOT NULL")
                .fetch_one(&mut *conn)
                .await
                .map_err(q("counting vectors"))?;
        if rows < ANN_MIN_ROWS {
            return Ok(false);
        }
        tracing::info!(vectors = rows, "building the HNSW vector index");
        let started = std::time::Instant::now();
        sqlx::query(&format!(
            "SET maintenance_work_mem = '{}MB'",
            self.index_build_memory_mb
        ))
        .execute(&mut *conn)
        .await
        .map_err(built)?;
        sqlx::query(&format!(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS {ANN_INDEX}
             ON codebase_index USING hnsw (embedding vector_cosine_ops)"
        ))
        .execute(&mut *conn)
        .await
        .map_err(built)?;
        tracing::info!(
            secs = started.elapsed().as_secs_f64(),
            "HNSW vector index built"
        );
        Ok(true)
    }

    /// Settles the tables after a bulk load: `VACUUM (ANALYZE)`. Autovacuum would too, but
    /// only a minute or more later, and meanwhile searches pay for all three things it does:
    /// - the planner's statistics (and so the common-term frequencies): without them queries
    ///   over a freshly loaded table are planned as if it were empty;
    /// - the GIN index's pending list: new chunks' words wait there, scanned linearly by
    ///   every lexical query (a manual ANALYZE does not merge it; measured: lexical searches
    ///   p50 90 ms before, 6 ms after);
    /// - the visibility map, without which the postings' index-only scans visit the heap.
    pub async fn vacuum_analyze(&self) -> Result<(), StoreError> {
        sqlx::query("VACUUM (ANALYZE) codebase_index, indexed_files, file_terms")
            .execute(&self.pool)
            .await
            .map_err(q("vacuuming the index"))?;
        Ok(())
    }

    /// Empties the index as if freshly installed: every row, and the vector index (which
    /// TRUNCATE would keep, making the next cold index pay for HNSW inserts). For benchmarks.
    pub async fn clear(&self) -> Result<(), StoreError> {
        sqlx::query(
            "TRUNCATE codebase_index, indexed_files, file_terms, repositories, code_definitions,
               code_references, code_imports",
        )
        .execute(&self.pool)
        .await
        .map_err(q("emptying the index"))?;
        sqlx::query(&format!("DROP INDEX IF EXISTS {ANN_INDEX}"))
            .execute(&self.pool)
            .await
            .map_err(q("dropping the vector index"))?;
        Ok(())
    }
}
