//! Adapter: MCP, over stdio (`codesearch mcp serve`) and streamable HTTP (`/mcp` on the
//! daemon's HTTP port).
//!
//! Each tool is one request of the wire contract ([`tools::TOOLS`]): the stdio adapter sends it
//! to the running daemon over NATS ([`crate::bus::client`]) and so loads no model and opens no
//! database; `/mcp` answers it in-process ([`crate::bus::dispatch`]). A reply becomes the
//! tool's structured result with its JSON as the text copy; a failure (bad arguments, a
//! daemon or service down, the daemon's error reply) becomes an `isError` result that says what
//! to change; an unknown tool is a JSON-RPC error (-32602).

pub mod stdio;
pub mod tools;

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::bus::client::Client;
use crate::bus::{Access, Kind, Services, dispatch, to_bytes};

/// Where tool calls go: a request of `kind` (its wire JSON) to a daemon, and its reply's body.
pub trait Backend: Send + Sync + 'static {
    fn request<'a>(
        &'a self,
        kind: Kind,
        workspace: Option<&'a str>,
        payload: Vec<u8>,
    ) -> BoxFuture<'a, Result<Bytes, String>>;
}

impl Backend for Client {
    fn request<'a>(
        &'a self,
        kind: Kind,
        workspace: Option<&'a str>,
        payload: Vec<u8>,
    ) -> BoxFuture<'a, Result<Bytes, String>> {
        Box::pin(async move {
            Client::request(self, kind, workspace, payload)
                .await
                .map_err(|e| e.to_string())
        })
    }
}

/// The daemon's own services, for `/mcp`: requests are answered as on the plain subjects,
/// within the same admission bound ([`crate::bus::admission`]).
pub struct Local {
    pub services: Services,
    pub access: Access,
}

impl Backend for Local {
    fn request<'a>(
        &'a self,
        kind: Kind,
        _workspace: Option<&'a str>,
        payload: Vec<u8>,
    ) -> BoxFuture<'a, Result<Bytes, String>> {
        Box::pin(async move {
            // The same bound as the NATS requests: a full daemon says `overloaded` at once.
            let Some(admitted) = self.services.admission.try_admit() else {
                return Ok(to_bytes(&self.services.admission.overloaded()));
            };
            let Some(_working) = admitted.start().await else {
                return Err("the daemon is shutting down".to_owned());
            };
            Ok(dispatch(&self.services, kind, &self.access, &payload)
                .await
                .body)
        })
    }
}

/// The MCP server: the tools of [`tools::TOOLS`] over a [`Backend`]. Cheap to clone.
pub struct McpServer<B> {
    backend: Arc<B>,
    /// The only workspace served, when the adapter was started for one.
    pinned: Option<Arc<str>>,
}

impl<B> Clone for McpServer<B> {
    fn clone(&self) -> Self {
        Self {
            backend: Arc::clone(&self.backend),
            pinned: self.pinned.clone(),
        }
    }
}

impl<B: Backend> McpServer<B> {
    pub fn new(backend: Arc<B>, pinned: Option<&str>) -> Self {
        Self {
            backend,
            pinned: pinned.map(Arc::from),
        }
    }

    /// Runs one tool call: the tool's result, or a protocol error for an unknown tool.
    pub async fn call(
        &self,
        name: &str,
        args: Option<rmcp::model::JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(spec) = tools::find(name) else {
            let known: Vec<&str> = tools::TOOLS.iter().map(|t| t.name).collect();
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`; the tools are {}", known.join(", ")),
                None,
            ));
        };
        let (workspace, request) = match spec.request(args, self.pinned.as_deref()) {
            Ok(r) => r,
            Err(message) => {
                return Ok(failure(
                    "invalid_argument",
                    &message,
                    "fix the arguments and call again",
                ));
            }
        };
        let payload = request.to_string().into_bytes();
        let reply = match self
            .backend
            .request(spec.kind, workspace.as_deref(), payload)
            .await
        {
            Ok(body) => body,
            Err(message) => {
                return Ok(failure(
                    "unavailable",
                    &message,
                    "the code index cannot be reached; retry once it runs",
                ));
            }
        };
        let value: Value = match serde_json::from_slice(&reply) {
            Ok(v) => v,
            Err(e) => {
                return Ok(failure(
                    "internal",
                    &format!("the daemon's reply is not JSON: {e}"),
                    "report this; it is a bug",
                ));
            }
        };
        if value["success"] == json!(true) {
            return Ok(CallToolResult::structured(value));
        }
        let code = value["error"]["code"].as_str().unwrap_or("internal");
        let mut message = value["error"]["message"]
            .as_str()
            .unwrap_or("no message")
            .to_owned();
        // An ambiguous name: the candidates, so the agent can pick one.
        for c in value["error"]["candidates"]
            .as_array()
            .into_iter()
            .flatten()
        {
            message.push_str(&format!(
                "\n- {} {} (path {}, line {})",
                c["kind"].as_str().unwrap_or_default(),
                c["qualified"].as_str().unwrap_or_default(),
                c["path"].as_str().unwrap_or_default(),
                c["startLine"]
            ));
        }
        Ok(failure(code, &message, advice(code)))
    }
}

/// What to do about an error reply, by its code.
fn advice(code: &str) -> &'static str {
    match code {
        "bad_request" | "invalid_argument" => "fix the arguments and call again",
        "not_found" => "check the name or path (codesearch_index_status lists repositories)",
        "ambiguous" => "call again with one of the candidates' path and line, or a qualified name",
        "permission_denied" => {
            "the request reaches outside what may be read: another workspace, or a path out of \
             its repository"
        }
        "overloaded" | "index_unavailable" | "embedding_unavailable" => {
            "a service is busy or down; retry after a short pause"
        }
        _ => "retry; if it persists, the daemon's log has the request id",
    }
}

/// An `isError` result: the code and message as text, and as structured content.
fn failure(code: &str, message: &str, advice: &str) -> CallToolResult {
    let mut result = CallToolResult::structured_error(json!({
        "success": false,
        "error": { "code": code, "message": message },
    }));
    result.content = vec![ContentBlock::text(format!("{code}: {message} ({advice})"))];
    result
}

impl<B: Backend> ServerHandler for McpServer<B> {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("codesearch", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "codesearch indexes codebases. Start a task with codesearch_context (the code a \
                 task needs, in one block), then codesearch_search for specific questions or \
                 identifiers and codesearch_file_context to read around a result. \
                 codesearch_index_status tells what is indexed.",
            );
        info.server_info.title = Some("codesearch".into());
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            tools::TOOLS.iter().map(tools::ToolSpec::to_tool).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(&request.name, request.arguments)
            .await
            .map(Into::into)
    }
}
