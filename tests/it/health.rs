//! Health as operators see it: heartbeats on NATS, `$SRV.STATS`, `/health`, `/ready`,
//! `/metrics`.

use std::time::Duration;

use codesearch::config::Config;
use codesearch::health::Metrics;
use codesearch::http::HttpState;
use codesearch::store::Store;
use futures::StreamExt;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::support::ollama::{FakeOllama, Mode};
use crate::support::{self, nats, test_db};

fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    drop(l);
    addr.to_string()
}

/// The next heartbeat of `component` that satisfies `pred`, within 15 s.
async fn heartbeat(
    sub: &mut async_nats::Subscriber,
    component: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let msg = tokio::time::timeout_at(deadline, sub.next())
            .await
            .unwrap_or_else(|_| panic!("no matching {component} heartbeat within 15s"))
            .expect("subscription open");
        let v: Value = serde_json::from_slice(&msg.payload).expect("heartbeat is JSON");
        if msg.subject.as_str() == format!("agog.infrastructure.health.{component}") {
            assert_eq!(v["component"], component);
            assert!(v["timestamp"].is_string() && v["instanceId"].is_string());
            assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
            if pred(&v) {
                return v;
            }
        }
    }
}

#[tokio::test]
async fn heartbeats_metrics_and_stats_tell_the_truth() {
    let n = nats();
    let db = test_db().await;
    let fake = FakeOllama::start(Mode::Healthy).await;
    let mut cfg: Config = support::config(&db, &n.url);
    cfg.embed.ollama_url = fake.url.clone();
    cfg.health.interval_secs = 1;
    cfg.health.http_addr = free_addr();
    let client = async_nats::connect(&n.url).await.expect("client");
    let mut sub = client
        .subscribe("agog.infrastructure.health.>")
        .await
        .expect("subscribe");

    // An empty repository: the index says `empty`.
    let empty = support::repo::<&str>(&[]);
    let (stop, stopped) = oneshot::channel::<()>();
    let daemon = tokio::spawn(codesearch::daemon::serve(
        cfg.clone(),
        support::repos(&cfg, &[empty.path()]),
        async move {
            let _ = stopped.await;
        },
    ));
    let beat = heartbeat(&mut sub, "codebase_index", |v| v["status"] == "empty").await;
    assert_eq!(beat["details"]["total_chunks"], 0);
    let beat = heartbeat(&mut sub, "ollama", |_| true).await;
    assert_eq!(beat["status"], "healthy", "{beat}");
    assert_eq!(beat["details"]["available"], true);
    assert_eq!(beat["details"]["embeddingModel"], true);
    assert!(
        beat["details"]["models"]
            .as_array()
            .is_some_and(|m| !m.is_empty())
    );
    assert!(beat.get("error").is_none());

    // Indexed (by another process, as it may be): `healthy` with the true counts.
    let repo = support::repo(&[
        ("a.py", "def alpha():\n    return 1\n"),
        ("b.ts", "export function beta() { return 2; }\n"),
    ]);
    let (store, embedder) = codesearch::daemon::open(&cfg).await.expect("open");
    codesearch::daemon::index(
        &cfg,
        store.clone(),
        embedder,
        &support::repos(&cfg, &[repo.path()]),
        &CancellationToken::new(),
        false,
    )
    .await
    .expect("index");
    let summary = store.index_summary().await.expect("summary");
    let beat = heartbeat(&mut sub, "codebase_index", |v| v["status"] == "healthy").await;
    assert_eq!(beat["details"]["total_chunks"], summary.total_chunks);
    assert_eq!(beat["details"]["total_files"], 2);
    assert!(beat["details"]["last_indexed"].is_string());
    assert_eq!(beat["details"]["state"], "ready");

    // Ollama without the model: `degraded`; Ollama gone: `down` with the error.
    fake.set_mode(Mode::ModelMissing);
    let beat = heartbeat(&mut sub, "ollama", |v| v["status"] != "healthy").await;
    assert_eq!(beat["status"], "degraded", "{beat}");
    assert_eq!(beat["details"]["embeddingModel"], false);
    drop(fake);
    let beat = heartbeat(&mut sub, "ollama", |v| v["status"] == "down").await;
    assert_eq!(beat["details"]["available"], false);
    assert!(beat["error"].as_str().is_some_and(|e| !e.is_empty()));

    // Searches, good and bad, move /metrics and $SRV.STATS.
    let base = format!("http://{}", cfg.health.http_addr);
    let http = reqwest::Client::new();
    let metrics_text = || async {
        http.get(format!("{base}/metrics"))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("body")
    };
    let before = metrics_text().await;
    for payload in [
        r#"{"query":"alpha"}"#,
        r#"{"query":"alpha"}"#,
        r#"{"limit":0}"#,
        "not json",
    ] {
        client
            .request("agog.codebase.search", payload.into())
            .await
            .expect("reply");
    }
    let after = metrics_text().await;
    let value = |text: &str, series: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(series))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    assert_eq!(
        value(&after, "codesearch_requests_total{endpoint=\"search\"}")
            - value(&before, "codesearch_requests_total{endpoint=\"search\"}"),
        4.0
    );
    assert_eq!(
        value(
            &after,
            "codesearch_request_errors_total{endpoint=\"search\",code=\"bad_request\"}"
        ),
        2.0
    );
    assert_eq!(
        value(&after, "codesearch_cache_hits_total{endpoint=\"search\"}"),
        1.0
    );
    // The index gauges are the database's figures, summed over repositories.
    let chunks: f64 = after
        .lines()
        .filter(|l| l.starts_with("codesearch_index_chunks{repository="))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert_eq!(chunks, summary.total_chunks as f64);
    // Every sample line is `name{labels} value`, every family has HELP and TYPE.
    for line in after.lines().filter(|l| !l.starts_with('#')) {
        let (series, v) = line.rsplit_once(' ').expect("sample has a value");
        assert!(v.parse::<f64>().is_ok(), "{line}");
        let name = series.split('{').next().expect("name");
        assert!(
            after.contains(&format!(
                "# TYPE {}",
                name.trim_end_matches("_bucket")
                    .trim_end_matches("_sum")
                    .trim_end_matches("_count")
            )),
            "{line}"
        );
    }

    let stats = client
        .request("$SRV.STATS.codesearch", "".into())
        .await
        .expect("stats");
    let stats: Value = serde_json::from_slice(&stats.payload).expect("json");
    let search = stats["endpoints"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["name"] == "search"))
        .expect("the search endpoint");
    assert!(search["num_requests"].as_u64().is_some_and(|n| n >= 4));
    assert_eq!(search["data"]["errors"], 2, "{stats}");
    assert_eq!(search["data"]["errors_by_code"]["bad_request"], 2);
    assert!(search["data"]["p95_ms"].as_f64().is_some_and(|p| p > 0.0));
    // The search figures are the search endpoints' alone: the others, asked nothing here,
    // carry none.
    let callers = stats["endpoints"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["name"] == "callers"))
        .expect("the callers endpoint");
    assert!(callers["data"].is_null(), "{stats}");
    assert_eq!(callers["num_requests"], 0);

    let health: Value = http
        .get(format!("{base}/health"))
        .send()
        .await
        .expect("health")
        .json()
        .await
        .expect("json");
    assert_eq!(health["status"], "alive");
    let ready = http
        .get(format!("{base}/ready"))
        .send()
        .await
        .expect("ready");
    assert_eq!(ready.status(), 200, "hash embedder, database and NATS up");

    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(20), daemon)
        .await
        .expect("stops in time")
        .expect("no panic")
        .expect("clean exit");
}

#[tokio::test]
async fn ready_says_which_component_is_down() {
    let n = nats();
    let db = test_db().await;
    let mut cfg: Config = support::config(&db, &n.url);
    // A database nobody listens on.
    cfg.database.url = "postgres://codesearch@127.0.0.1:1/none".into();
    let pool = sqlx::postgres::PgPoolOptions::new()
        .acquire_timeout(Duration::from_secs(1))
        .connect_lazy(&cfg.database.url)
        .expect("lazy pool");
    let client = async_nats::connect(&n.url).await.expect("client");
    let cancel = CancellationToken::new();
    let (addr, task) = codesearch::http::bind(
        "127.0.0.1:0",
        HttpState {
            metrics: std::sync::Arc::new(Metrics::new()),
            store: Store::from_pool(pool),
            nats: client,
            config: cfg,
            active_model: "hash/v1".into(),
            services: None,
        },
        cancel.clone(),
    )
    .await
    .expect("bind");
    let ready = reqwest::get(format!("http://{addr}/ready"))
        .await
        .expect("ready");
    assert_eq!(ready.status(), 503);
    let body: Value = ready.json().await.expect("json");
    assert_eq!(body["checks"]["database"]["ok"], false);
    assert!(body["checks"]["database"]["error"].is_string());
    assert_eq!(body["checks"]["nats"]["ok"], true);
    // /metrics still answers without the database, with what it knows.
    let metrics = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .expect("metrics");
    assert_eq!(metrics.status(), 200);
    assert!(
        metrics
            .text()
            .await
            .expect("text")
            .contains("codesearch_requests_total")
    );
    cancel.cancel();
    let _ = task.await;
}

#[tokio::test]
async fn a_refused_database_is_reported_at_once_with_its_cause() {
    let mut cfg = Config::defaults().expect("defaults");
    // Port 1 refuses; the pool alone would retry for the whole timeout, then say "timed out".
    cfg.database.url = "postgres://postgres@127.0.0.1:1/codesearch".into();
    cfg.database.connect_timeout_secs = 60;
    let started = std::time::Instant::now();
    let err = match Store::connect(&cfg.database).await {
        Ok(_) => panic!("connected to a refused port"),
        Err(e) => e.to_string(),
    };
    assert!(err.to_lowercase().contains("refused"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
}
