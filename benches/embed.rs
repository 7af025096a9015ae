//! The in-process model's speed on each engine (ONNX Runtime and candle), and whether the two
//! agree. Run with `scripts/bench.sh embed`; directly: `cargo bench --bench embed` (with
//! `CODESEARCH_MODEL_DIR` and `CODESEARCH_ONNXRUNTIME` set, as `.codesearch/tools.env` does).
//! No database or NATS: this is the model alone, as a search and the indexer call it.
//!
//! Prints, per engine:
//! 1. the query embedding: [`Embedder::embed`] of one query, 400 distinct phrases
//!    (`benches/common`, 6 to 9 tokens) and 320 commit subjects from
//!    `benches/relevance/commits.toml` (up to 30 tokens), p50 / p95 / max, back to back and
//!    each after a pause of 5 ms, as a daemon meets them: after a pause the weights are no
//!    longer in the caches and the threads are asleep;
//! 2. document throughput: 256 chunks of real Rust from the cargo registry (the first 1,500
//!    characters of each file, cut to `local_max_tokens`), in the configured batches;
//! 3. the lowest cosine similarity between the two engines' vectors over all those texts.
//!
//! `BENCH_ENGINES=onnx` (or `candle`) measures one engine only.

mod common;

use std::time::{Duration, Instant};

use codesearch::config::{Config, EmbedConfig, LocalEngine};
use codesearch::embed::{Embedder, InputKind, LocalEmbedder};
use common::{percentile, registry_crates, search_queries};

const DOCUMENTS: usize = 256;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // The environment's settings (model directory, runtime library, batch size, threads).
    let cfg = Config::load(None, |k| std::env::var(k).ok(), &[])?.embed;
    let phrases = search_queries();
    let subjects = commit_subjects()?;
    let documents = documents();
    println!(
        "embed bench: {} phrases, {} commit subjects, {} documents; {} cores",
        phrases.len(),
        subjects.len(),
        documents.len(),
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    let engines = std::env::var("BENCH_ENGINES").unwrap_or_else(|_| "onnx,candle".into());
    let mut vectors: Vec<Vec<Vec<f32>>> = Vec::new();
    for name in engines.split(',').map(str::trim) {
        let engine = match name {
            "onnx" => LocalEngine::Onnx,
            "candle" => LocalEngine::Candle,
            other => anyhow::bail!("unknown engine `{other}` (onnx, candle)"),
        };
        let started = Instant::now();
        let model = load(&cfg, engine)?;
        println!(
            "\n{name}: loaded in {:.2} s",
            started.elapsed().as_secs_f64()
        );
        // What the first search after a start waits for.
        let t = Instant::now();
        model
            .embed(std::slice::from_ref(&phrases[0]), InputKind::Query)
            .await?;
        println!(
            "  first query after the load {:.2} ms",
            t.elapsed().as_secs_f64() * 1000.0
        );
        let mut all = Vec::new();
        for (label, queries) in [("phrases", &phrases), ("commit subjects", &subjects)] {
            // Warm-up: first calls allocate and (candle) spin up thread pools.
            for q in queries.iter().take(5) {
                model
                    .embed(std::slice::from_ref(q), InputKind::Query)
                    .await?;
            }
            for pause in [None, Some(Duration::from_millis(5))] {
                let mut ms = Vec::with_capacity(queries.len());
                for q in queries {
                    if let Some(pause) = pause {
                        std::thread::sleep(pause);
                    }
                    let t = Instant::now();
                    let mut v = model
                        .embed(std::slice::from_ref(q), InputKind::Query)
                        .await?;
                    ms.push(t.elapsed().as_secs_f64() * 1000.0);
                    if pause.is_none() {
                        all.append(&mut v);
                    }
                }
                ms.sort_by(f64::total_cmp);
                println!(
                    "  query embedding, {label}{}: p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms",
                    if pause.is_some() { ", after 5 ms" } else { "" },
                    percentile(&ms, 0.5),
                    percentile(&ms, 0.95),
                    ms.last().copied().unwrap_or(f64::NAN)
                );
            }
        }
        let t = Instant::now();
        let mut v = model.embed(&documents, InputKind::Document).await?;
        let secs = t.elapsed().as_secs_f64();
        println!(
            "  documents: {} in {:.2} s, {:.1} chunks/s (batches of {})",
            documents.len(),
            secs,
            documents.len() as f64 / secs,
            cfg.local_batch_size
        );
        all.append(&mut v);
        vectors.push(all);
    }
    if let [a, b] = &vectors[..] {
        let lowest = a
            .iter()
            .zip(b)
            .map(|(x, y)| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>())
            .fold(f32::INFINITY, f32::min);
        println!(
            "\nlowest cosine between the engines' vectors over {} texts: {lowest:.7}",
            a.len()
        );
    }
    Ok(())
}

fn load(cfg: &EmbedConfig, engine: LocalEngine) -> anyhow::Result<LocalEmbedder> {
    let mut cfg = cfg.clone();
    cfg.local_engine = engine;
    Ok(LocalEmbedder::load(&cfg)?)
}

/// The commit subjects of the relevance set: longer, prose-like queries.
fn commit_subjects() -> anyhow::Result<Vec<String>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/relevance/commits.toml"
    );
    let text = std::fs::read_to_string(path)?;
    Ok(text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("query = "))
        .filter_map(|q| serde_json::from_str::<String>(q).ok())
        .collect())
}

/// The start of `DOCUMENTS` Rust files from the cargo registry, in a fixed order.
fn documents() -> Vec<String> {
    let mut out = Vec::new();
    for dir in registry_crates() {
        let Ok(entries) = std::fs::read_dir(dir.join("src")) else {
            continue;
        };
        let mut files: Vec<_> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        files.sort();
        for file in files {
            if let Ok(text) = std::fs::read_to_string(&file) {
                out.push(text.chars().take(1500).collect());
                if out.len() == DOCUMENTS {
                    return out;
                }
            }
        }
    }
    out
}
