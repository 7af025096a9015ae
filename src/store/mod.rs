//! PostgreSQL + pgvector: the pool, the migrations, and every statement the product runs.
//!
//! In: files with their chunks and vectors. Out: search hits and index state. The invariant:
//! a file's chunks are replaced in one transaction ([`Store::replace_file`]), together with
//! the file's row in `indexed_files`, so a search never sees half a file and a crash never
//! leaves one. Nothing else in the crate writes SQL.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use chrono::{DateTime, Utc};
use pgvector::Vector;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, Postgres, QueryBuilder, Row};
use thiserror::Error;
use uuid::Uuid;

use crate::config::{DatabaseConfig, redact_url};

/// Width of the `embedding` column (the baseline's `vector(768)`).
pub const VECTOR_WIDTH: usize = 768;

/// Below this many vectors an exact scan is as fast as an approximate index, and a bulk load
/// without the index is much faster: the HNSW index is built once the table reaches it.
pub const ANN_MIN_ROWS: i64 = 2000;
/// Files an index pass must change for the tables to be vacuumed and analyzed at once.
const VACUUM_AFTER_FILES: usize = 200;
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

fn file_state(r: sqlx::postgres::PgRow) -> (String, FileState) {
    (
        r.get("file_path"),
        FileState {
            file_hash: r.get("file_hash"),
            chunker_version: r.get("chunker_version"),
            embedding_model: r.get("embedding_model"),
            error: r.get("error"),
        },
    )
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
    /// `None` while the vector is pending (the embedder was unavailable).
    pub embedding: Option<Vec<f32>>,
    /// Why the model refused this chunk's input, when it did.
    pub embed_error: Option<String>,
    /// The chunk's words for lexical search (see [`crate::search::lexical_text`]).
    pub lexical: String,
    /// How many words `lexical` has: BM25's document length.
    pub lexical_length: i32,
    /// Keys of the definitions that start in the chunk ([`crate::search::definition_keys`]).
    pub defines: Vec<String>,
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
    /// The whole file's words for file-level lexical search, and how many there are.
    pub lexical: &'a str,
    pub lexical_length: i32,
}

/// Which rows a search may return. `None` (or an empty list) means no restriction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Filters {
    pub file_types: Option<Vec<String>>,
    pub modules: Option<Vec<String>>,
    pub component_types: Option<Vec<String>>,
    pub languages: Option<Vec<String>>,
    pub repositories: Option<Vec<String>>,
    /// A POSIX regular expression the relative path must match (see
    /// [`crate::search::glob_to_regex`]).
    pub path_regex: Option<String>,
}

/// A vector query.
#[derive(Debug, Clone)]
pub struct VectorQuery<'a> {
    pub embedding: &'a [f32],
    pub model: &'a str,
    pub filters: &'a Filters,
    pub min_similarity: f64,
    pub limit: i64,
    /// Candidates the HNSW index examines ([`ef_search_for`]).
    pub ef_search: u32,
}

/// `hnsw.ef_search` for an index of `vectors` rows when the configuration leaves it automatic
/// (`configured` 0): the candidate list grows with the graph so that recall@10 against exact
/// search stays near 0.95 (docs/BENCHMARKS.md, measured on the hash embedder's vectors, which
/// are harder to index than a model's). A filtered search gets twice as many: the filter
/// discards candidates, and the walk finds the remaining rows' nearest less well.
pub fn ef_search_for(configured: u32, vectors: i64, filtered: bool) -> u32 {
    let automatic = if vectors < 50_000 {
        100
    } else if vectors < 500_000 {
        200
    } else {
        400
    };
    match configured {
        0 if filtered => automatic * 2,
        0 => automatic,
        n => n,
    }
}

/// A lexical query over chunks: the query's terms with their BM25 weights.
#[derive(Debug, Clone)]
pub struct LexicalQuery<'a> {
    pub terms: &'a [TermWeight],
    /// When given, each hit also gets its cosine similarity to this vector.
    pub embedding: Option<(&'a [f32], &'a str)>,
    pub filters: &'a Filters,
    /// BM25's average document length.
    pub avg_length: f64,
    pub limit: i64,
}

/// A query for the chunks that define named identifiers.
#[derive(Debug, Clone)]
pub struct DefinitionQuery<'a> {
    /// Definition keys ([`crate::search::definition_keys`]).
    pub keys: &'a [String],
    /// When given, each hit also gets its cosine similarity to this vector.
    pub embedding: Option<(&'a [f32], &'a str)>,
    pub filters: &'a Filters,
}

/// A lexical query over whole files. The terms and their weights are worked out in the same
/// statement that scores the files: one round trip.
#[derive(Debug, Clone)]
pub struct FileQuery<'a> {
    /// The query's words as code search sees them ([`crate::search::words`]), space-separated;
    /// PostgreSQL's `english` configuration stems them and drops stop words.
    pub text: &'a str,
    pub stats: &'a FileStats,
    /// When given, each hit also gets its cosine similarity to this vector.
    pub embedding: Option<(&'a [f32], &'a str)>,
    pub filters: &'a Filters,
    pub limit: i64,
    /// How many of the best files get their best-matching chunk found (the others are
    /// represented by their first chunk).
    pub best_chunks: i64,
}

/// A query term (a lexeme of the `english` configuration) and its inverse document frequency.
#[derive(Debug, Clone, PartialEq)]
pub struct TermWeight {
    pub term: String,
    pub idf: f64,
    /// Whether the term is rare enough to generate candidates from.
    pub selective: bool,
}

/// How common one query term is among chunks.
#[derive(Debug, Clone, PartialEq)]
pub struct TermStat {
    pub term: String,
    /// Share of chunks containing it, when the planner's statistics know it as common.
    pub frequency: Option<f32>,
    /// Chunks containing it, counted up to the cap given, when `frequency` is unknown.
    pub count: Option<i64>,
}

/// The figures chunk-level BM25 needs about the whole collection.
#[derive(Debug, Clone, Copy)]
pub struct CollectionStats {
    pub chunks: i64,
    pub avg_length: f64,
}

/// The figures file-level BM25 needs about the whole collection: the number of files, and
/// how many files hold each of the most common terms, from the planner's statistics (a file
/// query counts the others' postings itself).
#[derive(Debug, Clone, Default)]
pub struct FileStats {
    pub files: i64,
    /// Common term -> files holding it.
    pub common: BTreeMap<String, i64>,
}

impl FileStats {
    /// The common terms a query of `words` may contain, with their file counts: those that
    /// start with one of the words' first three letters (a stem does, but for a few irregular
    /// words such as "dying" -> "die", whose terms the query then counts itself). A query
    /// passes a handful of terms to PostgreSQL instead of all 1,000.
    fn common_for(&self, words: &str) -> (Vec<String>, Vec<i64>) {
        let mut found: BTreeMap<&str, i64> = BTreeMap::new();
        for word in words.split_whitespace() {
            let prefix: String = word.to_lowercase().chars().take(3).collect();
            let matching = self
                .common
                .range(prefix.clone()..)
                .take_while(|(term, _)| term.starts_with(&prefix));
            found.extend(matching.map(|(term, files)| (term.as_str(), *files)));
        }
        found
            .into_iter()
            .map(|(term, files)| (term.to_owned(), files))
            .unzip()
    }
}

/// One search hit. `similarity` is the cosine similarity to the query (absent when the chunk
/// has no vector of the query's model yet); `lexical` the BM25 score when it matched lexically.
#[derive(Debug, Clone)]
pub struct Hit {
    pub id: uuid::Uuid,
    pub repository: String,
    pub file_path: String,
    pub chunk_index: i32,
    pub content: String,
    pub similarity: Option<f64>,
    pub lexical: Option<f64>,
    pub module: Option<String>,
    pub component_type: Option<String>,
    pub file_type: Option<String>,
    pub language: Option<String>,
    pub symbol: Option<String>,
    pub start_line: Option<i32>,
    pub end_line: Option<i32>,
}

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

#[derive(Clone)]
pub struct Store {
    pool: PgPool,
    index_build_memory_mb: u32,
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
                    // - HNSW iterative scans (pgvector >= 0.8), so that filtered searches
                    //   keep scanning until they have `limit` rows instead of silently
                    //   returning fewer.
                    // - Prepared statements use one plan, made at their first run: planning
                    //   the lexical queries again at each run cost more than running them
                    //   (1 to 5 ms). The vector search, whose best plan depends on how much
                    //   its filters let through, asks for a fresh plan each time.
                    for setting in [
                        "SET hnsw.iterative_scan = relaxed_order",
                        "SET plan_cache_mode = force_generic_plan",
                    ] {
                        sqlx::query(setting).execute(&mut *conn).await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .map_err(|source| StoreError::Connect { url, source })?;
        Ok(Self {
            pool,
            index_build_memory_mb: cfg.index_build_memory_mb,
        })
    }

    /// A store over a pool made elsewhere (tests, benchmarks): the pool's own session
    /// settings, and 1 GiB to build the vector index.
    pub fn from_pool(pool: PgPool) -> Self {
        Self {
            pool,
            index_build_memory_mb: 1024,
        }
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
        Ok(rows.into_iter().map(file_state).collect())
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
            lexical: "",
            lexical_length: 0,
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
        // Everything written here is derived from a file on disk, in one transaction. A crash
        // may lose the last few commits whole (never part of one): the file's recorded state
        // is then the previous one, and the next reconcile indexes it again. Not waiting for
        // the WAL flush makes a cold index markedly faster.
        sqlx::query("SET LOCAL synchronous_commit = off")
            .execute(&mut *tx)
            .await
            .map_err(q("starting a transaction"))?;
        sqlx::query("DELETE FROM codebase_index WHERE repository = $1 AND file_path = $2")
            .bind(f.repository)
            .bind(f.file_path)
            .execute(&mut *tx)
            .await
            .map_err(q("deleting a file's old chunks"))?;
        // One statement whatever the number of chunks: the columns as arrays, so the plan
        // is prepared once per connection instead of once per distinct row count.
        let chunks = f.chunks;
        sqlx::query(&format!(
            "INSERT INTO codebase_index (repository, file_path, chunk_index, chunk_content,
               embedding, file_type, module, component_type, file_hash, language, start_line,
               end_line, symbol, chunk_kind, content_hash, embedding_model, embedding_dim,
               embed_error, embed_failed_at, lexemes, lexical_length, defines)
             SELECT $1, $2, c.chunk_index, c.content, c.embedding, $3, $4, $5, $6, $7,
               c.start_line, c.end_line, c.symbol, c.kind, c.content_hash,
               CASE WHEN c.embedding IS NOT NULL THEN $8 END,
               CASE WHEN c.embedding IS NOT NULL THEN $9 END,
               c.embed_error, CASE WHEN c.embed_error IS NOT NULL THEN now() END,
               to_tsvector('{TEXT_SEARCH_CONFIG}', c.lexical), c.lexical_length,
               nullif(string_to_array(c.defines, ' '), '{{}}')
             FROM unnest($10::int4[], $11::text[], $12::vector[], $13::int4[], $14::int4[],
                         $15::text[], $16::text[], $17::text[], $18::text[], $19::text[],
                         $20::int4[], $21::text[])
               AS c(chunk_index, content, embedding, start_line, end_line, symbol, kind,
                    content_hash, embed_error, lexical, lexical_length, defines)"
        ))
        .bind(f.repository)
        .bind(f.file_path)
        .bind(f.file_type)
        .bind(f.module)
        .bind(f.component_type)
        .bind(f.file_hash)
        .bind(f.language)
        .bind(f.embedding_model)
        .bind(f.embedding_dim)
        .bind(chunks.iter().map(|c| c.chunk_index).collect::<Vec<_>>())
        .bind(
            chunks
                .iter()
                .map(|c| c.content.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            chunks
                .iter()
                .map(|c| c.embedding.as_deref().map(pad))
                .collect::<Vec<_>>(),
        )
        .bind(chunks.iter().map(|c| c.start_line).collect::<Vec<_>>())
        .bind(chunks.iter().map(|c| c.end_line).collect::<Vec<_>>())
        .bind(
            chunks
                .iter()
                .map(|c| c.symbol.as_deref())
                .collect::<Vec<_>>(),
        )
        .bind(chunks.iter().map(|c| c.kind.as_str()).collect::<Vec<_>>())
        .bind(
            chunks
                .iter()
                .map(|c| c.content_hash.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            chunks
                .iter()
                .map(|c| c.embed_error.as_deref())
                .collect::<Vec<_>>(),
        )
        .bind(
            chunks
                .iter()
                .map(|c| c.lexical.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(chunks.iter().map(|c| c.lexical_length).collect::<Vec<_>>())
        // Arrays of arrays must be rectangular: each chunk's keys travel as one string (a
        // key never holds a space).
        .bind(
            chunks
                .iter()
                .map(|c| c.defines.join(" "))
                .collect::<Vec<_>>(),
        )
        .execute(&mut *tx)
        .await
        .map_err(q("inserting chunks"))?;
        let file_id: i64 = sqlx::query_scalar(
            "INSERT INTO indexed_files (repository, file_path, file_hash, chunker_version,
               embedding_model, chunk_count, size_bytes, error, indexed_at, lexical_length)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now(), $9)
             ON CONFLICT (repository, file_path) DO UPDATE SET
               file_hash = EXCLUDED.file_hash, chunker_version = EXCLUDED.chunker_version,
               embedding_model = EXCLUDED.embedding_model, chunk_count = EXCLUDED.chunk_count,
               size_bytes = EXCLUDED.size_bytes, error = EXCLUDED.error, indexed_at = now(),
               lexical_length = EXCLUDED.lexical_length
             RETURNING id",
        )
        .bind(f.repository)
        .bind(f.file_path)
        .bind(f.file_hash)
        .bind(f.chunker_version)
        .bind(f.embedding_model)
        .bind(f.chunks.len() as i32)
        .bind(f.size_bytes)
        .bind(error)
        .bind(f.lexical_length)
        .fetch_one(&mut *tx)
        .await
        .map_err(q("recording a file"))?;
        sqlx::query("DELETE FROM file_terms WHERE file_id = $1")
            .bind(file_id)
            .execute(&mut *tx)
            .await
            .map_err(q("deleting a file's old postings"))?;
        if !f.lexical.is_empty() {
            // One posting per distinct lexeme; its term frequency is its number of positions.
            sqlx::query(&format!(
                "INSERT INTO file_terms (file_id, term, impact)
                 SELECT $1, t.lexeme, {}
                 FROM unnest(to_tsvector('{FILE_TEXT_SEARCH_CONFIG}', $2)) t",
                impact_sql("cardinality(t.positions)", "$3")
            ))
            .bind(file_id)
            .bind(f.lexical)
            .bind(f.lexical_length)
            .execute(&mut *tx)
            .await
            .map_err(q("recording a file's postings"))?;
        }
        bump_generation(&mut tx).await?;
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
        sqlx::query(
            "DELETE FROM file_terms WHERE file_id IN (
               SELECT id FROM indexed_files WHERE repository = $1 AND file_path = ANY($2))",
        )
        .bind(repository)
        .bind(paths)
        .execute(&mut *tx)
        .await
        .map_err(q("deleting vanished files' postings"))?;
        let done =
            sqlx::query("DELETE FROM indexed_files WHERE repository = $1 AND file_path = ANY($2)")
                .bind(repository)
                .bind(paths)
                .execute(&mut *tx)
                .await
                .map_err(q("deleting vanished files"))?;
        bump_generation(&mut tx).await?;
        tx.commit().await.map_err(q("committing deletions"))?;
        Ok(done.rows_affected())
    }

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
            bump_generation(&mut tx).await?;
        }
        tx.commit()
            .await
            .map_err(q("committing backfilled vectors"))?;
        Ok(stored)
    }

    /// The recorded state of the given files and of every file under the given directories.
    pub async fn file_states_under(
        &self,
        repository: &str,
        paths: &[String],
    ) -> Result<HashMap<String, FileState>, StoreError> {
        let prefixes: Vec<String> = paths.iter().map(|p| format!("{p}/")).collect();
        let rows = sqlx::query(
            "SELECT file_path, file_hash, chunker_version, embedding_model, error
             FROM indexed_files
             WHERE repository = $1
               AND (file_path = ANY($2)
                    OR EXISTS (SELECT 1 FROM unnest($3::text[]) p WHERE starts_with(file_path, p)))",
        )
        .bind(repository)
        .bind(paths)
        .bind(&prefixes)
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading file states"))?;
        Ok(rows.into_iter().map(file_state).collect())
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
        // The memory setting is for this statement only: the connection is closed after it.
        let mut conn = self
            .pool
            .acquire()
            .await
            .map_err(q("building the vector index"))?;
        conn.close_on_drop();
        sqlx::query(&format!(
            "SET maintenance_work_mem = '{}MB'",
            self.index_build_memory_mb
        ))
        .execute(&mut *conn)
        .await
        .map_err(q("building the vector index"))?;
        sqlx::query(&format!(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS {ANN_INDEX}
             ON codebase_index USING hnsw (embedding vector_cosine_ops)"
        ))
        .execute(&mut *conn)
        .await
        .map_err(q("building the vector index"))?;
        tracing::info!(
            secs = started.elapsed().as_secs_f64(),
            "HNSW vector index built"
        );
        Ok(true)
    }

    /// Cosine kNN over the vectors of one model, with filters: exact while the table is small,
    /// through the HNSW index (iterative scan, re-sorted) once it exists, and exact over the
    /// matching files' chunks when a path filter lets few through.
    pub async fn vector_search(&self, query: &VectorQuery<'_>) -> Result<Vec<Hit>, StoreError> {
        // The planner cannot tell how many rows a regular expression lets through, so it
        // walks the HNSW graph for a path filter, whose recall suffers when the filter
        // discards most candidates (docs/BENCHMARKS.md). The files' chunk counts tell.
        let exact_in_files = match &query.filters.path_regex {
            Some(re) => {
                self.chunks_in_files(re, query.filters.repositories.as_deref())
                    .await?
                    <= EXACT_PATH_SCAN_CHUNKS
            }
            None => false,
        };
        // `relaxed_order` iterative scans may return rows slightly out of order: the outer
        // query puts them back in order (pgvector's documented pattern).
        let vector = pad(query.embedding);
        let mut qb = QueryBuilder::new(format!(
            "WITH nearest AS MATERIALIZED (
               SELECT {HIT_COLUMNS}, embedding <=> "
        ));
        qb.push_bind(vector.clone()).push(" AS distance FROM ");
        match (&query.filters.path_regex, exact_in_files) {
            // The matching files' chunks, through the (repository, file_path) key; `OFFSET 0`
            // keeps the planner from merging this into an HNSW walk.
            (Some(re), true) => {
                qb.push(
                    "(SELECT x.* FROM indexed_files m JOIN codebase_index x
                        ON x.repository = m.repository AND x.file_path = m.file_path
                      WHERE m.file_path ~ ",
                )
                .push_bind(re.clone())
                .push(" OFFSET 0) AS codebase_index");
            }
            _ => {
                qb.push("codebase_index");
            }
        }
        qb.push(" WHERE embedding IS NOT NULL AND embedding_model = ")
            .push_bind(query.model.to_owned())
            .push(" AND 1 - (embedding <=> ")
            .push_bind(vector.clone())
            .push(") >= ")
            .push_bind(query.min_similarity);
        push_filters(&mut qb, query.filters);
        qb.push(" ORDER BY embedding <=> ")
            .push_bind(vector)
            .push(" LIMIT ")
            .push_bind(query.limit)
            .push(
                ")
             SELECT *, 1 - distance AS similarity, NULL::float8 AS lexical
             FROM nearest ORDER BY distance",
            );
        // A plan for these filters' values: an HNSW scan, or an exact scan of the few rows a
        // selective filter lets through (see `connect`).
        let mut tx = self
            .pool
            .begin_with(format!(
                "BEGIN; SET LOCAL plan_cache_mode = force_custom_plan;
                 SET LOCAL hnsw.ef_search = {}",
                query.ef_search.clamp(1, 1000)
            ))
            .await
            .map_err(q("searching vectors"))?;
        let rows = qb
            .build()
            .fetch_all(&mut *tx)
            .await
            .map_err(q("searching vectors"))?;
        tx.commit().await.map_err(q("searching vectors"))?;
        Ok(rows.iter().map(hit).collect())
    }

    /// The distinct lexemes of `text` under the `english` configuration, with how many chunks
    /// hold each: the planner's estimate for lexemes common enough to be in `pg_stats` (kept by
    /// ANALYZE), otherwise a count of the chunks containing it, stopped at `cap`. A common word
    /// costs no more than a rare one.
    pub async fn term_stats(&self, text: &str, cap: i64) -> Result<Vec<TermStat>, StoreError> {
        let sql = format!(
            "WITH t AS (SELECT DISTINCT lexeme AS term
                        FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', $1))),
             mce AS (
               SELECT e.term, e.freq::float8 AS freq
               FROM pg_stats s,
                    unnest(s.most_common_elems::text::text[],
                           s.most_common_elem_freqs[1:cardinality(s.most_common_elems::text::text[])])
                      AS e(term, freq)
               WHERE s.schemaname = current_schema() AND s.tablename = 'codebase_index'
                 AND s.attname = 'lexemes')
             SELECT t.term, mce.freq::float4 AS freq,
               CASE WHEN mce.freq IS NULL THEN
                 (SELECT count(*) FROM (SELECT 1 FROM codebase_index c
                    WHERE c.lexemes @@ quote_literal(t.term)::tsquery LIMIT $2) s)
               END AS df
             FROM t LEFT JOIN mce USING (term) ORDER BY t.term"
        );
        let rows = sqlx::query(&sql)
            .bind(text)
            .bind(cap)
            .fetch_all(&self.pool)
            .await
            .map_err(q("reading term statistics"))?;
        Ok(rows
            .iter()
            .map(|r| TermStat {
                term: r.get("term"),
                frequency: r.get("freq"),
                count: r.get("df"),
            })
            .collect())
    }

    /// Chunks in the files whose path matches `path_regex` (in `repositories`, if given).
    async fn chunks_in_files(
        &self,
        path_regex: &str,
        repositories: Option<&[String]>,
    ) -> Result<i64, StoreError> {
        sqlx::query_scalar(
            "SELECT coalesce(sum(chunk_count), 0)::int8 FROM indexed_files
             WHERE file_path ~ $1 AND ($2::text[] IS NULL OR repository = ANY($2))",
        )
        .bind(path_regex)
        .bind(repositories.filter(|r| !r.is_empty()))
        .fetch_one(&self.pool)
        .await
        .map_err(q("counting the chunks a path filter lets through"))
    }

    /// The planner's estimate of the chunk count (kept by VACUUM and ANALYZE): instant.
    pub async fn chunk_count_estimate(&self) -> Result<i64, StoreError> {
        sqlx::query_scalar(
            "SELECT greatest(reltuples, 0)::int8 FROM pg_class
             WHERE oid = 'codebase_index'::regclass",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(q("estimating the chunk count"))
    }

    /// Chunk count (from the files' `chunk_count`) and average lexical length: from a 1 %
    /// sample of the table's pages once that holds 1,000 chunks, else from every chunk. A
    /// full scan took 0.8 to 8 s at 1M chunks; BM25 needs only a fair estimate of the average.
    pub async fn collection_stats(&self) -> Result<CollectionStats, StoreError> {
        let row = sqlx::query(
            "WITH s AS (SELECT avg(lexical_length) AS avg_length, count(*) AS n
                        FROM codebase_index TABLESAMPLE SYSTEM (1) WHERE lexemes IS NOT NULL)
             SELECT (SELECT coalesce(sum(chunk_count), 0) FROM indexed_files)::int8 AS chunks,
                    coalesce(CASE WHEN s.n >= 1000 THEN s.avg_length
                                  ELSE (SELECT avg(lexical_length) FROM codebase_index
                                        WHERE lexemes IS NOT NULL) END, 0)::float8 AS avg_length
             FROM s",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(q("reading collection statistics"))?;
        Ok(CollectionStats {
            chunks: row.get("chunks"),
            avg_length: row.get("avg_length"),
        })
    }

    /// File count and the most common terms' file counts (a full scan of `indexed_files`:
    /// callers cache it). A file has one posting per term, so a common term's share of the
    /// postings times their number is its file count.
    pub async fn file_stats(&self) -> Result<FileStats, StoreError> {
        let files: i64 =
            sqlx::query_scalar("SELECT count(*) FROM indexed_files WHERE error IS NULL")
                .fetch_one(&self.pool)
                .await
                .map_err(q("counting files"))?;
        let common: Vec<(String, i64)> = sqlx::query_as(
            "SELECT v.term, (v.freq * c.reltuples)::int8
             FROM pg_stats s JOIN pg_class c ON c.oid = 'file_terms'::regclass,
                  unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS v(term, freq)
             WHERE s.schemaname = current_schema() AND s.tablename = 'file_terms'
               AND s.attname = 'term' AND c.reltuples > 0",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading the common terms"))?;
        Ok(FileStats {
            files,
            common: common.into_iter().collect(),
        })
    }

    /// BM25 over the chunks' lexemes. Candidates are the chunks matching all selective terms,
    /// then any of them, each capped at [`LEXICAL_CANDIDATES`] rows: what a query costs is
    /// bounded whatever its words. Term frequency comes from `ts_rank_cd` of the single term,
    /// length from `lexical_length`.
    pub async fn lexical_search(&self, query: &LexicalQuery<'_>) -> Result<Vec<Hit>, StoreError> {
        let Some((all, any)) = candidate_queries(query.terms) else {
            return Ok(Vec::new());
        };
        let mut qb = terms_cte(query.terms);
        qb.push(", cand AS ((SELECT id FROM codebase_index WHERE lexemes @@ ")
            .push_bind(all)
            .push("::tsquery");
        push_filters(&mut qb, query.filters);
        qb.push(" LIMIT ")
            .push_bind(LEXICAL_CANDIDATES)
            .push(") UNION (SELECT id FROM codebase_index WHERE lexemes @@ ")
            .push_bind(any)
            .push("::tsquery");
        push_filters(&mut qb, query.filters);
        qb.push(" LIMIT ")
            .push_bind(LEXICAL_CANDIDATES)
            .push(format!(
                ")), scored AS (
                   SELECT ci.id, sum(qt.idf * s.tf * ({BM25_K1} + 1)
                     / (s.tf + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * coalesce(ci.lexical_length, 0) / "
            ))
            .push_bind(query.avg_length.max(1.0))
            .push(format!(
                "))) AS score
                   FROM cand JOIN codebase_index ci USING (id) CROSS JOIN qt
                   CROSS JOIN LATERAL (SELECT {TS_RANK_CD_TO_TF} * ts_rank_cd(ci.lexemes, qt.tq, 0) AS tf) s
                   WHERE s.tf > 0.5
                   GROUP BY ci.id ORDER BY score DESC LIMIT "
            ))
            .push_bind(query.limit)
            .push(format!(") SELECT {HIT_COLUMNS_CI}, "));
        push_similarity(&mut qb, query.embedding);
        qb.push(
            " AS similarity, scored.score AS lexical
             FROM scored JOIN codebase_index ci USING (id) ORDER BY scored.score DESC, ci.id",
        );
        let rows = qb
            .build()
            .fetch_all(&self.pool)
            .await
            .map_err(q("searching lexically"))?;
        Ok(rows.iter().map(hit).collect())
    }

    /// BM25 over whole files, from the postings of `file_terms`. The query's terms are its
    /// text's lexemes; a term's file count comes from `query.stats` when it is common, else
    /// from its postings, counted up to [`FILE_TERM_COUNT_CAP`]. Each term contributes its
    /// [`FILE_POSTINGS_PER_TERM`] best postings, so a query costs the same whatever the size
    /// of the index (a file outside a common term's best postings misses only that term's
    /// small share of its score). Filters apply to the file's chunks.
    ///
    /// Each file found is returned as one chunk with the file's score as `lexical`: for the
    /// first `query.best_chunks` files the chunk matching the query's words best (by the
    /// chunks' own BM25), for the others their first chunk, which is cheaper.
    pub async fn lexical_file_search(&self, query: &FileQuery<'_>) -> Result<Vec<Hit>, StoreError> {
        let filtered = query.filters != &Filters::default();
        let (common_terms, common_counts) = query.stats.common_for(query.text);
        // q: the query's terms with their idf (Lucene's BM25 variant, positive for any term a
        // file lacks); a term counted in more files than there are (statistics lagging
        // behind deletions) is left out.
        let mut qb = QueryBuilder::new(format!(
            "WITH t AS (SELECT DISTINCT lexeme AS term
                        FROM unnest(to_tsvector('{FILE_TEXT_SEARCH_CONFIG}', "
        ));
        qb.push_bind(query.text.to_owned())
            .push(
                "))),
                 n AS (SELECT t.term, coalesce(c.files, (
                         SELECT count(*) FROM (SELECT 1 FROM file_terms p WHERE p.term = t.term
                                               LIMIT ",
            )
            .push_bind(FILE_TERM_COUNT_CAP)
            .push(
                ") s))::float8 AS files
                       FROM t LEFT JOIN unnest(",
            )
            .push_bind(common_terms)
            .push("::text[], ")
            .push_bind(common_counts)
            .push(
                "::int8[]) AS c(term, files) USING (term)),
                 q AS (SELECT term, ln(1 + (",
            )
            .push_bind(query.stats.files.max(1) as f64)
            .push(
                "::float8 - files + 0.5) / (files + 0.5)) AS idf
                       FROM n WHERE files < ",
            )
            .push_bind(query.stats.files.max(1) as f64)
            .push("::float8 + 0.5)");
        // A filter to repositories with few files (the common case: an agent searching its
        // own repository) reads the postings of those files only. Otherwise each term's
        // postings are read best first and each file checked against the filters, which
        // costs more the fewer files the filters let through.
        let repositories = query
            .filters
            .repositories
            .as_ref()
            .filter(|r| !r.is_empty());
        if let Some(repositories) = repositories {
            qb.push(
                ", allowed AS MATERIALIZED (
                   SELECT f.id FROM indexed_files f WHERE f.repository = ANY(",
            )
            .push_bind(repositories.clone())
            .push(
                ") AND EXISTS (SELECT 1 FROM codebase_index x
                     WHERE x.repository = f.repository AND x.file_path = f.file_path",
            );
            push_filters(&mut qb, query.filters);
            qb.push(") LIMIT ")
                .push_bind(FEW_FILES + 1)
                .push("), few AS (SELECT count(*) <= ")
                .push_bind(FEW_FILES)
                .push(" AS yes FROM allowed)");
        }
        qb.push(
            ", scored AS (
               SELECT p.file_id, sum(q.idf * p.impact) AS score
               FROM q CROSS JOIN LATERAL (",
        );
        if repositories.is_some() {
            qb.push(
                "SELECT p.file_id, p.impact FROM allowed a
                   JOIN file_terms p ON p.file_id = a.id AND p.term = q.term
                 WHERE (SELECT yes FROM few)
                 UNION ALL (",
            );
        }
        qb.push("SELECT p.file_id, p.impact FROM file_terms p");
        if filtered {
            qb.push(
                " JOIN indexed_files f ON f.id = p.file_id
                 WHERE p.term = q.term AND EXISTS (SELECT 1 FROM codebase_index x
                   WHERE x.repository = f.repository AND x.file_path = f.file_path",
            );
            push_filters(&mut qb, query.filters);
            qb.push(")");
            if repositories.is_some() {
                qb.push(" AND NOT (SELECT yes FROM few)");
            }
        } else {
            qb.push(" WHERE p.term = q.term");
        }
        qb.push(" ORDER BY p.impact DESC LIMIT ")
            .push_bind(FILE_POSTINGS_PER_TERM);
        if repositories.is_some() {
            qb.push(")");
        }
        qb.push(") p GROUP BY p.file_id ORDER BY score DESC LIMIT ")
            .push_bind(query.limit)
            .push(
                "), ranked AS (
                   SELECT f.repository, f.file_path, s.score,
                          row_number() OVER (ORDER BY s.score DESC, f.id) AS r
                   FROM scored s JOIN indexed_files f ON f.id = s.file_id),
                 best AS (
                   SELECT ranked.score, b.id FROM ranked CROSS JOIN LATERAL (
                     SELECT x.id FROM codebase_index x
                     WHERE x.repository = ranked.repository AND x.file_path = ranked.file_path",
            );
        push_filters(&mut qb, query.filters);
        qb.push(
            " ORDER BY (SELECT sum(q.idf * ts_rank_cd(x.lexemes, quote_literal(q.term)::tsquery, 0))
                        FROM q) DESC NULLS LAST, x.chunk_index
                     LIMIT 1) b
                   WHERE ranked.r <= ",
        )
        .push_bind(query.best_chunks)
        .push(
            " UNION ALL
                   SELECT ranked.score, b.id FROM ranked CROSS JOIN LATERAL (
                     SELECT x.id FROM codebase_index x
                     WHERE x.repository = ranked.repository AND x.file_path = ranked.file_path",
        );
        push_filters(&mut qb, query.filters);
        qb.push(" ORDER BY x.chunk_index LIMIT 1) b WHERE ranked.r > ")
            .push_bind(query.best_chunks)
            .push(")")
            .push(format!(" SELECT {HIT_COLUMNS_CI}, "));
        push_similarity(&mut qb, query.embedding);
        qb.push(
            " AS similarity, best.score AS lexical
             FROM best JOIN codebase_index ci USING (id) ORDER BY best.score DESC, ci.id",
        );
        let rows = qb
            .build()
            .fetch_all(&self.pool)
            .await
            .map_err(q("searching files lexically"))?;
        Ok(rows.iter().map(hit).collect())
    }

    /// The chunks that define any of the keys, each with the keys it defines. A key defined
    /// by more than [`DEFINITIONS_PER_KEY`] chunks (within the filters) names no particular
    /// definition (`new`, `__init__`) and is left out.
    pub async fn definition_search(
        &self,
        query: &DefinitionQuery<'_>,
    ) -> Result<Vec<(Hit, Vec<String>)>, StoreError> {
        if query.keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut qb = QueryBuilder::new("WITH k AS (SELECT DISTINCT unnest(");
        qb.push_bind(query.keys.to_vec()).push(
            "::text[]) AS key),
             m AS (SELECT k.key, x.id FROM k CROSS JOIN LATERAL (
                     SELECT id FROM codebase_index WHERE defines @> ARRAY[k.key]",
        );
        push_filters(&mut qb, query.filters);
        qb.push(" LIMIT ")
            .push_bind(DEFINITIONS_PER_KEY + 1)
            .push(
                ") x),
             ok AS (SELECT key FROM m GROUP BY key HAVING count(*) <= ",
            )
            .push_bind(DEFINITIONS_PER_KEY)
            .push(format!(") SELECT {HIT_COLUMNS_CI}, "));
        push_similarity(&mut qb, query.embedding);
        qb.push(
            " AS similarity, NULL::float8 AS lexical,
               ARRAY(SELECT key FROM ok WHERE ok.key = ANY(ci.defines)) AS matched
             FROM codebase_index ci
             WHERE ci.id IN (SELECT id FROM m WHERE key IN (SELECT key FROM ok))
             ORDER BY ci.id",
        );
        let rows = qb
            .build()
            .fetch_all(&self.pool)
            .await
            .map_err(q("searching definitions"))?;
        Ok(rows.iter().map(|r| (hit(r), r.get("matched"))).collect())
    }

    /// Empties the index as if freshly installed: every row, and the vector index (which
    /// TRUNCATE would keep, making the next cold index pay for HNSW inserts). For benchmarks.
    pub async fn clear(&self) -> Result<(), StoreError> {
        sqlx::query("TRUNCATE codebase_index, indexed_files, file_terms, repositories")
            .execute(&self.pool)
            .await
            .map_err(q("emptying the index"))?;
        sqlx::query(&format!("DROP INDEX IF EXISTS {ANN_INDEX}"))
            .execute(&self.pool)
            .await
            .map_err(q("dropping the vector index"))?;
        Ok(())
    }

    /// The index generation: it changes whenever any file's rows change.
    pub async fn generation(&self) -> Result<i64, StoreError> {
        sqlx::query_scalar("SELECT generation FROM index_generation")
            .fetch_one(&self.pool)
            .await
            .map_err(q("reading the index generation"))
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

    /// Whether the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map_err(q("checking the connection"))?;
        Ok(())
    }

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

/// Text search configuration of the lexical side: stems English words, drops stop words.
pub const TEXT_SEARCH_CONFIG: &str = "english";
/// Text search configuration of the file postings.
pub const FILE_TEXT_SEARCH_CONFIG: &str = "english";
/// Rows each candidate query of a lexical search of chunks may return.
pub const LEXICAL_CANDIDATES: i64 = 2000;
/// Postings each query term contributes to a lexical search of files, best first.
pub const FILE_POSTINGS_PER_TERM: i64 = 2000;
/// A file query counts a term's postings (for its idf) up to this many; the most common
/// terms' counts come from the planner's statistics instead.
pub const FILE_TERM_COUNT_CAP: i64 = 50_000;
/// A repository-filtered file query reads the postings of the repositories' files directly
/// when they have at most this many files (a lookup per file and term).
const FEW_FILES: i64 = 2000;
/// A definition key found in more chunks than this names nothing in particular.
pub const DEFINITIONS_PER_KEY: i64 = 10;
/// A path-filtered vector search scans the matching files' chunks exactly, instead of walking
/// the HNSW graph, when they are at most this many (about 25 ms of distances).
const EXACT_PATH_SCAN_CHUNKS: i64 = 10_000;
const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;
/// The document length file postings are normalized to, in words: BM25's average length,
/// fixed so that a posting's weight does not depend on when it was written. (A constant in
/// place of the collection's average is the same ranking function with other `k1` and `b`.)
const FILE_REFERENCE_LENGTH: f64 = 1000.0;

/// SQL for a posting's BM25 weight without idf, from its term frequency and document length.
/// Migration 0006 spells out the same formula.
fn impact_sql(tf: &str, length: &str) -> String {
    format!(
        "({tf} * {k1p1} / ({tf} + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * {length}::float8 / {FILE_REFERENCE_LENGTH})))::real",
        k1p1 = BM25_K1 + 1.0
    )
}
/// `ts_rank_cd` (cover density, no normalization) of a single unweighted term is 0.1 per
/// occurrence (each occurrence is a cover of weight 0.1): this factor makes it the term
/// frequency.
const TS_RANK_CD_TO_TF: f64 = 10.0;

const HIT_COLUMNS: &str = "id, repository, file_path, chunk_index, chunk_content, module, \
     component_type, file_type, language, symbol, start_line, end_line";
const HIT_COLUMNS_CI: &str = "ci.id, ci.repository, ci.file_path, ci.chunk_index, \
     ci.chunk_content, ci.module, ci.component_type, ci.file_type, ci.language, ci.symbol, \
     ci.start_line, ci.end_line";

fn hit(r: &sqlx::postgres::PgRow) -> Hit {
    Hit {
        id: r.get("id"),
        repository: r.get("repository"),
        file_path: r.get("file_path"),
        chunk_index: r.get("chunk_index"),
        content: r.get("chunk_content"),
        similarity: r.get("similarity"),
        lexical: r.get("lexical"),
        module: r.get("module"),
        component_type: r.get("component_type"),
        file_type: r.get("file_type"),
        language: r.get("language"),
        symbol: r.get("symbol"),
        start_line: r.get("start_line"),
        end_line: r.get("end_line"),
    }
}

/// `WITH qt AS (...)`: the query's terms as single-term `tsquery`s with their idf.
fn terms_cte(terms: &[TermWeight]) -> QueryBuilder<'static, Postgres> {
    let mut qb = QueryBuilder::new(
        "WITH qt AS (SELECT quote_literal(term)::tsquery AS tq, idf FROM unnest(",
    );
    qb.push_bind(terms.iter().map(|t| t.term.clone()).collect::<Vec<_>>())
        .push("::text[], ")
        .push_bind(terms.iter().map(|t| t.idf).collect::<Vec<_>>())
        .push("::float8[]) AS q(term, idf))");
    qb
}

/// The cosine similarity of `ci`'s vector to the query's, when the query was embedded and the
/// chunk has a vector of the same model; NULL otherwise.
fn push_similarity(qb: &mut QueryBuilder<'_, Postgres>, embedding: Option<(&[f32], &str)>) {
    match embedding {
        Some((embedding, model)) => {
            qb.push("CASE WHEN ci.embedding_model = ")
                .push_bind(model.to_owned())
                .push(" THEN 1 - (ci.embedding <=> ")
                .push_bind(pad(embedding))
                .push(") END");
        }
        None => {
            qb.push("NULL::float8");
        }
    }
}

/// The `tsquery` texts that select lexical candidates: all selective terms, and any of them
/// (every term when none is selective). `None` when the query has no terms.
fn candidate_queries(terms: &[TermWeight]) -> Option<(String, String)> {
    let selective: Vec<&TermWeight> = terms.iter().filter(|t| t.selective).collect();
    let generating: Vec<&TermWeight> = if selective.is_empty() {
        terms.iter().collect()
    } else {
        selective
    };
    if generating.is_empty() {
        return None;
    }
    let quoted: Vec<String> = generating
        .iter()
        .map(|t| format!("'{}'", t.term.replace('\\', "\\\\").replace('\'', "''")))
        .collect();
    Some((quoted.join(" & "), quoted.join(" | ")))
}

/// Appends ` AND ...` for each filter that restricts something.
fn push_filters(qb: &mut QueryBuilder<'_, Postgres>, f: &Filters) {
    let lists = [
        ("file_type", &f.file_types),
        ("module", &f.modules),
        ("component_type", &f.component_types),
        ("language", &f.languages),
        ("repository", &f.repositories),
    ];
    for (column, list) in lists {
        if let Some(list) = list.as_ref().filter(|l| !l.is_empty()) {
            qb.push(format!(" AND {column} = ANY("))
                .push_bind(list.clone())
                .push(")");
        }
    }
    if let Some(re) = &f.path_regex {
        qb.push(" AND file_path ~ ").push_bind(re.clone());
    }
}

async fn bump_generation(tx: &mut sqlx::Transaction<'_, Postgres>) -> Result<(), StoreError> {
    sqlx::query("UPDATE index_generation SET generation = generation + 1")
        .execute(&mut **tx)
        .await
        .map_err(q("bumping the index generation"))?;
    Ok(())
}

/// Zero-pads a vector to the column width; cosine distance between padded vectors equals the
/// distance between the originals.
fn pad(v: &[f32]) -> Vector {
    let mut padded = Vec::with_capacity(VECTOR_WIDTH);
    padded.extend_from_slice(&v[..v.len().min(VECTOR_WIDTH)]);
    padded.resize(VECTOR_WIDTH, 0.0);
    Vector::from(padded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_passes_only_the_common_terms_its_words_may_stem_to() {
        let stats = FileStats {
            files: 100,
            common: [
                ("connect", 40),
                ("connector", 30),
                ("retri", 20),
                ("use", 90),
            ]
            .into_iter()
            .map(|(t, n)| (t.to_owned(), n))
            .collect(),
        };
        // "Retrying" stems to "retri"; "con" prefixes two terms, each passed once.
        let (terms, counts) = stats.common_for("Retrying connection conn");
        assert_eq!(terms, ["connect", "connector", "retri"]);
        assert_eq!(counts, [40, 30, 20]);
        assert_eq!(stats.common_for("zebra"), (Vec::new(), Vec::new()));
    }
}
