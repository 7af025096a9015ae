//! PostgreSQL + pgvector: the pool, the migrations, and every statement the product runs.
//!
//! In: files with their chunks and vectors. Out: search hits and index state. The invariant:
//! a file's chunks are replaced in one transaction ([`Store::replace_file`]), together with
//! the file's row in `indexed_files`, so a search never sees half a file and a crash never
//! leaves one. Nothing else in the crate writes SQL.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use pgvector::Vector;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, QueryBuilder, Row};
use thiserror::Error;

use crate::config::{DatabaseConfig, redact_url};

/// Width of the `embedding` column (the baseline's `vector(768)`).
pub const VECTOR_WIDTH: usize = 768;

/// Below this many vectors an exact scan is as fast as an approximate index, and a bulk load
/// without the index is much faster: the HNSW index is built once the table reaches it.
pub const ANN_MIN_ROWS: i64 = 2000;
const ANN_INDEX: &str = "idx_codebase_index_embedding_hnsw";

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("cannot connect to PostgreSQL at {url}: {source}")]
    Connect { url: String, source: sqlx::Error },
    #[error("invalid database URL {url}: {source}")]
    Url { url: String, source: sqlx::Error },
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("database error while {op}: {source}")]
    Query {
        op: &'static str,
        source: sqlx::Error,
    },
    #[error(
        "model `{model}` makes {dimension}-dimensional vectors; the index stores at most {VECTOR_WIDTH}"
    )]
    TooWide { model: String, dimension: usize },
}

impl StoreError {
    /// Whether the database was unreachable (as opposed to a bad statement).
    pub fn is_transient(&self) -> bool {
        let source = match self {
            StoreError::Connect { source, .. } | StoreError::Query { source, .. } => source,
            _ => return false,
        };
        matches!(
            source,
            sqlx::Error::Io(_)
                | sqlx::Error::PoolTimedOut
                | sqlx::Error::PoolClosed
                | sqlx::Error::Tls(_)
        )
    }
}

fn q(op: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
    move |source| StoreError::Query { op, source }
}

/// The recorded state of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    pub file_hash: String,
    pub chunker_version: i32,
    pub embedding_model: String,
    pub error: Option<String>,
}

/// One chunk as stored.
#[derive(Debug, Clone)]
pub struct ChunkRow {
    pub chunk_index: i32,
    pub content: String,
    pub start_line: i32,
    pub end_line: i32,
    pub symbol: Option<String>,
    pub kind: String,
    pub content_hash: String,
    pub embedding: Option<Vec<f32>>,
}

/// A file and its chunks, to be written in one transaction.
#[derive(Debug, Clone)]
pub struct FileWrite<'a> {
    pub repository: &'a str,
    pub file_path: &'a str,
    pub file_hash: &'a str,
    pub file_type: &'a str,
    pub language: &'a str,
    pub module: Option<&'a str>,
    pub component_type: Option<&'a str>,
    pub size_bytes: i64,
    pub chunker_version: i32,
    pub embedding_model: &'a str,
    pub embedding_dim: i32,
    pub chunks: &'a [ChunkRow],
}

/// A vector query with its filters.
#[derive(Debug, Clone)]
pub struct VectorQuery<'a> {
    pub embedding: &'a [f32],
    pub model: &'a str,
    pub file_types: Option<&'a [String]>,
    pub modules: Option<&'a [String]>,
    pub min_similarity: f64,
    pub limit: i64,
}

/// One search hit.
#[derive(Debug, Clone)]
pub struct Hit {
    pub repository: String,
    pub file_path: String,
    pub chunk_index: i32,
    pub content: String,
    pub similarity: f64,
    pub module: Option<String>,
    pub component_type: Option<String>,
    pub file_type: Option<String>,
    pub language: Option<String>,
    pub symbol: Option<String>,
    pub start_line: Option<i32>,
    pub end_line: Option<i32>,
}

/// Index size.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub chunks: i64,
    pub files: i64,
    pub last_indexed: Option<DateTime<Utc>>,
}

#[derive(Clone)]
pub struct Store {
    pool: PgPool,
}

impl Store {
    /// Opens a pool; fails fast with the (redacted) URL when the server cannot be reached.
    pub async fn connect(cfg: &DatabaseConfig) -> Result<Self, StoreError> {
        let url = redact_url(&cfg.url);
        let options: PgConnectOptions = cfg.url.parse().map_err(|source| StoreError::Url {
            url: url.clone(),
            source,
        })?;
        let pool = PgPoolOptions::new()
            .max_connections(cfg.max_connections)
            .acquire_timeout(Duration::from_secs(cfg.connect_timeout_secs))
            .after_connect(|conn, _| {
                Box::pin(async move {
                    // HNSW search settings (pgvector >= 0.8): a wider candidate list than the
                    // default 40, and iterative scans so that filtered searches keep scanning
                    // until they have `limit` rows instead of silently returning fewer.
                    for setting in [
                        "SET hnsw.ef_search = 100",
                        "SET hnsw.iterative_scan = relaxed_order",
                    ] {
                        sqlx::query(setting).execute(&mut *conn).await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .map_err(|source| StoreError::Connect { url, source })?;
        Ok(Self { pool })
    }

    pub fn from_pool(pool: PgPool) -> Self {
        Self { pool }
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Applies pending migrations (idempotent, safe to run from several daemons).
    pub async fn migrate(&self) -> Result<(), StoreError> {
        MIGRATOR.run(&self.pool).await?;
        Ok(())
    }

    pub async fn upsert_repository(&self, name: &str, root: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO repositories (name, root_path, last_indexed) VALUES ($1, $2, now())
             ON CONFLICT (name) DO UPDATE SET root_path = EXCLUDED.root_path, last_indexed = now()",
        )
        .bind(name)
        .bind(root)
        .execute(&self.pool)
        .await
        .map_err(q("recording the repository"))?;
        Ok(())
    }

    /// The state of every file recorded for `repository`.
    pub async fn file_states(
        &self,
        repository: &str,
    ) -> Result<HashMap<String, FileState>, StoreError> {
        let rows = sqlx::query(
            "SELECT file_path, file_hash, chunker_version, embedding_model, error
             FROM indexed_files WHERE repository = $1",
        )
        .bind(repository)
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading file states"))?;
        Ok(rows
            .into_iter()
            .map(|r| {
                (
                    r.get("file_path"),
                    FileState {
                        file_hash: r.get("file_hash"),
                        chunker_version: r.get("chunker_version"),
                        embedding_model: r.get("embedding_model"),
                        error: r.get("error"),
                    },
                )
            })
            .collect())
    }

    /// Vectors already computed by `model` for these embedding-input hashes.
    pub async fn reusable_vectors(
        &self,
        model: &str,
        content_hashes: &[String],
    ) -> Result<HashMap<String, Vec<f32>>, StoreError> {
        if content_hashes.is_empty() {
            return Ok(HashMap::new());
        }
        let rows = sqlx::query(
            "SELECT DISTINCT ON (content_hash) content_hash, embedding, embedding_dim
             FROM codebase_index
             WHERE embedding_model = $1 AND content_hash = ANY($2) AND embedding IS NOT NULL",
        )
        .bind(model)
        .bind(content_hashes)
        .fetch_all(&self.pool)
        .await
        .map_err(q("looking up reusable vectors"))?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let dim: Option<i32> = r.get("embedding_dim");
                let v: Vector = r.get("embedding");
                let mut v = v.to_vec();
                v.truncate(dim.map_or(VECTOR_WIDTH, |d| d as usize));
                (r.get("content_hash"), v)
            })
            .collect())
    }

    /// Replaces all chunks of one file and records its state, in one transaction.
    pub async fn replace_file(&self, f: &FileWrite<'_>) -> Result<(), StoreError> {
        if f.embedding_dim as usize > VECTOR_WIDTH {
            return Err(StoreError::TooWide {
                model: f.embedding_model.to_owned(),
                dimension: f.embedding_dim as usize,
            });
        }
        self.write_file(f, None).await
    }

    /// Records that a file cannot be indexed (binary, too large, ...) and drops its chunks,
    /// so a stale version is not served.
    pub async fn record_skip(
        &self,
        repository: &str,
        file_path: &str,
        chunker_version: i32,
        embedding_model: &str,
        error: &str,
    ) -> Result<(), StoreError> {
        let skipped = FileWrite {
            repository,
            file_path,
            file_hash: "",
            file_type: "",
            language: "",
            module: None,
            component_type: None,
            size_bytes: 0,
            chunker_version,
            embedding_model,
            embedding_dim: 0,
            chunks: &[],
        };
        self.write_file(&skipped, Some(error)).await
    }

    /// The one writer of a file: delete its rows, insert its chunks, upsert its state.
    async fn write_file(&self, f: &FileWrite<'_>, error: Option<&str>) -> Result<(), StoreError> {
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(q("starting a transaction"))?;
        sqlx::query("DELETE FROM codebase_index WHERE repository = $1 AND file_path = $2")
            .bind(f.repository)
            .bind(f.file_path)
            .execute(&mut *tx)
            .await
            .map_err(q("deleting a file's old chunks"))?;
        // Bind parameters are limited to 65535 per statement: insert in slices.
        for slice in f.chunks.chunks(1000) {
            let mut qb = QueryBuilder::new(
                "INSERT INTO codebase_index (repository, file_path, chunk_index, chunk_content,
                 embedding, file_type, module, component_type, file_hash, language, start_line,
                 end_line, symbol, chunk_kind, content_hash, embedding_model, embedding_dim) ",
            );
            qb.push_values(slice, |mut b, c| {
                let has_vector = c.embedding.is_some();
                b.push_bind(f.repository)
                    .push_bind(f.file_path)
                    .push_bind(c.chunk_index)
                    .push_bind(&c.content)
                    .push_bind(c.embedding.as_deref().map(pad))
                    .push_bind(f.file_type)
                    .push_bind(f.module)
                    .push_bind(f.component_type)
                    .push_bind(f.file_hash)
                    .push_bind(f.language)
                    .push_bind(c.start_line)
                    .push_bind(c.end_line)
                    .push_bind(c.symbol.as_deref())
                    .push_bind(&c.kind)
                    .push_bind(&c.content_hash)
                    .push_bind(has_vector.then_some(f.embedding_model))
                    .push_bind(has_vector.then_some(f.embedding_dim));
            });
            qb.build()
                .execute(&mut *tx)
                .await
                .map_err(q("inserting chunks"))?;
        }
        sqlx::query(
            "INSERT INTO indexed_files (repository, file_path, file_hash, chunker_version,
               embedding_model, chunk_count, size_bytes, error, indexed_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
             ON CONFLICT (repository, file_path) DO UPDATE SET
               file_hash = EXCLUDED.file_hash, chunker_version = EXCLUDED.chunker_version,
               embedding_model = EXCLUDED.embedding_model, chunk_count = EXCLUDED.chunk_count,
               size_bytes = EXCLUDED.size_bytes, error = EXCLUDED.error, indexed_at = now()",
        )
        .bind(f.repository)
        .bind(f.file_path)
        .bind(f.file_hash)
        .bind(f.chunker_version)
        .bind(f.embedding_model)
        .bind(f.chunks.len() as i32)
        .bind(f.size_bytes)
        .bind(error)
        .execute(&mut *tx)
        .await
        .map_err(q("recording a file"))?;
        tx.commit().await.map_err(q("committing a file"))?;
        Ok(())
    }

    /// Removes files that no longer exist, chunks and state together.
    pub async fn delete_files(
        &self,
        repository: &str,
        paths: &[String],
    ) -> Result<u64, StoreError> {
        if paths.is_empty() {
            return Ok(0);
        }
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(q("starting a transaction"))?;
        sqlx::query("DELETE FROM codebase_index WHERE repository = $1 AND file_path = ANY($2)")
            .bind(repository)
            .bind(paths)
            .execute(&mut *tx)
            .await
            .map_err(q("deleting vanished files' chunks"))?;
        let done =
            sqlx::query("DELETE FROM indexed_files WHERE repository = $1 AND file_path = ANY($2)")
                .bind(repository)
                .bind(paths)
                .execute(&mut *tx)
                .await
                .map_err(q("deleting vanished files"))?;
        tx.commit().await.map_err(q("committing deletions"))?;
        Ok(done.rows_affected())
    }

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

    /// Builds the HNSW index once the table holds [`ANN_MIN_ROWS`] vectors (and rebuilds it if
    /// an interrupted build left it invalid). Returns whether it built one. Built concurrently:
    /// searches and writes go on meanwhile.
    pub async fn ensure_ann_index(&self) -> Result<bool, StoreError> {
        let valid: Option<bool> = sqlx::query_scalar(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
             WHERE c.relname = $1",
        )
        .bind(ANN_INDEX)
        .fetch_optional(&self.pool)
        .await
        .map_err(q("checking the vector index"))?;
        match valid {
            Some(true) => return Ok(false),
            Some(false) => {
                tracing::warn!("the vector index is invalid (an interrupted build); rebuilding it");
                sqlx::query(&format!("DROP INDEX CONCURRENTLY IF EXISTS {ANN_INDEX}"))
                    .execute(&self.pool)
                    .await
                    .map_err(q("dropping an invalid vector index"))?;
            }
            None => {}
        }
        let rows: i64 =
            sqlx::query_scalar("SELECT count(*) FROM codebase_index WHERE embedding IS NOT NULL")
                .fetch_one(&self.pool)
                .await
                .map_err(q("counting vectors"))?;
        if rows < ANN_MIN_ROWS {
            return Ok(false);
        }
        tracing::info!(vectors = rows, "building the HNSW vector index");
        let started = std::time::Instant::now();
        sqlx::query(&format!(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS {ANN_INDEX}
             ON codebase_index USING hnsw (embedding vector_cosine_ops)"
        ))
        .execute(&self.pool)
        .await
        .map_err(q("building the vector index"))?;
        tracing::info!(
            secs = started.elapsed().as_secs_f64(),
            "HNSW vector index built"
        );
        Ok(true)
    }

    /// Cosine kNN over the vectors of one model, with filters: exact while the table is small,
    /// through the HNSW index (iterative scan, re-sorted) once it exists.
    pub async fn vector_search(&self, query: &VectorQuery<'_>) -> Result<Vec<Hit>, StoreError> {
        // `relaxed_order` iterative scans may return rows slightly out of order: the outer
        // query puts them back in order (pgvector's documented pattern).
        let rows = sqlx::query(
            "WITH nearest AS MATERIALIZED (
               SELECT repository, file_path, chunk_index, chunk_content, module, component_type,
                      file_type, language, symbol, start_line, end_line,
                      embedding <=> $1 AS distance
               FROM codebase_index
               WHERE embedding_model = $2 AND embedding IS NOT NULL
                 AND ($3::text[] IS NULL OR file_type = ANY($3))
                 AND ($4::text[] IS NULL OR module = ANY($4))
                 AND 1 - (embedding <=> $1) >= $5
               ORDER BY embedding <=> $1
               LIMIT $6)
             SELECT *, 1 - distance AS similarity FROM nearest ORDER BY distance",
        )
        .bind(pad(query.embedding))
        .bind(query.model)
        .bind(query.file_types)
        .bind(query.modules)
        .bind(query.min_similarity)
        .bind(query.limit)
        .fetch_all(&self.pool)
        .await
        .map_err(q("searching"))?;
        Ok(rows
            .into_iter()
            .map(|r| Hit {
                repository: r.get("repository"),
                file_path: r.get("file_path"),
                chunk_index: r.get("chunk_index"),
                content: r.get("chunk_content"),
                similarity: r.get("similarity"),
                module: r.get("module"),
                component_type: r.get("component_type"),
                file_type: r.get("file_type"),
                language: r.get("language"),
                symbol: r.get("symbol"),
                start_line: r.get("start_line"),
                end_line: r.get("end_line"),
            })
            .collect())
    }

    /// Chunks, files and the last indexing time.
    pub async fn totals(&self) -> Result<Totals, StoreError> {
        let row = sqlx::query(
            "SELECT (SELECT count(*) FROM codebase_index) AS chunks,
                    (SELECT count(*) FROM indexed_files WHERE chunk_count > 0) AS files,
                    (SELECT max(indexed_at) FROM indexed_files) AS last_indexed",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(q("counting the index"))?;
        Ok(Totals {
            chunks: row.get("chunks"),
            files: row.get("files"),
            last_indexed: row.get("last_indexed"),
        })
    }
}

/// Zero-pads a vector to the column width; cosine distance between padded vectors equals the
/// distance between the originals.
fn pad(v: &[f32]) -> Vector {
    let mut padded = Vec::with_capacity(VECTOR_WIDTH);
    padded.extend_from_slice(&v[..v.len().min(VECTOR_WIDTH)]);
    padded.resize(VECTOR_WIDTH, 0.0);
    Vector::from(padded)
}
