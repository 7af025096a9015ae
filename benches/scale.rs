//! Search latency and ANN recall at a chosen index size. Run with `scripts/bench.sh scale
//! [CHUNKS]` (default 100,000; it starts the services); directly: `DATABASE_URL=... cargo bench
//! --bench scale -- [CHUNKS]`.
//!
//! Corpus: the crates of the local cargo registry (newest version of each, in name order), each
//! indexed as its own repository with the hash embedder, until the index holds CHUNKS chunks.
//! When the registry runs out it is indexed again under new repository names (`name~2`, ...):
//! the text repeats, but each copy is a repository of its own for filters and statistics.
//! A copy's files are linked one directory down (`fork2/src/lib.rs`), so that its embedding
//! inputs differ from the original's and the indexer does not reuse the original's vectors;
//! its vectors are those of its text plus three words naming the copy: near neighbours (as
//! vendored or forked code is) rather than equal vectors, which pgvector would keep in one
//! element of the graph. Corpora built before 2026-11-25 (sixth session) reused the original's
//! vectors: the corpus line says how many distinct embedding inputs a database holds. The
//! database keeps the corpus: a later run at the same size reuses it.
//!
//! The hash embedder (hashed words) stands in for a model: vectors of real text, computed in
//! microseconds. Its vectors are less clustered than a trained model's, which makes the
//! approximate index's job harder, not easier.
//!
//! Prints:
//! 1. the corpus (built or reused) and the HNSW build time;
//! 2. search latency in process, per mode: [`SearchService::search`] as the daemon runs it
//!    (index generation, query embedding — microseconds with the hash embedder —, retrievers
//!    and fusion), over 400 distinct queries, a quarter of them filtered to one repository,
//!    result cache off; then hybrid search with every query under one kind of filter
//!    (repository, file type, path glob, language, module), kind by kind
//!    (`BENCH_ONLY_FILTERS=1` runs only this, in each mode);
//! 3. recall@10 of the vector retriever (through HNSW, or the exact scan of the narrow copies
//!    under a selective filter) against a full-precision scan of `codebase_index` under the
//!    same filter (the 10 best of the 40 rows it reads for a search of limit 10, as the
//!    service does),
//!    unfiltered and with filters of several selectivities, at several `hnsw.ef_search`
//!    values, and how often a filtered search returned fewer than 10 rows although 10
//!    matched. A row at the same distance as the exact 10th counts as found (copies of the
//!    corpus have equal vectors). `BENCH_SKIP_RECALL=1` leaves this part out (at 1M chunks its
//!    exact scans take about half an hour);
//! 4. with `BENCH_WORKSPACES=N`, search latency per mode with the repositories spread over N
//!    workspaces, each search scoped to one (before part 3);
//! 5. code intelligence latency (symbols, callers, a 3-level callers graph) for 400 functions
//!    and methods (after part 2; `BENCH_ONLY_INTEL=1` runs this part alone,
//!    `BENCH_SKIP_INTEL=1` leaves it out), with the slowest questions of each kind named
//!    (8, or `BENCH_SLOWEST=N`: the names around the p95 are the 20th of 400). `BENCH_SLOWEST`
//!    also names the slowest searches of each mode of part 2.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use codesearch::config::{Config, EmbedBackend, SearchMode};
use codesearch::embed::{EmbedError, Embedder, HashEmbedder, InputKind};
use codesearch::pipeline::Indexer;
use codesearch::search::{RawSearch, SearchRequest, SearchService};
use codesearch::store::{Filters, Hit, Scope, Store, VectorQuery, ef_search_for};
use codesearch::text::glob_to_regex;
use common::{percentile, registry_crates, search_queries};
use futures::future::BoxFuture;
use sqlx::postgres::PgPoolOptions;
use tokio_util::sync::CancellationToken;

const DEFAULT_CHUNKS: i64 = 100_000;
/// `hnsw.ef_search` values the recall table compares.
const EF_SEARCH: [u32; 5] = [40, 100, 200, 400, 800];
/// `src`'s files under `dst`, hard-linked (copied where links fail); symbolic links are left
/// out, as the walker leaves them.
fn link_tree(src: &Path, dst: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dst)?;
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let (from, to) = (entry.path(), dst.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            link_tree(&from, &to)?;
        } else if kind.is_file() && std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to)?;
        }
    }
    Ok(())
}

/// The hash embedder, for a copy of the corpus: each text gets the copy's words appended.
struct CopyEmbedder {
    inner: HashEmbedder,
    salt: String,
}

impl Embedder for CopyEmbedder {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
        _kind: InputKind,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            Ok(texts
                .iter()
                .map(|t| self.inner.embed_one(&format!("{t}{}", self.salt)))
                .collect())
        })
    }
}

async fn count(store: &Store) -> anyhow::Result<i64> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM codebase_index")
        .fetch_one(store.pool())
        .await?)
}

/// Indexes registry crates (then copies of them) until the index holds `target` chunks.
async fn build_corpus(store: &Store, cfg: &Config, target: i64) -> anyhow::Result<()> {
    let crates = registry_crates();
    anyhow::ensure!(!crates.is_empty(), "no crates in the local cargo registry");
    store.clear().await?;
    let hash: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(384));
    let cancel = CancellationToken::new();
    // Where a copy's files are linked while it is indexed.
    let copies =
        std::env::temp_dir().join(format!("codesearch-scale-copies-{}", std::process::id()));
    let started = Instant::now();
    let (mut files, mut chunks, mut repos) = (0usize, 0i64, 0usize);
    'copies: for copy in 1.. {
        for dir in &crates {
            if chunks >= target {
                break 'copies;
            }
            let mut index_cfg = cfg.index.clone();
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            index_cfg.repository = if copy == 1 {
                name
            } else {
                format!("{name}~{copy}")
            };
            let (embedder, root): (Arc<dyn Embedder>, PathBuf) = if copy == 1 {
                (Arc::clone(&hash), dir.clone())
            } else {
                // The copy's files one directory down (`fork2/src/lib.rs`): their embedding
                // inputs name that path, so the indexer does not reuse the original's vectors.
                let root = copies.join(&index_cfg.repository);
                link_tree(dir, &root.join(format!("fork{copy}")))?;
                let embedder = Arc::new(CopyEmbedder {
                    inner: HashEmbedder::new(384),
                    salt: format!(" fork{copy}a fork{copy}b fork{copy}c"),
                });
                (embedder, root)
            };
            let indexer = Indexer::new(store.clone(), embedder, index_cfg)?;
            let report = indexer.index_root(&root, None, &cancel).await;
            if copy > 1 {
                let _ = std::fs::remove_dir_all(&root);
            }
            let report = report?;
            files += report.indexed;
            chunks += report.chunks as i64;
            repos += 1;
            if repos % 50 == 0 {
                eprintln!(
                    "  ... {repos} repositories, {files} files, {chunks} chunks, {:.0}s",
                    started.elapsed().as_secs_f64()
                );
            }
        }
    }
    let _ = std::fs::remove_dir(&copies);
    store.vacuum_analyze().await?;
    println!(
        "  built: {repos} repositories, {files} files, {chunks} chunks in {:.0}s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The vector retriever's query for a search of `limit` 10: it reads 40 rows (the fusion's
/// depth, `4 × (offset + limit)`, at least 40), of which the best 10 are compared.
fn depth40<'a>(
    embedding: &'a [f32],
    model: &'a str,
    scope: &'a Scope,
    filters: &'a Filters,
    ef_search: u32,
) -> VectorQuery<'a> {
    VectorQuery {
        embedding,
        model,
        scope,
        filters,
        min_similarity: -1.0,
        limit: 40,
        ef_search,
        // Sizes the walk only when `ef_search` is 0, and the scope is the whole table here
        // unless the caller says otherwise.
        table_chunks: 0,
        scope_chunks: 0,
    }
}

/// Latency per mode with the corpus's repositories spread over `n` workspaces (by a hash of
/// their names), every search scoped to one of them, against the figures above (one workspace
/// holding everything); then the recall@10 of those searches' vector side against an exact
/// scan of the workspace. The repositories are moved the daemon's way (rows and all, then the
/// vector indexes it would build) and put back in `default` afterwards.
async fn workspaces(
    store: &Store,
    cfg: &Config,
    n: usize,
    queries: &[String],
) -> anyhow::Result<()> {
    let names: Vec<String> = sqlx::query_scalar("SELECT name FROM repositories ORDER BY name")
        .fetch_all(store.pool())
        .await?;
    let workspace_of = |name: &str| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(name, &mut h);
        format!("w{}", std::hash::Hasher::finish(&h) % n as u64)
    };
    let started = Instant::now();
    for name in &names {
        store.move_to_workspace(name, &workspace_of(name)).await?;
    }
    println!(
        "\n[{} repositories moved into {n} workspaces in {:.1}s]",
        names.len(),
        started.elapsed().as_secs_f64()
    );
    let result = async {
        store.vacuum_analyze().await?;
        let started = Instant::now();
        store.ensure_ann_index().await?;
        println!(
            "  their vector indexes built in {:.1}s",
            started.elapsed().as_secs_f64()
        );
        let sizes: Vec<(String, i64, i64)> = sqlx::query_as(
            "SELECT r.workspace, count(DISTINCT r.name), coalesce(sum(f.chunk_count), 0)::int8
             FROM repositories r LEFT JOIN indexed_files f ON f.repository = r.name
             GROUP BY r.workspace ORDER BY 1",
        )
        .fetch_all(store.pool())
        .await?;
        println!(
            "[search latency with the repositories in {n} workspaces, each search in one: {}]",
            sizes
                .iter()
                .map(|(w, r, c)| format!("{w} {r} repositories {c} chunks"))
                .collect::<Vec<_>>()
                .join("; ")
        );
        let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(384));
        let service = SearchService::new(store.clone(), Arc::clone(&embedder), cfg.search.clone());
        for mode in [SearchMode::Hybrid, SearchMode::Vector, SearchMode::Lexical] {
            let request = |i: usize, q: &str| {
                let mut raw = RawSearch::query(q);
                raw.mode = Some(mode.as_str().to_owned());
                raw.workspace = Some(format!("w{}", i % n));
                SearchRequest::new(raw, &cfg.search)
            };
            for i in 0..20 {
                service
                    .search(&request(i, &format!("warm up {i}"))?)
                    .await?;
            }
            let mut times = time_searches(&service, queries.len(), |i| {
                Ok(request(i, &queries[i])?)
            })
            .await?;
            println!("{}", latency_row(mode.as_str(), &mut times));
        }
        // Recall of the workspace's vector search (its own index, the default ef_search)
        // against an exact scan of the workspace's rows.
        let exact = exact_store(cfg).await?;
        let model = embedder.model_id().to_owned();
        let probes = embedder
            .embed(
                &queries.iter().step_by(4).cloned().collect::<Vec<_>>(),
                InputKind::Query,
            )
            .await?;
        let table_chunks = count(store).await?;
        let (mut found, mut wanted, mut short) = (0, 0, 0);
        let none = Filters::default();
        for (i, probe) in probes.iter().enumerate() {
            let scope = store.scope(&format!("w{}", i % n)).await?;
            let scope_chunks = store.scope_chunks(&scope).await?;
            let query = |ef_search| VectorQuery {
                ef_search,
                table_chunks,
                scope_chunks,
                ..depth40(probe, &model, &scope, &none, 0)
            };
            let truth =
                exact_top10(&exact, probe, &model, &format!("workspace = 'w{}'", i % n)).await?;
            let mut ann = store.vector_search(&query(0)).await?;
            ann.truncate(10);
            let (f, w, s) = recall_counts(&truth, &ann);
            (found, wanted, short) = (found + f, wanted + w, short + s);
        }
        println!(
            "  vector recall@10 in the workspaces against exact search: {:.3} ({} queries, {short} short answers)",
            found as f64 / wanted.max(1) as f64,
            probes.len()
        );
        Ok::<_, anyhow::Error>(())
    }
    .await;
    for name in &names {
        store
            .move_to_workspace(name, codesearch::config::DEFAULT_WORKSPACE)
            .await?;
    }
    store.vacuum_analyze().await?;
    store.ensure_ann_index().await?;
    result
}

/// A store whose connections cannot use indexes: the planner scans the rows and sorts by
/// distance, an exact search.
async fn exact_store(cfg: &Config) -> anyhow::Result<Store> {
    Ok(Store::from_pool(
        PgPoolOptions::new()
            .max_connections(2)
            .after_connect(|conn, _| {
                Box::pin(async move {
                    sqlx::query("SET enable_indexscan = off")
                        .execute(&mut *conn)
                        .await?;
                    Ok(())
                })
            })
            .connect(&cfg.database.url)
            .await?,
    ))
}

/// The exact top 10 under `predicate`, read from `codebase_index` at full precision: the truth
/// that both the walk and the exact scans over the narrow copies (`chunk_vectors`) are measured
/// against.
async fn exact_top10(
    exact: &Store,
    probe: &[f32],
    model: &str,
    predicate: &str,
) -> anyhow::Result<Vec<Hit>> {
    let dim = probe.len();
    let rows: Vec<(uuid::Uuid, f64)> = sqlx::query_as(&format!(
        "SELECT id, 1 - (subvector(embedding, 1, {dim}) <=> $1) FROM codebase_index
         WHERE embedding IS NOT NULL AND embedding_model = $2 AND {predicate}
         ORDER BY subvector(embedding, 1, {dim}) <=> $1 LIMIT 10"
    ))
    .bind(pgvector::Vector::from(probe.to_vec()))
    .bind(model)
    .fetch_all(exact.pool())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, similarity)| Hit {
            id,
            similarity: Some(similarity),
            ..Hit::default()
        })
        .collect())
}

/// (found, wanted, short) of an approximate top 10 against the exact one: a row at the exact
/// 10th's distance counts as found.
fn recall_counts(truth: &[Hit], ann: &[Hit]) -> (usize, usize, usize) {
    let Some(tenth) = truth.last().and_then(|h| h.similarity) else {
        return (0, 0, 0);
    };
    let ids: BTreeSet<_> = truth.iter().map(|h| h.id).collect();
    let found = ann
        .iter()
        .filter(|h| ids.contains(&h.id) || h.similarity.is_some_and(|s| s >= tenth - 1e-6))
        .count()
        .min(truth.len());
    (found, truth.len(), usize::from(ann.len() < truth.len()))
}

/// Latency of code intelligence as the daemon answers it (`IntelService`, in process, the bus'
/// defaults): symbol lookup (definitions and call sites of a qualified name), callers of a
/// definition pinned by path and line, and a 3-level callers graph, for 400 functions and
/// methods picked at random. Lookups the service refuses (a name it finds ambiguous) are
/// counted and timed too: an agent waits for them as well.
/// Search under each kind of filter, every query filtered the same way: a filter must not cost
/// more than the unfiltered search's p95 (issue #20).
async fn filtered(
    service: &SearchService,
    cfg: &Config,
    mid: &[String],
    queries: &[String],
    mode: SearchMode,
    total: i64,
) -> anyhow::Result<()> {
    println!(
        "\n[{} search per kind of filter at {total} chunks: the same {} queries, each filtered]",
        mode.as_str(),
        queries.len()
    );
    type Filter<'a> = (&'a str, Box<dyn Fn(&mut RawSearch, usize) + 'a>);
    let kinds: Vec<Filter<'_>> = vec![
        ("none", Box::new(|_, _| {})),
        (
            "repository (one of the middle quarter)",
            Box::new(|raw, i| raw.repository = Some(mid[i % mid.len()].clone())),
        ),
        (
            "fileTypes [md]",
            Box::new(|raw, _| raw.file_types = Some(vec!["md".into()])),
        ),
        (
            "pathGlob **/tests/**",
            Box::new(|raw, _| raw.path_glob = Some("**/tests/**".into())),
        ),
        (
            "languages [c]",
            Box::new(|raw, _| raw.languages = Some(vec!["c".into()])),
        ),
        (
            "languages [rust]",
            Box::new(|raw, _| raw.languages = Some(vec!["rust".into()])),
        ),
        (
            "modules [tests]",
            Box::new(|raw, _| raw.modules = Some(vec!["tests".into()])),
        ),
    ];
    for (name, filter) in &kinds {
        let mut times = time_searches(service, queries.len(), |i| {
            let mut raw = RawSearch::query(&queries[i]);
            raw.mode = Some(mode.as_str().to_owned());
            filter(&mut raw, i);
            Ok(SearchRequest::new(raw, &cfg.search)?)
        })
        .await?;
        println!("{}   ({name})", latency_row(mode.as_str(), &mut times));
    }
    Ok(())
}

async fn intelligence(service: &SearchService) -> anyhow::Result<()> {
    use codesearch::intel::graph::{
        DEFAULT_MAX_NODES, Direction, GraphRequest, IntelService, SymbolsRequest, Target,
    };
    let store = service.store();
    let picked: Vec<(String, String, String, i32)> = sqlx::query_as(
        "SELECT d.qualified, f.file_path, d.repository, d.start_line
         FROM code_definitions d JOIN indexed_files f ON f.id = d.file_id
         WHERE d.kind IN ('function', 'method')
         ORDER BY md5(d.file_id::text || '.' || d.ordinal::text) LIMIT 400",
    )
    .fetch_all(store.pool())
    .await?;
    if picked.is_empty() {
        println!("\n(no definitions recorded: the corpus predates code intelligence)");
        return Ok(());
    }
    let (definitions, references): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM code_definitions), (SELECT count(*) FROM code_references)",
    )
    .fetch_one(store.pool())
    .await?;
    println!(
        "\n[code intelligence over {definitions} definitions and {references} call sites: {} functions and methods]",
        picked.len()
    );
    let intel = IntelService::new(service.clone());
    let target = |(symbol, path, repository, line): &(String, String, String, i32)| Target {
        symbol: symbol.clone(),
        path: Some(path.clone()),
        line: Some(*line),
        repository: Some(repository.clone()),
        workspace: None,
    };
    let slowest_named = slowest_wanted().unwrap_or(8);
    for kind in ["symbols", "callers", "graph"] {
        let (mut times, mut refused, mut found) = (Vec::new(), 0usize, 0usize);
        for p in &picked {
            let started = Instant::now();
            let answered = match kind {
                "symbols" => intel
                    .symbols(SymbolsRequest {
                        query: p.0.clone(),
                        limit: 50,
                        references: true,
                        ..SymbolsRequest::default()
                    })
                    .await
                    .map(|s| s.definitions.len() + s.references.len()),
                "callers" => intel.callers(target(p), 50).await.map(|c| c.calls.len()),
                _ => intel
                    .graph(GraphRequest {
                        target: target(p),
                        direction: Direction::Callers,
                        depth: 3,
                        max_nodes: DEFAULT_MAX_NODES,
                        min_confidence: 0.35,
                    })
                    .await
                    .map(|g| g.edges.len()),
            };
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            times.push(ms);
            match answered {
                Ok(n) => found += n,
                Err(_) => refused += 1,
            }
        }
        println!(
            "{}   ({found} rows in all, {refused} refused)",
            latency_row(kind, &mut times.clone())
        );
        let named = slowest(&times, |i| picked[i].0.clone(), slowest_named);
        println!("           slowest: {named}");
    }
    Ok(())
}

/// `BENCH_SLOWEST=N`: how many of the slowest questions to name.
fn slowest_wanted() -> Option<usize> {
    std::env::var("BENCH_SLOWEST").ok()?.parse().ok()
}

/// The `n` slowest of `times` (in the order asked), named by `label(i)`, slowest first.
fn slowest(times: &[f64], label: impl Fn(usize) -> String, n: usize) -> String {
    let mut order: Vec<usize> = (0..times.len()).collect();
    order.sort_by(|&a, &b| times[b].total_cmp(&times[a]));
    order
        .into_iter()
        .take(n)
        .map(|i| format!("{} {:.0} ms", label(i), times[i]))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The time of each of `n` searches, `request(i)` in turn, in milliseconds (the request is
/// made before the clock starts).
async fn time_searches(
    service: &SearchService,
    n: usize,
    request: impl Fn(usize) -> anyhow::Result<SearchRequest>,
) -> anyhow::Result<Vec<f64>> {
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let req = request(i)?;
        let started = Instant::now();
        service.search(&req).await?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(times)
}

/// `label p50 … p95 … p99 …` of search times in milliseconds (sorted here).
fn latency_row(label: &str, times: &mut [f64]) -> String {
    times.sort_by(f64::total_cmp);
    format!(
        "  {label:<8} p50 {:6.2} ms   p95 {:6.2} ms   p99 {:6.2} ms",
        percentile(times, 0.5),
        percentile(times, 0.95),
        percentile(times, 0.99)
    )
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let target: i64 = match std::env::args().skip(1).find(|a| !a.starts_with("--")) {
        Some(a) => a.replace('_', "").parse()?,
        None => DEFAULT_CHUNKS,
    };
    let mut cfg = Config::from_env(None, &[])?;
    cfg.embed.backend = EmbedBackend::Hash;
    cfg.search.result_cache_entries = 0;
    let store = Store::connect(&cfg.database).await?;
    store.migrate().await?;

    // 1. The corpus.
    println!("[corpus: {target} chunks wanted]");
    let have = count(&store).await?;
    if have >= target {
        println!("  reusing the {have} chunks already indexed");
        // Statistics as the daemon leaves them after a bulk pass (migrations may have changed
        // what they hold since the corpus was built).
        store.vacuum_analyze().await?;
    } else {
        build_corpus(&store, &cfg, target).await?;
    }
    let started = Instant::now();
    if store.ensure_ann_index().await? {
        println!(
            "  HNSW index built in {:.1}s",
            started.elapsed().as_secs_f64()
        );
    }
    let total = count(&store).await?;
    let repositories: Vec<String> = sqlx::query_scalar(
        "SELECT repository FROM codebase_index GROUP BY repository ORDER BY count(*) DESC",
    )
    .fetch_all(store.pool())
    .await?;
    // A corpus built before copies had vectors of their own shares them (see the module's
    // documentation): the inputs' hashes tell.
    let distinct: i64 =
        sqlx::query_scalar("SELECT count(DISTINCT content_hash) FROM codebase_index")
            .fetch_one(store.pool())
            .await?;
    println!(
        "  {total} chunks in {} repositories, {distinct} distinct embedding inputs",
        repositories.len()
    );

    // 2. Latency, per mode.
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(384));
    let service = SearchService::new(store.clone(), Arc::clone(&embedder), cfg.search.clone());
    if std::env::var("BENCH_ONLY_INTEL").is_ok() {
        return intelligence(&service).await;
    }
    // Mid-sized repositories for the filtered queries (around 1 % of the rows each).
    let mid = &repositories[repositories.len() / 4..repositories.len() / 2];
    let queries = search_queries();
    if std::env::var("BENCH_ONLY_FILTERS").is_ok() {
        for mode in [SearchMode::Hybrid, SearchMode::Vector, SearchMode::Lexical] {
            filtered(&service, &cfg, mid, &queries, mode, total).await?;
        }
        return Ok(());
    }
    println!(
        "\n[search latency at {total} chunks, in process: {} distinct queries, 1 in 4 filtered to one repository]",
        queries.len()
    );
    for mode in [SearchMode::Hybrid, SearchMode::Vector, SearchMode::Lexical] {
        let request = |i: usize| {
            let mut raw = RawSearch::query(&queries[i]);
            raw.mode = Some(mode.as_str().to_owned());
            if i % 4 == 3 {
                raw.repository = Some(mid[i % mid.len()].clone());
            }
            SearchRequest::new(raw, &cfg.search)
        };
        // Warm the connections and the buffer cache with queries not measured.
        for i in 0..20 {
            let mut raw = RawSearch::query(format!("warm up {i}"));
            raw.mode = Some(mode.as_str().to_owned());
            service
                .search(&SearchRequest::new(raw, &cfg.search)?)
                .await?;
        }
        let mut times = time_searches(&service, queries.len(), |i| Ok(request(i)?)).await?;
        if let Some(n) = slowest_wanted() {
            let label = |i: usize| match i % 4 {
                3 => format!("{:?} in {}", queries[i], mid[i % mid.len()]),
                _ => format!("{:?}", queries[i]),
            };
            println!("{}", latency_row(mode.as_str(), &mut times.clone()));
            println!("           slowest: {}", slowest(&times, label, n));
        } else {
            println!("{}", latency_row(mode.as_str(), &mut times));
        }
    }

    // Queries that name a definition (`Type::method`, as an agent pastes it), which adds the
    // definition lookup to the hybrid search.
    let named: Vec<String> = sqlx::query_scalar(
        "SELECT symbol FROM codebase_index
         WHERE defines IS NOT NULL AND symbol ~ '^[A-Za-z_][A-Za-z0-9_]*(::|\\.)[A-Za-z_][A-Za-z0-9_]*$'
         ORDER BY md5(id::text) LIMIT 400",
    )
    .fetch_all(store.pool())
    .await?;
    if named.is_empty() {
        println!("  (no chunk records its definitions: the corpus predates chunker version 4)");
    } else {
        let mut times = time_searches(&service, named.len(), |i| {
            Ok(SearchRequest::new(
                RawSearch::query(named[i].clone()),
                &cfg.search,
            )?)
        })
        .await?;
        println!(
            "{}   ({} queries naming a definition, e.g. {:?})",
            latency_row("hybrid", &mut times),
            named.len(),
            named[0]
        );
    }

    filtered(&service, &cfg, mid, &queries, SearchMode::Hybrid, total).await?;

    if std::env::var("BENCH_SKIP_INTEL").is_err() {
        intelligence(&service).await?;
    }

    if let Some(n) = std::env::var("BENCH_WORKSPACES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 1)
    {
        workspaces(&store, &cfg, n, &queries).await?;
    }

    if std::env::var("BENCH_SKIP_RECALL").is_ok() {
        return Ok(());
    }
    // 3. Recall against exact search. The exact side runs on connections where index scans
    // are disabled, so the planner scans the rows and sorts them by full-precision distance.
    let exact = exact_store(&cfg).await?;
    let model = embedder.model_id().to_owned();
    let tests_regex = glob_to_regex("**/tests/**").map_err(anyhow::Error::msg)?;
    // (name, the filters of the i-th query, the SQL predicate of the i-th query's filters)
    type Case<'a> = (
        &'a str,
        Box<dyn Fn(usize) -> Filters + 'a>,
        Box<dyn Fn(usize) -> String + 'a>,
    );
    let filter_cases: Vec<Case<'_>> = vec![
        (
            "none",
            Box::new(|_| Filters::default()),
            Box::new(|_| "true".into()),
        ),
        (
            "one repository",
            Box::new(|i| Filters {
                repositories: Some(vec![mid[i % mid.len()].clone()]),
                ..Filters::default()
            }),
            Box::new(|i| format!("repository = '{}'", mid[i % mid.len()].replace('\'', "''"))),
        ),
        (
            "path **/tests/**",
            Box::new(|_| Filters {
                path_regex: Some(tests_regex.clone()),
                ..Filters::default()
            }),
            Box::new(|_| format!("file_path ~ '{}'", tests_regex.replace('\'', "''"))),
        ),
        (
            "fileTypes md",
            Box::new(|_| Filters {
                file_types: Some(vec!["md".into()]),
                ..Filters::default()
            }),
            Box::new(|_| "file_type = 'md'".into()),
        ),
        (
            "modules tests",
            Box::new(|_| Filters {
                modules: Some(vec!["tests".into()]),
                ..Filters::default()
            }),
            Box::new(|_| "module = 'tests'".into()),
        ),
        // A filter most rows pass: too many for an exact scan, so the graph is walked.
        (
            "languages rust",
            Box::new(|_| Filters {
                languages: Some(vec!["rust".into()]),
                ..Filters::default()
            }),
            Box::new(|_| "language = 'rust'".into()),
        ),
    ];
    let probes: Vec<Vec<f32>> = embedder
        .embed(
            &queries.iter().step_by(4).cloned().collect::<Vec<_>>(),
            InputKind::Query,
        )
        .await?;
    println!(
        "\n[recall@10 of HNSW against exact search at {total} chunks, {} queries per row; ef_search by default here: {} unfiltered, {} filtered]",
        probes.len(),
        ef_search_for(cfg.search.hnsw_ef_search, total, false),
        ef_search_for(cfg.search.hnsw_ef_search, total, true)
    );
    let scope = store.scope(codesearch::config::DEFAULT_WORKSPACE).await?;
    for (name, filters, predicate) in &filter_cases {
        let matching: i64 = sqlx::query_scalar(&format!(
            "SELECT count(*) FROM codebase_index WHERE {}",
            predicate(0)
        ))
        .fetch_one(store.pool())
        .await?;
        let mut truths = Vec::with_capacity(probes.len());
        let started = Instant::now();
        for (i, probe) in probes.iter().enumerate() {
            truths.push(exact_top10(&exact, probe, &model, &predicate(i)).await?);
        }
        let exact_ms = started.elapsed().as_secs_f64() * 1000.0 / probes.len() as f64;
        println!(
            "  filter {name} ({:.1}% of rows; full-precision scan of codebase_index {exact_ms:.2} ms per query):",
            100.0 * matching as f64 / total.max(1) as f64,
        );
        for ef in EF_SEARCH {
            let (mut found, mut wanted, mut short) = (0usize, 0usize, 0usize);
            let started = Instant::now();
            for (i, truth) in truths.iter().enumerate() {
                let f = filters(i);
                let mut ann = store
                    .vector_search(&depth40(&probes[i], &model, &scope, &f, ef))
                    .await?;
                ann.truncate(10);
                let (f, w, s) = recall_counts(truth, &ann);
                (found, wanted, short) = (found + f, wanted + w, short + s);
            }
            println!(
                "    ef_search {ef:>3}: recall@10 {:.3}, {short} short answers, {:.2} ms per query",
                found as f64 / wanted.max(1) as f64,
                started.elapsed().as_secs_f64() * 1000.0 / probes.len() as f64
            );
        }
    }
    Ok(())
}
