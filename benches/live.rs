//! The live daemon's figures, with the local model. Run with `scripts/bench.sh live` (it
//! starts the services); directly: `DATABASE_URL=... NATS_URL=... CODESEARCH_MODEL_DIR=...
//! cargo bench --bench live -- [REPO_DIR]`.
//!
//! Corpus: a copy of a real repository (default: CPython's `asyncio` package from the system
//! Python), in a temporary directory the daemon serves and watches. Prints:
//! 1. embeddings requested when one function of its largest file is edited;
//! 2. save-to-searchable latency of a one-function edit (a function appended to a file): the
//!    time from writing the file to the first search over NATS (lexical mode, polled every
//!    5 ms) whose top result holds the new code;
//! 3. a burst of 1,000 new files: the time until all are indexed with their vectors, and the
//!    process' memory before and at its peak;
//! 4. hybrid searches over NATS, distinct queries 50 ms apart, while the daemon is idle and
//!    while it indexes the burst: what a search costs an agent while files change.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use codesearch::config::{Config, EmbedBackend};
use codesearch::pipeline::Indexer;
use codesearch::store::Store;
use common::{nats_search, percentile};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const EDITS: usize = 30;
const BURST: usize = 1000;
/// Questions about asyncio's code, made distinct by a number so that no result is cached.
const QUESTIONS: [&str; 8] = [
    "cancel a running task",
    "read lines from a subprocess pipe",
    "schedule a callback on the event loop",
    "close the transport when the connection is lost",
    "wait for the first of several futures",
    "limit concurrent access with a semaphore",
    "start a TCP server",
    "run a coroutine in another thread",
];
/// The pause between two of those searches.
const SEARCH_PAUSE: Duration = Duration::from_millis(50);

/// Times the `i`-th question's hybrid search; None when it failed.
async fn timed_search(client: &async_nats::Client, i: usize) -> Option<f64> {
    let query = format!("{} {i}", QUESTIONS[i % QUESTIONS.len()]);
    let t = Instant::now();
    let reply = search(client, &query, "hybrid").await?;
    (reply["success"] == true).then(|| t.elapsed().as_secs_f64() * 1000.0)
}

fn print_searches(label: &str, mut ms: Vec<f64>, failed: usize) {
    ms.sort_by(f64::total_cmp);
    println!(
        "  {label}: {} searches, p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms, {failed} failed",
        ms.len(),
        percentile(&ms, 0.5),
        percentile(&ms, 0.95),
        percentile(&ms, 1.0)
    );
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if entry.file_name() != "__pycache__" {
                copy_tree(&entry.path(), &target)?;
            }
        } else if kind.is_file() {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// Kilobytes of a `/proc/self/status` field (VmRSS, VmHWM).
fn memory_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

async fn search(client: &async_nats::Client, query: &str, mode: &str) -> Option<Value> {
    let request = json!({ "query": query, "limit": 1, "mode": mode });
    nats_search(client, &request, Duration::from_secs(30)).await
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let source = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/python3.11/asyncio"));
    let work = tempfile::tempdir()?;
    let root = work.path().join(
        source
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_else(|| "repo".into()),
    );
    copy_tree(&source, &root)?;
    let mut cfg = Config::from_env(None, &[])?;
    cfg.embed.backend = EmbedBackend::Local;
    cfg.health.http_addr = String::new();
    let store = Store::connect(&cfg.database).await?;
    store.migrate().await?;
    store.clear().await?;
    println!("corpus: a copy of {}", source.display());

    // 1. Embeddings requested by a one-function edit of the largest file.
    let (store, embedder) = codesearch::daemon::open(&cfg).await?;
    println!("model: {}", embedder.model_id());
    let indexer = Indexer::new(store.clone(), Arc::clone(&embedder), cfg.index.clone())?;
    let cancel = CancellationToken::new();
    let repo = indexer.repository(&root)?;
    let cold = indexer.index_repository(&repo, None, &cancel).await?;
    println!(
        "\n[cold index] {} files, {} chunks, {:.1}s",
        cold.indexed,
        cold.chunks,
        cold.total_time.as_secs_f64()
    );
    let largest = walk_files(&root)
        .into_iter()
        .max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .ok_or_else(|| anyhow::anyhow!("empty corpus"))?;
    let text = std::fs::read_to_string(&largest)?;
    let lines = text.lines().count();
    // Edit the body of the function in the middle of the file: a new statement after its
    // first line that ends with `:` at top or class level.
    let middle = text.len() / 2;
    let at = text[middle..]
        .find("\n    def ")
        .and_then(|i| {
            text[middle + i + 1..]
                .find(":\n")
                .map(|j| middle + i + 1 + j + 2)
        })
        .ok_or_else(|| anyhow::anyhow!("no function in the middle of {}", largest.display()))?;
    let edited = format!(
        "{}        edited_marker = 'one function changed'\n{}",
        &text[..at],
        &text[at..]
    );
    std::fs::write(&largest, edited)?;
    let rel = largest.strip_prefix(&root)?.to_string_lossy().into_owned();
    let edit = indexer
        .index_paths(&repo, vec![rel.clone()], &cancel)
        .await?;
    println!("\n[one-function edit of {rel}, {lines} lines]");
    println!(
        "  chunks in the file: {}; embeddings requested: {}; vectors reused: {}",
        edit.chunks, edit.embedded, edit.reused
    );
    std::fs::write(&largest, &text)?;
    indexer.index_paths(&repo, vec![rel], &cancel).await?;

    // 2. Save-to-searchable, through the daemon: watcher, pipeline, search over NATS.
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let daemon = tokio::spawn(codesearch::daemon::serve(
        cfg.clone(),
        vec![repo.clone()],
        async move {
            let _ = stop_rx.await;
        },
    ));
    let client = async_nats::connect(&cfg.nats.url).await?;
    let started = Instant::now();
    while search(&client, "event loop", "hybrid")
        .await
        .is_none_or(|r| r["results"][0].is_null())
    {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(120),
            "the daemon never answered"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await; // the start-up reconcile finds nothing new
    let files = walk_files(&root);
    let mut latencies = Vec::new();
    for i in 0..EDITS {
        let file = &files[i % files.len()];
        let original = std::fs::read_to_string(file)?;
        let token = format!("saveprobe{i}x{}", std::process::id());
        let function = format!(
            "\n\ndef {token}_handler(request):\n    \"\"\"Answers the {token} request.\"\"\"\n    return {{'status': '{token}', 'items': list(request.items)}}\n"
        );
        let t0 = Instant::now();
        std::fs::write(file, format!("{original}{function}"))?;
        loop {
            // Lexical ranking, so that what is measured is the index's freshness (a file's
            // chunks are written with their vectors in one transaction: when the words are
            // there, so is the vector), not how fusion ranks a made-up name.
            let reply = search(&client, &format!("{token}_handler"), "lexical").await;
            let found = reply.as_ref().is_some_and(|r| {
                r["results"][0]["content"]
                    .as_str()
                    .is_some_and(|c| c.contains(&token))
            });
            if found {
                latencies.push(t0.elapsed().as_secs_f64() * 1000.0);
                break;
            }
            anyhow::ensure!(
                t0.elapsed() < Duration::from_secs(60),
                "edit {i} never became searchable"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        std::fs::write(file, original)?;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    latencies.sort_by(f64::total_cmp);
    println!("\n[save-to-searchable, one-function edit, {EDITS} edits, local model]");
    println!(
        "  p50 {:.0} ms, p95 {:.0} ms, max {:.0} ms",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.95),
        percentile(&latencies, 1.0)
    );

    // 4a. Searches while the daemon is idle.
    let (mut idle, mut idle_failed) = (Vec::new(), 0);
    for i in 0..40 {
        match timed_search(&client, i).await {
            Some(ms) => idle.push(ms),
            None => idle_failed += 1,
        }
        tokio::time::sleep(SEARCH_PAUSE).await;
    }

    // 3. A burst of new files, each a function cut from the corpus' real code.
    let functions: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|t| {
            t.split("\ndef ")
                .skip(1)
                .map(|f| format!("def {}", f.split("\n\n\n").next().unwrap_or(f)))
                .collect::<Vec<_>>()
        })
        .collect();
    anyhow::ensure!(!functions.is_empty(), "no functions to copy");
    let rss_before = memory_kb("VmRSS:");
    let t0 = Instant::now();
    for i in 0..BURST {
        let dir = root.join(format!("burst/b{}", i % 20));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join(format!("copy_{i}.py")),
            &functions[i % functions.len()],
        )?;
    }
    let written = t0.elapsed();
    let pool = store.pool();
    // 4b. Searches while the daemon indexes it.
    let (mut busy, mut busy_failed) = (Vec::new(), 0);
    for i in 1000.. {
        let (files, pending): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT count(*) FROM indexed_files WHERE file_path LIKE 'burst/%'),
                    (SELECT count(*) FROM codebase_index
                     WHERE file_path LIKE 'burst/%' AND embedding IS NULL)",
        )
        .fetch_one(pool)
        .await?;
        if files == BURST as i64 && pending == 0 {
            break;
        }
        anyhow::ensure!(
            t0.elapsed() < Duration::from_secs(1800),
            "the burst never finished"
        );
        match timed_search(&client, i).await {
            Some(ms) => busy.push(ms),
            None => busy_failed += 1,
        }
        tokio::time::sleep(SEARCH_PAUSE).await;
    }
    let took = t0.elapsed();
    let chunks: i64 =
        sqlx::query_scalar("SELECT count(*) FROM codebase_index WHERE file_path LIKE 'burst/%'")
            .fetch_one(pool)
            .await?;
    println!(
        "\n[burst of {BURST} new files ({chunks} chunks), written in {:.2}s]",
        written.as_secs_f64()
    );
    println!(
        "  all searchable with vectors after {:.1}s ({:.0} files/s)",
        took.as_secs_f64(),
        BURST as f64 / took.as_secs_f64()
    );
    println!(
        "  process memory: {:.0} MB before, peak {:.0} MB (VmHWM, whole process: daemon, model, benchmark)",
        rss_before as f64 / 1024.0,
        memory_kb("VmHWM:") as f64 / 1024.0
    );
    println!(
        "\n[hybrid searches over NATS, distinct questions {} ms apart]",
        SEARCH_PAUSE.as_millis()
    );
    print_searches("daemon idle", idle, idle_failed);
    print_searches("while it indexes the burst", busy, busy_failed);
    let _ = stop_tx.send(());
    daemon.await??;
    Ok(())
}

fn walk_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "py") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
