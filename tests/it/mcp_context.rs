//! Context pre-fetch, file context, and the MCP adapter over stdio, against a running daemon
//! (real PostgreSQL and nats-server) and the `codesearch` binary as clients spawn it.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use codesearch::text::estimate_tokens;
use serde_json::{Value, json};

use crate::nats_search::Daemon;
use crate::support;

/// A small service with functions big enough that a tight budget cannot take them all.
fn files() -> Vec<(String, String)> {
    let mut body = String::new();
    for i in 0..30 {
        body.push_str(&format!(
            "    total_{i} = sum(line.amount for line in invoice.lines if line.kind == {i})\n"
        ));
    }
    vec![
        (
            "billing/invoice.py".into(),
            format!(
                "def validate_invoice_totals(invoice):\n    \"\"\"Refuse an invoice whose total is \
                 negative or does not match its lines.\"\"\"\n{body}    if invoice.total < 0:\n        \
                 raise ValueError('negative total')\n    return True\n\n\ndef \
                 render_invoice_pdf(invoice):\n    return pdf.render(invoice)\n"
            ),
        ),
        (
            "billing/refund.py".into(),
            "def refund_invoice(invoice, amount):\n    if amount > invoice.total:\n        raise \
             ValueError('refund above total')\n    invoice.total -= amount\n"
                .into(),
        ),
        (
            "users/login.py".into(),
            "def login(user, password):\n    return check_password(user, password)\n".into(),
        ),
    ]
}

/// A daemon serving [`files`], configured by `tune`.
async fn daemon_with(tune: impl FnOnce(&mut codesearch::config::Config)) -> Daemon {
    let files = files();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    Daemon::start_with(&refs, tune).await
}

async fn daemon() -> Daemon {
    // No watcher: the file-context test edits a file and reads it before any re-index.
    daemon_with(|c| c.watch.enabled = false).await
}

const TASK: &str = "Invoices with a negative total are accepted by the billing service.\n\n\
    When an invoice is created, validate its totals and refuse a negative total with a clear \
    error. Refunds above the invoice total must be refused too.";

#[tokio::test]
async fn a_context_block_holds_the_code_the_task_needs_within_its_budget() {
    let d = daemon().await;
    let mut previous_tokens = 0;
    for budget in [100, 200, 400, 800, 4000] {
        let reply = d
            .ask(
                "agog.codebase.context",
                json!({ "task": TASK, "budgetTokens": budget }),
            )
            .await;
        assert_eq!(reply["success"], true, "{reply}");
        let block = reply["block"].as_str().expect("block");
        assert!(block.starts_with("RELEVANT CODEBASE CONTEXT\n"), "{block}");
        let tokens = reply["tokens"].as_u64().expect("tokens") as usize;
        assert_eq!(
            tokens,
            estimate_tokens(block),
            "tokens is the block's own count"
        );
        assert!(tokens <= budget, "budget {budget}: {tokens} tokens");
        assert!(tokens >= previous_tokens, "a larger budget holds no less");
        previous_tokens = tokens;
        // Every range the reply names is in the block under its path:start-end header.
        for f in reply["files"].as_array().expect("files") {
            for r in f["ranges"].as_array().expect("ranges") {
                let header = format!(
                    "### {}:{}-{}",
                    f["filePath"].as_str().expect("path"),
                    r["startLine"],
                    r["endLine"]
                );
                assert!(block.contains(&header), "{header} not in {block}");
            }
        }
    }
    // With room, the needed files are in, the invoice's validator whole (it is split in two
    // chunks: the block offers it as one definition).
    let reply = d
        .ask(
            "agog.codebase.context",
            json!({ "task": TASK, "budgetTokens": 4000 }),
        )
        .await;
    let paths: Vec<&str> = reply["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["filePath"].as_str().expect("path"))
        .collect();
    assert!(paths.contains(&"billing/invoice.py"), "{paths:?}");
    assert!(paths.contains(&"billing/refund.py"), "{paths:?}");
    let block = reply["block"].as_str().expect("block");
    assert!(block.contains("def validate_invoice_totals(invoice):"));
    assert!(block.contains("raise ValueError('negative total')"));
    // The same index and task give the same block.
    let again = d
        .ask(
            "agog.codebase.context",
            json!({ "task": TASK, "budgetTokens": 4000 }),
        )
        .await;
    assert_eq!(again["block"], reply["block"]);

    for bad in [
        json!({ "task": TASK, "budgetTokens": 10 }),
        json!({ "task": "  " }),
    ] {
        let reply = d.ask("agog.codebase.context", bad).await;
        assert_eq!(reply["error"]["code"], "invalid_argument", "{reply}");
    }
    let reply = d.ask("agog.codebase.context", json!({ "task": 7 })).await;
    assert_eq!(reply["error"]["code"], "invalid_argument", "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .expect("message")
            .starts_with("task")
    );
    d.stop().await;
}

#[tokio::test]
async fn file_context_returns_exactly_the_asked_lines_and_nothing_outside_the_root() {
    let d = daemon().await;
    let ask = |req: Value| d.ask("agog.codebase.file", req);
    let reply = ask(json!({ "path": "billing/refund.py", "startLine": 2, "endLine": 3 })).await;
    assert_eq!(reply["success"], true, "{reply}");
    assert_eq!(
        reply["content"],
        "    if amount > invoice.total:\n        raise ValueError('refund above total')\n"
    );
    assert_eq!(
        (reply["startLine"].as_u64(), reply["endLine"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(reply["totalLines"], 4);
    assert_eq!(reply["stale"], false);
    // Context lines, clamped to the file.
    let reply =
        ask(json!({ "path": "./billing/refund.py", "startLine": 1, "endLine": 1, "context": 9 }))
            .await;
    assert_eq!(
        (reply["startLine"].as_u64(), reply["endLine"].as_u64()),
        (Some(1), Some(4))
    );

    // Escapes are refused; unknown files are not found.
    for (path, code) in [
        ("../../etc/passwd", "permission_denied"),
        ("billing/../../x", "permission_denied"),
        ("/etc/passwd", "permission_denied"),
        ("billing/missing.py", "not_found"),
        ("", "invalid_argument"),
    ] {
        let reply = ask(json!({ "path": path })).await;
        assert_eq!(reply["error"]["code"], code, "{path}: {reply}");
    }
    // A symlink out of the root is refused, even if it were indexed under its own name.
    #[cfg(unix)]
    {
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("secret.py"), "SECRET = 1\n").expect("write");
        let link = d.repo.path().join("billing/refund.py");
        std::fs::remove_file(&link).expect("remove");
        std::os::unix::fs::symlink(outside.path().join("secret.py"), &link).expect("symlink");
        let reply = ask(json!({ "path": "billing/refund.py" })).await;
        assert_eq!(reply["error"]["code"], "permission_denied", "{reply}");
        assert!(!reply.to_string().contains("SECRET"));
        std::fs::remove_file(&link).expect("remove");
    }
    // An edit the index has not seen yet is served, marked stale.
    support::write(
        d.repo.path(),
        "users/login.py",
        "def login(user):\n    return True\n",
    );
    let reply = ask(json!({ "path": "users/login.py" })).await;
    assert_eq!(
        reply["content"], "def login(user):\n    return True\n",
        "{reply}"
    );
    assert_eq!(reply["stale"], true);
    d.stop().await;
}

/// Runs `codesearch mcp serve` against `nats_url` with `input` on stdin; its exit status,
/// stdout lines and stderr.
fn mcp(
    nats_url: &str,
    input: &str,
    timeout_secs: &str,
) -> (std::process::ExitStatus, Vec<String>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_codesearch"))
        .args(["--nats-url", nats_url, "mcp", "serve"])
        .env("CODESEARCH_NATS_REQUEST_TIMEOUT_SECS", timeout_secs)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start codesearch mcp serve");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    (
        out.status,
        stdout.lines().map(str::to_owned).collect(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_rpc(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            assert_eq!(v["jsonrpc"], "2.0", "{l}");
            v
        })
        .collect()
}

#[tokio::test]
async fn mcp_over_stdio_answers_handshake_stateless_and_spawn_per_call_clients() {
    let d = daemon().await;
    let url = d.nats.url.clone();
    let run = move |input: String| {
        let url = url.clone();
        tokio::task::spawn_blocking(move || mcp(&url, &input, "10"))
    };

    // Spawn-per-call: one bare tools/call, end of input, exactly one response, exit 0.
    let bare = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"codesearch_search","arguments":{"query":"validate invoice totals","limit":2}}});
    let (status, lines, stderr) = run(format!("{bare}\n")).await.expect("join");
    assert!(status.success(), "{status:?}: {stderr}");
    let replies = json_rpc(&lines);
    assert_eq!(replies.len(), 1, "{lines:?}");
    assert_eq!(replies[0]["id"], 1);
    let result = &replies[0]["result"];
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["structuredContent"]["results"][0]["filePath"],
        "billing/invoice.py"
    );
    let text_copy: Value =
        serde_json::from_str(result["content"][0]["text"].as_str().expect("text copy"))
            .expect("the text copy is the structured result");
    assert_eq!(text_copy, result["structuredContent"]);

    // Stateless revision: the version in _meta, no handshake.
    let stateless = json!({"jsonrpc":"2.0","id":"s","method":"tools/call","params":{
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{}},
        "name":"codesearch_file_context","arguments":{"path":"billing/refund.py","startLine":1,"endLine":1}}});
    let (status, lines, _) = run(format!("{stateless}\n")).await.expect("join");
    assert!(status.success());
    let replies = json_rpc(&lines);
    assert_eq!(replies.len(), 1, "{lines:?}");
    assert_eq!(
        replies[0]["result"]["structuredContent"]["content"],
        "def refund_invoice(invoice, amount):\n"
    );

    // Handshake: initialize, tools/list, a good call, a bad one, an unknown tool.
    let session = [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",
            "capabilities":{},"clientInfo":{"name":"test","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"codesearch_context",
            "arguments":{"task":TASK,"budgetTokens":300}}}),
        json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"codesearch_search",
            "arguments":{"query":"x","limt":3}}}),
        json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}),
        json!({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"codesearch_search",
            "arguments":{"query":"x","workspace":"other"}}}),
    ];
    let input: String = session.iter().map(|m| format!("{m}\n")).collect();
    let (status, lines, _) = run(input).await.expect("join");
    assert!(status.success());
    let replies = json_rpc(&lines);
    let by_id = |id: i64| {
        replies
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no reply {id}: {lines:?}"))
    };
    assert_eq!(replies.len(), 6, "{lines:?}");
    assert_eq!(by_id(1)["result"]["serverInfo"]["name"], "codesearch");
    let tools: Vec<&str> = by_id(2)["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    for name in [
        "codesearch_search",
        "codesearch_context",
        "codesearch_file_context",
        "codesearch_index_status",
        "codesearch_repo_request",
    ] {
        assert!(tools.contains(&name), "{name} missing from {tools:?}");
    }
    let context = &by_id(3)["result"]["structuredContent"];
    assert!(
        context["tokens"].as_u64().expect("tokens") <= 300,
        "{context}"
    );
    let bad = &by_id(4)["result"];
    assert_eq!(bad["isError"], true);
    assert!(
        bad["content"][0]["text"]
            .as_str()
            .expect("text")
            .contains("`limt`")
    );
    assert_eq!(by_id(5)["error"]["code"], -32602);
    // Another workspace: answered (it has no repositories), never this one's code.
    let other = &by_id(6)["result"];
    assert!(!other.to_string().contains("invoice.py"), "{other}");
    d.stop().await;
}

#[tokio::test]
async fn mcp_with_nothing_to_answer_says_what_is_down_in_time() {
    // NATS up, no daemon: `isError` naming the missing daemon, at once.
    let n = support::nats();
    let call = json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{
        "name":"codesearch_index_status","arguments":{}}})
    .to_string()
        + "\n";
    let url = n.url.clone();
    let started = Instant::now();
    let input = call.clone();
    let (status, lines, _) = tokio::task::spawn_blocking(move || mcp(&url, &input, "3"))
        .await
        .expect("join");
    assert!(status.success());
    let replies = json_rpc(&lines);
    assert_eq!(replies.len(), 1, "{lines:?}");
    assert_eq!(replies[0]["result"]["isError"], true);
    let text = replies[0]["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert!(text.contains("no codesearch daemon"), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    // NATS down: `isError` naming NATS.
    let dead = "nats://127.0.0.1:1".to_owned();
    let (status, lines, _) = tokio::task::spawn_blocking(move || mcp(&dead, &call, "3"))
        .await
        .expect("join");
    assert!(status.success());
    let replies = json_rpc(&lines);
    let text = replies[0]["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert!(text.contains("NATS is not reachable"), "{text}");
}

/// One JSON-RPC message POSTed to a streamable-HTTP MCP endpoint: the session it named (or
/// opened) and the response, read from the event stream or the JSON body.
async fn post_mcp(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    message: Value,
) -> (Option<String>, Option<Value>) {
    let mut post = http
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(message.to_string());
    if let Some(s) = session {
        post = post.header("Mcp-Session-Id", s);
    }
    let response = post.send().await.expect("POST /mcp");
    assert!(
        response.status().is_success(),
        "{}: {message}",
        response.status()
    );
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = response.text().await.expect("body");
    let reply = body
        .lines()
        .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v.get("id").is_some());
    (session, reply)
}

#[tokio::test]
async fn mcp_over_http_answers_overloaded_past_the_same_bound_as_nats() {
    let addr = format!("127.0.0.1:{}", support::free_port());
    let d = daemon_with(|c| {
        c.health.http_addr = addr.clone();
        c.nats.max_in_flight = 1;
        c.nats.max_queued = 2;
        c.search.result_cache_entries = 0;
    })
    .await;
    let url = format!("http://{addr}/mcp");
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},
        "clientInfo":{"name":"it","version":"0"}}});
    let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    // Many clients, each with its own session, call at once.
    let calls = (0..60).map(|i| {
        let (http, url, init, initialized) = (&http, &url, init.clone(), initialized.clone());
        async move {
            let (session, _) = post_mcp(http, url, None, init).await;
            let session = session.expect("a session id");
            post_mcp(http, url, Some(&session), initialized).await;
            let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
                "name":"codesearch_search",
                "arguments":{"query":format!("validate invoice totals {i}"),"limit":2}}});
            let (_, reply) = post_mcp(http, url, Some(&session), call).await;
            reply.expect("a tools/call response")
        }
    });
    let replies = tokio::time::timeout(Duration::from_secs(60), futures::future::join_all(calls))
        .await
        .expect("every call answered in time");
    let (mut ok, mut overloaded) = (0, 0);
    for reply in &replies {
        let result = &reply["result"];
        if result["isError"] == true {
            assert_eq!(
                result["structuredContent"]["error"]["code"], "overloaded",
                "{reply}"
            );
            overloaded += 1;
        } else {
            assert_eq!(result["structuredContent"]["success"], true, "{reply}");
            ok += 1;
        }
    }
    assert!(
        ok >= 3 && overloaded > 0,
        "ok {ok}, overloaded {overloaded}"
    );
    // Still serving, over both.
    assert_eq!(
        d.ask("agog.codebase.search", json!({"query": "invoice"}))
            .await["success"],
        true
    );
    d.stop().await;
}

/// Runs one of the `scripts/check-*.sh` client checks against `d`; panics with its output when it
/// fails.
async fn client_check(script: &str, d: &Daemon, http_addr: &str) {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = tokio::process::Command::new("bash")
        .arg(format!("{root}/scripts/{script}"))
        .env("NATS_URL", &d.nats.url)
        .env("CODESEARCH_BIN", env!("CARGO_BIN_EXE_codesearch"))
        .env("CODESEARCH_HTTP_ADDR", http_addr)
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap_or_else(|e| panic!("run {script}: {e}"));
    assert!(
        out.status.success(),
        "{script} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The official clients, installed from PyPI and npm as a user would: the Python MCP SDK (stdio
/// and streamable HTTP, handshake and stateless), the MCP Inspector's CLI mode, and the
/// TypeScript host-listener example with the `nats` npm client.
#[tokio::test]
async fn the_official_clients_work_over_stdio_http_and_nats() {
    let addr = format!("127.0.0.1:{}", support::free_port());
    let d = daemon_with(|c| c.health.http_addr = addr.clone()).await;
    client_check("check-mcp-clients.sh", &d, &addr).await;
    client_check("check-host-example.sh", &d, &addr).await;
    d.stop().await;
}
