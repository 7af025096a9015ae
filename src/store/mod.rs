//! PostgreSQL + pgvector: the pool, the migrations, and every statement the product runs.
//!
//! In: files with their chunks and vectors. Out: search hits and index state. The invariant:
//! a file's chunks are replaced in one transaction ([`Store::replace_file`]), together with
//! the file's row in `indexed_files`, so a search never sees half a file and a crash never
//! leaves one. Nothing else in the crate writes SQL.
//!
//! One file per concern: [`files`] (the write path), [`retrieve`] (searches), [`stats`]
//! (BM25 statistics, the generation), [`summary`] (status), [`pending`] (the vector backfill),
//! [`repos`] (repositories), [`scope`] (what a read may see), [`symbols`] (definitions, calls
//! and imports), [`upkeep`] (vector index, vacuum).

mod files;
mod lease;
mod pending;
mod repos;
mod retrieve;
mod scope;
mod stats;
mod summary;
mod symbols;
mod upkeep;

use std::time::Duration;

use pgvector::Vector;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPoolOptions};
use sqlx::{Connection, PgPool, Postgres};
use thiserror::Error;

use crate::config::{DatabaseConfig, redact_url};

pub use self::files::{ChunkRow, FileState, FileWrite};
pub use self::lease::{Lease, lease_application_name};
pub use self::pending::PendingChunk;
pub use self::repos::{Claimed, Origin, RepoClaim, RepoRecord, RepoState};
pub use self::retrieve::{
    ChunkLines, DEFINITIONS_PER_KEY, DefinitionQuery, FILE_POSTINGS_PER_TERM, FileQuery, FileTerm,
    Filters, Hit, IndexedFile, LEXICAL_CANDIDATES, LexicalQuery, TermWeight, VectorQuery,
    ef_search_for,
};
pub use self::scope::Scope;
pub use self::stats::{CollectionStats, FileStats, TermStat};
pub use self::summary::{IndexSummary, RepositorySummary};
pub use self::symbols::{
    DefinitionLookup, DefinitionRow, ImportRow, NameMatch, Narrowing, ReferenceRow,
};
pub use self::upkeep::ANN_MIN_ROWS;

/// Width of the `embedding` column (the baseline's `vector(768)`).
pub const VECTOR_WIDTH: usize = 768;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("cannot connect to PostgreSQL at {url}: {source}")]
    Connect { url: String, source: sqlx::Error },
    #[error("invalid database URL {url}: {source}")]
    Url { url: String, source: sqlx::Error },
    #[error("database.password_file {path}: {message}")]
    PasswordFile { path: String, message: String },
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("database error while {op}: {source}")]
    Query {
        op: &'static str,
        source: sqlx::Error,
    },
    #[error(
        "repository `{name}` is already indexed from {recorded}, which still exists, and {root} \
         would take its name and sweep its files; give one of them another name \
         (`--repository NAME`, or `name` in [[repositories]]) or remove the other \
         (`codesearch repo remove {name}`)"
    )]
    NameTaken {
        name: String,
        recorded: String,
        root: String,
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

/// The password in `path` (a Docker or Kubernetes secret file: the password alone, a trailing
/// line break ignored). A URL that has a password of its own is an error: one source only.
fn read_password_file(path: &str, url: &str) -> Result<String, StoreError> {
    let fail = |message: String| StoreError::PasswordFile {
        path: path.to_owned(),
        message,
    };
    if redact_url(url) != url {
        return Err(fail(
            "the database URL has a password too; keep it in one place".to_owned(),
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
    let password = text.trim_end_matches(['\n', '\r']);
    if password.is_empty() {
        return Err(fail("it is empty".to_owned()));
    }
    Ok(password.to_owned())
}

/// Lists of strings travel to PostgreSQL as one string each (arrays of arrays must be
/// rectangular), joined with the ASCII unit separator and split with
/// `string_to_array(x, chr(31))`; an item holding the separator itself is left out.
fn unit_joined(items: &[String]) -> String {
    items
        .iter()
        .filter(|s| !s.contains('\u{1f}'))
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("\u{1f}")
}

fn q(op: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
    move |source| StoreError::Query { op, source }
}

#[derive(Clone)]
pub struct Store {
    pool: PgPool,
    /// Pools for walks of other lengths ([`Store::walk_pool`]).
    walks: Option<std::sync::Arc<WalkPools>>,
    index_build_memory_mb: u32,
    /// The valid per-model vector indexes, and when they were read: searches name the
    /// indexed expression only when its index exists.
    ann_indexes: std::sync::Arc<std::sync::Mutex<Option<AnnIndexList>>>,
    /// The last scope read per workspace, with the signature it was read under
    /// ([`scope::ScopeCache`]).
    scopes: scope::ScopeCache,
    /// What recently used filters let through, per scope ([`retrieve::FilterCache`]): the
    /// chunks, for the vector search's plan, and the files, for the file query's.
    passing: retrieve::FilterCache<retrieve::Passing>,
    files_passing: retrieve::FilterCache<retrieve::FilesPassing>,
    /// How many passing files a filtered file query reads the postings of directly
    /// ([`retrieve::FEW_FILES`] unless a test sets it).
    few_files: i64,
}

/// The connections of unfiltered HNSW walks longer or shorter than [`SESSION_EF_SEARCH`] (a
/// graph of 500,000 rows and more, or a configured `search.hnsw_ef_search`), one pool per
/// length: their sessions walk that many candidates, so such a walk runs as one statement, as
/// the others do, instead of in a transaction that sets its length. Those two round trips
/// cost 1 to 2 ms of a hybrid search's p50 at a million chunks (docs/BENCHMARKS.md).
struct WalkPools {
    options: PgConnectOptions,
    max_connections: u32,
    acquire_timeout: Duration,
    pools: std::sync::Mutex<std::collections::HashMap<u32, PgPool>>,
}

impl WalkPools {
    fn pools(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<u32, PgPool>> {
        self.pools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The options of every pool of the store: at most `max_connections`, pinged before use only
/// after a pause, with the session settings searches rely on, among them `ef_search`, the
/// HNSW walk's candidate list.
fn pool_options(max_connections: u32, acquire_timeout: Duration, ef_search: u32) -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(acquire_timeout)
        // A connection used in the last seconds is handed out as it is; one idle for
        // longer is pinged first, in case the server restarted or a proxy dropped it
        // meanwhile. Pinging every time (sqlx's default) put a round trip before each of
        // a search's statements: 1 to 4 ms of a filtered hybrid search on two cores
        // (docs/BENCHMARKS.md).
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for > IDLE_BEFORE_PING {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
        .after_connect(move |conn, _| {
            Box::pin(async move {
                // - HNSW iterative scans (pgvector >= 0.8), so that filtered searches
                //   keep scanning until they have `limit` rows instead of silently
                //   returning fewer.
                // - Prepared statements use one plan, made at their first run: planning
                //   the lexical queries again at each run cost more than running them
                //   (1 to 5 ms). The vector search, whose best plan depends on how much
                //   its filters let through, asks for a fresh plan each time.
                // - The HNSW walk's candidate list, so that the walks of that length need
                //   no transaction to set it.
                for setting in [
                    "SET hnsw.iterative_scan = relaxed_order".to_owned(),
                    "SET plan_cache_mode = force_generic_plan".to_owned(),
                    format!("SET hnsw.ef_search = {ef_search}"),
                ] {
                    sqlx::query(&setting).execute(&mut *conn).await?;
                }
                Ok(())
            })
        })
}

/// The names of the valid per-model vector indexes, read at `read_at`.
struct AnnIndexList {
    read_at: std::time::Instant,
    names: std::sync::Arc<std::collections::HashSet<String>>,
}

impl Store {
    /// Opens a pool; fails fast with the (redacted) URL when the server cannot be reached.
    pub async fn connect(cfg: &DatabaseConfig) -> Result<Self, StoreError> {
        let url = redact_url(&cfg.url);
        let mut options: PgConnectOptions = cfg.url.parse().map_err(|source| StoreError::Url {
            url: url.clone(),
            source,
        })?;
        if !cfg.password_file.is_empty() {
            options = options.password(&read_password_file(&cfg.password_file, &cfg.url)?);
        }
        // One connection first, for the cause: the pool retries until its timeout and then
        // says only "pool timed out", whether the port refused, the password was wrong or the
        // database is missing. A refused or failed connection is reported at once.
        let timeout = Duration::from_secs(cfg.connect_timeout_secs.max(1));
        match tokio::time::timeout(timeout, PgConnection::connect_with(&options)).await {
            Ok(Ok(conn)) => {
                let _ = conn.close().await;
            }
            Ok(Err(source)) => return Err(StoreError::Connect { url, source }),
            // No answer in time: let the pool try, and time out with its own message.
            Err(_) => {}
        }
        let acquire_timeout = Duration::from_secs(cfg.connect_timeout_secs);
        let pool = pool_options(cfg.max_connections, acquire_timeout, SESSION_EF_SEARCH)
            .connect_with(options.clone())
            .await
            .map_err(|source| StoreError::Connect { url, source })?;
        let walks = WalkPools {
            options,
            max_connections: (cfg.max_connections / 4).max(1),
            acquire_timeout,
            pools: Default::default(),
        };
        Ok(Self {
            pool,
            walks: Some(std::sync::Arc::new(walks)),
            index_build_memory_mb: cfg.index_build_memory_mb,
            ann_indexes: Default::default(),
            scopes: Default::default(),
            passing: retrieve::FilterCache::new(),
            files_passing: retrieve::FilterCache::new(),
            few_files: retrieve::FEW_FILES,
        })
    }

    /// A store over a pool made elsewhere (tests, benchmarks): the pool's own session
    /// settings, and 1 GiB to build the vector index.
    pub fn from_pool(pool: PgPool) -> Self {
        Self {
            pool,
            walks: None,
            index_build_memory_mb: 1024,
            ann_indexes: Default::default(),
            scopes: Default::default(),
            passing: retrieve::FilterCache::new(),
            files_passing: retrieve::FilterCache::new(),
            few_files: retrieve::FEW_FILES,
        }
    }

    /// The same store, listing at most `n` passing files for a filtered file query before it
    /// walks the postings instead (default 2,000): lets a test on a few files take each of
    /// the file query's routes. What the store had kept of filters is not shared with it.
    pub fn with_few_files(mut self, n: i64) -> Self {
        self.few_files = n;
        self.files_passing = retrieve::FilterCache::new();
        self
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Connections open to PostgreSQL in all the store's pools (the main one and the walks'),
    /// and how many of them are idle.
    pub fn connections(&self) -> (u32, usize) {
        let (mut size, mut idle) = (self.pool.size(), self.pool.num_idle());
        if let Some(walks) = &self.walks {
            for pool in walks.pools().values() {
                size += pool.size();
                idle += pool.num_idle();
            }
        }
        (size, idle)
    }

    /// A pool whose connections' sessions walk `ef_search` candidates of the HNSW graph, for
    /// the unfiltered walks of another length than the main pool's ([`SESSION_EF_SEARCH`]):
    /// made the first time a walk needs it, with a quarter of `database.max_connections`
    /// (at least one) that close after a minute unused. None for a store over a pool made
    /// elsewhere ([`Store::from_pool`]), whose walks set their length in a transaction.
    pub fn walk_pool(&self, ef_search: u32) -> Option<PgPool> {
        let walks = self.walks.as_ref()?;
        let mut pools = walks.pools();
        let pool = pools.entry(ef_search).or_insert_with(|| {
            pool_options(walks.max_connections, walks.acquire_timeout, ef_search)
                .idle_timeout(Duration::from_secs(60))
                .connect_lazy_with(walks.options.clone())
        });
        Some(pool.clone())
    }

    /// Applies pending migrations (idempotent, safe to run from several daemons).
    pub async fn migrate(&self) -> Result<(), StoreError> {
        MIGRATOR.run(&self.pool).await?;
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
}

/// Text search configuration of the lexical side: stems English words, drops stop words.
pub const TEXT_SEARCH_CONFIG: &str = "english";
/// Text search configuration of the file postings.
pub const FILE_TEXT_SEARCH_CONFIG: &str = "english";
/// A pooled connection idle for longer than this is pinged before it is handed out.
const IDLE_BEFORE_PING: Duration = Duration::from_secs(2);
/// Every connection's `hnsw.ef_search`: the automatic candidate list of an unfiltered walk of
/// a graph below 500,000 rows ([`retrieve::ef_search_for`]). An unfiltered walk of another
/// length goes through a pool of its own ([`Store::walk_pool`]), a filtered one sets its length
/// in the transaction that asks for a custom plan.
const SESSION_EF_SEARCH: u32 = 100;
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

/// Marks a repository's rows changed (see [`Scope::fingerprint`]), in the writer's transaction.
async fn bump_generation(
    tx: &mut sqlx::Transaction<'_, Postgres>,
    repository: &str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE repositories SET generation = generation + 1 WHERE name = $1")
        .bind(repository)
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
