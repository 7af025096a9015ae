//! The in-process model (all-MiniLM-L6-v2 files from `scripts/setup.sh`), for real semantics.

use std::sync::Arc;

use codesearch::config::{Config, LocalEngine};
use codesearch::embed::{Embedder, InputKind, LocalEmbedder};
use codesearch::pipeline::Indexer;
use codesearch::search::{RawSearch, SearchRequest, SearchService};
use codesearch::store::Store;
use tokio_util::sync::CancellationToken;

use crate::support::{self, test_db};

/// The model on ONNX Runtime, the engine `scripts/setup.sh` installs.
fn embedder() -> LocalEmbedder {
    engine(LocalEngine::Onnx)
}

fn engine(engine: LocalEngine) -> LocalEmbedder {
    let defaults = Config::defaults().expect("defaults").embed;
    engine_with(engine, defaults.local_query_int8, defaults.local_query_map)
}

/// `int8_queries`: queries through the copy of the model with 8-bit weights; `query_map`:
/// queries' vectors through the learned map (off where a test compares the model's own).
fn engine_with(engine: LocalEngine, int8_queries: bool, query_map: bool) -> LocalEmbedder {
    let mut cfg = Config::defaults().expect("defaults").embed;
    cfg.model_dir = support::tools().model_dir.clone();
    cfg.onnxruntime = support::tools().onnxruntime.clone();
    cfg.local_engine = engine;
    cfg.local_query_int8 = int8_queries;
    cfg.local_query_map = query_map;
    LocalEmbedder::load(&cfg).expect("model loads")
}

async fn vectors(e: &LocalEmbedder, texts: &[String], kind: InputKind) -> Vec<Vec<f32>> {
    e.embed(texts, kind).await.expect("embeds")
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[tokio::test]
async fn similar_meanings_are_closer_than_unrelated_ones() {
    let e = embedder();
    assert_eq!(e.model_id(), "local/all-MiniLM-L6-v2");
    assert_eq!(e.dimension(), 384);
    let texts: Vec<String> = [
        "function that validates a user's password and hashes it",
        "check the login credentials of an account",
        "render a bar chart of monthly sales",
    ]
    .map(String::from)
    .to_vec();
    let v = e.embed(&texts, InputKind::Document).await.expect("embeds");
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.1);
    // Batching and ordering do not change vectors.
    let alone = e
        .embed(&texts[2..], InputKind::Document)
        .await
        .expect("embeds");
    assert!(cosine(&v[2], &alone[0]) > 0.9999);
}

/// ONNX Runtime runs a graph this crate writes; candle runs its own BERT. Same vectors, or an
/// index built by one would be searched wrongly by the other.
#[tokio::test]
async fn both_engines_give_the_same_vectors() {
    let onnx = engine_with(LocalEngine::Onnx, false, false);
    let candle = engine(LocalEngine::Candle);
    let long = "fn parse(input: &str) -> Result<Config, Error> { input.lines().map(str::trim) } "
        .repeat(20);
    let texts: Vec<String> = [
        "x",
        "parse the configuration file and report errors",
        "def verify_password(user, password):\n    return bcrypt.checkpw(password, user.hash)",
        long.as_str(), // longer than local_max_tokens: truncated the same way
        "Ünïcödé, emoji 🚀 and CJK 検索",
    ]
    .map(String::from)
    .to_vec();
    // One batch with padding, and each text alone.
    let a = onnx.embed(&texts, InputKind::Document).await.expect("onnx");
    let b = candle
        .embed(&texts, InputKind::Document)
        .await
        .expect("candle");
    for (i, text) in texts.iter().enumerate() {
        let alone = onnx
            .embed(std::slice::from_ref(text), InputKind::Query)
            .await
            .expect("onnx alone");
        assert!(
            cosine(&a[i], &b[i]) > 0.99999,
            "text {i}: {}",
            cosine(&a[i], &b[i])
        );
        assert!(cosine(&a[i], &alone[0]) > 0.99999, "text {i} alone");
    }
    assert_eq!(onnx.model_id(), candle.model_id());
}

/// Queries may go through a copy of the model with 8-bit weights (the default): their vectors
/// are not the exact model's, but within 0.999 of them, so they search an index of exact
/// document vectors as well. Documents always go through the exact model.
#[tokio::test]
async fn queries_through_8_bit_weights_stay_next_to_the_exact_vectors() {
    assert!(Config::defaults().expect("defaults").embed.local_query_int8);
    let exact = engine_with(LocalEngine::Onnx, false, false);
    let int8 = engine_with(LocalEngine::Onnx, true, false);
    // The 8-bit copy is the queries' own model: they need not wait for documents.
    assert!(int8.queries_apart());
    assert!(!exact.queries_apart());
    let texts: Vec<String> = [
        "x",
        "parse the configuration file and report errors",
        "where does the daemon retry a failed embedding batch",
        "Ünïcödé, emoji 🚀 and CJK 検索",
    ]
    .map(String::from)
    .to_vec();
    let documents = int8
        .embed(&texts, InputKind::Document)
        .await
        .expect("documents");
    let mut lowest = f32::INFINITY;
    for (i, text) in texts.iter().enumerate() {
        let one = std::slice::from_ref(text);
        let want = exact.embed(one, InputKind::Query).await.expect("exact");
        let got = int8.embed(one, InputKind::Query).await.expect("int8");
        assert!(
            cosine(&documents[i], &want[0]) > 0.99999,
            "text {i}: documents are exact"
        );
        let c = cosine(&got[0], &want[0]);
        assert!(c > 0.999, "text {i}: {c}");
        lowest = lowest.min(c);
    }
    assert!(
        lowest < 0.99999,
        "the queries went through the 8-bit weights: {lowest}"
    );
}

/// Queries' vectors go through the learned map (`embed.local_query_map`, on by default):
/// moved, but near where the model put them. Documents' never do, so the stored vectors do not
/// depend on the setting, and candle's queries go through it as ONNX Runtime's do.
#[tokio::test]
async fn the_query_map_moves_queries_and_leaves_documents_alone() {
    assert!(Config::defaults().expect("defaults").embed.local_query_map);
    let plain = engine_with(LocalEngine::Onnx, false, false);
    let mapped = engine_with(LocalEngine::Onnx, false, true);
    let candle = engine_with(LocalEngine::Candle, false, true);
    let texts: Vec<String> = [
        "retry the request when the connection is reset",
        "Fix panic on empty glob pattern",
        "parse_duration",
    ]
    .map(String::from)
    .to_vec();
    let (a, b) = (
        vectors(&plain, &texts, InputKind::Document).await,
        vectors(&mapped, &texts, InputKind::Document).await,
    );
    let (q_plain, q_mapped, q_candle) = (
        vectors(&plain, &texts, InputKind::Query).await,
        vectors(&mapped, &texts, InputKind::Query).await,
        vectors(&candle, &texts, InputKind::Query).await,
    );
    for i in 0..texts.len() {
        assert!(
            cosine(&a[i], &b[i]) > 0.99999,
            "text {i}: documents unmoved"
        );
        assert!(
            cosine(&q_plain[i], &a[i]) > 0.99999,
            "text {i}: no map, no move"
        );
        let moved = cosine(&q_mapped[i], &q_plain[i]);
        assert!(moved > 0.6 && moved < 0.999, "text {i}: moved to {moved}");
        let norm = q_mapped[i].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "text {i}: unit length, {norm}");
        assert!(
            cosine(&q_candle[i], &q_mapped[i]) > 0.99999,
            "text {i}: candle too"
        );
    }
}

#[tokio::test]
async fn a_missing_onnx_runtime_is_a_clear_error_or_a_fallback() {
    let mut cfg = Config::defaults().expect("defaults").embed;
    cfg.model_dir = support::tools().model_dir.clone();
    cfg.onnxruntime = "/nonexistent/libonnxruntime.so".into();
    cfg.local_engine = LocalEngine::Auto;
    let fallback = LocalEmbedder::load(&cfg).expect("auto falls back to candle");
    assert_eq!(fallback.dimension(), 384);
    cfg.local_engine = LocalEngine::Onnx;
    let Err(e) = LocalEmbedder::load(&cfg) else {
        panic!("engine = onnx without the library must fail");
    };
    let message = e.to_string();
    assert!(
        message.contains("/nonexistent/libonnxruntime.so") && message.contains("setup.sh"),
        "{message}"
    );
}

#[tokio::test]
async fn a_description_of_a_function_finds_it() {
    let db = test_db().await;
    let cfg = support::config(&db, "nats://unused");
    let store = Store::connect(&cfg.database).await.expect("connect");
    let e: Arc<dyn Embedder> = Arc::new(embedder());
    let repo = support::repo(&[
        (
            "src/auth.py",
            "def verify_password(user, password):\n    \"\"\"Compare a password with the stored bcrypt hash.\"\"\"\n    return bcrypt.checkpw(password.encode(), user.password_hash)\n",
        ),
        (
            "src/charts.ts",
            "export function renderSalesChart(el: HTMLElement, months: number[]) {\n  const svg = d3.select(el).append('svg');\n  svg.selectAll('rect').data(months).enter().append('rect');\n}\n",
        ),
        (
            "src/mail.go",
            "package mail\n\n// SendWelcomeEmail mails a new user their activation link.\nfunc SendWelcomeEmail(to string, link string) error {\n\treturn smtp.SendMail(host, nil, from, []string{to}, body(link))\n}\n",
        ),
    ]);
    let indexer = Indexer::new(store.clone(), Arc::clone(&e), cfg.index.clone()).expect("indexer");
    indexer
        .index_root(repo.path(), None, &CancellationToken::new())
        .await
        .expect("index");
    let service = SearchService::new(store, e, cfg.search.clone());
    for (query, expected) in [
        ("check whether the login password is correct", "src/auth.py"),
        ("draw a chart of sales per month", "src/charts.ts"),
        ("send an email to a newly registered user", "src/mail.go"),
    ] {
        let raw = RawSearch {
            limit: Some(1),
            mode: Some("vector".into()),
            ..RawSearch::query(query)
        };
        let req = SearchRequest::new(raw, &cfg.search).expect("valid");
        let out = service.search(&req).await.expect("search");
        assert_eq!(out.hits[0].hit.file_path, expected, "{query}");
    }
}
