//! The NATS contract, spoken by a plain client as an agent host would.

use std::time::Duration;

use codesearch::config::Config;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::support::{self, Nats, TestDb, nats, test_db};

/// A daemon serving one repository of `files` (or several), indexed before it starts.
pub(crate) struct Daemon {
    pub(crate) nats: Nats,
    _db: TestDb,
    pub(crate) repo: tempfile::TempDir,
    /// The other repositories of [`Daemon::start_repos`].
    _others: Vec<tempfile::TempDir>,
    pub(crate) client: async_nats::Client,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Daemon {
    pub(crate) async fn start(files: &[(&str, &str)]) -> Self {
        Self::start_with(files, |_| {}).await
    }

    pub(crate) async fn start_with(files: &[(&str, &str)], tune: impl FnOnce(&mut Config)) -> Self {
        Self::start_repos(&[files], tune).await
    }

    /// A daemon serving one repository per entry of `repos`, all in the default workspace;
    /// `repo` is the first.
    pub(crate) async fn start_repos(
        repos: &[&[(&str, &str)]],
        tune: impl FnOnce(&mut Config),
    ) -> Self {
        let n = nats();
        let db = test_db().await;
        let mut cfg: Config = support::config(&db, &n.url);
        tune(&mut cfg);
        let mut dirs: Vec<tempfile::TempDir> = repos.iter().map(|f| support::repo(f)).collect();
        let paths: Vec<&std::path::Path> = dirs.iter().map(|d| d.path()).collect();
        // Index first, so the tests know the data is there; `serve` then finds it unchanged.
        let (store, embedder) = codesearch::daemon::open(&cfg).await.expect("open");
        codesearch::daemon::index(
            &cfg,
            store,
            embedder,
            &support::repos(&cfg, &paths),
            &Default::default(),
            false,
        )
        .await
        .expect("index");
        let (stop, stopped) = oneshot::channel::<()>();
        let repos = support::repos(&cfg, &paths);
        let repo = dirs.remove(0);
        let task = tokio::spawn(codesearch::daemon::serve(cfg, repos, async move {
            let _ = stopped.await;
        }));
        let client = async_nats::connect(&n.url).await.expect("client");
        let d = Self {
            nats: n,
            _db: db,
            repo,
            _others: dirs,
            client,
            stop: Some(stop),
            task,
        };
        // Ready when it answers.
        for _ in 0..100 {
            if let Ok(Ok(_)) = tokio::time::timeout(
                Duration::from_millis(200),
                d.client
                    .request("agog.codebase.search", "{\"query\":\"ping\"}".into()),
            )
            .await
            {
                return d;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the daemon never answered");
    }

    async fn raw(&self, payload: &[u8]) -> Value {
        let reply = tokio::time::timeout(
            Duration::from_secs(10),
            self.client
                .request("agog.codebase.search", payload.to_vec().into()),
        )
        .await
        .expect("reply in time")
        .expect("reply");
        serde_json::from_slice(&reply.payload).expect("reply is JSON")
    }

    async fn search(&self, request: Value) -> Value {
        self.raw(request.to_string().as_bytes()).await
    }

    /// One request on `subject`, its reply as JSON.
    pub(crate) async fn ask(&self, subject: &str, request: Value) -> Value {
        let reply = tokio::time::timeout(
            Duration::from_secs(10),
            self.client
                .request(subject.to_owned(), request.to_string().into()),
        )
        .await
        .expect("reply in time")
        .expect("reply");
        serde_json::from_slice(&reply.payload).expect("reply is JSON")
    }

    pub(crate) async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(Duration::from_secs(15), &mut self.task)
            .await
            .expect("stops in time")
            .expect("no panic")
            .expect("clean exit");
    }
}

const FILES: &[(&str, &str)] = &[
    (
        "backend/src/invoice/invoice.service.ts",
        "export class InvoiceService {\n  validateInvoiceTotals(lines: number[], total: number): boolean {\n    return lines.reduce((a, b) => a + b, 0) === total;\n  }\n}\n",
    ),
    (
        "backend/src/user/user.resolver.ts",
        "export class UserResolver {\n  findUserByEmail(email: string) {\n    return this.users.byEmail(email);\n  }\n}\n",
    ),
    (
        "frontend/src/cart.tsx",
        "export function CartTotals({ items }) {\n  return <div>{items.length} invoice totals</div>;\n}\n",
    ),
    (
        "scripts/report.py",
        "def monthly_invoice_report(invoices):\n    return sum(i.total for i in invoices)\n",
    ),
];

#[tokio::test]
async fn answers_the_design_request_with_the_design_response() {
    let d = Daemon::start(FILES).await;
    let reply = d
        .search(json!({
            "query": "validate invoice totals",
            "fileTypes": ["ts", "tsx"],
            "modules": ["backend"],
            "limit": 5,
            "minSimilarity": 0.0
        }))
        .await;
    assert_eq!(reply["success"], true, "{reply}");
    let results = reply["results"].as_array().expect("results");
    assert!(!results.is_empty());
    assert_eq!(reply["totalFound"], results.len());
    assert!(reply["queryEmbeddingTime"].is_u64());
    assert!(reply["searchTime"].is_u64());
    let top = &results[0];
    assert_eq!(top["filePath"], "backend/src/invoice/invoice.service.ts");
    assert!(top["chunkIndex"].is_i64());
    assert!(
        top["content"]
            .as_str()
            .expect("content")
            .contains("validateInvoiceTotals")
    );
    let sim = top["similarity"].as_f64().expect("similarity");
    assert!((0.0..=1.0).contains(&sim));
    assert_eq!(top["module"], "backend");
    assert_eq!(top["componentType"], "service");
    assert_eq!(top["startLine"], 1);
    // Filters hold for every result.
    for r in results {
        assert_eq!(r["module"], "backend");
        assert!(r["filePath"].as_str().expect("path").ends_with(".ts"));
    }
    d.stop().await;
}

#[tokio::test]
async fn filters_limits_and_thresholds_hold() {
    let d = Daemon::start(FILES).await;
    let py = d
        .search(json!({"query": "invoice", "fileTypes": ["py"]}))
        .await;
    let py = py["results"].as_array().expect("results").clone();
    assert_eq!(py.len(), 1);
    assert_eq!(py[0]["filePath"], "scripts/report.py");

    let fe = d
        .search(json!({"query": "invoice", "modules": ["frontend"]}))
        .await;
    assert!(
        fe["results"]
            .as_array()
            .expect("results")
            .iter()
            .all(|r| r["module"] == "frontend")
    );

    let one = d.search(json!({"query": "invoice", "limit": 1})).await;
    assert_eq!(one["results"].as_array().expect("results").len(), 1);

    let all = d.search(json!({"query": "invoice"})).await;
    assert_eq!(
        all["results"].as_array().expect("results").len(),
        4,
        "default limit 5, 4 chunks"
    );

    let strict = d
        .search(json!({"query": "invoice", "minSimilarity": 0.999}))
        .await;
    assert_eq!(strict["success"], true);
    assert_eq!(strict["totalFound"], 0);
    d.stop().await;
}

#[tokio::test]
async fn malformed_requests_get_errors_and_the_responder_keeps_answering() {
    let d = Daemon::start(FILES).await;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty payload", b"".to_vec()),
        ("not json", b"find the invoice code".to_vec()),
        ("truncated json", b"{\"query\": \"x\"".to_vec()),
        ("json array", b"[\"query\"]".to_vec()),
        ("json string", b"\"query\"".to_vec()),
        ("json null", b"null".to_vec()),
        ("missing query", br#"{"limit": 5}"#.to_vec()),
        ("query is a number", br#"{"query": 42}"#.to_vec()),
        ("query is null", br#"{"query": null}"#.to_vec()),
        ("empty query", br#"{"query": ""}"#.to_vec()),
        ("blank query", br#"{"query": "   \n\t"}"#.to_vec()),
        ("limit zero", br#"{"query": "x", "limit": 0}"#.to_vec()),
        ("negative limit", br#"{"query": "x", "limit": -3}"#.to_vec()),
        (
            "absurd limit",
            br#"{"query": "x", "limit": 1000000000}"#.to_vec(),
        ),
        (
            "limit is a string",
            br#"{"query": "x", "limit": "5"}"#.to_vec(),
        ),
        (
            "limit beyond i64",
            br#"{"query": "x", "limit": 1e300}"#.to_vec(),
        ),
        (
            "fileTypes is a string",
            br#"{"query": "x", "fileTypes": "ts"}"#.to_vec(),
        ),
        (
            "modules holds a number",
            br#"{"query": "x", "modules": [1]}"#.to_vec(),
        ),
        (
            "minSimilarity out of range",
            br#"{"query": "x", "minSimilarity": 7}"#.to_vec(),
        ),
        (
            "oversized request",
            format!("{{\"query\": \"{}\"}}", "a".repeat(70_000)).into_bytes(),
        ),
        ("invalid utf-8", b"{\"query\": \"\xff\xfe\"}".to_vec()),
        (
            "query too long",
            format!("{{\"query\": \"{}\"}}", "word ".repeat(2000)).into_bytes(),
        ),
    ];
    assert!(cases.len() >= 20);
    for (name, payload) in &cases {
        let reply = d.raw(payload).await;
        assert_eq!(reply["success"], false, "{name}: {reply}");
        let code = reply["error"]["code"].as_str().unwrap_or_default();
        assert!(
            code == "bad_request" || code == "invalid_argument",
            "{name}: code {code:?}"
        );
        assert!(
            !reply["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .is_empty(),
            "{name}: no message"
        );
    }
    // A malformed field is `invalid_argument` naming the field, never `internal`: wrong
    // types, NUL characters (PostgreSQL cannot compare them), bad globs.
    let fields = [
        (
            "minSimilarity",
            json!({"query": "x", "minSimilarity": "high"}),
        ),
        ("limit", json!({"query": "x", "limit": "5"})),
        ("fileTypes", json!({"query": "x", "fileTypes": "ts"})),
        ("modules", json!({"query": "x", "modules": [1]})),
        ("query", json!({"query": 5})),
        ("query", json!({"query": "a\0b"})),
        ("fileTypes", json!({"query": "x", "fileTypes": ["t\0s"]})),
        ("modules", json!({"query": "x", "modules": ["a\0"]})),
        (
            "componentTypes",
            json!({"query": "x", "componentTypes": ["\0"]}),
        ),
        ("languages", json!({"query": "x", "languages": ["ru\0st"]})),
        ("repository", json!({"query": "x", "repository": "a\0"})),
        ("pathGlob", json!({"query": "x", "pathGlob": "src/\0"})),
        ("pathGlob", json!({"query": "x", "pathGlob": "src/[a"})),
        ("workspace", json!({"query": "x", "workspace": "a.b"})),
        ("mode", json!({"query": "x", "mode": "fuzzy"})),
        ("maxPerFile", json!({"query": "x", "maxPerFile": 0})),
        ("offset", json!({"query": "x", "offset": -1})),
    ];
    for (field, request) in fields {
        let reply = d.search(request.clone()).await;
        assert_eq!(
            reply["error"]["code"], "invalid_argument",
            "{request}: {reply}"
        );
        let message = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(field), "{request}: {message}");
    }
    // Still serving.
    let ok = d.search(json!({"query": "invoice totals"})).await;
    assert_eq!(ok["success"], true);
    // The error is in the service-API headers too.
    let reply = d
        .client
        .request("agog.codebase.search", "nope".into())
        .await
        .expect("reply");
    let headers = reply.headers.expect("headers");
    assert_eq!(
        headers.get("Nats-Service-Error").map(|v| v.as_str()),
        Some("bad_request")
    );
    assert_eq!(
        headers.get("Nats-Service-Error-Code").map(|v| v.as_str()),
        Some("400")
    );
    d.stop().await;
}

#[tokio::test]
async fn service_discovery_answers() {
    let d = Daemon::start(FILES).await;
    let ping = d
        .client
        .request("$SRV.PING.codesearch", "".into())
        .await
        .expect("ping");
    let ping: Value = serde_json::from_slice(&ping.payload).expect("json");
    assert_eq!(ping["name"], "codesearch");
    let info = d
        .client
        .request("$SRV.INFO.codesearch", "".into())
        .await
        .expect("info");
    let info: Value = serde_json::from_slice(&info.payload).expect("json");
    let subjects: Vec<&str> = info["endpoints"]
        .as_array()
        .expect("endpoints")
        .iter()
        .filter_map(|e| e["subject"].as_str())
        .collect();
    for subject in [
        "agog.codebase.search",
        "agog.codebase.repo.request",
        "agog.workspace.*.codebase.search",
        "agog.workspace.*.codebase.repo.request",
    ] {
        assert!(subjects.contains(&subject), "{subject}: {info}");
    }
    assert!(
        info["endpoints"]
            .as_array()
            .is_some_and(|e| e.iter().all(|e| e["queue_group"] == "codesearch"))
    );
    d.stop().await;
}

#[tokio::test]
async fn requests_wait_the_configured_timeout_not_the_clients_default() {
    let nats = support::nats();
    let db = support::test_db().await;
    let mut cfg = support::config(&db, &nats.url);
    cfg.nats.request_timeout_secs = 1;
    let responder = async_nats::connect(&nats.url).await.expect("responder");
    let mut sub = responder
        .subscribe("agog.codebase.search")
        .await
        .expect("subscribe");
    tokio::spawn(async move {
        while let Some(m) = futures::StreamExt::next(&mut sub).await {
            tokio::time::sleep(Duration::from_secs(2)).await;
            if let Some(reply) = m.reply {
                let _ = responder.publish(reply, "{}".into()).await;
            }
        }
    });
    let client = codesearch::bus::connect(&cfg.nats).await.expect("client");
    let started = std::time::Instant::now();
    let reply = client.request("agog.codebase.search", "{}".into()).await;
    assert!(reply.is_err(), "answered after 2 s despite a 1 s timeout");
    assert!(
        started.elapsed() < Duration::from_millis(1900),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn search_output_into_a_closed_pipe_ends_quietly() {
    let d = Daemon::start(FILES).await;
    // Wait for the daemon to answer, then run the CLI with its reader already gone, as
    // `codesearch search ... | head -1` leaves it.
    assert_eq!(d.search(json!({"query": "invoice"})).await["success"], true);
    let url = d.nats.url.clone();
    let status = tokio::task::spawn_blocking(move || {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_codesearch"))
            .args([
                "--nats-url",
                &url,
                "search",
                "invoice totals",
                "--limit",
                "20",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run codesearch");
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait");
        (
            out.status,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .await
    .expect("join");
    assert!(status.0.success(), "{:?}: {}", status.0, status.1);
    assert!(!status.1.contains("panicked"), "{}", status.1);
    d.stop().await;
}

#[tokio::test]
async fn past_its_bound_a_daemon_answers_overloaded_at_once() {
    let d = Daemon::start_with(FILES, |cfg| {
        cfg.nats.max_in_flight = 1;
        cfg.nats.max_queued = 2;
        cfg.search.result_cache_entries = 0;
    })
    .await;
    assert_eq!(d.search(json!({"query": "invoice"})).await["success"], true);
    let requests = (0..300).map(|i| {
        let client = d.client.clone();
        async move {
            let body = json!({"query": format!("invoice totals {i}")}).to_string();
            tokio::time::timeout(
                Duration::from_secs(10),
                client.request("agog.codebase.search", body.into()),
            )
            .await
        }
    });
    let replies = futures::future::join_all(requests).await;
    let (mut ok, mut overloaded) = (0, 0);
    for reply in replies {
        let reply = reply.expect("answered within its timeout").expect("reply");
        let v: Value = serde_json::from_slice(&reply.payload).expect("json");
        if v["success"] == true {
            ok += 1;
        } else {
            assert_eq!(v["error"]["code"], "overloaded", "{v}");
            overloaded += 1;
        }
    }
    assert!(
        ok >= 3 && overloaded > 0,
        "ok {ok}, overloaded {overloaded}"
    );
    // Still serving.
    assert_eq!(d.search(json!({"query": "invoice"})).await["success"], true);
    d.stop().await;
}

#[tokio::test]
async fn a_chunk_of_merged_small_definitions_names_every_one() {
    let d = Daemon::start(&[
        (
            "money.py",
            "def add_cents(a, b):\n    return a + b\n\n\
             def sub_cents(a, b):\n    return a - b\n\n\
             def mul_cents(a, k):\n    return a * k\n",
        ),
        FILES[3],
    ])
    .await;
    let reply = d
        .search(json!({ "query": "cents", "mode": "lexical" }))
        .await;
    assert_eq!(reply["success"], true, "{reply}");
    let top = &reply["results"][0];
    assert_eq!(top["filePath"], "money.py", "{reply}");
    // One chunk holds the three: `symbol` is the first, `symbols` names them all.
    assert_eq!(top["symbol"], "add_cents", "{top}");
    assert_eq!(
        top["symbols"],
        json!(["add_cents", "sub_cents", "mul_cents"]),
        "{top}"
    );
    // A chunk of one definition has no `symbols`.
    let reply = d
        .search(json!({ "query": "monthly invoice report", "mode": "lexical" }))
        .await;
    let top = &reply["results"][0];
    assert_eq!(top["symbol"], "monthly_invoice_report", "{top}");
    assert!(top.get("symbols").is_none(), "{top}");
    d.stop().await;
}
