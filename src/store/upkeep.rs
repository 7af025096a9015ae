//! Upkeep of the tables: the HNSW vector index, vacuum and statistics after bulk passes,
//! emptying the index.

use std::ops::{Deref, DerefMut};

use sqlx::pool::PoolConnection;
use sqlx::{ConnectOptions, Connection, PgConnection, Postgres};

use super::{Store, StoreError, q};

/// Below this many vectors an exact scan is as fast as an approximate index, and a bulk load
/// without the index is much faster: the HNSW index is built once the table reaches it.
pub const ANN_MIN_ROWS: i64 = 2000;
/// Files an index pass must change for the tables to be vacuumed and analyzed at once.
const VACUUM_AFTER_FILES: usize = 200;

/// Days a vector of a chunk that left the index stays in `vector_cache`.
const VECTOR_CACHE_DAYS: i32 = 30;
/// The index over the whole `embedding` column, before each model had its own.
const LEGACY_ANN_INDEX: &str = "idx_codebase_index_embedding_hnsw";
/// Each model's index is this and 16 hex digits of a digest of (model, dimensions), and of
/// the graph's parameters when they are not pgvector's defaults.
const ANN_INDEX_PREFIX: &str = "idx_codebase_index_hnsw_";
/// The HNSW graph's links per node (pgvector's `m`; its default is 16) and the candidate list
/// of its build (`ef_construction`; 64). A graph built with more of both finds more of the
/// true neighbours while walking fewer candidates. At 100k chunks: recall@10 0.977 at
/// `ef_search` 100, where the defaults' graph gave 0.949 at 200, and at 1,000 candidates
/// 0.994 instead of 0.966 (near-duplicate chunks leave nodes of the sparser graph that no
/// walk reaches). It costs 3.6 times the build (50 s instead of 14 s at 100k chunks, about
/// 11 minutes at 1M) and 4 % more index (docs/BENCHMARKS.md).
const HNSW_M: u32 = 24;
const HNSW_EF_CONSTRUCTION: u32 = 200;
/// How long a store trusts its list of per-model indexes before reading it again.
pub(super) const ANN_INDEX_CACHE: std::time::Duration = std::time::Duration::from_secs(10);
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
        if changed_files > 0 {
            self.trim_vector_cache().await?;
        }
        if changed_files >= VACUUM_AFTER_FILES {
            self.vacuum_analyze().await?;
        }
        self.ensure_ann_index().await?;
        Ok(())
    }

    /// [`Store::trim_vector_cache`] unless it ran in the last minute, after each write that
    /// may add to the cache (a save a second would otherwise trim a second). A trim that fails
    /// costs only the trim: the next one catches up.
    pub(super) async fn trim_vector_cache_if_due(&self) {
        if self.vector_cache_chunks == 0 {
            return;
        }
        {
            let mut last = crate::lock(&self.vector_cache_trimmed);
            if last.is_some_and(|t| t.elapsed() < std::time::Duration::from_secs(60)) {
                return;
            }
            *last = Some(std::time::Instant::now());
        }
        match self.trim_vector_cache().await {
            Ok(0) => {}
            Ok(dropped) => tracing::debug!(dropped, "vector cache trimmed"),
            Err(e) => tracing::debug!(error = %e, "could not trim the vector cache"),
        }
    }

    /// How many vectors of chunks that left the index `vector_cache` holds.
    pub async fn vector_cache_len(&self) -> Result<i64, StoreError> {
        sqlx::query_scalar("SELECT count(*) FROM vector_cache")
            .fetch_one(&self.pool)
            .await
            .map_err(q("counting the vector cache"))
    }

    /// Drops from `vector_cache` what left the index more than [`VECTOR_CACHE_DAYS`] ago, and
    /// the oldest beyond `database.vector_cache_chunks`. Returns how many it dropped.
    pub async fn trim_vector_cache(&self) -> Result<u64, StoreError> {
        let trim = |e| q("trimming the vector cache")(e);
        let old = sqlx::query(
            "DELETE FROM vector_cache WHERE evicted_at < now() - make_interval(days => $1)",
        )
        .bind(VECTOR_CACHE_DAYS)
        .execute(&self.pool)
        .await
        .map_err(trim)?
        .rows_affected();
        let over = sqlx::query(
            "DELETE FROM vector_cache c USING (
               SELECT embedding_model, content_hash FROM vector_cache
                ORDER BY evicted_at DESC, content_hash OFFSET $1) o
              WHERE c.embedding_model = o.embedding_model AND c.content_hash = o.content_hash",
        )
        .bind(self.vector_cache_chunks)
        .execute(&self.pool)
        .await
        .map_err(trim)?
        .rows_affected();
        Ok(old + over)
    }

    /// Builds each model's HNSW index once the table holds [`ANN_MIN_ROWS`] of its vectors
    /// (and rebuilds one an interrupted build left invalid). Returns whether it built one.
    ///
    /// The index is on the model's own dimensions as half-precision floats
    /// (`subvector(embedding, 1, dim)::halfvec(dim)`, partial on `embedding_model`): the column
    /// holds every model's vectors zero-padded to 768 floats, and a walk over 384 halves reads
    /// a quarter of the bytes (docs/BENCHMARKS.md). Searches re-sort what it finds by the
    /// full-precision distance. The older index over the whole column is dropped once every
    /// model with enough vectors has its own and the daemons have had time to see it.
    ///
    /// When the database holds several workspaces, each workspace whose vectors are too many
    /// to scan exactly gets its own index instead (partial on the workspace too): a search,
    /// always in one workspace, then walks a graph of that workspace's rows only, instead of
    /// the whole table's filtered down to them. An index no longer wanted is dropped once the
    /// ones replacing it have been valid for long enough for every daemon to see them.
    ///
    /// Built concurrently: searches and writes go on meanwhile. One builder at a time, across
    /// daemons: the build holds an advisory lock, and a pass that finds it taken leaves the
    /// build to its holder (two concurrent `CREATE INDEX CONCURRENTLY` deadlock, which every
    /// repository's first pass finishing together used to cause).
    pub async fn ensure_ann_index(&self) -> Result<bool, StoreError> {
        let built = |e| q("building the vector index")(e);
        // The lock and the memory setting belong to this connection, closed after the build.
        let mut conn = self.maintenance_connection().await.map_err(built)?;
        let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
            .bind(ANN_BUILD_LOCK)
            .fetch_one(&mut *conn)
            .await
            .map_err(built)?;
        if !locked {
            tracing::debug!("another pass is building the vector index");
            conn.close().await;
            return Ok(false);
        }
        let wanted = wanted_ann_indexes(&mut conn).await?;
        let existing = ann_indexes(&mut conn).await?;
        let mut built_any = false;
        for want in &wanted {
            match existing.iter().find(|i| i.name == want.name) {
                Some(i) if i.valid => continue,
                Some(_) => {
                    tracing::warn!(
                        model = want.model,
                        workspace = want.workspace,
                        "the vector index is invalid (an interrupted build); rebuilding it"
                    );
                    drop_index(&mut conn, &want.name).await?;
                }
                None => {}
            }
            tracing::info!(
                model = want.model,
                workspace = want.workspace,
                dim = want.dim,
                vectors = want.rows,
                "building the HNSW vector index"
            );
            let started = std::time::Instant::now();
            sqlx::query(&format!(
                "SET maintenance_work_mem = '{}MB'",
                self.index_build_memory_mb
            ))
            .execute(&mut *conn)
            .await
            .map_err(built)?;
            let dim = want.dim;
            let mut only = format!("embedding_model = {}", quote_literal(&want.model));
            if let Some(w) = &want.workspace {
                only.push_str(&format!(" AND workspace = {}", quote_literal(w)));
            }
            let create = format!(
                "CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON codebase_index
                 USING hnsw ((subvector(embedding, 1, {dim})::halfvec({dim})) halfvec_cosine_ops)
                 WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})
                 WHERE {only}",
                want.name
            );
            match sqlx::query(&create).execute(&mut *conn).await {
                Err(e) if shared_memory_exhausted(&e) => {
                    tracing::warn!(
                        model = want.model,
                        error = %e,
                        "PostgreSQL's shared memory (/dev/shm) is too small for a parallel \
                         build of the vector index; building it without parallel workers, \
                         which is slower. Give the database more (docker: shm_size; \
                         docs/DEPLOYMENT.md)"
                    );
                    // The failed build left an invalid index of that name behind.
                    drop_index(&mut conn, &want.name).await?;
                    for statement in [
                        "SET max_parallel_maintenance_workers = 0",
                        &create,
                        "RESET max_parallel_maintenance_workers",
                    ] {
                        sqlx::query(statement)
                            .execute(&mut *conn)
                            .await
                            .map_err(built)?;
                    }
                }
                result => {
                    result.map_err(built)?;
                }
            }
            // When it became valid, by the database's clock: the older index is dropped only
            // once every daemon's view of the indexes (cached for ANN_INDEX_CACHE) includes it.
            sqlx::query(&format!(
                "DO $$ BEGIN EXECUTE format('COMMENT ON INDEX {} IS %L',
                   'valid since ' || extract(epoch FROM now())::int8); END $$",
                want.name
            ))
            .execute(&mut *conn)
            .await
            .map_err(built)?;
            tracing::info!(
                model = want.model,
                workspace = want.workspace,
                secs = started.elapsed().as_secs_f64(),
                "HNSW vector index built"
            );
            built_any = true;
        }
        // Indexes no longer wanted: a model's whose vectors are all gone at once; one that
        // others replace (one workspace became several, or the reverse) once every wanted
        // index has been valid long enough for each daemon's cached list to include it, so
        // that a search never plans for an index that has just gone.
        let settled = ANN_INDEX_CACHE.as_secs() as i64 * 2;
        let all_settled = wanted.iter().all(|w| {
            existing
                .iter()
                .any(|i| i.name == w.name && i.valid && i.valid_for_secs >= settled)
        });
        for stale in existing
            .iter()
            .filter(|i| !wanted.iter().any(|w| w.name == i.name))
        {
            let replaced = wanted
                .iter()
                .any(|w| stale.predicate.contains(&quote_literal(&w.model)));
            if replaced && !all_settled {
                continue;
            }
            tracing::info!(index = stale.name, "dropping a vector index no longer used");
            drop_index(&mut conn, &stale.name).await?;
        }
        drop_whole_column_index(&mut conn, &wanted, &existing).await?;
        conn.close().await;
        self.forget_ann_indexes();
        Ok(built_any)
    }

    /// The graph of `model`'s vectors of `dim` dimensions, if they have a valid HNSW index of
    /// their own, from a list of the indexes read at most [`ANN_INDEX_CACHE`] ago. With a
    /// workspace: that workspace's vectors' graph. An index built with pgvector's default
    /// parameters serves until its replacement is built (both have the same expression and
    /// predicate, so a search's statement fits either).
    pub(super) async fn ann_graph(
        &self,
        model: &str,
        dim: usize,
        workspace: Option<&str>,
    ) -> Result<Option<Graph>, StoreError> {
        let cached = self.ann_indexes.lock().ok().and_then(|c| {
            c.as_ref()
                .filter(|l| l.read_at.elapsed() < ANN_INDEX_CACHE)
                .map(|l| l.names.clone())
        });
        let names = match cached {
            Some(names) => names,
            None => {
                let mut conn = self
                    .pool
                    .acquire()
                    .await
                    .map_err(q("listing the vector indexes"))?;
                let names: std::sync::Arc<std::collections::HashSet<String>> = std::sync::Arc::new(
                    ann_indexes(&mut conn)
                        .await?
                        .into_iter()
                        .filter(|i| i.valid)
                        .map(|i| i.name)
                        .collect(),
                );
                if let Ok(mut c) = self.ann_indexes.lock() {
                    *c = Some(super::AnnIndexList {
                        read_at: std::time::Instant::now(),
                        names: names.clone(),
                    });
                }
                names
            }
        };
        Ok(if names.contains(&ann_index_name(model, dim, workspace)) {
            Some(Graph::Denser)
        } else if names.contains(&default_graph_index_name(model, dim, workspace)) {
            Some(Graph::PgvectorDefaults)
        } else {
            None
        })
    }

    /// Reads the list of per-model indexes again at the next search.
    fn forget_ann_indexes(&self) {
        if let Ok(mut c) = self.ann_indexes.lock() {
            *c = None;
        }
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
        let vacuumed = |e| q("vacuuming the index")(e);
        let started = std::time::Instant::now();
        let mut conn = self.maintenance_connection().await.map_err(vacuumed)?;
        sqlx::query("VACUUM (ANALYZE) codebase_index, chunk_vectors, indexed_files, file_terms")
            .execute(&mut *conn)
            .await
            .map_err(vacuumed)?;
        conn.close().await;
        tracing::info!(
            secs = started.elapsed().as_secs_f64(),
            "index tables vacuumed and analysed"
        );
        Ok(())
    }

    /// A connection for statements that take seconds to minutes by design (an index build,
    /// `VACUUM`): one of its own, outside the pool, when the server gives one. sqlx logs any
    /// statement over a second as a warning, "slow statement", which on these told an
    /// operator that something was wrong on every first index; they log how long they took
    /// instead. A server or role at its connection limit gives none: then one of the pool's,
    /// and the warning with it. Closed when dropped, with whatever session state (a lock, a
    /// setting) it took.
    async fn maintenance_connection(&self) -> Result<Maintenance, sqlx::Error> {
        let options = (*self.pool.connect_options())
            .clone()
            .disable_statement_logging();
        let wait = self.pool.options().get_acquire_timeout();
        match tokio::time::timeout(wait, PgConnection::connect_with(&options)).await {
            Ok(Ok(conn)) => Ok(Maintenance::Own(conn)),
            refused => {
                let why = match refused {
                    Ok(Err(e)) => e.to_string(),
                    _ => format!("no answer within {wait:?}"),
                };
                tracing::debug!(error = %why, "no connection of its own for upkeep; using one of the pool's");
                let mut conn = self.pool.acquire().await?;
                conn.close_on_drop();
                Ok(Maintenance::Pooled(conn))
            }
        }
    }

    /// Empties the index as if freshly installed: every row, and the vector index (which
    /// TRUNCATE would keep, making the next cold index pay for HNSW inserts). For benchmarks.
    pub async fn clear(&self) -> Result<(), StoreError> {
        sqlx::query(
            "TRUNCATE codebase_index, chunk_vectors, indexed_files, file_terms, repositories,
               code_definitions, code_references, code_imports, code_members, vector_cache",
        )
        .execute(&self.pool)
        .await
        .map_err(q("emptying the index"))?;
        let mut conn = self
            .pool
            .acquire()
            .await
            .map_err(q("dropping the vector index"))?;
        for index in ann_indexes(&mut conn).await? {
            drop_index(&mut conn, &index.name).await?;
        }
        drop_index(&mut conn, LEGACY_ANN_INDEX).await?;
        self.forget_ann_indexes();
        Ok(())
    }
}

/// Which HNSW graph a search walks: it decides how many candidates the walk needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Graph {
    /// Built with [`HNSW_M`] and [`HNSW_EF_CONSTRUCTION`].
    Denser,
    /// Built with pgvector's defaults, before this version: it serves until replaced.
    PgvectorDefaults,
}

/// The connection upkeep runs on ([`Store::maintenance_connection`]).
enum Maintenance {
    Own(PgConnection),
    Pooled(PoolConnection<Postgres>),
}

impl Maintenance {
    /// Ends the session (a pooled one is closed, not returned, when dropped).
    async fn close(self) {
        if let Self::Own(conn) = self {
            let _ = conn.close().await;
        }
    }
}

impl Deref for Maintenance {
    type Target = PgConnection;
    fn deref(&self) -> &PgConnection {
        match self {
            Self::Own(conn) => conn,
            Self::Pooled(conn) => conn,
        }
    }
}

impl DerefMut for Maintenance {
    fn deref_mut(&mut self) -> &mut PgConnection {
        match self {
            Self::Own(conn) => conn,
            Self::Pooled(conn) => conn,
        }
    }
}

/// The name of the HNSW index of `model`'s vectors of `dim` dimensions, of one workspace's
/// vectors or of all. A change of the graph's parameters changes it, so that each database's
/// index is built again (and the old one dropped once the new one is valid).
pub(super) fn ann_index_name(model: &str, dim: usize, workspace: Option<&str>) -> String {
    let params = format!("\0m={HNSW_M},ef_construction={HNSW_EF_CONSTRUCTION}");
    index_name_for(&format!("{}{params}", graph_key(model, dim, workspace)))
}

/// The name the same index had when it was built with pgvector's default parameters.
fn default_graph_index_name(model: &str, dim: usize, workspace: Option<&str>) -> String {
    index_name_for(&graph_key(model, dim, workspace))
}

fn graph_key(model: &str, dim: usize, workspace: Option<&str>) -> String {
    match workspace {
        None => format!("{model}\0{dim}"),
        Some(w) => format!("{model}\0{dim}\0{w}"),
    }
}

fn index_name_for(key: &str) -> String {
    let digest = crate::scan::sha256_hex(key.as_bytes());
    format!("{ANN_INDEX_PREFIX}{}", &digest[..16])
}

/// A vector index the table should have.
#[derive(Debug, Clone)]
struct WantedAnn {
    name: String,
    model: String,
    dim: usize,
    /// Its rows' workspace; `None` for every row of the model.
    workspace: Option<String>,
    rows: i64,
}

/// The vector indexes the table should have: for each model with at least [`ANN_MIN_ROWS`]
/// vectors, one over all of them while they are in one workspace, else one per workspace
/// holding more than a search scans exactly ([`super::retrieve::EXACT_SCAN_CHUNKS`]).
/// Counted from the files (a count over the chunks takes 150 ms at 100k, and this runs after
/// every pass); a model's dimensions from one of its vectors.
async fn wanted_ann_indexes(conn: &mut sqlx::PgConnection) -> Result<Vec<WantedAnn>, StoreError> {
    let rows: Vec<(String, String, i32, i64)> = sqlx::query_as(
        "SELECT f.embedding_model, f.workspace, d.dim, f.chunks
         FROM (SELECT f.embedding_model, coalesce(r.workspace, 'default') AS workspace,
                      sum(f.chunk_count)::int8 AS chunks
               FROM indexed_files f LEFT JOIN repositories r ON r.name = f.repository
               WHERE f.chunk_count > 0 AND f.embedding_model IS NOT NULL GROUP BY 1, 2) f
         CROSS JOIN LATERAL (
           SELECT c.embedding_dim AS dim FROM codebase_index c
           WHERE c.embedding_model = f.embedding_model AND c.embedding IS NOT NULL
           LIMIT 1) d
         ORDER BY 1, 2",
    )
    .fetch_all(&mut *conn)
    .await
    .map_err(q("counting vectors per model and workspace"))?;
    let mut wanted = Vec::new();
    for of_model in rows.chunk_by(|a, b| a.0 == b.0) {
        let model = &of_model[0].0;
        let Some(dim) = usize::try_from(of_model[0].2)
            .ok()
            .filter(|d| (1..=super::VECTOR_WIDTH).contains(d))
        else {
            continue;
        };
        let total: i64 = of_model.iter().map(|r| r.3).sum();
        if total < ANN_MIN_ROWS {
            continue;
        }
        if of_model.len() == 1 {
            wanted.push(WantedAnn {
                name: ann_index_name(model, dim, None),
                model: model.clone(),
                dim,
                workspace: None,
                rows: total,
            });
            continue;
        }
        for (_, workspace, _, rows) in of_model {
            if *rows > super::retrieve::EXACT_SCAN_CHUNKS {
                wanted.push(WantedAnn {
                    name: ann_index_name(model, dim, Some(workspace)),
                    model: model.clone(),
                    dim,
                    workspace: Some(workspace.clone()),
                    rows: *rows,
                });
            }
        }
    }
    Ok(wanted)
}

/// A per-model vector index as the catalog has it.
#[derive(Debug, Clone)]
pub(super) struct AnnIndex {
    pub name: String,
    /// Whether its build finished (an interrupted `CREATE INDEX CONCURRENTLY` leaves an
    /// invalid index behind).
    pub valid: bool,
    /// Seconds since the build finished (from its comment); 0 when unknown.
    pub valid_for_secs: i64,
    /// Its `WHERE` clause as PostgreSQL prints it (the model's name quoted, as by
    /// [`quote_literal`]).
    pub predicate: String,
}

/// The per-model vector indexes on `codebase_index`.
pub(super) async fn ann_indexes(
    conn: &mut sqlx::PgConnection,
) -> Result<Vec<AnnIndex>, StoreError> {
    let rows: Vec<(String, bool, Option<String>, i64, String)> = sqlx::query_as(
        "SELECT c.relname::text, i.indisvalid, obj_description(c.oid, 'pg_class'),
                extract(epoch FROM now())::int8,
                coalesce(pg_get_expr(i.indpred, i.indrelid), '')
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         WHERE i.indrelid = 'codebase_index'::regclass AND starts_with(c.relname::text, $1)",
    )
    .bind(ANN_INDEX_PREFIX)
    .fetch_all(&mut *conn)
    .await
    .map_err(q("listing the vector indexes"))?;
    Ok(rows
        .into_iter()
        .map(|(name, valid, comment, now, predicate)| {
            let since = comment
                .as_deref()
                .and_then(|c| c.strip_prefix("valid since "))
                .and_then(|t| t.parse::<i64>().ok());
            AnnIndex {
                name,
                valid,
                valid_for_secs: since.map_or(0, |t| now - t),
                predicate,
            }
        })
        .collect())
}

/// Drops the index over the whole `embedding` column (before per-model indexes) once
/// every index wanted has been valid for longer than daemons cache the list (`indexes`, read
/// before this pass built any: one it just built is too young anyway).
async fn drop_whole_column_index(
    conn: &mut sqlx::PgConnection,
    wanted: &[WantedAnn],
    indexes: &[AnnIndex],
) -> Result<(), StoreError> {
    let exists: bool = sqlx::query_scalar("SELECT to_regclass($1) IS NOT NULL")
        .bind(LEGACY_ANN_INDEX)
        .fetch_one(&mut *conn)
        .await
        .map_err(q("checking the vector index"))?;
    if !exists {
        return Ok(());
    }
    let settled = ANN_INDEX_CACHE.as_secs() as i64 * 2;
    let all_seen = wanted.iter().all(|w| {
        indexes
            .iter()
            .any(|i| i.name == w.name && i.valid && i.valid_for_secs >= settled)
    });
    if all_seen {
        tracing::info!("dropping the vector index over the whole column: each model has its own");
        drop_index(conn, LEGACY_ANN_INDEX).await?;
    }
    Ok(())
}

/// Whether a statement failed for want of shared memory: a parallel index build keeps its
/// graph (`maintenance_work_mem` of it) in a segment under /dev/shm, which containers make
/// 64 MB by default. PostgreSQL says "could not resize shared memory segment ...: No space
/// left on device" (disk full, 53100) or out of memory (53200).
fn shared_memory_exhausted(e: &sqlx::Error) -> bool {
    let sqlx::Error::Database(db) = e else {
        return false;
    };
    matches!(db.code().as_deref(), Some("53100" | "53200"))
        && db.message().contains("shared memory")
}

async fn drop_index(conn: &mut sqlx::PgConnection, name: &str) -> Result<(), StoreError> {
    sqlx::query(&format!("DROP INDEX CONCURRENTLY IF EXISTS {name}"))
        .execute(&mut *conn)
        .await
        .map_err(q("dropping a vector index"))?;
    Ok(())
}

/// `text` as an SQL string literal (standard-conforming strings: only quotes are doubled).
pub(super) fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}
