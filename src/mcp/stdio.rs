//! MCP over stdio, with the compatibility layer spawn-per-call clients need.
//!
//! Three kinds of client write to stdin (see `shared/DESIGN.md`):
//! - handshake clients start with `initialize` (protocol 2025-11-25 and earlier);
//! - clients of the stateless revision (2026-07-28) put the protocol version in each request's
//!   `_meta` and skip the handshake;
//! - spawn-per-call clients write one bare `tools/call` (no handshake, no `_meta`), close stdin
//!   and wait for exactly one response.
//!
//! rmcp answers the first two and refuses the third (-32602: no metadata). So this layer sits
//! between stdio and rmcp: when the first message is a request that is neither `initialize` nor
//! `ping` and carries no protocol version, it hands rmcp a handshake of its own first and keeps
//! the handshake's answer off stdout. It also holds rmcp's input open after stdin ends until
//! every request read has been answered (rmcp gives answers in flight 5 s after end of input,
//! and a search may take longer), so each request gets its one response before the process
//! exits. Stdout carries protocol only, a line per message, flushed as written.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServerHandler;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Notify;

use super::McpServer;
use crate::bus::client::Client;
use crate::config::Config;

/// Id of the handshake this layer makes for a client that made none.
const OWN_HANDSHAKE_ID: &str = "codesearch-compat-initialize";
/// Protocol version of that handshake.
const OWN_HANDSHAKE_VERSION: &str = "2025-11-25";
/// Key of the protocol version in a stateless request's `_meta`.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// Pipe size between this layer and rmcp.
const PIPE_BYTES: usize = 1 << 16;

/// `codesearch mcp serve`: MCP on stdin/stdout, each tool call a request to the running daemon.
pub async fn serve(config: &Config, workspace: Option<&str>) -> std::io::Result<()> {
    let client = Client::new(config);
    // Answers in flight when stdin ends get the daemon's timeout, and a little more.
    let drain = client.timeout() + Duration::from_secs(5);
    let server = McpServer::new(Arc::new(client), workspace);
    serve_io(server, tokio::io::stdin(), tokio::io::stdout(), drain).await
}

/// Requests read and not yet answered, by id (as JSON text).
#[derive(Default)]
struct Pending {
    ids: Mutex<HashSet<String>>,
    answered: Notify,
}

impl Pending {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.ids.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Serves `handler` on `input`/`output` until input ends and every request read is answered
/// (or `drain` has passed since input ended).
pub async fn serve_io<H, R, W>(
    handler: H,
    input: R,
    mut output: W,
    drain: Duration,
) -> std::io::Result<()>
where
    H: ServerHandler,
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (mut to_rmcp, rmcp_input) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_output, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let service = tokio::spawn(async move {
        match rmcp::serve_server(handler, (rmcp_input, rmcp_output)).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            // Input ended before any request, or the first message was not MCP.
            Err(e) => tracing::debug!(error = %e, "MCP session ended before it started"),
        }
    });
    let pending = Arc::new(Pending::default());

    let answers = {
        let pending = Arc::clone(&pending);
        tokio::spawn(async move {
            let mut lines = BufReader::new(from_rmcp).lines();
            while let Some(line) = lines.next_line().await? {
                let message: Option<Value> = serde_json::from_str(&line).ok();
                if let Some(m) = &message
                    && m.get("method").is_none()
                    && let Some(id) = m.get("id")
                {
                    if id == OWN_HANDSHAKE_ID {
                        continue;
                    }
                    pending.lock().remove(&id.to_string());
                    pending.answered.notify_waiters();
                }
                output.write_all(line.as_bytes()).await?;
                output.write_all(b"\n").await?;
                output.flush().await?;
            }
            Ok::<_, std::io::Error>(())
        })
    };

    let mut lines = BufReader::new(input).lines();
    let mut first = true;
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let message: Option<Value> = serde_json::from_str(&line).ok();
        if let Some(m) = &message {
            if first && needs_own_handshake(m) {
                tracing::debug!("a request without a handshake: making one for the client");
                for own in own_handshake() {
                    to_rmcp.write_all(own.as_bytes()).await?;
                    to_rmcp.write_all(b"\n").await?;
                }
            }
            if m.get("method").is_some()
                && let Some(id) = m.get("id")
            {
                pending.lock().insert(id.to_string());
            }
        }
        first = false;
        if to_rmcp.write_all(line.as_bytes()).await.is_err()
            || to_rmcp.write_all(b"\n").await.is_err()
        {
            break; // rmcp has stopped
        }
    }
    // Input ended: wait for the answers to what was asked, then end rmcp's input.
    let waited = tokio::time::timeout(drain, async {
        loop {
            let notified = pending.answered.notified();
            if pending.lock().is_empty() {
                break;
            }
            notified.await;
        }
    })
    .await;
    if waited.is_err() {
        tracing::warn!(
            unanswered = pending.lock().len(),
            "input ended and requests are still unanswered after {drain:?}; stopping"
        );
    }
    drop(to_rmcp);
    let _ = service.await;
    match answers.await {
        Ok(result) => result,
        Err(e) => Err(std::io::Error::other(e)),
    }
}

/// Whether `first`, the session's first message, is a request rmcp would refuse for want of a
/// handshake: not `initialize` or `ping`, and no protocol version in its `_meta`.
fn needs_own_handshake(first: &Value) -> bool {
    let Some(method) = first.get("method").and_then(Value::as_str) else {
        return false;
    };
    if first.get("id").is_none() || method == "initialize" || method == "ping" {
        return false;
    }
    first
        .pointer("/params/_meta")
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .is_none()
}

/// The handshake made for a client that made none.
fn own_handshake() -> [String; 2] {
    [
        json!({
            "jsonrpc": "2.0",
            "id": OWN_HANDSHAKE_ID,
            "method": "initialize",
            "params": {
                "protocolVersion": OWN_HANDSHAKE_VERSION,
                "capabilities": {},
                "clientInfo": { "name": "spawn-per-call client", "version": "0" }
            }
        })
        .to_string(),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_bare_first_request_gets_a_handshake() {
        let bare = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}});
        assert!(needs_own_handshake(&bare));
        let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}});
        assert!(!needs_own_handshake(&init));
        let stateless = json!({"jsonrpc":"2.0","id":1,"method":"tools/list",
            "params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}});
        assert!(!needs_own_handshake(&stateless));
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        assert!(!needs_own_handshake(&note));
    }
}
