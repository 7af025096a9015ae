//! Context pre-fetch and MCP spawn-per-call, on real code (`scripts/bench.sh context`).
//!
//! 1. Indexes the corpora of `benches/context/tasks.toml` (crates of the local cargo registry,
//!    each its own repository) with the configured embedder, in the database of
//!    `DATABASE_URL` (kept between runs: only changed files are embedded again).
//! 2. Quality: for each labelled task, the share of the files it needs whose code is in a
//!    4,000-token block, for the block as served (hybrid) and for the same budget filled from a
//!    plain keyword search (BM25 only, the same packing).
//! 3. Time to build a 4,000-token block, p50 and p95, uncached (the task's first block) and from
//!    the result cache (the same task again).
//! 4. Spawn-per-call: the same searches over NATS and through a `codesearch mcp serve` process
//!    started for each call (one bare `tools/call`, then end of input), p50 and p95.
//!
//! `BENCH_CONTEXT_SKIP_INDEX=1` skips 1, 2 and 4 and times blocks over whatever the database
//! holds, searching the whole default workspace: with the scale benchmark's database
//! (`codesearch_scale_100000`, hash embedder), the time at 100k chunks.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use codesearch::bus::{Services, wire};
use codesearch::config::Config;
use codesearch::context::{ContextRequest, ContextService};
use codesearch::daemon;
use codesearch::health::Metrics;
use codesearch::pipeline::Indexer;
use codesearch::roots::Roots;
use codesearch::search::SearchService;
use common::{percentile, registry_crate};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

#[derive(Deserialize)]
struct Tasks {
    corpus: Vec<Corpus>,
    task: Vec<Task>,
}

#[derive(Deserialize)]
struct Corpus {
    name: String,
    dir: String,
}

#[derive(Deserialize)]
struct Task {
    corpus: String,
    task: String,
    needed: Vec<String>,
}

const BUDGET: i64 = 4000;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn p50_p95(mut v: Vec<f64>) -> String {
    v.sort_by(f64::total_cmp);
    format!(
        "p50 {:>7.1} ms  p95 {:>7.1} ms  (n={})",
        percentile(&v, 0.5),
        percentile(&v, 0.95),
        v.len()
    )
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let tasks: Tasks = toml::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/benches/context/tasks.toml"
        ))
        .context("reading benches/context/tasks.toml")?,
    )?;
    let skip_index = std::env::var("BENCH_CONTEXT_SKIP_INDEX").is_ok_and(|v| v == "1");
    let cfg = Config::from_env(None, &[])?;
    let (store, embedder) = daemon::open(&cfg).await?;
    println!("embedder: {}", embedder.model_id());

    let mut present: Vec<&str> = Vec::new();
    if !skip_index {
        for c in &tasks.corpus {
            let Some(path) = registry_crate(&c.dir) else {
                println!(
                    "corpus {}: {} not in the cargo registry, skipped",
                    c.name, c.dir
                );
                continue;
            };
            let mut icfg = cfg.index.clone();
            icfg.repository = c.name.clone();
            let indexer = Indexer::new(store.clone(), Arc::clone(&embedder), icfg)?;
            let started = Instant::now();
            let r = indexer
                .index_root(&path, None, &CancellationToken::new())
                .await?;
            println!(
                "corpus {}: {} files indexed, {} unchanged, {} chunks embedded, {:.0}s",
                c.name,
                r.indexed,
                r.unchanged,
                r.embedded,
                started.elapsed().as_secs_f64()
            );
            present.push(&c.name);
        }
        store.ensure_ann_index().await?;
        store.vacuum_analyze().await?;
    }
    let summary = store.index_summary().await?;
    println!(
        "index: {} chunks, {} files, {} repositories",
        summary.total_chunks,
        summary.total_files,
        summary.repositories.len()
    );

    let search = SearchService::new(store.clone(), Arc::clone(&embedder), cfg.search.clone())
        .with_default_workspace(&cfg.workspaces.default);
    let context = ContextService::new(search.clone(), cfg.context.clone());
    let request = |t: &Task, mode: &str| ContextRequest {
        task: t.task.clone(),
        budget_tokens: Some(BUDGET),
        repository: (!skip_index).then(|| t.corpus.clone()),
        mode: Some(mode.to_owned()),
        ..ContextRequest::default()
    };
    let runnable: Vec<&Task> = tasks
        .task
        .iter()
        .filter(|t| skip_index || present.contains(&t.corpus.as_str()))
        .collect();

    // Time to build a block: first (uncached), then again (result cache).
    let (mut first, mut again, mut searching) = (Vec::new(), Vec::new(), Vec::new());
    for t in &runnable {
        let started = Instant::now();
        let block = context.build(request(t, "hybrid")).await?;
        first.push(ms(started.elapsed()));
        searching.push((block.search_ms + block.query_embedding_ms) as f64);
        assert!(block.tokens <= BUDGET as usize);
        let started = Instant::now();
        context.build(request(t, "hybrid")).await?;
        again.push(ms(started.elapsed()));
    }
    println!("\n4,000-token block, {} tasks:", runnable.len());
    println!("  uncached  {}", p50_p95(first));
    println!("  cached    {}", p50_p95(again));
    println!(
        "  of which the search (embedding included), uncached: {}",
        p50_p95(searching)
    );
    if skip_index {
        return Ok(());
    }

    // Quality: the share of needed files in the block, hybrid against keyword-only.
    println!("\nneeded files in a {BUDGET}-token block (hybrid | keyword only):");
    let (mut hybrid_share, mut keyword_share) = (0.0, 0.0);
    let (mut hybrid_all, mut keyword_all) = (0, 0);
    for t in &runnable {
        let mut shares = [0.0; 2];
        for (i, mode) in ["hybrid", "lexical"].into_iter().enumerate() {
            let block = context.build(request(t, mode)).await?;
            let found = t
                .needed
                .iter()
                .filter(|n| block.files.iter().any(|f| &f.file_path == *n))
                .count();
            shares[i] = found as f64 / t.needed.len() as f64;
        }
        hybrid_share += shares[0];
        keyword_share += shares[1];
        hybrid_all += usize::from(shares[0] == 1.0);
        keyword_all += usize::from(shares[1] == 1.0);
        let title = t.task.lines().next().unwrap_or_default();
        println!(
            "  {:>4.2} | {:>4.2}  {:<10} {}",
            shares[0],
            shares[1],
            t.corpus,
            title.chars().take(70).collect::<String>()
        );
    }
    let n = runnable.len().max(1) as f64;
    println!(
        "  mean share: hybrid {:.3}, keyword only {:.3}; tasks with every needed file: {}/{} and {}/{}",
        hybrid_share / n,
        keyword_share / n,
        hybrid_all,
        runnable.len(),
        keyword_all,
        runnable.len()
    );

    // Spawn-per-call against a daemon's bus, beside the same search over NATS.
    let client = codesearch::bus::connect(&cfg.nats).await?;
    let cancel = CancellationToken::new();
    let metrics = Arc::new(Metrics::new());
    let indexer = Indexer::new(store.clone(), Arc::clone(&embedder), cfg.index.clone())?;
    let roots = Roots::new(indexer, cfg.clone(), Arc::clone(&metrics), cancel.clone());
    let services = Services::new(search, roots, &cfg);
    let bus = tokio::spawn(codesearch::bus::serve(
        client.clone(),
        services,
        cfg.clone(),
        metrics,
        cancel.clone(),
    ));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let subject = cfg.nats.search_subject();
    let (mut uncached, mut cached, mut spawned) = (Vec::new(), Vec::new(), Vec::new());
    for (i, t) in runnable.iter().enumerate() {
        for words in [6, 10, 14] {
            let query: String = t
                .task
                .split_whitespace()
                .take(words)
                .collect::<Vec<_>>()
                .join(" ");
            let payload = serde_json::to_vec(&wire::SearchRequest {
                query: query.clone(),
                limit: Some(5),
                ..Default::default()
            })?;
            let started = Instant::now();
            client
                .request(subject.clone(), payload.clone().into())
                .await?;
            uncached.push(ms(started.elapsed()));
            let started = Instant::now();
            client.request(subject.clone(), payload.into()).await?;
            cached.push(ms(started.elapsed()));
            let call = serde_json::json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "codesearch_search", "arguments": {"query": query, "limit": 5}}});
            let started = Instant::now();
            let reply = spawn_call(&cfg, &call.to_string())?;
            spawned.push(ms(started.elapsed()));
            anyhow::ensure!(
                reply.contains("\"isError\":false"),
                "the MCP call failed: {reply}"
            );
        }
    }
    println!("\nsearch, limit 5, over NATS and by spawn-per-call MCP:");
    println!("  NATS, uncached          {}", p50_p95(uncached));
    println!("  NATS, cached            {}", p50_p95(cached));
    println!("  MCP process, cached     {}", p50_p95(spawned));
    cancel.cancel();
    let _ = bus.await;
    Ok(())
}

/// Starts `codesearch mcp serve`, writes one line and closes stdin; its stdout.
fn spawn_call(cfg: &Config, line: &str) -> anyhow::Result<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_codesearch"))
        .args([
            "--nats-url",
            &cfg.nats.url,
            "--log-level",
            "error",
            "mcp",
            "serve",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    stdin.write_all(line.as_bytes())?;
    stdin.write_all(b"\n")?;
    drop(stdin);
    let out = child.wait_with_output()?;
    anyhow::ensure!(out.status.success(), "mcp serve exited with {}", out.status);
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
