//! The Ollama client against a server speaking Ollama's API, failures included.

use std::time::Duration;

use codesearch::config::{Config, EmbedConfig};
use codesearch::embed::{EmbedError, Embedder, InputKind, OllamaEmbedder};

use crate::support::ollama::{FakeOllama, Mode};

fn cfg(url: &str) -> EmbedConfig {
    let mut c = Config::defaults().expect("defaults").embed;
    c.ollama_url = url.to_owned();
    c.ollama_timeout_secs = 2;
    c.ollama_batch_size = 2;
    c
}

fn texts(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("fn handler_{i}() {{}}")).collect()
}

#[tokio::test]
async fn embeds_in_batches_with_task_prefixes() {
    let fake = FakeOllama::start(Mode::Healthy).await;
    let e = OllamaEmbedder::new(&cfg(&fake.url)).expect("client");
    assert_eq!(e.model_id(), "ollama/nomic-embed-text");
    let v = e
        .embed(&texts(5), InputKind::Document)
        .await
        .expect("embeds");
    assert_eq!(v.len(), 5);
    assert!(v.iter().all(|x| x.len() == 768));
    let norm: f32 = v[0].iter().map(|x| x * x).sum();
    assert!((norm - 1.0).abs() < 1e-4, "unit length, got {norm}");
    e.embed(&["where is auth".to_owned()], InputKind::Query)
        .await
        .expect("query");
    let log = fake.log.lock().expect("lock");
    assert_eq!(
        log.inputs.len(),
        4,
        "batches of 2: 2 + 2 + 1, then the query"
    );
    assert!(log.inputs[0][0].starts_with("search_document: fn handler_0"));
    assert_eq!(
        log.inputs[3],
        vec!["search_query: where is auth".to_owned()]
    );
}

#[tokio::test]
async fn missing_model_says_how_to_fix_it() {
    let fake = FakeOllama::start(Mode::ModelMissing).await;
    let e = OllamaEmbedder::new(&cfg(&fake.url)).expect("client");
    let err = e
        .embed(&texts(1), InputKind::Document)
        .await
        .expect_err("404");
    assert!(matches!(err, EmbedError::ModelMissing { .. }), "{err:?}");
    assert!(
        err.to_string().contains("ollama pull nomic-embed-text"),
        "{err}"
    );
    assert!(!err.is_transient());
    let probe = OllamaEmbedder::probe(&cfg(&fake.url))
        .await
        .expect_err("not pulled");
    assert!(matches!(probe, EmbedError::ModelMissing { .. }));
}

#[tokio::test]
async fn server_errors_are_retried_then_reported_as_transient() {
    let fake = FakeOllama::start(Mode::ServerError).await;
    let e = OllamaEmbedder::new(&cfg(&fake.url)).expect("client");
    let err = e
        .embed(&texts(1), InputKind::Document)
        .await
        .expect_err("500");
    assert!(
        matches!(err, EmbedError::Server { status: 500, .. }),
        "{err:?}"
    );
    assert!(err.is_transient());
    assert_eq!(fake.requests(), 3, "three attempts");
}

#[tokio::test]
async fn a_busy_server_is_retried_until_it_answers() {
    let fake = FakeOllama::start(Mode::BusyFor(2)).await;
    let e = OllamaEmbedder::new(&cfg(&fake.url)).expect("client");
    let v = e
        .embed(&texts(1), InputKind::Document)
        .await
        .expect("third try succeeds");
    assert_eq!(v.len(), 1);
    assert_eq!(fake.requests(), 3);
}

#[tokio::test]
async fn wrong_dimension_is_refused() {
    let fake = FakeOllama::start(Mode::WrongDimension).await;
    let e = OllamaEmbedder::new(&cfg(&fake.url)).expect("client");
    let err = e
        .embed(&texts(1), InputKind::Document)
        .await
        .expect_err("1024 != 768");
    assert!(
        matches!(
            err,
            EmbedError::Dimension {
                got: 1024,
                expected: 768,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_hanging_server_times_out() {
    let fake = FakeOllama::start(Mode::Hang).await;
    let mut c = cfg(&fake.url);
    c.ollama_timeout_secs = 1;
    let e = OllamaEmbedder::new(&c).expect("client");
    let started = std::time::Instant::now();
    let err = e
        .embed(&texts(1), InputKind::Document)
        .await
        .expect_err("timeout");
    assert!(matches!(err, EmbedError::Timeout { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn an_unreachable_server_is_a_transient_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let e = OllamaEmbedder::new(&cfg(&format!("http://127.0.0.1:{port}"))).expect("client");
    let err = e
        .embed(&texts(1), InputKind::Document)
        .await
        .expect_err("refused");
    assert!(matches!(err, EmbedError::Unreachable { .. }), "{err:?}");
    assert!(err.is_transient());
}
