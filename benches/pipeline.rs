//! Indexing and search figures on real code. Run with `scripts/bench.sh` (it starts the
//! services); directly: `DATABASE_URL=... NATS_URL=... CODESEARCH_MODEL_DIR=... cargo bench
//! --bench pipeline -- [REPO_DIR...]`.
//!
//! Default corpus: crate sources from the local cargo registry (tokio, sqlx-core, async-nats,
//! candle-core, ...) — real open-source repositories every build of this project downloads.
//! Prints:
//! 1. cold index with the hash embedder: files/s and chunks/s of everything but the model;
//! 2. re-index of the unchanged corpus, as a share of the cold time;
//! 3. the local model's chunks/s on a sample of the corpus' real chunks;
//! 4. search latency over NATS at the corpus' size (hash query embedding, which costs
//!    microseconds), client round trip and server `searchTime`, then `codesearch stats` for
//!    the same load (the server's percentiles, to compare with the client's).

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use codesearch::chunk::{ChunkOptions, chunk_file};
use codesearch::config::{Config, EmbedBackend};
use codesearch::embed::{Embedder, HashEmbedder, InputKind, LocalEmbedder};
use codesearch::pipeline::{Indexer, embedding_input};
use codesearch::store::Store;
use common::{percentile, registry_crate};
use tokio_util::sync::CancellationToken;

const DEFAULT_CRATES: &[&str] = &[
    "tokio-1.",
    "sqlx-core-",
    "sqlx-postgres-",
    "async-nats-",
    "candle-core-",
    "candle-transformers-",
    "tokenizers-",
    "clap_builder-",
    "reqwest-",
    "hyper-",
    "regex-automata-",
    "serde_json-",
    "rustls-",
    "axum-",
    "tree-sitter-0.",
];

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let repos: Vec<PathBuf> = if args.is_empty() {
        DEFAULT_CRATES
            .iter()
            .filter_map(|c| registry_crate(c))
            .collect()
    } else {
        args.iter().map(PathBuf::from).collect()
    };
    anyhow::ensure!(
        !repos.is_empty(),
        "no repositories to index: pass directories as arguments"
    );
    let mut cfg = Config::from_env(None, &[])?;
    cfg.embed.backend = EmbedBackend::Hash;
    // Latency of the search itself: repeated queries must not be answered from the cache.
    cfg.search.result_cache_entries = 0;
    let store = Store::connect(&cfg.database).await?;
    store.migrate().await?;
    store.clear().await?;

    println!("corpus: {} repositories", repos.len());
    for r in &repos {
        println!("  {}", r.display());
    }

    // 1. Cold index, hash embedder.
    let hash: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(384));
    let indexer = Indexer::new(store.clone(), Arc::clone(&hash), cfg.index.clone())?;
    let cancel = CancellationToken::new();
    let (mut files, mut chunks, mut embed_time, mut cold) =
        (0usize, 0usize, Duration::ZERO, Duration::ZERO);
    for r in &repos {
        let report = indexer.index_root(r, None, &cancel).await?;
        files += report.indexed;
        chunks += report.chunks;
        embed_time += report.embed_time;
        cold += report.total_time;
    }
    let ann_started = Instant::now();
    let built = store.ensure_ann_index().await?;
    let ann = ann_started.elapsed();
    // As the daemon does after a pass that changed this many files.
    store.vacuum_analyze().await?;
    let non_model = cold.saturating_sub(embed_time).as_secs_f64();
    println!("\n[cold index, everything but the model]");
    println!(
        "  {files} files, {chunks} chunks in {:.2}s total, {:.2}s of it in the (hash) embedder",
        cold.as_secs_f64(),
        embed_time.as_secs_f64()
    );
    println!(
        "  non-model throughput: {:.0} files/s, {:.0} chunks/s",
        files as f64 / non_model,
        chunks as f64 / non_model
    );
    if built {
        let with_ann = non_model + ann.as_secs_f64();
        println!(
            "  then the HNSW index over {chunks} vectors: {:.1}s ({:.0} files/s, {:.0} chunks/s including it)",
            ann.as_secs_f64(),
            files as f64 / with_ann,
            chunks as f64 / with_ann
        );
    }

    // 2. Re-index, unchanged.
    let mut warm = Duration::ZERO;
    let mut embedded = 0;
    for r in &repos {
        let report = indexer.index_root(r, None, &cancel).await?;
        warm += report.total_time;
        embedded += report.embedded;
    }
    println!("\n[re-index of the unchanged corpus]");
    println!(
        "  {:.3}s, {embedded} chunks embedded: {:.1}% of the cold time",
        warm.as_secs_f64(),
        100.0 * warm.as_secs_f64() / cold.as_secs_f64()
    );

    // 3. The local model on real chunks.
    if std::env::var("BENCH_SKIP_MODEL").is_err() {
        let sample = sample_inputs(&repos, &cfg, 240);
        match LocalEmbedder::load(&cfg.embed) {
            Ok(model) => {
                let _ = model
                    .embed(&sample[..8.min(sample.len())], InputKind::Document)
                    .await?;
                let started = Instant::now();
                model.embed(&sample, InputKind::Document).await?;
                let secs = started.elapsed().as_secs_f64();
                let mean_chars =
                    sample.iter().map(|s| s.chars().count()).sum::<usize>() / sample.len().max(1);
                println!("\n[local model: {}]", model.model_id());
                println!(
                    "  {} real chunks (mean {mean_chars} chars, max {} tokens) in {secs:.1}s: {:.1} chunks/s",
                    sample.len(),
                    cfg.embed.local_max_tokens,
                    sample.len() as f64 / secs
                );
                let local_cold = non_model + (chunks as f64) / (sample.len() as f64 / secs);
                println!(
                    "  => a cold index of this corpus with the local model: ~{:.0}s; the re-index is {:.2}% of that",
                    local_cold,
                    100.0 * warm.as_secs_f64() / local_cold
                );
            }
            Err(e) => println!("\n[local model] skipped: {e}"),
        }
    }

    // 4. Search over NATS.
    let total: i64 = sqlx::query_scalar("SELECT count(*) FROM codebase_index")
        .fetch_one(store.pool())
        .await?;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let serve_cfg = cfg.clone();
    let server = tokio::spawn(async move {
        codesearch::daemon::serve(serve_cfg, Vec::new(), async move {
            let _ = stop_rx.await;
        })
        .await
    });
    let client = async_nats::connect(&cfg.nats.url).await?;
    let subject = cfg.nats.search_subject();
    let queries = [
        "spawn a task on the runtime",
        "parse a connection url",
        "retry with backoff",
        "matrix multiplication kernel",
        "tokenize the input text",
        "read the http response body",
        "validate a tls certificate",
        "serialize a value to json",
        "compile a regular expression",
        "handle a websocket message",
        "acquire a semaphore permit",
        "build the command line parser",
    ];
    // Warm up until the service answers.
    for _ in 0..100 {
        if client
            .request(subject.clone(), r#"{"query":"warm up"}"#.into())
            .await
            .is_ok()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut rtt = Vec::new();
    let mut server_ms = Vec::new();
    for i in 0..400 {
        let q = queries[i % queries.len()];
        let filters = if i % 4 == 3 {
            r#","fileTypes":["rs"],"limit":10"#
        } else {
            ""
        };
        let payload = format!(r#"{{"query":"{q}"{filters}}}"#);
        let started = Instant::now();
        let reply = client.request(subject.clone(), payload.into()).await?;
        rtt.push(started.elapsed().as_secs_f64() * 1000.0);
        let v: serde_json::Value = serde_json::from_slice(&reply.payload)?;
        anyhow::ensure!(v["success"] == true, "search failed: {v}");
        server_ms.push(v["searchTime"].as_f64().unwrap_or(f64::NAN));
    }
    rtt.sort_by(f64::total_cmp);
    server_ms.sort_by(f64::total_cmp);
    println!("\n[search over NATS at {total} chunks, 400 queries; HNSW once built, else exact]");
    println!(
        "  round trip (client): p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms",
        percentile(&rtt, 0.5),
        percentile(&rtt, 0.95),
        percentile(&rtt, 0.99)
    );
    println!(
        "  server searchTime:   p50 {:.0} ms, p95 {:.0} ms",
        percentile(&server_ms, 0.5),
        percentile(&server_ms, 0.95)
    );
    // What an operator sees for the same load: `codesearch stats` (the daemon's own figures
    // over $SRV.STATS, request to reply, warm-up requests included).
    println!("\n[codesearch stats after the load]");
    codesearch::report::stats(&cfg, false).await?;
    let _ = stop_tx.send(());
    server.await??;
    Ok(())
}

/// Embedding inputs of real chunks, spread over the corpus.
fn sample_inputs(repos: &[PathBuf], cfg: &Config, n: usize) -> Vec<String> {
    let opts = ChunkOptions {
        max_chars: cfg.index.max_chunk_chars,
        overlap_chars: cfg.index.chunk_overlap_chars,
        min_chars: cfg.index.min_chunk_chars,
        parse_timeout: Duration::from_millis(cfg.index.parse_timeout_ms),
    };
    let mut all = Vec::new();
    for repo in repos {
        collect(repo, repo, &opts, &mut all);
    }
    let step = (all.len() / n).max(1);
    all.into_iter().step_by(step).take(n).collect()
}

fn collect(root: &Path, dir: &Path, opts: &ChunkOptions, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            collect(root, &p, opts, out);
        } else if p.extension().is_some_and(|e| e == "rs")
            && let Ok(text) = std::fs::read_to_string(&p)
        {
            let rel = p
                .strip_prefix(root)
                .unwrap_or(&p)
                .to_string_lossy()
                .into_owned();
            out.extend(
                chunk_file(&rel, &text, opts)
                    .iter()
                    .map(|c| embedding_input(&rel, c)),
            );
        }
    }
}
