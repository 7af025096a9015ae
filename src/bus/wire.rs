//! The NATS wire contract: the JSON other teams' programs send and read.
//!
//! Names and meanings are fixed by `shared/DESIGN.md`; fields are only ever added. Request
//! fields are camelCase; unknown request fields are ignored so newer clients keep working.

use serde::{Deserialize, Serialize};

/// `agog.codebase.search` request. Every field but `query` is optional.
///
/// ```json
/// { "query": "where do we validate invoice totals",
///   "fileTypes": ["ts", "tsx"], "modules": ["backend"], "limit": 5, "minSimilarity": 0.7 }
/// ```
/// Additions to the seed contract: `componentTypes`, `languages`, `repository`, `pathGlob`,
/// `offset`, `mode` (`hybrid` | `vector` | `lexical`), `maxPerFile` and `workspace` (the
/// workspace to search; the configured default when absent).
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SearchRequest {
    pub query: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modules: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_similarity: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub languages: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_glob: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_per_file: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

/// A successful reply.
///
/// ```json
/// { "success": true,
///   "results": [ { "filePath": "backend/src/invoice/invoice.service.ts", "chunkIndex": 3,
///                  "content": "…", "similarity": 0.81, "module": "backend",
///                  "componentType": "service", "startLine": 21, "endLine": 30,
///                  "language": "typescript", "symbol": "InvoiceService.validateTotals",
///                  "repository": "billing" } ],
///   "totalFound": 1, "queryEmbeddingTime": 12, "searchTime": 4 }
/// ```
/// `queryEmbeddingTime` and `searchTime` are milliseconds. Additions to the seed contract:
/// `mode` (the mode that answered), `warning`, `cached`, `workspace` (the one searched); per
/// result `startLine`, `endLine`,
/// `language`, `symbol`, `symbols`, `repository`, `fileType`, `score` and `scores`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResponse {
    pub success: bool,
    pub results: Vec<SearchResult>,
    pub total_found: usize,
    pub query_embedding_time: u64,
    pub search_time: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Set when the answer is degraded (e.g. lexical only while the embedder is down).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    #[serde(default)]
    pub cached: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    pub file_path: String,
    pub chunk_index: i32,
    pub content: String,
    /// Cosine similarity of the query and the chunk, in [-1, 1]. 0 when it is unknown: in
    /// `lexical` mode without `minSimilarity` (the query is not embedded), or for a chunk
    /// whose vector is still pending; `scores.vector` is then absent.
    pub similarity: f64,
    pub module: Option<String>,
    pub component_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Every definition that starts in the chunk, in file order, when there are several (small
    /// neighbouring definitions merged into one chunk, or a class kept whole with its
    /// members): `symbol` names only the first of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_type: Option<String>,
    /// What results are ordered by: the fused score (hybrid), the cosine (vector) or the BM25
    /// score (lexical).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<ScoreParts>,
}

/// How a result was ranked by each retriever; absent parts did not find it.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScoreParts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_rank: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical_rank: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_lexical: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_lexical_rank: Option<usize>,
    /// The chunk defines an identifier the query names: 1 for the name as written, 0.6 for
    /// the name or qualifier alone of a qualified one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<f64>,
}

/// A failed reply; also signalled in the `Nats-Service-Error` and `Nats-Service-Error-Code`
/// headers.
///
/// ```json
/// { "success": false, "error": { "code": "invalid_argument", "message": "query must not be empty" } }
/// ```
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ErrorResponse {
    pub success: bool,
    pub error: ErrorBody,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
    /// With `ambiguous`: the definitions the name could mean (each with an `id`, `qualified`
    /// name, `path` and lines), to ask again with one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates: Option<Vec<crate::intel::graph::Symbol>>,
}

/// What went wrong, and so what the caller can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Not JSON, or fields of the wrong type: fix the request.
    BadRequest,
    /// Well-formed but out of bounds (empty query, absurd limit): fix the request.
    InvalidArgument,
    /// The embedding model is down or busy: retry later.
    EmbeddingUnavailable,
    /// The database is unreachable: retry later.
    IndexUnavailable,
    /// The request names a workspace its subject does not serve: use that workspace's own
    /// subject.
    PermissionDenied,
    /// No such repository, file or symbol in the workspace.
    NotFound,
    /// A name that several definitions have: the error lists them; ask with a qualified
    /// name, a path or a line.
    Ambiguous,
    /// The daemon has as many requests in hand as it takes: retry after a short pause.
    Overloaded,
    /// Our fault; the log has the details under the request id.
    Internal,
}

impl ErrorCode {
    /// HTTP-like status for the `Nats-Service-Error-Code` header.
    pub fn status(self) -> u16 {
        match self {
            ErrorCode::BadRequest | ErrorCode::InvalidArgument => 400,
            ErrorCode::PermissionDenied => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::Ambiguous => 409,
            ErrorCode::EmbeddingUnavailable
            | ErrorCode::IndexUnavailable
            | ErrorCode::Overloaded => 503,
            ErrorCode::Internal => 500,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::EmbeddingUnavailable => "embedding_unavailable",
            ErrorCode::IndexUnavailable => "index_unavailable",
            ErrorCode::PermissionDenied => "permission_denied",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Ambiguous => "ambiguous",
            ErrorCode::Overloaded => "overloaded",
            ErrorCode::Internal => "internal",
        }
    }
}

impl ErrorResponse {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            success: false,
            error: ErrorBody {
                code,
                message: message.into(),
                candidates: None,
            },
        }
    }
}

/// `agog.codebase.repo.request` request: add, remove, list or show repositories of a workspace.
///
/// ```json
/// { "action": "add", "path": "/srv/code/billing", "name": "billing", "workspace": "acme" }
/// { "action": "add", "url": "https://git.example.com/acme/billing.git" }
/// { "action": "remove", "name": "billing" }
/// { "action": "list" }
/// { "action": "status", "name": "billing" }
/// ```
/// `add` takes `path` (absolute, under the daemon's `workspaces.allowed_roots`) or `url` (any
/// URL git understands; cloned by the daemon), and an optional `name` (default: the directory's
/// or the URL's last segment). The reply comes at once: the repository's `state` tells how far
/// it is. `remove` deletes a requested repository's rows (and its clone), for every daemon of
/// the index. `status` without a `name` is `list`.
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct RepoRequest {
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// `agog.codebase.repo.request` reply: `repository` for add, remove and status of one;
/// `repositories` for list.
///
/// ```json
/// { "success": true, "workspace": "acme",
///   "repository": { "id": 7, "name": "billing", "workspace": "acme", "root": "/srv/code/billing",
///                   "origin": "request", "state": "indexing", "files": 120, "chunks": 800,
///                   "lines": 15000, "languages": { "typescript": 110, "sql": 10 },
///                   "pending": 0, "filesWithErrors": 1, "lastIndexed": "2026-11-23T10:00:00Z" } }
/// ```
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RepoResponse {
    pub success: bool,
    pub workspace: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<RepoInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repositories: Option<Vec<RepoInfo>>,
}

/// One repository's record and figures.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RepoInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// `local` (the daemon's command line or configuration) or `request`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_url: Option<String>,
    /// `initializing`, `indexing`, `ready`, `failed` or `removing` (a removal's reply when a
    /// daemon still indexing it has not let go yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Why it failed, when `state` is `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub files: i64,
    pub chunks: i64,
    pub lines: i64,
    pub languages: std::collections::BTreeMap<String, i64>,
    /// Chunks waiting for their vectors.
    pub pending: i64,
    /// Files that could not be indexed (binary, too large, ...).
    pub files_with_errors: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_indexed: Option<chrono::DateTime<chrono::Utc>>,
    /// Whether a running daemon keeps it up to date (holds its indexing lease). `false`: it
    /// is searched as it was last indexed, until a daemon serves its path again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watched: Option<bool>,
}

impl From<crate::store::RepositorySummary> for RepoInfo {
    fn from(r: crate::store::RepositorySummary) -> Self {
        Self {
            id: r.id,
            name: r.name,
            workspace: r.workspace,
            root: r.root,
            origin: r.origin,
            git_url: r.git_url,
            state: r.state,
            error: r.state_error,
            files: r.files,
            chunks: r.chunks,
            lines: r.lines,
            languages: r.languages,
            pending: r.pending,
            files_with_errors: r.errors,
            last_indexed: r.last_indexed,
            watched: r.watched,
        }
    }
}

/// `agog.codebase.context` request: a task's text (a ticket's title and body), and the token
/// budget of the block. Every field but `task` is optional.
///
/// ```json
/// { "task": "Invoices with a negative total are accepted. Refuse them at creation.",
///   "budgetTokens": 4000, "workspace": "acme", "repository": "billing" }
/// ```
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ContextRequest {
    pub task: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_types: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub languages: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_glob: Option<String>,
}

/// `agog.codebase.context` reply: the block to inject, what is in it, and its size.
///
/// ```json
/// { "success": true, "block": "RELEVANT CODEBASE CONTEXT\n…", "tokens": 3712,
///   "budgetTokens": 4000, "workspace": "acme",
///   "files": [ { "repository": "billing", "filePath": "src/invoice.service.ts",
///                "language": "typescript", "ranges": [ { "startLine": 20, "endLine": 64 } ] } ],
///   "queryEmbeddingTime": 14, "searchTime": 9 }
/// ```
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextResponse {
    pub success: bool,
    pub block: String,
    pub tokens: usize,
    pub budget_tokens: usize,
    pub workspace: String,
    pub files: Vec<ContextFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    pub query_embedding_time: u64,
    pub search_time: u64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextFile {
    pub repository: String,
    pub file_path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub ranges: Vec<LineRange>,
    /// A range was cut to fit the budget (only when not even the best chunk fit whole).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct LineRange {
    pub start_line: u32,
    pub end_line: u32,
}

/// `agog.codebase.file` request: lines of an indexed file, with `context` lines around them.
///
/// ```json
/// { "path": "src/invoice.service.ts", "startLine": 20, "endLine": 64, "context": 5,
///   "repository": "billing" }
/// ```
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct FileRequest {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

/// `agog.codebase.file` reply.
///
/// ```json
/// { "success": true, "workspace": "acme", "repository": "billing",
///   "path": "src/invoice.service.ts", "language": "typescript", "startLine": 15,
///   "endLine": 69, "totalLines": 240, "content": "…", "stale": false }
/// ```
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileResponse {
    pub success: bool,
    pub workspace: String,
    pub repository: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    pub total_lines: u32,
    pub content: String,
    /// The file on disk no longer has the bytes that were indexed.
    pub stale: bool,
}
