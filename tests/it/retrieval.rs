//! Hybrid retrieval against a real PostgreSQL: lexical BM25 over split identifiers, fusion,
//! filters, paging, spreading, caching, and the lexical fallback while the embedder is down.

use std::sync::Arc;

use codesearch::config::{Config, SearchMode};
use codesearch::context::{ContextRequest, ContextService};
use codesearch::embed::{Embedder, HashEmbedder, OllamaEmbedder};
use codesearch::pipeline::Indexer;
use codesearch::search::{RawSearch, ScoredHit, SearchOutcome, SearchRequest, SearchService};
use codesearch::store::{
    FileQuery, FileStats, FileTerm, Filters, LexicalQuery, POOLED_CHUNKS, Store, TermWeight,
};
use tokio_util::sync::CancellationToken;

use crate::support::{self, TestDb, test_db};

struct Fixture {
    _db: TestDb,
    repo: tempfile::TempDir,
    cfg: Config,
    store: Store,
    indexer: Indexer,
    service: SearchService,
}

impl Fixture {
    async fn new<S: AsRef<str>>(files: &[(S, S)]) -> Self {
        let db = test_db().await;
        let mut cfg = support::config(&db, "nats://unused");
        cfg.index.repository = "app".into();
        let store = Store::connect(&cfg.database).await.expect("connect");
        let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(384));
        let indexer =
            Indexer::new(store.clone(), embedder.clone(), cfg.index.clone()).expect("indexer");
        let service = SearchService::new(store.clone(), embedder, cfg.search.clone());
        let f = Self {
            _db: db,
            repo: support::repo(files),
            cfg,
            store,
            indexer,
            service,
        };
        f.index().await;
        f
    }

    async fn index(&self) {
        self.indexer
            .index_root(self.repo.path(), None, &CancellationToken::new())
            .await
            .expect("index");
    }

    async fn search(&self, raw: RawSearch) -> SearchOutcome {
        let req = SearchRequest::new(raw, &self.cfg.search).expect("valid request");
        self.service.search(&req).await.expect("search")
    }

    async fn paths(&self, raw: RawSearch) -> Vec<String> {
        self.search(raw)
            .await
            .hits
            .into_iter()
            .map(|h| h.hit.file_path)
            .collect()
    }
}

fn lexical(query: &str) -> RawSearch {
    RawSearch {
        mode: Some("lexical".into()),
        limit: Some(10),
        ..RawSearch::query(query)
    }
}

const FILES: &[(&str, &str)] = &[
    (
        "src/users/repo.ts",
        "export class UserRepository {\n  getUserById(id: string) {\n    return this.db.one('select * from users where id = $1', [id]);\n  }\n}\n",
    ),
    (
        "src/http/parse.py",
        "def parse_http_response(raw):\n    head, body = raw.split(b'\\r\\n\\r\\n', 1)\n    return head, body\n",
    ),
    (
        "src/billing/invoice.service.ts",
        "export class InvoiceService {\n  validateTotals(lines: number[], total: number) {\n    if (sum(lines) !== total) throw new Error('invoice total mismatch');\n  }\n}\n",
    ),
    (
        "src/billing/handler.go",
        "package billing\n\n// Handler serves invoice requests.\nfunc Handler(w http.ResponseWriter, r *http.Request) {\n\tw.Write([]byte(\"ok\"))\n}\n",
    ),
    (
        "docs/billing.md",
        "# Billing\n\nInvoices are validated before they are sent: the total must equal the sum of the lines.\n",
    ),
    (
        "migrations/001_users.sql",
        "CREATE TABLE users (id TEXT PRIMARY KEY, email TEXT NOT NULL);\n",
    ),
];

#[tokio::test]
async fn identifiers_are_found_by_their_parts_and_whole() {
    let f = Fixture::new(FILES).await;
    for query in [
        "get user by id",
        "getUserById",
        "get_user_by_id",
        "UserRepository",
    ] {
        let paths = f.paths(lexical(query)).await;
        assert_eq!(
            paths.first().map(String::as_str),
            Some("src/users/repo.ts"),
            "{query}"
        );
    }
    for query in [
        "parse http response",
        "parseHttpResponse",
        "HTTP response parsing",
    ] {
        let paths = f.paths(lexical(query)).await;
        assert_eq!(
            paths.first().map(String::as_str),
            Some("src/http/parse.py"),
            "{query}"
        );
    }
    // An error string, stemmed: "mismatched totals" meets "total mismatch".
    let paths = f.paths(lexical("mismatched invoice totals")).await;
    assert_eq!(paths[0], "src/billing/invoice.service.ts");
    // Paths are searchable.
    let paths = f.paths(lexical("migrations users")).await;
    assert_eq!(paths[0], "migrations/001_users.sql");
    // Only stop words: no terms, no results, no error.
    assert!(f.paths(lexical("the of and")).await.is_empty());
}

#[tokio::test]
async fn a_named_identifier_finds_its_definition_first() {
    // The tests call `max_frame_length` far more often than the codec defines it, and two
    // types have a `max_frame_length`; `new` is defined in more than 10 places.
    let calls = "    let c = Builder::new().max_frame_length(8).new_codec();\n".repeat(30);
    let mut files: Vec<(String, String)> = vec![
        (
            "tests/length_delimited.rs".into(),
            format!("#[test]\nfn frames_fit() {{\n{calls}}}\n"),
        ),
        (
            "src/codec/length_delimited.rs".into(),
            "pub struct Builder { max: usize }\n\nimpl Builder {\n    /// Sets the maximum frame length.\n    pub fn max_frame_length(&mut self, val: usize) -> &mut Self {\n        self.max = val;\n        self\n    }\n}\n".into(),
        ),
        (
            "src/codec/codec.rs".into(),
            "pub struct LengthDelimitedCodec { max: usize }\n\nimpl LengthDelimitedCodec {\n    /// Returns the current maximum frame length.\n    pub fn max_frame_length(&self) -> usize {\n        self.max\n    }\n}\n".into(),
        ),
    ];
    for i in 0..12 {
        files.push((
            format!("src/t{i}.rs"),
            format!("pub struct T{i};\n\nimpl T{i} {{\n    pub fn new() -> Self {{\n        T{i}\n    }}\n}}\n"),
        ));
    }
    let f = Fixture::new(&files).await;
    for mode in ["hybrid", "lexical"] {
        let search = |query: &str| RawSearch {
            mode: Some(mode.into()),
            limit: Some(10),
            ..RawSearch::query(query)
        };
        // Each file is one chunk here (small definitions merge): the definition is the file's.
        let out = f.search(search("max_frame_length")).await;
        let mut top: Vec<(&str, Option<f64>)> = out
            .hits
            .iter()
            .take(2)
            .map(|h| (h.hit.file_path.as_str(), h.definition))
            .collect();
        top.sort_by(|a, b| a.0.cmp(b.0));
        assert_eq!(
            top,
            [
                ("src/codec/codec.rs", Some(1.0)),
                ("src/codec/length_delimited.rs", Some(1.0))
            ],
            "{mode}"
        );
        // Qualified, the owner decides; the other type's method matches by name only.
        let out = f
            .search(search("LengthDelimitedCodec::max_frame_length"))
            .await;
        assert_eq!(out.hits[0].hit.file_path, "src/codec/codec.rs", "{mode}");
        assert_eq!(out.hits[0].definition, Some(1.0));
        let other = out
            .hits
            .iter()
            .find(|h| h.hit.file_path == "src/codec/length_delimited.rs")
            .expect("the other max_frame_length");
        assert_eq!(other.definition, Some(0.6), "{mode}");
        // `new` is defined twelve times: it names nothing in particular.
        let out = f.search(search("T3::new")).await;
        assert_eq!(out.hits[0].hit.file_path, "src/t3.rs", "{mode}");
        assert!(
            out.hits
                .iter()
                .filter(|h| h.hit.file_path != "src/t3.rs")
                .all(|h| h.definition.is_none()),
            "{mode}"
        );
    }
    // Prose names no identifier, and vector mode never looks one up.
    let out = f.search(lexical("maximum frame length")).await;
    assert!(out.hits.iter().all(|h| h.definition.is_none()));
    let out = f
        .search(RawSearch {
            mode: Some("vector".into()),
            ..RawSearch::query("max_frame_length")
        })
        .await;
    assert!(out.hits.iter().all(|h| h.definition.is_none()));
}

#[tokio::test]
async fn rare_terms_outweigh_common_ones() {
    // Forty files say "handler"; one says "refund handler".
    let mut files: Vec<(String, String)> = (0..40)
        .map(|i| {
            (
                format!("src/h{i}.rs"),
                format!("fn handler_{i}() {{ handler(); handler(); }}\n"),
            )
        })
        .collect();
    files.push((
        "src/refund.rs".into(),
        "fn process() { refund(); handler(); }\n".into(),
    ));
    let f = Fixture::new(&files).await;
    let paths = f.paths(lexical("refund handler")).await;
    assert_eq!(paths[0], "src/refund.rs");
}

#[tokio::test]
async fn a_word_the_query_keeps_coming_back_to_weighs_more() {
    // One file says "retry" twice, the other "cache" once: on their words alone the first wins.
    let files = [
        ("src/a.rs", "fn send() { retry(); retry(); }\n"),
        ("src/b.rs", "fn lookup() { cache(); other(); }\n"),
        ("src/c.rs", "fn main() { start(); }\n"),
    ];
    let f = Fixture::new(&files).await;
    assert_eq!(f.paths(lexical("retry cache")).await[0], "src/a.rs");
    // A description that is about the cache, and mentions a retry once.
    let paths = f
        .paths(lexical(
            "a cache miss: the cache is read again after a retry, so the cache fills twice",
        ))
        .await;
    assert_eq!(paths[0], "src/b.rs", "{paths:?}");
}

#[tokio::test]
async fn every_mode_reports_its_scores_and_hybrid_fuses_them() {
    let f = Fixture::new(FILES).await;
    let out = f
        .search(RawSearch {
            limit: Some(10),
            ..RawSearch::query("validate invoice totals")
        })
        .await;
    assert_eq!(out.mode, SearchMode::Hybrid);
    assert!(out.warning.is_none());
    let top: &ScoredHit = &out.hits[0];
    assert_eq!(top.hit.file_path, "src/billing/invoice.service.ts");
    assert!(
        top.vector_rank.is_some() && top.file_lexical_rank.is_some(),
        "{top:?}"
    );
    assert!(top.hit.similarity.is_some() && top.file_lexical.is_some());
    assert!(out.hits.windows(2).all(|w| w[0].score >= w[1].score));

    let out = f
        .search(RawSearch {
            mode: Some("vector".into()),
            ..RawSearch::query("validate invoice totals")
        })
        .await;
    assert!(
        out.hits
            .iter()
            .all(|h| h.lexical_rank.is_none() && h.file_lexical_rank.is_none())
    );
    assert!(out.hits.iter().all(|h| Some(h.score) == h.hit.similarity));

    let out = f.search(lexical("validate invoice totals")).await;
    assert!(out.hits.iter().all(|h| h.vector_rank.is_none()));
    assert!(out.hits.iter().all(|h| h.file_lexical.is_some()));
    assert!(out.hits.windows(2).all(|w| w[0].score >= w[1].score));
    // Lexical mode without minSimilarity does not embed the query.
    assert!(out.hits.iter().all(|h| h.hit.similarity.is_none()));
    // With it, the cosine is known and the threshold holds on lexical results too.
    let out = f
        .search(RawSearch {
            min_similarity: Some(0.2),
            ..lexical("validate invoice totals")
        })
        .await;
    assert!(!out.hits.is_empty());
    assert!(
        out.hits
            .iter()
            .all(|h| h.hit.similarity.is_some_and(|s| s >= 0.2))
    );
}

#[tokio::test]
async fn filters_and_paging_hold_in_every_mode() {
    let f = Fixture::new(FILES).await;
    for mode in ["hybrid", "vector", "lexical"] {
        let q = |raw: RawSearch| RawSearch {
            mode: Some(mode.into()),
            limit: Some(10),
            ..raw
        };
        let base = || RawSearch::query("invoice users total id");
        let hits = f
            .search(q(RawSearch {
                component_types: Some(vec!["service".into()]),
                ..base()
            }))
            .await
            .hits;
        assert!(!hits.is_empty(), "{mode}");
        assert!(
            hits.iter()
                .all(|h| h.hit.component_type.as_deref() == Some("service")),
            "{mode}"
        );

        let hits = f
            .search(q(RawSearch {
                languages: Some(vec!["Go".into()]),
                ..base()
            }))
            .await
            .hits;
        assert!(!hits.is_empty(), "{mode}");
        assert!(
            hits.iter().all(|h| h.hit.language.as_deref() == Some("go")),
            "{mode}"
        );

        let hits = f
            .search(q(RawSearch {
                path_glob: Some("src/**/*.ts".into()),
                ..base()
            }))
            .await
            .hits;
        let mut paths: Vec<&str> = hits.iter().map(|h| h.hit.file_path.as_str()).collect();
        paths.sort();
        assert_eq!(
            paths,
            ["src/billing/invoice.service.ts", "src/users/repo.ts"],
            "{mode}"
        );

        let hits = f
            .search(q(RawSearch {
                path_glob: Some("*.sql".into()),
                ..base()
            }))
            .await
            .hits;
        assert_eq!(hits.len(), 1, "{mode}");

        // File types and languages are checked on the file's row in the file-level list
        // (its path's extension, its recorded language): the same files as their chunks say.
        let hits = f
            .search(q(RawSearch {
                file_types: Some(vec!["ts".into(), "md".into()]),
                ..base()
            }))
            .await
            .hits;
        let mut paths: Vec<&str> = hits.iter().map(|h| h.hit.file_path.as_str()).collect();
        paths.sort();
        paths.dedup();
        assert_eq!(
            paths,
            [
                "docs/billing.md",
                "src/billing/invoice.service.ts",
                "src/users/repo.ts"
            ],
            "{mode}"
        );
        if mode != "vector" {
            // Found by the file-level list too, not only by the chunks' lists.
            let by_file: Vec<&str> = hits
                .iter()
                .filter(|h| h.file_lexical_rank.is_some())
                .map(|h| h.hit.file_path.as_str())
                .collect();
            assert_eq!(by_file.len(), 3, "{mode}: {by_file:?}");
        }
        // Modules and component types too (migration 0017), and through the chunks for a row
        // that does not record them (written before it).
        if mode == "hybrid" {
            let written: (Option<String>, Option<String>, bool) = sqlx::query_as(
                "SELECT module, component_type, attributes_recorded FROM indexed_files
                 WHERE file_path = 'src/billing/invoice.service.ts'",
            )
            .fetch_one(f.store.pool())
            .await
            .expect("row");
            assert_eq!(
                written,
                (Some("src".to_owned()), Some("service".to_owned()), true),
                "as the writer records them"
            );
        }
        for recorded in [true, false] {
            sqlx::query(
                "UPDATE indexed_files SET attributes_recorded = $1,
                   module = CASE WHEN $1 THEN 'src' END,
                   component_type = CASE WHEN $1 THEN 'service' END
                 WHERE file_path = 'src/billing/invoice.service.ts'",
            )
            .bind(recorded)
            .execute(f.store.pool())
            .await
            .expect("update");
            let hits = f
                .search(q(RawSearch {
                    modules: Some(vec!["src".into()]),
                    component_types: Some(vec!["service".into()]),
                    ..base()
                }))
                .await
                .hits;
            let paths: Vec<&str> = hits.iter().map(|h| h.hit.file_path.as_str()).collect();
            assert_eq!(
                paths,
                ["src/billing/invoice.service.ts"],
                "{mode} {recorded}"
            );
            if mode != "vector" {
                assert!(hits[0].file_lexical_rank.is_some(), "{mode} {recorded}");
            }
        }
        let hits = f
            .search(q(RawSearch {
                languages: Some(vec!["typescript".into(), "sql".into()]),
                file_types: Some(vec!["sql".into()]),
                ..base()
            }))
            .await
            .hits;
        let paths: Vec<&str> = hits.iter().map(|h| h.hit.file_path.as_str()).collect();
        assert_eq!(paths, ["migrations/001_users.sql"], "{mode}");

        // An unknown repository is the caller's error, naming the ones there are.
        let req = SearchRequest::new(
            q(RawSearch {
                repository: Some("elsewhere".into()),
                ..base()
            }),
            &f.cfg.search,
        )
        .expect("valid request");
        match f.service.search(&req).await {
            Err(codesearch::search::SearchError::Invalid(m)) => {
                assert!(m.contains("`elsewhere`") && m.contains("app"), "{m}")
            }
            other => panic!("{mode}: {:?}", other.map(|o| o.hits.len())),
        }
        let all = f
            .search(q(RawSearch {
                repository: Some("app".into()),
                ..base()
            }))
            .await
            .hits;
        assert!(all.len() >= 3, "{mode}");

        // Paging: offset 1 is the same list without its first result.
        let paged = f
            .search(q(RawSearch {
                offset: Some(1),
                ..base()
            }))
            .await
            .hits;
        let ids = |h: &[ScoredHit]| h.iter().map(|h| h.hit.id).collect::<Vec<_>>();
        let full = f.search(q(base())).await.hits;
        assert_eq!(ids(&paged), ids(&full)[1..], "{mode}");
    }
}

#[tokio::test]
async fn a_language_no_file_is_in_is_named_with_the_languages_there() {
    let f = Fixture::new(FILES).await;
    // `--language 2`, meant as a limit: nothing is in that language, and the reply says so.
    let out = f
        .search(RawSearch {
            languages: Some(vec!["2".into()]),
            ..RawSearch::query("invoice total")
        })
        .await;
    assert!(out.hits.is_empty());
    let warning = out.warning.expect("a warning");
    assert!(
        warning.contains("language `2`") && warning.contains("go (1 file)"),
        "{warning}"
    );
    // A language the files have, and a page emptied by the similarity floor: no such hint.
    let out = f
        .search(RawSearch {
            languages: Some(vec!["go".into()]),
            min_similarity: Some(0.999),
            ..RawSearch::query("invoice total")
        })
        .await;
    assert!(out.hits.is_empty());
    assert_eq!(out.warning, None);
}

#[tokio::test]
async fn one_file_does_not_crowd_the_top_results() {
    // One long file with many matching functions, and two short ones.
    let mut long = String::new();
    for i in 0..30 {
        long.push_str(&format!(
            "def retry_upload_{i}(payload):\n    \"\"\"Retry the upload of a payload.\"\"\"\n    return upload(payload, attempt={i})\n\n\n"
        ));
    }
    let f = Fixture::new(&[
        ("big.py", long.as_str()),
        (
            "a.py",
            "def upload_once(payload):\n    return upload(payload)\n",
        ),
        ("b.py", "def retry(fn):\n    return fn()\n"),
    ])
    .await;
    for mode in ["hybrid", "lexical", "vector"] {
        let raw = || RawSearch {
            mode: Some(mode.into()),
            limit: Some(3),
            ..RawSearch::query("retry upload payload")
        };
        let mut paths = f.paths(raw()).await;
        paths.sort();
        assert_eq!(paths, ["a.py", "b.py", "big.py"], "{mode}");
        // Asked for more than one per file, the file's chunks come back.
        let paths = f
            .paths(RawSearch {
                max_per_file: Some(3),
                ..raw()
            })
            .await;
        // (The fused modes rank files first: a file's best chunk also scores its file-level
        // BM25 rank, so a.py and b.py may still outrank big.py's second chunk.)
        let n = paths.iter().filter(|p| *p == "big.py").count();
        assert!(
            n >= if mode == "vector" { 2 } else { 1 },
            "{mode} {paths:?}"
        );
        // A filter to that one file still returns `limit` rows: spreading never drops.
        let paths = f
            .paths(RawSearch {
                path_glob: Some("big.py".into()),
                ..raw()
            })
            .await;
        assert_eq!(paths.len(), 3, "{mode}");
    }
}

#[tokio::test]
async fn a_file_found_lexically_shows_its_chunk_with_the_query_words() {
    // The words are in the file's third function only: the file's hit is that chunk, not the
    // first one.
    let file = billing_module();
    let f = Fixture::new(&[
        ("billing.py", file.as_str()),
        ("other.py", "def unrelated():\n    return 1\n"),
    ])
    .await;
    // (One chunk per function: the file is not one merged chunk.)
    let pool = f
        .paths(RawSearch {
            max_per_file: Some(4),
            ..lexical("worker pool queues")
        })
        .await;
    assert!(
        pool.iter().filter(|p| *p == "billing.py").count() >= 2,
        "{pool:?}"
    );
    for mode in ["lexical", "hybrid"] {
        let hits = f
            .search(RawSearch {
                mode: Some(mode.into()),
                limit: Some(1),
                ..RawSearch::query("reconcile invoices ledger")
            })
            .await
            .hits;
        assert_eq!(hits.len(), 1, "{mode}");
        assert_eq!(hits[0].hit.file_path, "billing.py", "{mode}");
        assert!(
            hits[0].hit.content.contains("Reconcile the invoices"),
            "{mode}: {}",
            hits[0].hit.content
        );
    }
}

#[tokio::test]
async fn cached_results_last_exactly_until_the_index_changes() {
    let f = Fixture::new(FILES).await;
    let raw = || lexical("refund policy");
    assert!(f.search(raw()).await.hits.is_empty());
    let again = f.search(raw()).await;
    assert!(again.cached, "a repeated search is served from the cache");
    support::write(
        f.repo.path(),
        "src/refund.ts",
        "export function refundPolicy() {}\n",
    );
    f.index().await;
    let fresh = f.search(raw()).await;
    assert!(!fresh.cached, "any write invalidates the cache");
    assert_eq!(fresh.hits[0].hit.file_path, "src/refund.ts");
}

/// What a filter lets through is counted once per scope and kept (the choice between an exact
/// scan and a walk, and a path filter's files): a file written under the path afterwards is
/// found at once, under the same filter.
#[tokio::test]
async fn a_filters_files_are_listed_again_when_the_index_changes() {
    let f = Fixture::new(FILES).await;
    let under_src = |query: &str| RawSearch {
        mode: Some("vector".into()),
        path_glob: Some("src/**".into()),
        limit: Some(50),
        ..RawSearch::query(query)
    };
    let before = f.paths(under_src("refund policy")).await;
    assert!(!before.is_empty());
    assert!(before.iter().all(|p| p.starts_with("src/")), "{before:?}");
    support::write(
        f.repo.path(),
        "src/refund.ts",
        "export function refundPolicy() {}\n",
    );
    f.index().await;
    let after = f.paths(under_src("refund policy rules")).await;
    assert!(after.iter().any(|p| p == "src/refund.ts"), "{after:?}");
}

/// Beyond what an exact scan takes, how many chunks a filter lets through is the planner's
/// estimate (it sizes the graph walk's candidate list): the statement runs, for these
/// filters' values.
#[tokio::test]
async fn the_planners_estimate_of_a_filter_follows_its_values() {
    let f = Fixture::new(FILES).await;
    sqlx::query("ANALYZE codebase_index")
        .execute(f.store.pool())
        .await
        .expect("analyze");
    let scope = f.store.scope("default").await.expect("scope");
    let estimate = |languages: &[&str]| {
        let filters = Filters {
            languages: Some(languages.iter().map(|l| l.to_string()).collect()),
            ..Filters::default()
        };
        let (store, scope) = (&f.store, &scope);
        async move {
            store
                .chunks_passing_estimate(scope, &filters)
                .await
                .expect("estimate")
        }
    };
    let some = estimate(&["go", "typescript", "python", "sql", "markdown"]).await;
    assert!(some >= 1, "{some}");
    // The planner never estimates fewer than one row; a language no chunk has stays below
    // the ones the table holds.
    assert!(estimate(&["cobol"]).await <= some);
}

#[tokio::test]
async fn hybrid_answers_lexically_while_the_embedder_is_down() {
    let f = Fixture::new(FILES).await;
    // An Ollama that is not there: port 9 (discard) on localhost refuses connections.
    let mut embed = f.cfg.embed.clone();
    embed.ollama_url = "http://127.0.0.1:9".into();
    embed.ollama_timeout_secs = 2;
    let down: Arc<dyn Embedder> = Arc::new(OllamaEmbedder::new(&embed).expect("client"));
    let service = SearchService::new(f.store.clone(), down, f.cfg.search.clone());
    let req = SearchRequest::new(RawSearch::query("getUserById"), &f.cfg.search).expect("valid");
    let out = service.search(&req).await.expect("lexical answer");
    assert_eq!(out.mode, SearchMode::Lexical);
    assert!(
        out.warning
            .as_deref()
            .is_some_and(|w| w.contains("embedding"))
    );
    assert_eq!(out.hits[0].hit.file_path, "src/users/repo.ts");
    // Asked for vectors explicitly, the caller gets the error instead.
    let req = SearchRequest::new(
        RawSearch {
            mode: Some("vector".into()),
            ..RawSearch::query("getUserById")
        },
        &f.cfg.search,
    )
    .expect("valid");
    assert!(service.search(&req).await.is_err());
}

#[tokio::test]
async fn a_hung_embedder_costs_a_search_its_deadline_not_ollamas_timeout() {
    use crate::support::ollama::{FakeOllama, Mode};
    let f = Fixture::new(FILES).await;
    // An Ollama that accepts connections and never answers; its own timeout is a minute.
    let ollama = FakeOllama::start(Mode::Hang).await;
    let mut embed = f.cfg.embed.clone();
    embed.ollama_url = ollama.url.clone();
    embed.ollama_timeout_secs = 60;
    let hung: Arc<dyn Embedder> = Arc::new(OllamaEmbedder::new(&embed).expect("client"));
    let mut cfg = f.cfg.search.clone();
    cfg.query_embedding_timeout_ms = 300;
    let service = SearchService::new(f.store.clone(), hung, cfg.clone());
    let started = std::time::Instant::now();
    let req = SearchRequest::new(RawSearch::query("getUserById"), &cfg).expect("valid");
    let out = service.search(&req).await.expect("lexical answer");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.mode, SearchMode::Lexical);
    assert!(
        out.warning
            .as_deref()
            .is_some_and(|w| w.contains("deadline")),
        "{:?}",
        out.warning
    );
    assert_eq!(out.hits[0].hit.file_path, "src/users/repo.ts");
    // Vector mode cannot answer without the vector: a passing fault, within the deadline too.
    let req = SearchRequest::new(
        RawSearch {
            mode: Some("vector".into()),
            ..RawSearch::query("getUserById")
        },
        &cfg,
    )
    .expect("valid");
    let started = std::time::Instant::now();
    match service.search(&req).await {
        Err(codesearch::search::SearchError::Embedding(e)) => assert!(e.is_transient(), "{e}"),
        other => panic!("{:?}", other.map(|o| o.hits.len())),
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
}

#[tokio::test]
async fn a_files_similarity_is_its_nearest_chunk_or_all_its_chunks_pooled() {
    let file = billing_module();
    // More functions than the pooled score counts.
    let ledger: String = (0..POOLED_CHUNKS + 4)
        .map(|i| python_function(&format!("post_{i}"), &format!("Post ledger entry {i}.")))
        .collect();
    let f = Fixture::new(&[
        ("billing.py", file.as_str()),
        ("ledger.py", ledger.as_str()),
        (
            "other.ts",
            "export function unrelated() {\n  return 1;\n}\n",
        ),
    ])
    .await;
    let query = "reconcile the invoices against the ledger";
    let embedder = HashEmbedder::new(384);
    let embedding = embedder
        .embed(&[query.to_owned()], codesearch::embed::InputKind::Query)
        .await
        .expect("embed")
        .remove(0);
    // What vector search says of every chunk of each file.
    let req = |raw: RawSearch| SearchRequest::new(raw, &f.cfg.search).expect("valid request");
    let every_chunk = req(RawSearch {
        mode: Some("vector".into()),
        limit: Some(50),
        max_per_file: Some(50),
        ..RawSearch::query(query)
    });
    let hits = f.service.search(&every_chunk).await.expect("search").hits;
    let nearest = |path: &str| {
        hits.iter()
            .filter(|h| h.hit.file_path == path)
            .filter_map(|h| h.hit.similarity)
            .fold(f64::NEG_INFINITY, f64::max)
    };
    assert!(
        hits.iter()
            .filter(|h| h.hit.file_path == "billing.py")
            .count()
            >= 3,
        "one chunk per function: {hits:?}"
    );
    let files = |paths: &[&str]| -> Vec<(String, String)> {
        paths
            .iter()
            .map(|p| ("app".to_owned(), (*p).to_owned()))
            .collect()
    };
    let scope = f.service.scope(&every_chunk).await.expect("scope");
    let found = f
        .store
        .file_similarities(
            &files(&["billing.py", "other.ts", "missing.py"]),
            &embedding,
            embedder.model_id(),
            &scope,
            &every_chunk.filters,
            0.0,
        )
        .await
        .expect("file similarities");
    assert_eq!(found.len(), 2, "a file not indexed has none: {found:?}");
    for path in ["billing.py", "other.ts"] {
        let got = found[&("app".to_owned(), path.to_owned())];
        // Half precision against full.
        assert!(
            (got - nearest(path)).abs() < 2e-3,
            "{path}: {got} vs {}",
            nearest(path)
        );
    }
    // With a temperature, the file's nearest chunks count: t × ln Σ exp(similarity / t).
    let t = 0.05;
    let pooled = |path: &str| {
        let mut similarities: Vec<f64> = hits
            .iter()
            .filter(|h| h.hit.file_path == path)
            .filter_map(|h| h.hit.similarity)
            .collect();
        similarities.sort_by(|a, b| b.total_cmp(a));
        let sum: f64 = similarities
            .iter()
            .take(POOLED_CHUNKS)
            .map(|s| (s / t).exp())
            .sum();
        t * sum.ln()
    };
    assert_eq!(
        hits.iter()
            .filter(|h| h.hit.file_path == "ledger.py")
            .count(),
        POOLED_CHUNKS + 4,
        "one chunk per function"
    );
    let found = f
        .store
        .file_similarities(
            &files(&["billing.py", "ledger.py", "other.ts"]),
            &embedding,
            embedder.model_id(),
            &scope,
            &every_chunk.filters,
            t,
        )
        .await
        .expect("pooled file similarities");
    for path in ["billing.py", "ledger.py", "other.ts"] {
        let got = found[&("app".to_owned(), path.to_owned())];
        assert!(
            (got - pooled(path)).abs() < 2e-3,
            "{path}: {got} vs {}",
            pooled(path)
        );
    }
    // The filters hold: a language filter leaves only the TypeScript file.
    let typescript = req(RawSearch {
        languages: Some(vec!["typescript".into()]),
        ..RawSearch::query(query)
    });
    let found = f
        .store
        .file_similarities(
            &files(&["billing.py", "other.ts"]),
            &embedding,
            embedder.model_id(),
            &scope,
            &typescript.filters,
            0.0,
        )
        .await
        .expect("file similarities");
    assert_eq!(
        found.keys().map(|(_, p)| p.as_str()).collect::<Vec<_>>(),
        ["other.ts"]
    );
}

/// A Python module of four functions, one chunk each; only the third is about invoices.
fn billing_module() -> String {
    [
        python_function("setup", "Prepare the worker pool and its queues."),
        python_function("teardown", "Stop the worker pool and drain its queues."),
        python_function(
            "settle",
            "Reconcile the invoices against the ledger balance.",
        ),
        python_function("report", "Print a summary of the worker pool."),
    ]
    .concat()
}

/// A Python function with a docstring, long enough to be a chunk of its own.
fn python_function(name: &str, doc: &str) -> String {
    format!(
        "def {name}(state):\n    \"\"\"{doc}\"\"\"\n    step = state.next()\n    \
         state.apply(step)\n    state.flush()\n    state.check(step)\n    \
         state.record(step)\n    state.publish(step)\n    state.close()\n    return state\n\n\n"
    )
}

/// A filter that lets few files through is read from those files' own postings, one that lets
/// many through by walking each term's best postings and checking each file: either way a file
/// it finds has the score the unfiltered query gives it, and none it should find is missed.
#[tokio::test]
async fn a_filtered_file_query_finds_the_unfiltered_ones_files_that_pass() {
    let f = Fixture::new(FILES).await;
    let scope = f.store.scope("default").await.expect("scope");
    let stats = f.store.file_stats(&scope).await.expect("file stats");
    let words: Vec<String> = ["invoice", "users", "total", "id", "billing", "parse"]
        .map(String::from)
        .to_vec();
    let mut terms: Vec<FileTerm> = Vec::new();
    for (_, lexeme, files) in f
        .store
        .file_term_counts(&words, &scope)
        .await
        .expect("term counts")
    {
        if !terms.iter().any(|t| t.term == lexeme) {
            terms.push(FileTerm {
                term: lexeme,
                files: files as f64,
                weight: 1.0,
            });
        }
    }
    // As counted; then as if every word were in every one of 4,000 files, so that each word's
    // window of postings is full and a short page takes the route that checks each posting
    // (the same weights for the unfiltered search it is compared with).
    let full: Vec<FileTerm> = terms
        .iter()
        .map(|t| FileTerm {
            files: 4000.0,
            ..t.clone()
        })
        .collect();
    let weightings = [
        (terms.clone(), stats.clone()),
        (full, FileStats { files: 4000 }),
    ];
    let mut checked = 0;
    for (terms, stats) in &weightings {
        let search = |filters: Filters, few_files: i64, limit: i64| {
            let (terms, stats, scope) = (&terms, &stats, &scope);
            let store = f.store.clone().with_few_files(few_files);
            async move {
                store
                    .lexical_file_search(&FileQuery {
                        terms,
                        stats,
                        scope,
                        filters: &filters,
                        limit,
                        best_chunks: limit,
                    })
                    .await
                    .expect("file search")
                    .into_iter()
                    .map(|h| {
                        (
                            h.file_path,
                            h.lexical.unwrap_or_default(),
                            h.language,
                            h.module,
                        )
                    })
                    .collect::<Vec<_>>()
            }
        };
        let all = search(Filters::default(), 2000, 100).await;
        assert!(all.len() >= 4, "{all:?}");
        let languages: Vec<String> = all.iter().filter_map(|h| h.2.clone()).collect();
        for (_, _, language, module) in all.clone() {
            // One language or module; and two languages.
            let other = languages.iter().find(|l| Some(*l) != language.as_ref());
            let two = language
                .clone()
                .zip(other.cloned())
                .map(|(a, b)| vec![a, b]);
            for filters in [
                Filters {
                    languages: language.clone().map(|l| vec![l]),
                    ..Filters::default()
                },
                Filters {
                    modules: module.clone().map(|m| vec![m]),
                    ..Filters::default()
                },
                Filters {
                    languages: two,
                    ..Filters::default()
                },
            ] {
                if filters.is_empty() {
                    continue;
                }
                let want: Vec<_> = all
                    .iter()
                    .filter(|(_, _, l, m)| {
                        filters
                            .languages
                            .as_ref()
                            .is_none_or(|x| l.as_ref().is_some_and(|l| x.contains(l)))
                            && filters
                                .modules
                                .as_ref()
                                .is_none_or(|x| m.as_ref().is_some_and(|m| x.contains(m)))
                    })
                    .collect();
                // The passing files listed (up to 2,000), or the postings walked unfiltered,
                // the files ranked and checked best first. A page of just the passing files: a
                // file let through by mistake would take the place of one (the chunks' own
                // filter drops it afterwards). A page one larger is short on the ranked route,
                // which then, when a word's window was full, checks each posting as it walks.
                let pages = [want.len() as i64, want.len() as i64 + 1];
                for (few_files, page) in [2000, 0].into_iter().flat_map(|f| pages.map(|p| (f, p))) {
                    let got = search(filters.clone(), few_files, page).await;
                    let case = format!("{filters:?}, {few_files} files listed, a page of {page}");
                    assert_eq!(got.len(), want.len(), "{case}: {got:?} vs {want:?}");
                    for (g, w) in got.iter().zip(&want) {
                        assert_eq!(g.0, w.0, "{case}");
                        assert!((g.1 - w.1).abs() < 1e-9, "{case}: {g:?} vs {w:?}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 48);
}

#[tokio::test]
async fn a_filtered_chunk_query_finds_the_same_chunks_through_the_filters_rows_as_through_the_words_index()
 {
    let f = Fixture::new(FILES).await;
    let scope = f.store.scope("default").await.expect("scope");
    let stats = f
        .store
        .term_stats("invoice users total id billing parse request", 5000, &scope)
        .await
        .expect("term stats");
    assert!(stats.len() >= 5, "{stats:?}");
    // The same words, all common (no selective word to read the postings of), as if held by
    // no chunk and by a billion: the candidates come from the words' index, then from the
    // rows the filters let through, checked for the words.
    let weights = |chunks: f64| -> Vec<TermWeight> {
        stats
            .iter()
            .map(|t| TermWeight {
                term: t.term.clone(),
                idf: 1.0,
                chunks,
                selective: false,
            })
            .collect()
    };
    let (through_index, through_rows) = (weights(0.0), weights(1e9));
    let search = |terms: Vec<TermWeight>, filters: Filters| {
        let (store, scope) = (&f.store, &scope);
        async move {
            store
                .lexical_search(&LexicalQuery {
                    terms: &terms,
                    scope,
                    filters: &filters,
                    avg_length: 10.0,
                    limit: 40,
                })
                .await
                .expect("lexical search")
                .into_iter()
                .map(|h| (h.id, h.file_path, h.lexical.unwrap_or_default()))
                .collect::<Vec<_>>()
        }
    };
    let everything = f
        .store
        .lexical_search(&LexicalQuery {
            terms: &through_index,
            scope: &scope,
            filters: &Filters::default(),
            avg_length: 10.0,
            limit: 40,
        })
        .await
        .expect("lexical search");
    assert!(everything.len() >= 5, "{everything:?}");
    let one = |v: &Option<String>| v.clone().map(|v| vec![v]);
    let mut cases = vec![Filters {
        repositories: Some(vec!["app".into()]),
        ..Filters::default()
    }];
    for h in &everything {
        cases.push(Filters {
            languages: one(&h.language),
            ..Filters::default()
        });
        cases.push(Filters {
            modules: one(&h.module),
            file_types: one(&h.file_type),
            ..Filters::default()
        });
    }
    for filters in cases.into_iter().filter(|f| !f.is_empty()) {
        let want = search(through_index.clone(), filters.clone()).await;
        let got = search(through_rows.clone(), filters.clone()).await;
        assert!(!want.is_empty(), "{filters:?}: nothing to compare");
        // The same chunks in the same order; their scores summed in another order.
        assert_eq!(got.len(), want.len(), "{filters:?}: {got:?} vs {want:?}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!((g.0, &g.1), (w.0, &w.1), "{filters:?}: {got:?} vs {want:?}");
            assert!((g.2 - w.2).abs() < 1e-9, "{filters:?}: {g:?} vs {w:?}");
        }
    }
}

#[tokio::test]
async fn a_page_ranks_above_its_translations_unless_the_query_is_in_their_language() {
    // The same code sample in each language, its comments left in English by the translators,
    // and the English name of the component in their titles: an English question matches the
    // translations better than the page.
    let sample =
        "```js\n// Stagger the card grid: stagger every other card.\n<CardGrid stagger />\n```\n";
    let files: Vec<(String, String)> = [
        (
            "docs/ko/card-grids.md",
            "# 카드 그리드 (card grid)\n\n카드를 격자로 배치합니다.\n\n",
        ),
        ("docs/card-grids.md", "# Grids\n\nLay them out in rows.\n\n"),
        (
            "docs/de/card-grids.md",
            "# Kartenraster (card grid)\n\nKarten in einem Raster anordnen.\n\n",
        ),
    ]
    .iter()
    .map(|(p, t)| (p.to_string(), format!("{t}{sample}")))
    // Other pages that match a word: fusion scales each list between its weakest candidate
    // and its best.
    .chain((0..6).map(|i| {
        (
            format!("docs/notes{i}.md"),
            format!("# Note {i}\n\nA grid of {i} numbers, and rows.\n"),
        )
    }))
    .collect();
    let f = Fixture::new(&files).await;
    let top = |service: &SearchService, mode: &'static str, query: &'static str| {
        let request = SearchRequest::new(
            RawSearch {
                mode: Some(mode.into()),
                limit: Some(3),
                ..RawSearch::query(query)
            },
            &f.cfg.search,
        )
        .expect("valid request");
        let service = service.clone();
        async move {
            let out = service.search(&request).await.expect("search");
            out.hits[0].hit.file_path.clone()
        }
    };
    // Without the weight, a translation can come first.
    let mut unweighted = f.cfg.search.clone();
    unweighted.translation_weight = 1.0;
    let plain = SearchService::new(
        f.store.clone(),
        Arc::new(HashEmbedder::new(384)),
        unweighted,
    );
    for mode in ["hybrid", "lexical"] {
        let english = "stagger the card grid";
        assert_ne!(
            top(&plain, mode, english).await,
            "docs/card-grids.md",
            "{mode}"
        );
        assert_eq!(
            top(&f.service, mode, english).await,
            "docs/card-grids.md",
            "{mode}"
        );
        assert_eq!(
            top(&f.service, mode, "카드 그리드 stagger").await,
            "docs/ko/card-grids.md",
            "{mode}"
        );
    }
}

#[tokio::test]
async fn files_recent_commits_changed_gain_the_history_weight() {
    let module = |name: &str| {
        format!(
            "def {name}(invoice):\n    \"\"\"Round the invoice total to whole cents.\"\"\"\n    \
             return round(invoice.total, 2)\n"
        )
    };
    let f = Fixture::new(&[
        ("billing/once.py".to_owned(), module("once")),
        ("billing/thrice.py".to_owned(), module("thrice")),
    ])
    .await;
    let root = f.repo.path();
    let keys: Vec<(String, String)> = ["billing/once.py", "billing/thrice.py"]
        .iter()
        .map(|p| ("app".to_owned(), (*p).to_owned()))
        .collect();
    let service = |weight: f64| {
        let mut cfg = f.cfg.search.clone();
        cfg.history_weight = weight;
        SearchService::new(f.store.clone(), Arc::new(HashEmbedder::new(384)), cfg)
    };
    // A service that lives through the changes below: it keeps the workspace's counts, and must
    // read them again once the index changes.
    let long_lived = service(0.5);
    let scores_at = |service: SearchService, history_weight: Option<f64>| {
        let mut req = SearchRequest::new(
            RawSearch::query("round the invoice total to cents"),
            &f.cfg.search,
        )
        .expect("valid request");
        req.history_weight = history_weight;
        async move {
            let out = service.search(&req).await.expect("search");
            let score = |path: &str| {
                out.hits
                    .iter()
                    .find(|h| h.hit.file_path == path)
                    .map(|h| h.score)
                    .expect("both files found")
            };
            (score("billing/once.py"), score("billing/thrice.py"))
        }
    };
    let scores = |service: SearchService| scores_at(service, None);
    let search = |weight: f64| scores(service(weight));
    // Outside git: no counts, nothing added.
    assert!(f.store.file_changes(&keys).await.expect("read").is_empty());
    let plain = search(0.0).await;
    assert_eq!(search(0.5).await, plain);
    assert_eq!(scores(long_lived.clone()).await, plain);

    support::git_init_commit(root);
    for n in 2..=3 {
        support::write(root, "billing/thrice.py", &module(&format!("thrice{n}")));
        support::git(root, &["commit", "-q", "-am", "again"]);
    }
    support::write(root, "billing/thrice.py", &module("thrice"));
    f.index().await;
    let changes = f.store.file_changes(&keys).await.expect("read");
    assert_eq!(changes.get(&keys[0]), Some(&1.0));
    assert_eq!(changes.get(&keys[1]), Some(&3.0));
    // `weight × ln(1 + c) / ln(1 + c_max)`: the whole weight for the file changed most, half of
    // it (ln 2 / ln 4) for the other; the same text ranks by its history.
    let (once, thrice) = search(0.5).await;
    assert!(
        (once - plain.0 - 0.25).abs() < 1e-9,
        "{once} against {plain:?}"
    );
    assert!(
        (thrice - plain.1 - 0.5).abs() < 1e-9,
        "{thrice} against {plain:?}"
    );
    assert_eq!(scores(long_lived.clone()).await, (once, thrice));
    assert_eq!(search(0.0).await, plain);
    // A request's own weight (the context pre-fetch's) in place of the service's.
    assert_eq!(scores_at(service(0.0), Some(0.5)).await, (once, thrice));
    assert_eq!(scores_at(service(0.5), Some(0.0)).await, plain);
    // The context pre-fetch weighs by `context.history_weight`, whatever search's is: the
    // task names `once`, whose file comes first unless the history weighs.
    let first_in_block = |context_weight: f64| {
        let mut cfg = f.cfg.context.clone();
        cfg.history_weight = context_weight;
        let context = ContextService::new(service(0.0), cfg);
        async move {
            let block = context
                .build(ContextRequest {
                    task: "Round the invoice total to whole cents once when it is computed.".into(),
                    ..ContextRequest::default()
                })
                .await
                .expect("a block");
            block.files[0].file_path.clone()
        }
    };
    let unweighted = first_in_block(0.0).await;
    // Scaled within two candidates, once.py leads by 1 on its text (2 to 1); the history adds
    // w / 2 to it and w to thrice.py.
    assert_eq!(first_in_block(3.0).await, "billing/thrice.py");
    assert_eq!(
        unweighted, "billing/once.py",
        "equal texts: the other order"
    );

    // A file moved keeps its history (and its move counts as a change).
    support::git(root, &["mv", "billing/thrice.py", "billing/three.py"]);
    support::git(root, &["commit", "-q", "-am", "moved"]);
    f.index().await;
    let moved = ("app".to_owned(), "billing/three.py".to_owned());
    let changes = f
        .store
        .file_changes(std::slice::from_ref(&moved))
        .await
        .expect("read");
    assert_eq!(changes.get(&moved), Some(&4.0));
    support::git(root, &["mv", "billing/three.py", "billing/thrice.py"]);
    support::git(root, &["commit", "-q", "-am", "moved back"]);
    f.index().await;
    let changes = f.store.file_changes(&keys).await.expect("read");
    assert_eq!(changes.get(&keys[1]), Some(&5.0));

    // The history gone (the root is not a repository any more): the counts go back to 0.
    std::fs::remove_dir_all(root.join(".git")).expect("rm .git");
    f.index().await;
    assert!(f.store.file_changes(&keys).await.expect("read").is_empty());
    assert_eq!(scores(long_lived).await, plain);
}
