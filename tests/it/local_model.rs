//! The in-process model (all-MiniLM-L6-v2 files from `scripts/setup.sh`), for real semantics.

use std::sync::Arc;

use codesearch::config::Config;
use codesearch::embed::{Embedder, InputKind, LocalEmbedder};
use codesearch::pipeline::Indexer;
use codesearch::search::{RawSearch, SearchRequest, SearchService};
use codesearch::store::Store;
use tokio_util::sync::CancellationToken;

use crate::support::{self, test_db};

fn embedder() -> LocalEmbedder {
    let mut cfg = Config::defaults().expect("defaults").embed;
    cfg.model_dir = support::tools().model_dir.clone();
    LocalEmbedder::load(&cfg).expect("model loads")
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
