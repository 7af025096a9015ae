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
//! and imports), [`upkeep`] (vector index, vacuum), [`sessions`] (the pools and their
//! session settings).

mod files;
mod lease;
mod pending;
mod repos;
mod retrieve;
mod scope;
mod sessions;
mod stats;
mod summary;
mod symbols;
mod upkeep;

use std::time::Duration;

use pgvector::Vector;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{Connection, PgPool, Postgres};
use thiserror::Error;

use crate::config::{DatabaseConfig, redact_url};

pub use self::files::{ChunkRow, FileState, FileWrite};
pub use self::lease::{Lease, lease_application_name};
pub use self::pending::PendingChunk;
pub use self::repos::{Claimed, Origin, RepoClaim, RepoRecord, RepoState};
pub use self::retrieve::{
    ChunkLines, DEFINITIONS_PER_KEY, DefinitionQuery, FILE_POSTINGS_PER_TERM, FileQuery, FileTerm,
    Filters, Hit, IndexedFile, LEXICAL_CANDIDATES, LexicalQuery, POOLED_CHUNKS, TermWeight,
    VectorQuery, ef_search_for, pooled,
};
pub use self::scope::Scope;
pub use self::sessions::Session;
use self::sessions::{SessionPools, pool_options};
pub use self::stats::{CollectionStats, FileStats, TermStat};
pub use self::summary::{IndexSummary, RepositorySummary};
pub use self::symbols::{
    DefinitionLookup, DefinitionRow, ImportRow, MemberRow, NameMatch, Narrowing, ReferenceRow,
};
pub use self::upkeep::ANN_MIN_ROWS;

/// Width of the `embedding` column (the baseline's `vector(768)`).
pub const VECTOR_WIDTH: usize = 768;

/// `database.vector_cache_chunks` of the compiled-in configuration, for stores made from a pool.
const DEFAULT_VECTOR_CACHE_CHUNKS: i64 = 100_000;

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
    /// Whether the database could not do the work at all (unreachable, out of disk or memory,
    /// shutting down), as opposed to refusing this statement or these rows. A pass that meets
    /// one fails and is retried; it does not record files as unstorable.
    pub fn is_transient(&self) -> bool {
        let source = match self {
            StoreError::Connect { source, .. } | StoreError::Query { source, .. } => source,
            _ => return false,
        };
        match source {
            sqlx::Error::Io(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Tls(_) => true,
            sqlx::Error::Database(e) => e.code().is_some_and(|code| transient_sqlstate(&code)),
            _ => false,
        }
    }
}

/// SQLSTATEs that say the server, not the statement, is the problem: connection exceptions
/// (08), insufficient resources (53: disk full, out of memory, too many connections), an
/// operator's or a crash's shutdown and a server still starting (57P01 to 57P03), system
/// errors (58: I/O), a read-only server (25006: a standby after a failover), and the
/// serialization failures and deadlocks a retry resolves (40001, 40P01).
fn transient_sqlstate(code: &str) -> bool {
    ["08", "53", "58"]
        .iter()
        .any(|class| code.starts_with(class))
        || matches!(
            code,
            "57P01" | "57P02" | "57P03" | "25006" | "40001" | "40P01"
        )
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
    /// Pools of connections set otherwise than the main pool's ([`Store::session_pool`]).
    sessions: Option<std::sync::Arc<SessionPools>>,
    index_build_memory_mb: u32,
    /// How many vectors of chunks that left the index `vector_cache` keeps (0: none).
    vector_cache_chunks: i64,
    /// When `vector_cache` was last trimmed ([`Store::trim_vector_cache_if_due`]).
    vector_cache_trimmed: std::sync::Arc<std::sync::Mutex<Option<std::time::Instant>>>,
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
    /// [`Store::bare_importer_dirs`] per repository, with the scope fingerprint it was read
    /// under.
    importer_dirs: symbols::ImporterDirs,
    /// How many passing files a filtered file query reads the postings of directly
    /// ([`retrieve::FEW_FILES`] unless a test sets it).
    few_files: i64,
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
        let pool = pool_options(cfg.max_connections, acquire_timeout, Session::MAIN)
            .connect_with(options.clone())
            .await
            .map_err(|source| StoreError::Connect { url, source })?;
        let sessions = SessionPools::new(options, cfg.max_connections, acquire_timeout);
        Ok(Self {
            pool,
            sessions: Some(std::sync::Arc::new(sessions)),
            index_build_memory_mb: cfg.index_build_memory_mb,
            vector_cache_chunks: i64::try_from(cfg.vector_cache_chunks).unwrap_or(i64::MAX),
            vector_cache_trimmed: Default::default(),
            ann_indexes: Default::default(),
            scopes: Default::default(),
            importer_dirs: Default::default(),
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
            sessions: None,
            index_build_memory_mb: 1024,
            vector_cache_chunks: DEFAULT_VECTOR_CACHE_CHUNKS,
            vector_cache_trimmed: Default::default(),
            ann_indexes: Default::default(),
            scopes: Default::default(),
            importer_dirs: Default::default(),
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

    /// Connections open to PostgreSQL in all the store's pools (the main one and the
    /// sessions'), and how many of them are idle.
    pub fn connections(&self) -> (u32, usize) {
        let (size, idle) = self.sessions.as_ref().map_or((0, 0), |s| s.connections());
        (size + self.pool.size(), idle + self.pool.num_idle())
    }

    /// The pool whose connections are set as `session` asks: the main pool for
    /// [`Session::MAIN`], otherwise one made the first time a search needs it, with a quarter
    /// of `database.max_connections` (at least one) that close after a minute unused
    /// ([`sessions`]). None for a store over a pool made elsewhere ([`Store::from_pool`]), and
    /// for a while after the pool failed to give a connection: the search then sets the
    /// session in a transaction.
    pub fn session_pool(&self, session: Session) -> Option<PgPool> {
        if session == Session::MAIN {
            return Some(self.pool.clone());
        }
        self.sessions.as_ref()?.get(session)
    }

    /// Applies pending migrations (idempotent, safe to run from several daemons). A database
    /// a newer release migrated further is accepted: migrations only add, so a fleet can be
    /// upgraded one daemon at a time, and an upgrade rolled back.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        let mut migrator = sqlx::migrate!("./migrations");
        migrator.set_ignore_missing(true);
        migrator.run(&self.pool).await?;
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
