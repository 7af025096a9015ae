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
//! ```
//!
//! Module map: [`config`] (layered settings), [`scan`], [`chunk`], [`embed`], [`store`],
//! [`search`], [`pipeline`] (the stages joined by bounded channels), [`daemon`] (wiring and
//! shutdown), [`bus`] (the NATS adapter and its wire contract), [`cli`].
//!
//! Invariants:
//! - A file's chunks change in one transaction, with its `indexed_files` row: a search never
//!   sees half a file, and a crash leaves either the old version or the new one.
//! - A file is re-indexed only when its (content sha256, [`chunk::CHUNKER_VERSION`], model)
//!   key changes; a chunk is re-embedded only when its embedding input is new for the model.
//! - Vectors of different models are never compared: every row names its model.
//! - Adapters talk to [`search::SearchService`], never to the store.

pub mod bus;
pub mod chunk;
pub mod cli;
pub mod config;
pub mod daemon;
pub mod embed;
pub mod health;
pub mod http;
pub mod pipeline;
pub mod report;
pub mod scan;
pub mod search;
pub mod store;
