//! The code-intelligence subjects: `agog.codebase.{symbols,callers,callees,graph,impact,related}`.
//!
//! Requests are JSON objects (camelCase); replies are `success: true` with the answer's
//! fields, or the usual error reply. A name several definitions have is the error
//! `ambiguous`, with the definitions as `error.candidates`; an unknown name is `not_found`,
//! distinct from a symbol with no callers (an empty `calls` list).

use serde::{Deserialize, Serialize};

use super::wire::{ErrorCode, ErrorResponse};
use super::{Access, Handled, Kind, index_unavailable, internal, parse, to_bytes};
use crate::intel::graph::{
    DEFAULT_DEPTH, DEFAULT_MAX_NODES, Direction, GraphRequest, IntelError, IntelService,
    RelatedDirection, SymbolsRequest, Target,
};

/// Most results one reply lists, by default and at most.
const DEFAULT_LIMIT: usize = 50;
const MAX_LIMIT: usize = 1000;

/// What names a definition: `symbol` (`push`, `Stack::push`, `auth.routes.login`), and
/// `path` or `line` to choose among several.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SymbolRequest {
    pub symbol: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Callers and callees: most calls listed (default 50, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Graph and impact: levels to walk (graph default 2, impact 3; at most 6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// Graph: `callers`, `callees` or `both` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    /// Graph: most nodes (default 50, at most 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nodes: Option<usize>,
    /// Graph and impact: edges below this confidence are left out (default 0.35).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_confidence: Option<f32>,
}

/// `agog.codebase.symbols` request.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SymbolsQuery {
    pub query: String,
    /// `exact` (default) or `prefix`.
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    pub matching: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
    /// Also list the name's call sites (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub references: Option<bool>,
}

/// `agog.codebase.related` request.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RelatedRequest {
    pub path: String,
    /// `imports`, `importedBy` or `both` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// A successful reply: `success: true` and the answer's own fields.
#[derive(Serialize)]
struct Success<T: Serialize> {
    success: bool,
    #[serde(flatten)]
    answer: T,
}

type Failure = Box<ErrorResponse>;

fn failure((code, message): (ErrorCode, String)) -> Failure {
    Box::new(ErrorResponse::new(code, message))
}

fn intel_failure(e: IntelError, what: &str) -> Failure {
    match e {
        IntelError::Invalid(m) => failure((ErrorCode::InvalidArgument, m)),
        IntelError::NotFound(m) => failure((ErrorCode::NotFound, m)),
        IntelError::Forbidden(m) => failure((ErrorCode::PermissionDenied, m)),
        IntelError::Ambiguous {
            ref symbol,
            ref candidates,
        } => {
            let mut reply = ErrorResponse::new(ErrorCode::Ambiguous, e.to_string());
            tracing::debug!(symbol = %symbol, candidates = candidates.len(), "ambiguous symbol");
            reply.error.candidates = Some(candidates.clone());
            Box::new(reply)
        }
        IntelError::Store(s) if s.is_transient() => failure(index_unavailable(&s, what)),
        IntelError::Store(s) => failure(internal(&s, what)),
    }
}

/// Answers one code-intelligence request.
pub(super) async fn dispatch(
    intel: &IntelService,
    kind: Kind,
    access: &Access,
    payload: &[u8],
) -> Handled {
    let answer = match kind {
        Kind::Symbols => symbols(intel, access, payload).await,
        Kind::Related => related(intel, access, payload).await,
        _ => about_symbol(intel, kind, access, payload).await,
    };
    let (body, error) = match answer {
        Ok(body) => (body, None),
        Err(e) => {
            let code = e.error.code;
            (to_bytes(&*e), Some(code))
        }
    };
    Handled {
        body,
        error,
        cached: false,
        query_embedding: None,
    }
}

fn success<T: Serialize>(answer: T) -> bytes::Bytes {
    to_bytes(&Success {
        success: true,
        answer,
    })
}

async fn symbols(
    intel: &IntelService,
    access: &Access,
    payload: &[u8],
) -> Result<bytes::Bytes, Failure> {
    let raw: SymbolsQuery = parse(
        payload,
        "symbols request with a `query` field",
        serde_json::json!({ "query": "x" }),
    )
    .map_err(failure)?;
    let workspace = access
        .workspace(raw.workspace.as_deref())
        .map_err(failure)?;
    let prefix = match raw.matching.as_deref() {
        None | Some("exact") => false,
        Some("prefix") => true,
        Some(other) => {
            return Err(failure((
                ErrorCode::InvalidArgument,
                format!("match: `{other}` is not one of exact, prefix"),
            )));
        }
    };
    let answer = intel
        .symbols(SymbolsRequest {
            query: raw.query,
            prefix,
            kinds: raw.kinds,
            language: raw.language,
            repository: raw.repository,
            workspace: Some(workspace),
            limit: limit(raw.limit)?,
            offset: raw.offset.unwrap_or(0),
            references: raw.references.unwrap_or(true),
        })
        .await
        .map_err(|e| intel_failure(e, "symbols request"))?;
    Ok(success(answer))
}

fn limit(asked: Option<usize>) -> Result<usize, Failure> {
    match asked {
        None => Ok(DEFAULT_LIMIT),
        Some(0) => Err(failure((
            ErrorCode::InvalidArgument,
            "limit: must be at least 1".to_owned(),
        ))),
        Some(n) if n > MAX_LIMIT => Err(failure((
            ErrorCode::InvalidArgument,
            format!("limit: at most {MAX_LIMIT}"),
        ))),
        Some(n) => Ok(n),
    }
}

async fn about_symbol(
    intel: &IntelService,
    kind: Kind,
    access: &Access,
    payload: &[u8],
) -> Result<bytes::Bytes, Failure> {
    let raw: SymbolRequest = parse(
        payload,
        "request with a `symbol` field",
        serde_json::json!({ "symbol": "x" }),
    )
    .map_err(failure)?;
    let workspace = access
        .workspace(raw.workspace.as_deref())
        .map_err(failure)?;
    if raw.symbol.trim().is_empty() {
        return Err(failure((
            ErrorCode::InvalidArgument,
            "symbol: must not be empty".to_owned(),
        )));
    }
    let target = Target {
        symbol: raw.symbol,
        path: raw.path,
        line: raw.line,
        repository: raw.repository,
        workspace: Some(workspace),
    };
    let min_confidence = raw.min_confidence.unwrap_or(0.35);
    if !(0.0..=1.0).contains(&min_confidence) {
        return Err(failure((
            ErrorCode::InvalidArgument,
            "minConfidence: between 0 and 1".to_owned(),
        )));
    }
    let what = kind.subject_name();
    let fail = |e| intel_failure(e, what);
    Ok(match kind {
        Kind::Callers => success(
            intel
                .callers(target, limit(raw.limit)?)
                .await
                .map_err(fail)?,
        ),
        Kind::Callees => success(
            intel
                .callees(target, limit(raw.limit)?)
                .await
                .map_err(fail)?,
        ),
        Kind::Graph => {
            let direction = match raw.direction.as_deref() {
                None | Some("both") => Direction::Both,
                Some("callers") => Direction::Callers,
                Some("callees") => Direction::Callees,
                Some(other) => {
                    return Err(failure((
                        ErrorCode::InvalidArgument,
                        format!("direction: `{other}` is not one of callers, callees, both"),
                    )));
                }
            };
            success(
                intel
                    .graph(GraphRequest {
                        target,
                        direction,
                        depth: raw.depth.unwrap_or(DEFAULT_DEPTH),
                        max_nodes: raw.max_nodes.unwrap_or(DEFAULT_MAX_NODES),
                        min_confidence,
                    })
                    .await
                    .map_err(fail)?,
            )
        }
        _ => success(
            intel
                .impact(target, raw.depth.unwrap_or(3), min_confidence)
                .await
                .map_err(fail)?,
        ),
    })
}

async fn related(
    intel: &IntelService,
    access: &Access,
    payload: &[u8],
) -> Result<bytes::Bytes, Failure> {
    let raw: RelatedRequest = parse(
        payload,
        "related request with a `path` field",
        serde_json::json!({ "path": "x" }),
    )
    .map_err(failure)?;
    let workspace = access
        .workspace(raw.workspace.as_deref())
        .map_err(failure)?;
    let direction = match raw.direction.as_deref() {
        None | Some("both") => RelatedDirection::Both,
        Some("imports") => RelatedDirection::Imports,
        Some("importedBy" | "imported_by") => RelatedDirection::ImportedBy,
        Some(other) => {
            return Err(failure((
                ErrorCode::InvalidArgument,
                format!("direction: `{other}` is not one of imports, importedBy, both"),
            )));
        }
    };
    let answer = intel
        .related(
            &raw.path,
            raw.repository.as_deref(),
            Some(&workspace),
            direction,
            limit(raw.limit)?,
        )
        .await
        .map_err(|e| intel_failure(e, "related request"))?;
    Ok(success(answer))
}
