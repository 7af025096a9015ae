//! The HTTP side: `/health` (alive), `/ready` (database, NATS and embedder reachable, or which
//! is not), `/metrics` (Prometheus text format), and `/mcp` (MCP over streamable HTTP, answered
//! by the daemon's own services; see [`crate::mcp`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::bus::Access;
use crate::config::Config;
use crate::embed::OllamaEmbedder;
use crate::health::Metrics;
use crate::mcp::{Local, McpServer};
use crate::store::Store;

/// A readiness check that takes longer than this has failed.
const CHECK_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Clone)]
pub struct HttpState {
    pub metrics: Arc<Metrics>,
    pub store: Store,
    pub nats: async_nats::Client,
    pub config: Config,
    pub active_model: String,
    /// The services `/mcp` answers from; `None` serves no `/mcp`.
    pub services: Option<crate::bus::Services>,
}

/// Binds `addr` and serves until `cancel` fires. Returns the bound address (useful with
/// port 0) once listening.
pub async fn bind(
    addr: &str,
    state: HttpState,
    cancel: CancellationToken,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let mcp = state
        .services
        .clone()
        .filter(|_| state.config.mcp.http)
        .map(|services| mcp_service(services, &state.config, cancel.clone()));
    let mut app = Router::new()
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/metrics", get(metrics))
        .with_state(state);
    if let Some(mcp) = mcp {
        app = app.merge(
            Router::new()
                .nest_service("/mcp", mcp)
                .layer(axum::middleware::from_fn(session_ended_is_no_content)),
        );
    }
    let task = tokio::spawn(async move {
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(async move { cancel.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::error!(error = %e, "the HTTP server failed");
        }
    });
    Ok((local, task))
}

/// rmcp answers a client's `DELETE` of its session (the end of a session, MCP's streamable
/// HTTP transport) with 202 Accepted, and the official Python SDK warns "Session termination
/// failed: 202" at every close: the session is gone when the answer is sent, which is 204 No
/// Content, as the SDKs expect.
async fn session_ended_is_no_content(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        return StatusCode::NO_CONTENT.into_response();
    }
    response
}

/// MCP over streamable HTTP, each tool call answered as on the plain subjects.
fn mcp_service(
    services: crate::bus::Services,
    config: &Config,
    cancel: CancellationToken,
) -> StreamableHttpService<McpServer<Local>, LocalSessionManager> {
    let local = Arc::new(Local {
        services,
        access: Access::Plain {
            policy: config.workspaces.plain_subjects,
            default: config.workspaces.default.clone(),
        },
    });
    let mut http = StreamableHttpServerConfig::default();
    http.cancellation_token = cancel;
    http = if config.mcp.allowed_hosts.iter().any(|h| h == "*") {
        http.disable_allowed_hosts()
    } else {
        http.with_allowed_hosts(config.mcp.allowed_hosts.clone())
    };
    StreamableHttpService::new(
        move || Ok(McpServer::new(Arc::clone(&local), None)),
        Arc::new(LocalSessionManager::default()),
        http,
    )
}

async fn health(State(s): State<HttpState>) -> Response {
    axum::Json(json!({
        "status": "alive",
        "instanceId": s.metrics.instance_id,
        "version": env!("CARGO_PKG_VERSION"),
        "indexState": s.metrics.index_state().as_str(),
    }))
    .into_response()
}

async fn ready(State(s): State<HttpState>) -> Response {
    let database = match tokio::time::timeout(CHECK_TIMEOUT, s.store.ping()).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {CHECK_TIMEOUT:?}")),
    };
    let nats = match s.nats.connection_state() {
        async_nats::connection::State::Connected => Ok(()),
        other => Err(format!("NATS connection is {other}")),
    };
    let embedder = if s.active_model.starts_with("ollama/") {
        match OllamaEmbedder::probe(&s.config.embed).await {
            Ok(()) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    } else {
        Ok(())
    };
    let checks = [
        ("database", database),
        ("nats", nats),
        ("embedder", embedder),
    ];
    let ok = checks.iter().all(|(_, r)| r.is_ok());
    let body: serde_json::Map<String, serde_json::Value> = checks
        .into_iter()
        .map(|(name, r)| {
            let v = match r {
                Ok(()) => json!({ "ok": true }),
                Err(e) => json!({ "ok": false, "error": e }),
            };
            (name.to_owned(), v)
        })
        .collect();
    let status = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        axum::Json(json!({ "ready": ok, "embedder": s.active_model, "checks": body })),
    )
        .into_response()
}

async fn metrics(State(s): State<HttpState>) -> Response {
    let index = match tokio::time::timeout(CHECK_TIMEOUT, s.store.index_summary()).await {
        Ok(Ok(summary)) => Some(summary),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "metrics: cannot read the index figures");
            None
        }
        Err(_) => None,
    };
    let body = s.metrics.render(index.as_ref(), s.store.connections());
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
        .into_response()
}
