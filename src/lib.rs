//! # codesearch
//!
//! A live, searchable index of codebases for AI agents.
//!
//! ```text
//!  repo files ─► scan: walk, sha256, skip unchanged, drop vanished        (scan)
//!                  ─► chunk: tree-sitter definitions, GraphQL, SQL,         (chunk)
//!                        Markdown sections, size-based fallback
//!                  ─► embed: Ollama nomic-embed-text, or in-process         (embed)
//!                        all-MiniLM-L6-v2; vectors reused by input hash
//!                  ─► store: PostgreSQL + pgvector, one transaction a file  (store)
//!  agent hosts ── NATS request/reply ─► search: query vector, kNN, filters  (search, bus)
//!  file changes ─► watch: debounced batches ─► pipeline (changed paths)     (watch, live)
//!  pending vectors ─► backfill, once the embedder answers                    (backfill)
//! ```
//!
//! Module map: [`config`] (layered settings), [`text`] (words and identifiers as indexing and
//! search see them), [`repository`] (which roots are indexed under which names),
//! [`scan`], [`secrets`] (files and credentials kept out of the index), [`parse`] (one tree-sitter parse per file for [`chunk`] and [`intel`]), [`chunk`],
//! [`intel`] (definitions, calls and imports, and the questions about them), [`embed`] (backends and the guard in front of them), [`store`],
//! [`search`], [`pipeline`] (the stages joined by bounded channels), [`watch`] (file events to
//! batches of paths), [`live`] (one repository kept indexed: reconcile, watch, recover),
//! [`roots`] (the live set of repositories, and repository requests), [`backfill`], [`daemon`]
//! (wiring and shutdown), [`bus`] (the NATS adapter, its wire contract, and the client the CLI
//! and MCP share), [`context`] (the pre-fetch block for a task), [`source`] (lines of indexed
//! files, confined to their roots), [`outage`] (what the log says while NATS or the database is
//! down), [`mcp`] (MCP over stdio and `/mcp`), [`health`], [`http`],
//! [`cli`].
//!
//! Invariants:
//! - A file's chunks change in one transaction, with its `indexed_files` row: a search never
//!   sees half a file, and a crash leaves either the old version or the new one.
//! - A file is re-indexed only when its (content sha256, [`chunk::CHUNKER_VERSION`], model)
//!   key changes; a chunk is re-embedded only when its embedding input is new for the model.
//! - Vectors of different models are never compared: every row names its model.
//! - The embedder never decides whether a file is stored: chunks it cannot embed now are
//!   stored with their vectors pending and filled in by [`backfill`].
//! - A full reconcile is the truth; the watcher is a hint that makes it rarely needed.
//! - Adapters talk to [`search::SearchService`], never to the store.
//! - A repository's name is claimed by one root; only that root ever sweeps its files.
//! - Every read takes a [`store::Scope`] (one workspace's repositories): no reply, statistic
//!   or cached result mixes workspaces.
//! - Credentials are blanked ([`secrets::redact`]) when a file is read, before anything is
//!   chunked, embedded, stored or answered; secret files are never read.

pub mod backfill;
pub mod bus;
pub mod chunk;
pub mod cli;
pub mod config;
pub mod context;
pub mod daemon;
pub mod embed;
pub mod health;
pub mod http;
pub mod intel;
pub mod live;
pub mod mcp;
pub mod outage;
pub mod parse;
pub mod pipeline;
pub mod report;
pub mod repository;
pub mod roots;
pub mod scan;
pub mod search;
pub mod secrets;
pub mod source;
pub mod store;
pub mod text;
pub mod watch;

/// Locks a cache; a panic while holding it cannot leave the cache inconsistent in a way that
/// matters (at worst an entry is missing), so a poisoned lock is used as is.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
