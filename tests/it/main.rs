//! Integration tests against a real PostgreSQL with pgvector, a real nats-server and a fake
//! Ollama HTTP server (see `support`).

mod fleet;
mod health;
mod indexing;
mod intel;
mod live;
mod local_model;
mod mcp_context;
mod nats_search;
mod ollama_client;
mod repositories;
mod retrieval;
mod secure;
mod support;
