//! Search throughput with 1, 2 and 3 daemons on one index: requests per second at p95 ≤ 50 ms,
//! over NATS, as agent hosts send them. Run with `scripts/bench.sh fleet` (it starts the
//! services); directly: `DATABASE_URL=... NATS_URL=... cargo bench --bench fleet`.
//!
//! Each daemon is a `codesearch serve` process (the bench's own build of the binary) on the
//! same database and NATS, all serving three crates of the cargo registry; one of them indexes
//! (its lease), the others serve. The embedder is the one configured (`CODESEARCH_EMBEDDER`,
//! default the local model when `CODESEARCH_MODEL_DIR` has it): a query's embedding is part of
//! a search's cost. Queries are 400 distinct phrases, and the daemons' result and query-vector
//! caches are off, so every search embeds its query and runs the retrievers.
//! For each daemon count, closed-loop clients (1, 2, 4, 8, 16, 32) each send one search at a
//! time for 8 seconds; the figure is the best throughput whose p95 stays within 50 ms.
//!
//! `BENCH_CRATES` (comma-separated crate-name prefixes, default `tokio-util-,axum-0,serde_json-`)
//! chooses the corpus, `BENCH_DAEMONS` (default 3) the most daemons, `BENCH_CLIENTS`
//! (comma-separated, default `1,2,4,8,16,32`) the client counts: `BENCH_DAEMONS=1
//! BENCH_CLIENTS=1` is the end-to-end latency of a single search. `BENCH_DAEMON_LOG=FILE`
//! appends the daemons' logs (stderr) to FILE instead of discarding them.
//!
//! `BENCH_BURST=N` replaces the closed-loop rounds with an overload burst: N searches with
//! distinct queries sent at once, each waiting up to 15 s. It prints how many were answered,
//! how many got `overloaded` (and how fast), how many got nothing, and the admitted searches'
//! latencies: what `nats.max_in_flight` / `nats.max_queued` keep under a flood.

mod common;

use std::time::{Duration, Instant};

use common::{nats_search, percentile, registry_crate, search_queries};

const ROUND: Duration = Duration::from_secs(8);
const P95_TARGET_MS: f64 = 50.0;

fn spawn_daemon(roots: &[std::path::PathBuf]) -> tokio::process::Child {
    // `BENCH_CODESEARCH`: another build of the binary, to compare two versions.
    let program = std::env::var("BENCH_CODESEARCH")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_codesearch").to_owned());
    tokio::process::Command::new(program)
        .arg("serve")
        .args(roots)
        .env("CODESEARCH_HTTP_ADDR", "127.0.0.1:0")
        .env("CODESEARCH_WATCH", "false")
        // Every search does the whole work: query embedding and retrieval.
        .env("CODESEARCH_SEARCH_RESULT_CACHE_ENTRIES", "0")
        .env("CODESEARCH_SEARCH_QUERY_CACHE_ENTRIES", "0")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(daemon_log())
        .kill_on_drop(true)
        .spawn()
        .expect("start codesearch serve")
}

/// Where the daemons' logs go: `BENCH_DAEMON_LOG`, appended to, or nowhere.
fn daemon_log() -> std::process::Stdio {
    let Ok(path) = std::env::var("BENCH_DAEMON_LOG") else {
        return std::process::Stdio::null();
    };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("BENCH_DAEMON_LOG {path}: {e}"))
        .into()
}

async fn search(client: &async_nats::Client, query: &str) -> Option<Duration> {
    let t = Instant::now();
    let body = nats_search(
        client,
        &serde_json::json!({ "query": query }),
        Duration::from_secs(10),
    )
    .await?;
    (body["success"] == true).then(|| t.elapsed())
}

/// One round: `clients` closed-loop searchers for [`ROUND`]; (requests per second, p50, p95,
/// failures).
async fn round(
    client: &async_nats::Client,
    clients: usize,
    offset: usize,
) -> (f64, f64, f64, usize) {
    let qs = std::sync::Arc::new(search_queries());
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (client, qs) = (client.clone(), qs.clone());
            tokio::spawn(async move {
                let (mut times, mut failed, mut i) = (Vec::new(), 0, offset + c * 37);
                while started.elapsed() < ROUND {
                    match search(&client, &qs[i % qs.len()]).await {
                        Some(t) => times.push(t.as_secs_f64() * 1e3),
                        None => failed += 1,
                    }
                    i += clients;
                }
                (times, failed)
            })
        })
        .collect();
    let (mut all, mut failed) = (Vec::new(), 0);
    for t in tasks {
        let (times, f) = t.await.expect("client task");
        all.extend(times);
        failed += f;
    }
    let secs = started.elapsed().as_secs_f64();
    all.sort_by(f64::total_cmp);
    (
        all.len() as f64 / secs,
        percentile(&all, 0.50),
        percentile(&all, 0.95),
        failed,
    )
}

/// How long a burst's request waits for its answer.
const BURST_TIMEOUT: Duration = Duration::from_secs(15);

/// `n` searches with distinct queries, all sent at once; prints what came back.
async fn burst(nats_url: &str, n: usize) {
    // A client of its own: the default request timeout (10 s) would cut the wait short.
    let client = async_nats::ConnectOptions::new()
        .request_timeout(Some(BURST_TIMEOUT))
        .connect(nats_url)
        .await
        .expect("NATS");
    let qs = search_queries();
    let started = Instant::now();
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let client = client.clone();
            // Distinct queries: the phrase and a number, so no two are the same search.
            let query = format!("{} {i}", qs[i % qs.len()]);
            tokio::spawn(async move {
                let t = Instant::now();
                let body = nats_search(
                    &client,
                    &serde_json::json!({ "query": query }),
                    BURST_TIMEOUT,
                )
                .await;
                let ms = t.elapsed().as_secs_f64() * 1e3;
                let code = match &body {
                    None => "no answer".to_owned(),
                    Some(b) if b["success"] == true => "ok".to_owned(),
                    Some(b) => b["error"]["code"].as_str().unwrap_or("?").to_owned(),
                };
                (code, ms)
            })
        })
        .collect();
    let mut by_code: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for t in tasks {
        let (code, ms) = t.await.expect("burst task");
        by_code.entry(code).or_default().push(ms);
    }
    let secs = started.elapsed().as_secs_f64();
    println!("burst of {n} searches sent at once, answered in {secs:.1} s:");
    println!("| answer | count | p50 ms | p95 ms | max ms |");
    println!("|---|---|---|---|---|");
    for (code, mut times) in by_code {
        times.sort_by(f64::total_cmp);
        println!(
            "| {code} | {} | {:.0} | {:.0} | {:.0} |",
            times.len(),
            percentile(&times, 0.50),
            percentile(&times, 0.95),
            times.last().copied().unwrap_or(0.0)
        );
    }
}

#[tokio::main]
async fn main() {
    let crates =
        std::env::var("BENCH_CRATES").unwrap_or_else(|_| "tokio-util-,axum-0,serde_json-".into());
    let roots: Vec<_> = crates
        .split(',')
        .filter_map(|p| registry_crate(p.trim()))
        .collect();
    let most: usize = std::env::var("BENCH_DAEMONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    assert!(
        !roots.is_empty(),
        "no crates in the cargo registry to serve"
    );
    let nats_url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into());
    let client = async_nats::connect(&nats_url).await.expect("NATS");
    let db_url = std::env::var("DATABASE_URL").expect("DATABASE_URL");
    let pool = sqlx::PgPool::connect(&db_url).await.expect("database");
    println!(
        "corpus: {}",
        roots
            .iter()
            .filter_map(|r| r.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let client_counts: Vec<usize> = std::env::var("BENCH_CLIENTS")
        .unwrap_or_else(|_| "1,2,4,8,16,32".into())
        .split(',')
        .map(|n| {
            n.trim()
                .parse()
                .expect("BENCH_CLIENTS: comma-separated numbers")
        })
        .collect();
    let mut daemons = Vec::new();
    let mut offset = 0;
    for count in 1..=most {
        daemons.push(spawn_daemon(&roots));
        // Ready when every daemon answers $SRV.PING and a search finds something.
        let deadline = Instant::now() + Duration::from_secs(600);
        loop {
            let mut pings = 0;
            let inbox = client.new_inbox();
            if let Ok(mut sub) = client.subscribe(inbox.clone()).await {
                let _ = client
                    .publish_with_reply("$SRV.PING.codesearch", inbox, "".into())
                    .await;
                while let Ok(Some(_)) = tokio::time::timeout(
                    Duration::from_millis(300),
                    futures::StreamExt::next(&mut sub),
                )
                .await
                {
                    pings += 1;
                }
            }
            // And the corpus fully indexed: a pass still embedding would take the CPU.
            let ready: i64 =
                sqlx::query_scalar("SELECT count(*) FROM repositories WHERE state = 'ready'")
                    .fetch_one(&pool)
                    .await
                    .unwrap_or(0);
            if pings >= count
                && ready >= roots.len() as i64
                && search(&client, "parse the request").await.is_some()
            {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{count} daemons never became ready"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        if count == 1 {
            let chunks: i64 = sqlx::query_scalar("SELECT count(*) FROM codebase_index")
                .fetch_one(&pool)
                .await
                .unwrap_or(0);
            println!("index: {chunks} chunks");
        }
        if let Some(n) = std::env::var("BENCH_BURST")
            .ok()
            .and_then(|n| n.parse().ok())
        {
            println!("\n{count} daemon(s):");
            burst(&nats_url, n).await;
            continue;
        }
        let mut best: Option<(usize, f64, f64, f64)> = None;
        println!("\n{count} daemon(s):");
        println!("| clients | req/s | p50 ms | p95 ms | failed |");
        println!("|---|---|---|---|---|");
        for &clients in &client_counts {
            let (rps, p50, p95, failed) = round(&client, clients, offset).await;
            offset += 1000;
            println!("| {clients} | {rps:.0} | {p50:.1} | {p95:.1} | {failed} |");
            if p95 <= P95_TARGET_MS && best.is_none_or(|b| rps > b.1) {
                best = Some((clients, rps, p50, p95));
            }
            if p95 > 2.0 * P95_TARGET_MS {
                break;
            }
        }
        match best {
            Some((c, rps, _, p95)) => {
                println!("{count} daemon(s): {rps:.0} searches/s at p95 {p95:.1} ms ({c} clients)")
            }
            None => println!("{count} daemon(s): no load kept p95 within {P95_TARGET_MS} ms"),
        }
    }
}
