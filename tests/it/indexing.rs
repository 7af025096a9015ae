//! The pipeline against a real PostgreSQL + pgvector.

use std::sync::Arc;

use codesearch::embed::{Embedder, HashEmbedder};
use codesearch::pipeline::{IndexError, Indexer};
use codesearch::store::Store;
use sqlx::Row;
use tokio_util::sync::CancellationToken;

use crate::support::{self, test_db};

const SERVICE: &str = r#"import { Injectable } from '@nestjs/common';

@Injectable()
export class InvoiceService {
  /** Checks the stored total against the sum of the lines. */
  validateTotals(lines: number[], total: number): boolean {
    const sum = lines.reduce((a, b) => a + b, 0);
    return Math.abs(sum - total) < 0.01;
  }
}
"#;

async fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, Store, Indexer) {
    let db = test_db().await;
    let cfg = support::config(&db, "nats://unused");
    let store = Store::connect(&cfg.database).await.expect("connect");
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(384));
    let indexer = Indexer::new(store.clone(), embedder, cfg.index.clone()).expect("indexer");
    (support::repo(files), store, indexer)
}

async fn rows(store: &Store, sql: &str) -> i64 {
    sqlx::query(sql)
        .fetch_one(store.pool())
        .await
        .expect("query")
        .get::<i64, _>(0)
}

#[tokio::test]
async fn indexes_then_skips_unchanged_reembeds_only_edits_and_sweeps_deletions() {
    let (repo, store, indexer) = setup(&[
        ("backend/src/invoice/invoice.service.ts", SERVICE),
        (
            "backend/db/migrations/001_init.sql",
            "CREATE TABLE invoices (id uuid primary key);\n",
        ),
        (
            "docs/guide.md",
            "# Guide\n\nHow invoices work.\n\n## Payment\n\nBy transfer.\n",
        ),
        ("frontend/app.py", "def main():\n    print('hi')\n"),
    ])
    .await;
    let cancel = CancellationToken::new();
    let first = indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("index");
    assert_eq!(first.indexed, 4);
    assert_eq!(first.pending, 0);
    assert!(first.embedded > 0);

    // The baseline columns are filled as DESIGN.md describes.
    let row = sqlx::query(
        "SELECT file_type, module, component_type, file_hash, language, symbol, start_line,
                embedding_model, embedding IS NOT NULL AS has_vector
         FROM codebase_index WHERE file_path = 'backend/src/invoice/invoice.service.ts'
         ORDER BY chunk_index LIMIT 1",
    )
    .fetch_one(store.pool())
    .await
    .expect("row");
    assert_eq!(row.get::<String, _>("file_type"), "ts");
    assert_eq!(row.get::<String, _>("module"), "backend");
    assert_eq!(row.get::<String, _>("component_type"), "service");
    assert_eq!(row.get::<String, _>("file_hash").len(), 64);
    assert_eq!(row.get::<String, _>("language"), "typescript");
    assert_eq!(row.get::<String, _>("embedding_model"), "hash/v1");
    assert!(row.get::<bool, _>("has_vector"));
    let migration: String = sqlx::query_scalar(
        "SELECT component_type FROM codebase_index WHERE file_path LIKE '%001_init.sql'",
    )
    .fetch_one(store.pool())
    .await
    .expect("row");
    assert_eq!(migration, "migration");

    // Unchanged: nothing embedded.
    let second = indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("index");
    assert_eq!(
        (second.indexed, second.unchanged, second.embedded),
        (0, 4, 0)
    );

    // One file edited: only its new chunk text is embedded.
    let before = rows(&store, "SELECT count(*) FROM codebase_index").await;
    support::write(
        repo.path(),
        "frontend/app.py",
        "def main():\n    print('hello')\n",
    );
    let third = indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("index");
    assert_eq!((third.indexed, third.unchanged), (1, 3));
    assert_eq!(third.embedded, 1);
    assert_eq!(
        rows(&store, "SELECT count(*) FROM codebase_index").await,
        before
    );
    let content: String = sqlx::query_scalar(
        "SELECT chunk_content FROM codebase_index WHERE file_path = 'frontend/app.py'",
    )
    .fetch_one(store.pool())
    .await
    .expect("row");
    assert!(content.contains("hello"));
    // Its file-level postings were replaced too: the new word is there, the old one gone.
    let terms = |t: &'static str| {
        let store = store.clone();
        async move {
            rows(
                &store,
                &format!(
                    "SELECT count(*) FROM file_terms p JOIN indexed_files f ON f.id = p.file_id
                     WHERE f.file_path = 'frontend/app.py' AND p.term = '{t}'"
                ),
            )
            .await
        }
    };
    assert_eq!((terms("hello").await, terms("hi").await), (1, 0));

    // A deleted file is swept, chunks and state.
    std::fs::remove_file(repo.path().join("docs/guide.md")).expect("rm");
    let fourth = indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("index");
    assert_eq!(fourth.removed, 1);
    assert_eq!(
        rows(
            &store,
            "SELECT count(*) FROM codebase_index WHERE file_path = 'docs/guide.md'"
        )
        .await,
        0
    );
    assert_eq!(rows(&store, "SELECT count(*) FROM indexed_files").await, 3);
    // ... and its postings: none is left without its file.
    assert_eq!(
        rows(
            &store,
            "SELECT count(*) FROM file_terms p
             WHERE NOT EXISTS (SELECT 1 FROM indexed_files f WHERE f.id = p.file_id)"
        )
        .await,
        0
    );
    assert!(rows(&store, "SELECT count(*) FROM file_terms").await > 0);
    // No duplicates anywhere.
    assert_eq!(
        rows(
            &store,
            "SELECT count(*) FROM (SELECT file_path, chunk_index FROM codebase_index
             GROUP BY 1, 2 HAVING count(*) > 1) d"
        )
        .await,
        0
    );
}

/// A branch switched away from and back, a file deleted and restored, a model changed and back: the chunks that left
/// the index come back with the vectors they had, from `vector_cache`, embedding nothing.
#[tokio::test]
async fn vectors_of_chunks_that_left_the_index_are_reused_when_they_come_back() {
    let db = test_db().await;
    let mut cfg = support::config(&db, "nats://unused");
    cfg.database.vector_cache_chunks = 3;
    let store = Store::connect(&cfg.database).await.expect("connect");
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(384));
    let indexer = Indexer::new(store.clone(), embedder, cfg.index.clone()).expect("indexer");
    let repo = support::repo(&[
        ("app.py", "def main():\n    print('hi')\n"),
        ("docs/guide.md", "# Guide\n\nHow invoices work.\n"),
    ]);
    let cancel = CancellationToken::new();
    let pass = || async {
        let r = indexer
            .index_root(repo.path(), None, &cancel)
            .await
            .expect("index");
        (r.embedded, r.reused)
    };
    let cached = || async { rows(&store, "SELECT count(*) FROM vector_cache").await };
    assert_eq!(pass().await.0, 2);
    assert_eq!(cached().await, 0, "a first index evicts nothing");

    // Edited, then back: the old text's vector is reused.
    support::write(repo.path(), "app.py", "def main():\n    print('hello')\n");
    assert_eq!(pass().await, (1, 0));
    assert_eq!(cached().await, 1);
    support::write(repo.path(), "app.py", "def main():\n    print('hi')\n");
    assert_eq!(pass().await, (0, 1));
    // Deleted, then restored.
    let guide = std::fs::read_to_string(repo.path().join("docs/guide.md")).expect("read");
    std::fs::remove_file(repo.path().join("docs/guide.md")).expect("rm");
    pass().await;
    support::write(repo.path(), "docs/guide.md", &guide);
    assert_eq!(pass().await, (0, 1));
    // The vector reused is the one computed: the same as a fresh embedding's.
    assert_eq!(
        rows(
            &store,
            "SELECT count(*) FROM codebase_index c JOIN vector_cache v
               ON v.content_hash = c.content_hash AND v.embedding_model = c.embedding_model
             WHERE v.embedding <> subvector(c.embedding, 1, c.embedding_dim)"
        )
        .await,
        0
    );

    // Another model, then back: the first one's vectors wait in the cache meanwhile.
    let other = Indexer::new(
        store.clone(),
        Arc::new(Probe::new("hash/renamed", None)),
        cfg.index.clone(),
    )
    .expect("indexer");
    let switched = other
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("index");
    assert_eq!((switched.indexed, switched.embedded), (2, 2));
    assert_eq!(pass().await, (0, 2));
    // `codesearch status` says how many are kept.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_codesearch"))
        .args(["status", "--json"])
        .env("DATABASE_URL", &cfg.database.url)
        .env("NATS_URL", "nats://127.0.0.1:1")
        .env("OLLAMA_URL", "http://127.0.0.1:1")
        .env("CODESEARCH_VECTOR_CACHE_CHUNKS", "3")
        .output()
        .expect("run codesearch status");
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).expect("status JSON");
    assert_eq!(
        status["index"]["vectorCache"],
        serde_json::json!({ "vectors": cached().await, "max": 3 }),
        "{status}"
    );

    // Bounded: at most `vector_cache_chunks` (3), the most recently evicted kept, none older
    // than 30 days.
    for i in 0..5 {
        support::write(
            repo.path(),
            "app.py",
            &format!("def main():\n    return {i}\n"),
        );
        pass().await;
    }
    assert!(cached().await > 3);
    store.trim_vector_cache().await.expect("trim");
    assert_eq!(cached().await, 3);
    assert_eq!(
        pass().await,
        (0, 0),
        "nothing changed: nothing embedded or reused"
    );
    support::write(repo.path(), "app.py", "def main():\n    return 3\n");
    assert_eq!(pass().await, (0, 1), "a recent one is kept");
    support::write(repo.path(), "app.py", "def main():\n    return 0\n");
    assert_eq!(pass().await, (1, 0), "the oldest is dropped");
    sqlx::query("UPDATE vector_cache SET evicted_at = now() - interval '31 days'")
        .execute(store.pool())
        .await
        .expect("age");
    store.trim_vector_cache().await.expect("trim");
    assert_eq!(cached().await, 0);

    // Removing the repository evicts nothing into the cache.
    assert!(
        store
            .remove_repository(&indexer.repository(repo.path()).expect("repo").name)
            .await
            .expect("remove")
    );
    assert_eq!(cached().await, 0);

    // Off: nothing is kept.
    let mut off = cfg.clone();
    off.database.vector_cache_chunks = 0;
    let store = Store::connect(&off.database).await.expect("connect");
    let indexer = Indexer::new(
        store.clone(),
        Arc::new(HashEmbedder::new(384)),
        off.index.clone(),
    )
    .expect("indexer");
    let embedded = |indexer: Indexer| {
        let path = repo.path().to_owned();
        let cancel = cancel.clone();
        async move {
            indexer
                .index_root(&path, None, &cancel)
                .await
                .expect("index")
                .embedded
        }
    };
    embedded(indexer.clone()).await;
    support::write(repo.path(), "app.py", "def main():\n    return 'x'\n");
    embedded(indexer.clone()).await;
    assert_eq!(cached().await, 0);
}

#[tokio::test]
async fn a_cancelled_pass_says_so_and_the_next_one_finishes() {
    let files: Vec<(String, String)> = (0..40)
        .map(|i| {
            (
                format!("src/m{i}.py"),
                format!("def f{i}(x):\n    return x + {i}\n"),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let (repo, _store, indexer) = setup(&files).await;
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let first = indexer
        .index_root(repo.path(), None, &cancelled)
        .await
        .expect("index");
    assert!(first.interrupted, "{first:?}");
    assert!(first.indexed < 40, "{first:?}");
    let second = indexer
        .index_root(repo.path(), None, &CancellationToken::new())
        .await
        .expect("index");
    assert!(!second.interrupted, "{second:?}");
    assert_eq!(first.indexed + second.indexed, 40, "{second:?}");
}

/// The hash embedder under a model id of the test's choosing, counting its calls, and firing
/// `cancel` (if any) when it is called: a stop arriving while a large file is embedded.
struct Probe {
    inner: HashEmbedder,
    model_id: &'static str,
    cancel: Option<CancellationToken>,
    calls: std::sync::atomic::AtomicUsize,
}

impl Probe {
    fn new(model_id: &'static str, cancel: Option<CancellationToken>) -> Self {
        Self {
            inner: HashEmbedder::new(384),
            model_id,
            cancel,
            calls: Default::default(),
        }
    }
}

impl Embedder for Probe {
    fn model_id(&self) -> &str {
        self.model_id
    }
    fn dimension(&self) -> usize {
        self.inner.dimension()
    }
    fn embed<'a>(
        &'a self,
        texts: &'a [String],
        kind: codesearch::embed::InputKind,
    ) -> futures::future::BoxFuture<'a, Result<Vec<Vec<f32>>, codesearch::embed::EmbedError>> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if let Some(cancel) = &self.cancel {
            cancel.cancel();
        }
        self.inner.embed(texts, kind)
    }
}

/// A stop does not wait for every chunk of a large file: the file being embedded is dropped
/// between two embedding calls, written whole by the next pass.
#[tokio::test]
async fn a_stop_while_a_large_file_is_embedded_does_not_wait_for_all_its_chunks() {
    let db = test_db().await;
    let cfg = support::config(&db, "nats://unused");
    let store = Store::connect(&cfg.database).await.expect("connect");
    // 200 functions of 30 lines: a chunk each, about three embedding batches.
    let body: String = (0..28)
        .map(|j| format!("    total = total + request.field_{j} * {j}\n"))
        .collect();
    let big: String = (0..200)
        .map(|i| {
            format!("def handler_{i}(request):\n    total = {i}\n{body}    return total\n\n\n")
        })
        .collect();
    let repo = support::repo(&[("big.py", big.as_str())]);
    let cancel = CancellationToken::new();
    let embedder = Arc::new(Probe::new("hash/v1", Some(cancel.clone())));
    let indexer =
        Indexer::new(store.clone(), embedder.clone(), cfg.index.clone()).expect("indexer");
    let first = indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("index");
    assert!(first.interrupted, "{first:?}");
    assert_eq!(first.indexed, 0, "nothing half-written: {first:?}");
    let calls = embedder.calls.load(std::sync::atomic::Ordering::SeqCst);
    assert!(calls <= 2, "{calls} embedding calls after the stop");
    assert_eq!(rows(&store, "SELECT count(*) FROM codebase_index").await, 0);

    let second = Indexer::new(
        store.clone(),
        Arc::new(HashEmbedder::new(384)),
        cfg.index.clone(),
    )
    .expect("indexer")
    .index_root(repo.path(), None, &CancellationToken::new())
    .await
    .expect("index");
    assert_eq!(
        (second.indexed, second.interrupted),
        (1, false),
        "{second:?}"
    );
    assert!(second.chunks > 64, "{second:?}");
}

#[tokio::test]
async fn identical_chunks_in_another_repository_reuse_vectors() {
    let (repo, _store, indexer) = setup(&[("a/util.py", "def helper():\n    return 42\n")]).await;
    let cancel = CancellationToken::new();
    indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("index");
    // Same path and content under another root (another repository): reused, not embedded.
    let copy = support::repo(&[("a/util.py", "def helper():\n    return 42\n")]);
    let renamed = std::path::Path::new(copy.path());
    let report = indexer
        .index_root(renamed, None, &cancel)
        .await
        .expect("index");
    assert_eq!(report.embedded, 0);
    assert_eq!(report.reused, 1);
}

#[tokio::test]
async fn bad_files_are_skipped_with_a_reason_and_lose_nothing_else() {
    let (repo, store, indexer) = setup(&[
        ("src/ok.rs", "pub fn ok() -> u8 { 1 }\n"),
        ("src/huge.rs", &"// filler line for size\n".repeat(60_000)),
        ("src/empty.rs", ""),
    ])
    .await;
    std::fs::write(repo.path().join("src/blob.rs"), b"\x00\x01\x02binary").expect("write");
    // A file in Latin-1 is read as such (as Windows-1252). UTF-8 with bytes that do not decode
    // is read with them replaced, unless they are many: then it is no text.
    std::fs::write(
        repo.path().join("src/latin1.rs"),
        b"// caf\xe9\npub fn latin() -> u8 { 1 }\n",
    )
    .expect("write");
    std::fs::write(
        repo.path().join("src/legacy.rs"),
        [&b"// na\xc3\xafve\n"[..], &[0xe9u8; 64]].concat(),
    )
    .expect("write");
    // UTF-16 with its byte-order mark is text (a NUL in every ASCII character), and a UTF-8
    // byte-order mark is not part of the first line.
    let wide: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(
            "pub fn wide() -> u8 { 2 }\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        )
        .collect();
    std::fs::write(repo.path().join("src/wide.rs"), wide).expect("write");
    std::fs::write(
        repo.path().join("src/bom.rs"),
        b"\xEF\xBB\xBFpub fn bom() -> u8 { 3 }\n",
    )
    .expect("write");
    std::os::unix::fs::symlink(
        repo.path().join("gone.rs"),
        repo.path().join("src/dangling.rs"),
    )
    .expect("symlink");
    let report = indexer
        .index_root(repo.path(), None, &CancellationToken::new())
        .await
        .expect("index survives bad files");
    assert_eq!(report.skipped.get("too large"), Some(&1));
    assert_eq!(report.skipped.get("binary"), Some(&1));
    assert_eq!(report.skipped.get("not utf-8"), Some(&1));
    assert_eq!(report.skipped.get("broken symlink"), Some(&1));
    assert_eq!(report.pending, 0);
    assert_eq!(
        rows(
            &store,
            "SELECT count(*) FROM codebase_index WHERE file_path = 'src/ok.rs'"
        )
        .await,
        1
    );
    let error: Option<String> =
        sqlx::query_scalar("SELECT error FROM indexed_files WHERE file_path = 'src/blob.rs'")
            .fetch_one(store.pool())
            .await
            .expect("recorded");
    assert_eq!(error.as_deref(), Some("binary"));
    // The walk's own skips are recorded as the others are, so that `status` counts them:
    // binary, too large, not UTF-8 and the broken link.
    let summary = store.index_summary().await.expect("summary");
    assert_eq!(summary.errors, 4, "{summary:?}");
    let error: Option<String> =
        sqlx::query_scalar("SELECT error FROM indexed_files WHERE file_path = 'src/dangling.rs'")
            .fetch_one(store.pool())
            .await
            .expect("the broken link is recorded");
    assert_eq!(error.as_deref(), Some("broken symlink"));
    // Once recorded, a skip is not written again; once it is gone, its record goes.
    let written_at = || async {
        sqlx::query_scalar::<_, chrono::DateTime<chrono::Utc>>(
            "SELECT indexed_at FROM indexed_files WHERE file_path = 'src/dangling.rs'",
        )
        .fetch_one(store.pool())
        .await
        .expect("recorded")
    };
    let first = written_at().await;
    let again = indexer
        .index_root(repo.path(), None, &CancellationToken::new())
        .await
        .expect("index again");
    assert_eq!((again.removed, again.skipped_total()), (0, 4));
    assert_eq!(written_at().await, first);
    std::fs::remove_file(repo.path().join("src/dangling.rs")).expect("remove link");
    let after = indexer
        .index_root(repo.path(), None, &CancellationToken::new())
        .await
        .expect("index after the link went");
    assert_eq!(after.removed, 1);
    assert_eq!(store.index_summary().await.expect("summary").errors, 3);
    let latin: String = sqlx::query_scalar(
        "SELECT chunk_content FROM codebase_index WHERE file_path = 'src/latin1.rs'",
    )
    .fetch_one(store.pool())
    .await
    .expect("the Latin-1 file is indexed");
    assert!(
        latin.contains("// café\n") && latin.contains("fn latin"),
        "{latin}"
    );
    for (path, first_line) in [
        ("src/wide.rs", "pub fn wide() -> u8 { 2 }"),
        ("src/bom.rs", "pub fn bom() -> u8 { 3 }"),
    ] {
        let (content, symbol): (String, Option<String>) =
            sqlx::query_as("SELECT chunk_content, symbol FROM codebase_index WHERE file_path = $1")
                .bind(path)
                .fetch_one(store.pool())
                .await
                .expect("indexed");
        assert_eq!(content.lines().next(), Some(first_line), "{path}");
        assert!(symbol.is_some(), "{path}");
    }
}

#[tokio::test]
async fn migrations_are_idempotent_and_keep_the_baseline_columns() {
    let db = test_db().await;
    let cfg = support::config(&db, "nats://unused");
    let store = Store::connect(&cfg.database).await.expect("connect");
    store.migrate().await.expect("again");
    // A migration of a newer release (a fleet upgraded one daemon at a time) stops no daemon.
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (99990101000000, 'from a newer release', true, '\\x00', 1)",
    )
    .execute(store.pool())
    .await
    .expect("a newer migration");
    store
        .migrate()
        .await
        .expect("a database a newer release migrated");
    let columns: Vec<String> = sqlx::query_scalar(
        "SELECT column_name::text FROM information_schema.columns
         WHERE table_name = 'codebase_index' ORDER BY ordinal_position",
    )
    .fetch_all(store.pool())
    .await
    .expect("columns");
    for c in [
        "id",
        "file_path",
        "chunk_index",
        "chunk_content",
        "embedding",
        "file_type",
        "module",
        "component_type",
        "file_hash",
        "indexed_at",
    ] {
        assert!(
            columns.iter().any(|x| x == c),
            "missing baseline column {c}"
        );
    }
    let typ: String = sqlx::query_scalar(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute
         WHERE attrelid = 'codebase_index'::regclass AND attname = 'embedding'",
    )
    .fetch_one(store.pool())
    .await
    .expect("type");
    assert_eq!(typ, "vector(768)");
}

/// Files of 100 chunks [`hash_store`] writes: enough for the HNSW index.
const HASH_FILES: usize = codesearch::store::ANN_MIN_ROWS as usize / 100 + 5;

/// A database of [`HASH_FILES`] files written by [`write_hash_files`] with the 384-dimension
/// hash embedder as `hash/v1`, in repository `r` of workspace `default`.
async fn hash_store() -> (
    support::TestDb,
    Store,
    codesearch::store::Scope,
    HashEmbedder,
) {
    let db = test_db().await;
    let cfg = support::config(&db, "nats://unused");
    let store = Store::connect(&cfg.database).await.expect("connect");
    support::claim(&store, "r", "default").await;
    let scope = store.scope("default").await.expect("scope");
    let hash = HashEmbedder::new(384);
    write_hash_files(&store, &hash, "hash/v1", HASH_FILES).await;
    (db, store, scope, hash)
}

/// The text [`write_hash_files`] embeds for chunk `i` of file `f`: one of 35 groups of words,
/// and a word of its own. Without that word hundreds of rows share a vector, and a walk of
/// the HNSW graph missed rows of the exact search's top 20 now and then, even with a
/// candidate list of 400 (CI, 2026-11-27). HNSW is not made for many copies of one vector:
/// copies are each other's nearest neighbours, fill each other's link lists, and leave a
/// group poorly joined to the rest of the graph. The daemon's own rows rarely share a vector:
/// the embedding input names the file.
fn hash_text(f: usize, i: i32) -> String {
    let own: String = format!("{f}x{i}")
        .chars()
        .map(|c| c.to_digit(10).map_or('x', |d| char::from(b'a' + d as u8)))
        .collect();
    format!("alpha beta {} {} id{own}", i % 7, f % 5)
}

/// The cosine similarities of `query` to every chunk of `files` as [`write_hash_files`] wrote
/// them, best first: what an exact search finds.
fn best_similarities(
    hash: &HashEmbedder,
    query: &[f32],
    files: impl IntoIterator<Item = usize>,
) -> Vec<f64> {
    let mut all: Vec<f64> = files
        .into_iter()
        .flat_map(|f| (0..100).map(move |i| (f, i)))
        .map(|(f, i)| {
            let v = hash.embed_one(&hash_text(f, i));
            v.iter().zip(query).map(|(a, b)| f64::from(a * b)).sum()
        })
        .collect();
    all.sort_by(|a, b| b.total_cmp(a));
    all
}

/// Writes `files` files of 100 chunks, embedded by `hash` and recorded as `model`'s, into
/// repository `r`: `f{n}.py` for one file in ten, `f{n}.rs` for the others.
async fn write_hash_files(store: &Store, hash: &HashEmbedder, model: &str, files: usize) {
    write_hash_files_to(store, "r", hash, model, files).await;
}

/// [`write_hash_files`] into `repository`.
async fn write_hash_files_to(
    store: &Store,
    repository: &str,
    hash: &HashEmbedder,
    model: &str,
    files: usize,
) {
    use codesearch::store::{ChunkRow, FileWrite};
    for f in 0..files {
        let rows: Vec<ChunkRow> = (0..100)
            .map(|i| ChunkRow {
                chunk_index: i,
                content: format!("chunk {i} of file {f}"),
                start_line: i + 1,
                end_line: i + 1,
                symbol: None,
                kind: "text".into(),
                content_hash: format!("{f}-{i}"),
                embedding: Some(hash.embed_one(&hash_text(f, i))),
                embed_error: None,
                lexical: format!("chunk {i} file {f}"),
                lexical_length: 4,
                defines: Vec::new(),
                symbols: Vec::new(),
            })
            .collect();
        let ext = if f % 10 == 0 { "py" } else { "rs" };
        store
            .replace_file(&FileWrite {
                repository,
                file_path: &format!("f{f}.{ext}"),
                file_hash: "h",
                file_type: ext,
                language: "x",
                module: None,
                component_type: None,
                size_bytes: 1,
                line_count: 1,
                chunker_version: 1,
                embedding_model: model,
                embedding_dim: hash.dimension() as i32,
                chunks: &rows,
                terms: &Default::default(),
                intel: &Default::default(),
            })
            .await
            .expect("write");
    }
}

#[tokio::test]
async fn each_model_gets_its_own_half_precision_index_and_searches_walk_it() {
    use codesearch::store::{Filters, VectorQuery};
    let (_db, store, scope, hash) = hash_store().await;
    // An index over the whole column, as releases before per-model indexes built it.
    sqlx::query(
        "CREATE INDEX idx_codebase_index_embedding_hnsw ON codebase_index
         USING hnsw (embedding vector_cosine_ops)",
    )
    .execute(store.pool())
    .await
    .expect("old index");
    store.vacuum_analyze().await.expect("analyze");
    assert!(store.ensure_ann_index().await.expect("build"), "built");
    let now = hnsw_indexes(store.pool()).await;
    assert_eq!(now.len(), 2, "{now:?}");
    let (name, def) = &now[1];
    assert!(name.starts_with("idx_codebase_index_hnsw_"), "{now:?}");
    assert!(
        def.contains("halfvec(384)") && def.contains("'hash/v1'"),
        "{def}"
    );
    // The old index stays until daemons have had time to see the new one.
    assert_eq!(now[0].0, "idx_codebase_index_embedding_hnsw");

    // A search walks the model's index, and orders what it finds by the exact distance.
    let query = hash.embed_one("alpha beta 3 1");
    let hits = store
        .vector_search(&VectorQuery {
            embedding: &query,
            model: "hash/v1",
            scope: &scope,
            filters: &Filters::default(),
            min_similarity: -1.0,
            limit: 20,
            ef_search: 100,
            table_chunks: 0,
            scope_chunks: 0,
        })
        .await
        .expect("search");
    assert_eq!(hits.len(), 20);
    let exact = best_similarities(&hash, &query, 0..HASH_FILES);
    for (hit, want) in hits.iter().zip(&exact) {
        let got = hit.similarity.expect("similarity");
        assert!((got - want).abs() < 1e-5, "{got} vs exact {want}");
    }
    assert_used(store.pool(), name).await;

    // Once it has been valid long enough, the next pass drops the old index.
    age_index(store.pool(), name).await;
    assert!(
        !store.ensure_ann_index().await.expect("upkeep"),
        "nothing to build"
    );
    let now = hnsw_indexes(store.pool()).await;
    assert_eq!(now.len(), 1, "{now:?}");
    assert_eq!(&now[0].0, name);

    // A model whose vectors are all gone loses its index; the new model gets one.
    let other = HashEmbedder::new(256);
    write_hash_files(&store, &other, "hash/other", HASH_FILES).await;
    assert!(store.ensure_ann_index().await.expect("build"), "built");
    let now = hnsw_indexes(store.pool()).await;
    assert_eq!(now.len(), 1, "{now:?}");
    assert!(
        now[0].1.contains("halfvec(256)") && now[0].1.contains("'hash/other'"),
        "{now:?}"
    );
}

#[tokio::test]
async fn an_index_with_pgvectors_default_graph_serves_until_the_denser_one_replaces_it() {
    use codesearch::store::{Filters, VectorQuery};
    let (_db, store, scope, hash) = hash_store().await;
    // The index earlier versions built: pgvector's default parameters, named by the model
    // and its dimensions alone.
    let digest = codesearch::scan::sha256_hex(b"hash/v1\x00384");
    let old = format!("idx_codebase_index_hnsw_{}", &digest[..16]);
    sqlx::query(&format!(
        "CREATE INDEX {old} ON codebase_index
         USING hnsw ((subvector(embedding, 1, 384)::halfvec(384)) halfvec_cosine_ops)
         WHERE embedding_model = 'hash/v1'"
    ))
    .execute(store.pool())
    .await
    .expect("old index");
    store.vacuum_analyze().await.expect("analyze");
    let query = hash.embed_one("alpha beta 3 1");
    let filters = Filters::default();
    let search = VectorQuery {
        embedding: &query,
        model: "hash/v1",
        scope: &scope,
        filters: &filters,
        min_similarity: -1.0,
        limit: 10,
        ef_search: 0,
        table_chunks: 0,
        scope_chunks: 0,
    };
    assert_eq!(
        store.vector_search(&search).await.expect("search").len(),
        10
    );
    assert_used(store.pool(), &old).await;

    // The next pass builds the denser graph beside it, under a name of its own.
    assert!(store.ensure_ann_index().await.expect("build"), "built");
    let now = hnsw_indexes(store.pool()).await;
    assert_eq!(now.len(), 2, "{now:?}");
    let (new, def) = now.iter().find(|(n, _)| *n != old).expect("the new index");
    assert!(
        def.contains("m='24'") && def.contains("ef_construction='200'"),
        "{def}"
    );
    // The old one goes once the new one has been valid long enough for every daemon to see
    // it; searches then walk the new one.
    age_index(store.pool(), new).await;
    assert!(
        !store.ensure_ann_index().await.expect("upkeep"),
        "nothing to build"
    );
    let now = hnsw_indexes(store.pool()).await;
    assert_eq!(now.len(), 1, "{now:?}");
    assert_eq!(&now[0].0, new);
    assert_eq!(
        store.vector_search(&search).await.expect("search").len(),
        10
    );
    assert_used(store.pool(), new).await;
}

/// The HNSW indexes on `codebase_index`: (name, definition), by name.
async fn hnsw_indexes(pool: &sqlx::PgPool) -> Vec<(String, String)> {
    sqlx::query_as(
        "SELECT indexname::text, indexdef FROM pg_indexes
         WHERE tablename = 'codebase_index' AND indexdef LIKE '%hnsw%' ORDER BY 1",
    )
    .fetch_all(pool)
    .await
    .expect("indexes")
}

/// Waits until the index statistics show a scan of index `name` (they reach the view when
/// the searching backend goes idle, within a second).
async fn assert_used(pool: &sqlx::PgPool, name: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let scans: i64 =
            sqlx::query_scalar("SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = $1")
                .bind(name)
                .fetch_one(pool)
                .await
                .expect("index statistics");
        if scans > 0 {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the search did not use {name}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// Marks a vector index as valid long ago, as daemons would have seen it.
async fn age_index(pool: &sqlx::PgPool, name: &str) {
    sqlx::query(&format!("COMMENT ON INDEX {name} IS 'valid since 0'"))
        .execute(pool)
        .await
        .expect("age the index");
}

#[tokio::test]
async fn several_workspaces_get_a_vector_index_each_and_searches_walk_their_own() {
    use codesearch::store::{Filters, VectorQuery};
    let db = test_db().await;
    let cfg = support::config(&db, "nats://unused");
    let store = Store::connect(&cfg.database).await.expect("connect");
    let hash = HashEmbedder::new(384);
    // Each workspace holds more chunks (10,100) than a search scans exactly.
    let files = 101;
    support::claim(&store, "a", "one").await;
    support::claim(&store, "b", "two").await;
    write_hash_files_to(&store, "a", &hash, "hash/v1", files).await;
    write_hash_files_to(&store, "b", &hash, "hash/v1", files).await;
    store.vacuum_analyze().await.expect("analyze");
    assert!(store.ensure_ann_index().await.expect("build"), "built");
    let now = hnsw_indexes(store.pool()).await;
    assert_eq!(now.len(), 2, "{now:?}");
    for workspace in ["'one'", "'two'"] {
        assert!(
            now.iter()
                .any(|(_, def)| def.contains(workspace) && def.contains("'hash/v1'")),
            "{now:?}"
        );
    }
    let (one_index, _) = now
        .iter()
        .find(|(_, def)| def.contains("'one'"))
        .expect("workspace one's index");

    // A search in workspace one walks its index and finds only its rows, (nearly: a walk is
    // approximate) all of them as close as the exact search's; about 290 rows are. When
    // hundreds of rows shared a vector, walks here missed some now and then, even asking for
    // 400: see `hash_text`.
    let one = store.scope("one").await.expect("scope");
    let query = hash.embed_one("alpha beta 3 1");
    let hits = store
        .vector_search(&VectorQuery {
            embedding: &query,
            model: "hash/v1",
            scope: &one,
            filters: &Filters::default(),
            min_similarity: -1.0,
            limit: 20,
            ef_search: 400,
            table_chunks: 2 * 100 * files as i64,
            scope_chunks: 100 * files as i64,
        })
        .await
        .expect("search");
    assert_eq!(hits.len(), 20);
    assert!(hits.iter().all(|h| h.repository == "a"), "{hits:?}");
    let exact = best_similarities(&hash, &query, 0..files);
    let twentieth = exact[19];
    let found = hits
        .iter()
        .filter(|h| h.similarity.expect("similarity") >= twentieth - 1e-5)
        .count();
    assert!(
        found >= 19,
        "{found} of 20 as close as the exact search's: {hits:?}"
    );
    assert_used(store.pool(), one_index).await;
    let walks = store
        .session_pool(codesearch::store::Session {
            ef_search: 400,
            custom_plans: false,
        })
        .expect("a pool for walks of 400");
    assert_eq!(
        walks.size(),
        1,
        "the walk of 400 ran on a connection set for it"
    );

    // Repository b joins workspace one (a restart with it configured there): its rows move
    // with it, one index over every row is built, and the workspaces' indexes are dropped once
    // it has been valid long enough for daemons to see it.
    support::claim(&store, "b", "one").await;
    let left: i64 =
        sqlx::query_scalar("SELECT count(*) FROM codebase_index WHERE workspace <> 'one'")
            .fetch_one(store.pool())
            .await
            .expect("count");
    assert_eq!(left, 0);
    assert!(store.ensure_ann_index().await.expect("build"), "built");
    let now = hnsw_indexes(store.pool()).await;
    assert_eq!(now.len(), 3, "the old ones stay a while: {now:?}");
    for (name, _) in &now {
        age_index(store.pool(), name).await;
    }
    assert!(
        !store.ensure_ann_index().await.expect("upkeep"),
        "nothing to build"
    );
    let now = hnsw_indexes(store.pool()).await;
    assert_eq!(now.len(), 1, "{now:?}");
    assert!(!now[0].1.contains("workspace"), "{now:?}");
}

/// A vector search of [`hash_store`]'s rows under `fileTypes: ["py"]` (a tenth of the files,
/// scanned exactly), 10 hits.
async fn python_files_search(
    store: &Store,
    scope: &codesearch::store::Scope,
    hash: &HashEmbedder,
) -> Vec<codesearch::store::Hit> {
    use codesearch::store::{Filters, VectorQuery};
    store
        .vector_search(&VectorQuery {
            embedding: &hash.embed_one("alpha beta 3 1"),
            model: "hash/v1",
            scope,
            filters: &Filters {
                file_types: Some(vec!["py".into()]),
                ..Filters::default()
            },
            min_similarity: -1.0,
            limit: 10,
            ef_search: 0,
            table_chunks: 100 * HASH_FILES as i64,
            scope_chunks: 100 * HASH_FILES as i64,
        })
        .await
        .expect("search")
}

/// A vector search that needs other session settings than the main pool's (a walk of another
/// length, a plan for its filters' values) runs on connections set that way, with the main
/// pool's other settings, and without a transaction to set them.
#[tokio::test]
async fn searches_needing_other_session_settings_get_connections_set_for_them() {
    use codesearch::store::Session;
    let (_db, store, scope, hash) = hash_store().await;
    let settings = |pool: sqlx::PgPool| async move {
        sqlx::query_as::<_, (String, String, String)>(
            "SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan'),
                    current_setting('plan_cache_mode')",
        )
        .fetch_one(&pool)
        .await
        .expect("settings")
    };
    let session =
        |ef: &str, plans: &str| (ef.to_owned(), "relaxed_order".to_owned(), plans.to_owned());
    assert_eq!(
        settings(store.pool().clone()).await,
        session("100", "force_generic_plan")
    );
    let main = store.session_pool(Session::MAIN).expect("the main pool");
    assert_eq!(main.size(), store.pool().size(), "the main pool itself");
    let longer = Session {
        ef_search: 200,
        custom_plans: false,
    };
    let wide = store.session_pool(longer).expect("a pool for 200");
    assert_eq!(wide.size(), 0, "connects when first used");
    assert_eq!(settings(wide).await, session("200", "force_generic_plan"));
    let again = store.session_pool(longer).expect("the same pool");
    assert_eq!(again.size(), 1, "the same pool, its connection kept");
    // The daemon's connection figures count it.
    assert_eq!(store.connections().0, store.pool().size() + 1);

    // A filtered search runs on connections that plan each run for the filter's values.
    let filtered = Session {
        ef_search: 100,
        custom_plans: true,
    };
    let hits = python_files_search(&store, &scope, &hash).await;
    assert_eq!(hits.len(), 10);
    assert!(
        hits.iter().all(|h| h.file_path.ends_with(".py")),
        "{hits:?}"
    );
    let planned = store
        .session_pool(filtered)
        .expect("a pool for filtered searches");
    assert_eq!(planned.size(), 1, "the search ran on it");
    assert_eq!(settings(planned).await, session("100", "force_custom_plan"));

    // A store over a pool made elsewhere has none: its searches set their sessions themselves.
    let foreign = Store::from_pool(store.pool().clone());
    assert!(foreign.session_pool(longer).is_none());
    assert!(foreign.session_pool(Session::MAIN).is_some());
}

/// When a session pool cannot get a connection (here the role's connection limit, as a server
/// at `max_connections` would refuse), the search waits a moment, sets the session in a
/// transaction on the main pool instead, and answers; the pool is passed over for a while.
#[tokio::test]
async fn a_search_whose_session_pool_cannot_connect_sets_its_session_in_a_transaction() {
    use codesearch::store::Session;
    let (db, store, scope, hash) = hash_store().await;
    let (role, limited) = one_connection_role(&db, &store, &[]).await;
    let search = |store: Store| {
        let (scope, hash) = (scope.clone(), &hash);
        async move {
            python_files_search(&store, &scope, hash)
                .await
                .into_iter()
                .map(|h| (h.file_path, h.chunk_index))
                .collect::<Vec<_>>()
        }
    };
    let want = search(store.clone()).await;
    assert_eq!(want.len(), 10);
    let started = std::time::Instant::now();
    assert_eq!(search(limited.clone()).await, want);
    let waited = started.elapsed();
    assert!(
        waited < std::time::Duration::from_secs(5),
        "waited {waited:?}"
    );
    let filtered = Session {
        ef_search: 100,
        custom_plans: true,
    };
    assert!(
        limited.session_pool(filtered).is_none(),
        "passed over after it failed"
    );
    // The next search does not wait for it again.
    assert_eq!(search(limited.clone()).await, want);
    limited.pool().close().await;
    drop_role(&store, &role).await;
}

/// Upkeep's long statements (the vector index build, VACUUM) run on a connection of their
/// own; a role at its connection limit gives none, and the index is still built, on one of
/// the pool's.
#[tokio::test]
async fn the_vector_index_is_built_when_no_connection_beyond_the_pool_is_allowed() {
    let (db, store, _scope, _hash) = hash_store().await;
    // Building an index takes the table's owner, in a schema it may create in.
    let (role, limited) = one_connection_role(
        &db,
        &store,
        &[
            "ALTER TABLE codebase_index OWNER TO {role}",
            "GRANT CREATE ON SCHEMA public TO {role}",
        ],
    )
    .await;
    assert!(hnsw_indexes(store.pool()).await.is_empty());
    assert!(limited.ensure_ann_index().await.expect("build"), "built");
    assert_eq!(hnsw_indexes(store.pool()).await.len(), 1);
    limited.vacuum_analyze().await.expect("vacuum");
    limited.pool().close().await;
    drop_role(&store, &role).await;
}

/// A parallel build keeps its graph (`maintenance_work_mem` of it) in a shared memory segment
/// under /dev/shm, which a container makes 64 MB by default: the build failed there on every
/// pass ("could not resize shared memory segment"), and searches never had the index. It is
/// built without parallel workers instead. Here the build is given more memory than this
/// host's /dev/shm (where the test server runs) holds, and made parallel however small the
/// table is.
#[tokio::test]
async fn the_vector_index_is_built_without_parallel_workers_when_shared_memory_is_short() {
    let db = test_db().await;
    let out = std::process::Command::new("df")
        .args(["-m", "--output=size", "/dev/shm"])
        .output()
        .expect("df runs");
    let shm_mb: u32 = String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .expect("the size of /dev/shm");
    let mut cfg = support::config(&db, "nats://unused");
    cfg.database.index_build_memory_mb = shm_mb + 1024;
    let store = Store::connect(&cfg.database).await.expect("connect");
    support::claim(&store, "r", "default").await;
    let hash = HashEmbedder::new(384);
    write_hash_files(&store, &hash, "hash/v1", HASH_FILES).await;
    sqlx::query("ALTER TABLE codebase_index SET (parallel_workers = 2)")
        .execute(store.pool())
        .await
        .expect("parallel");
    store.vacuum_analyze().await.expect("analyze");
    assert!(store.ensure_ann_index().await.expect("build"), "built");
    let built = hnsw_indexes(store.pool()).await;
    assert_eq!(built.len(), 1, "{built:?}");
    let valid: bool = sqlx::query_scalar(
        "SELECT bool_and(i.indisvalid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE c.relname LIKE 'idx_codebase_index_hnsw_%'",
    )
    .fetch_one(store.pool())
    .await
    .expect("validity");
    assert!(valid);
    // The next pass finds it valid and builds nothing.
    assert!(
        !store.ensure_ann_index().await.expect("upkeep"),
        "nothing left to build"
    );
}

/// A role that may open one connection and read everything (and whatever `grants` give it,
/// `{role}` standing for its name), and a store connected as it whose pool holds that one
/// connection: the role's limit allows it, and none more.
async fn one_connection_role(
    db: &support::TestDb,
    store: &Store,
    grants: &[&str],
) -> (String, Store) {
    let role = format!("limited_{}", uuid::Uuid::new_v4().simple());
    let statements = [
        "CREATE ROLE {role} LOGIN CONNECTION LIMIT 1",
        "GRANT pg_read_all_data TO {role}",
    ];
    for statement in statements.iter().chain(grants) {
        sqlx::query(&statement.replace("{role}", &role))
            .execute(store.pool())
            .await
            .expect("role");
    }
    let mut cfg = support::config(db, "nats://unused");
    cfg.database.url = db.url.replacen("://postgres@", &format!("://{role}@"), 1);
    assert_ne!(cfg.database.url, db.url, "the role is in the URL");
    cfg.database.connect_timeout_secs = 1;
    cfg.database.max_connections = 1;
    let limited = Store::connect(&cfg.database).await.expect("connect");
    (role, limited)
}

/// Drops a role [`one_connection_role`] made, and what it owns.
async fn drop_role(store: &Store, role: &str) {
    for statement in [
        format!("REASSIGN OWNED BY {role} TO postgres"),
        format!("DROP OWNED BY {role}"),
        format!("DROP ROLE {role}"),
    ] {
        sqlx::query(&statement)
            .execute(store.pool())
            .await
            .expect("drop role");
    }
}

/// A daemon keeps each workspace's scope and reads it again only when the database says it
/// changed: a write, a repository claimed into or out of the workspace, another daemon's
/// write. A stale scope would serve cached results of rows that are gone.
#[tokio::test]
async fn a_workspace_scope_is_read_again_whenever_its_repositories_change() {
    let db = test_db().await;
    let cfg = support::config(&db, "nats://unused");
    let store = Store::connect(&cfg.database).await.expect("connect");
    let other_daemon = Store::connect(&cfg.database).await.expect("connect");
    let hash = HashEmbedder::new(384);
    let scope = |store: &Store, workspace: &'static str| {
        let store = store.clone();
        async move { store.scope(workspace).await.expect("scope") }
    };
    assert!(scope(&store, "one").await.is_empty());
    support::claim(&store, "a", "one").await;
    support::claim(&store, "b", "two").await;
    let first = scope(&store, "one").await;
    assert_eq!(first.repositories(), ["a"]);
    assert!(!first.is_whole());
    assert_eq!(scope(&store, "one").await, first, "unchanged, cached");

    // Another workspace's write leaves this one's scope as it was.
    write_hash_files_to(&other_daemon, "b", &hash, "hash/v1", 1).await;
    assert_eq!(scope(&store, "one").await, first);

    // A write by another daemon into this workspace changes its fingerprint.
    write_hash_files_to(&other_daemon, "a", &hash, "hash/v1", 1).await;
    let written = scope(&store, "one").await;
    assert_eq!(written.repositories(), ["a"]);
    assert_ne!(written.fingerprint(), first.fingerprint());

    // b joins the workspace: it holds every repository now.
    support::claim(&other_daemon, "b", "one").await;
    let joined = scope(&store, "one").await;
    assert_eq!(joined.repositories(), ["a", "b"]);
    assert!(joined.is_whole());
    assert!(scope(&store, "two").await.is_empty());

    // A repository added elsewhere makes it partial again, without changing its rows.
    support::claim(&other_daemon, "c", "two").await;
    let partial = scope(&store, "one").await;
    assert_eq!(partial.repositories(), ["a", "b"]);
    assert!(!partial.is_whole());
}

#[tokio::test]
async fn with_the_hnsw_index_filtered_searches_still_return_limit_rows() {
    use codesearch::store::{Filters, VectorQuery};
    // 25 files of 100 chunks; only one file in ten is `py`.
    let (_db, store, scope, hash) = hash_store().await;
    // Two passes finishing together (two repositories) build it once, without a deadlock.
    let (a, b) = tokio::join!(store.ensure_ann_index(), store.ensure_ann_index());
    let built = [a.expect("first builder"), b.expect("second builder")];
    assert_eq!(built.iter().filter(|b| **b).count(), 1, "{built:?}");
    assert!(
        !store.ensure_ann_index().await.expect("index"),
        "built once"
    );
    let query = hash.embed_one("alpha beta 3 1");
    let py = Filters {
        file_types: Some(vec!["py".to_owned()]),
        ..Filters::default()
    };
    let hits = store
        .vector_search(&VectorQuery {
            embedding: &query,
            model: "hash/v1",
            scope: &scope,
            filters: &py,
            min_similarity: -1.0,
            limit: 50,
            ef_search: 40,
            table_chunks: 0,
            scope_chunks: 0,
        })
        .await
        .expect("search");
    assert_eq!(hits.len(), 50, "the filter matches 300 rows; 50 asked");
    assert!(hits.iter().all(|h| h.file_type.as_deref() == Some("py")));
    assert!(
        hits.windows(2).all(|w| w[0].similarity >= w[1].similarity),
        "sorted"
    );

    // A path filter letting few chunks through is answered exactly: the similarities are the
    // best 50 of the 1,000 chunks of f1.rs and f11.rs to f19.rs (f10 is a `py` file).
    let path = Filters {
        path_regex: Some(codesearch::text::glob_to_regex("f1*.rs").expect("glob")),
        ..Filters::default()
    };
    let hits = store
        .vector_search(&VectorQuery {
            embedding: &query,
            model: "hash/v1",
            scope: &scope,
            filters: &path,
            min_similarity: -1.0,
            limit: 50,
            ef_search: 40,
            table_chunks: 0,
            scope_chunks: 0,
        })
        .await
        .expect("search");
    let expected = best_similarities(&hash, &query, [1, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    let found: Vec<f64> = hits.iter().filter_map(|h| h.similarity).collect();
    assert_eq!(found.len(), 50);
    for (got, want) in found.iter().zip(&expected) {
        assert!(
            (got - want).abs() < 1e-4,
            "{found:?} vs {:?}",
            &expected[..50]
        );
    }
    assert!(hits.iter().all(|h| {
        let f = h.file_path.trim_start_matches('f').trim_end_matches(".rs");
        f == "1" || (f.len() == 2 && f.starts_with('1'))
    }));
}

#[tokio::test]
async fn a_repository_filter_finds_files_in_small_and_large_repositories() {
    use codesearch::config::SearchMode;
    use codesearch::search::{RawSearch, SearchRequest, SearchService};
    use codesearch::store::{ChunkRow, FileWrite};
    use futures::StreamExt;
    let db = test_db().await;
    let cfg = support::config(&db, "nats://unused");
    let store = Store::connect(&cfg.database).await.expect("connect");
    support::claim(&store, "large", "default").await;
    support::claim(&store, "small", "default").await;
    // "large" has more files than a repository-filtered query reads file by file (2,000), so
    // its queries walk the postings; "small" has three.
    let files: Vec<(String, String, String)> = (0..2010)
        .map(|i| {
            (
                "large".to_owned(),
                format!("f{i}.rs"),
                format!("common marker{i}"),
            )
        })
        .chain((0..3).map(|i| ("small".to_owned(), format!("s{i}.rs"), "common".to_owned())))
        .collect();
    futures::stream::iter(&files)
        .map(|(repository, path, text)| {
            let store = store.clone();
            async move {
                let rows = [ChunkRow {
                    chunk_index: 0,
                    content: text.clone(),
                    start_line: 1,
                    end_line: 1,
                    symbol: None,
                    kind: "text".into(),
                    content_hash: format!("{repository}/{path}"),
                    embedding: None,
                    embed_error: None,
                    lexical: text.clone(),
                    lexical_length: 2,
                    defines: Vec::new(),
                    symbols: Vec::new(),
                }];
                store
                    .replace_file(&FileWrite {
                        repository,
                        file_path: path,
                        file_hash: "h",
                        file_type: "rs",
                        language: "rust",
                        module: None,
                        component_type: None,
                        size_bytes: 1,
                        line_count: 1,
                        chunker_version: 1,
                        embedding_model: "hash/v1",
                        embedding_dim: 384,
                        chunks: &rows,
                        terms: &codesearch::text::file_terms("", text),
                        intel: &Default::default(),
                    })
                    .await
                    .expect("write");
            }
        })
        .buffer_unordered(8)
        .collect::<Vec<()>>()
        .await;
    store.vacuum_analyze().await.expect("analyze");
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(384));
    let service = SearchService::new(store, embedder, cfg.search.clone());
    // Hybrid: the chunks have no vectors, so only the file-level BM25 list can find them
    // (lexical mode would fill a short page from the chunk list).
    let search = |query: &str, repository: &str| {
        let raw = RawSearch {
            mode: Some(SearchMode::Hybrid.as_str().into()),
            repository: Some(repository.into()),
            limit: Some(10),
            ..RawSearch::query(query)
        };
        let req = SearchRequest::new(raw, &cfg.search).expect("valid");
        let service = service.clone();
        async move {
            let hits = service.search(&req).await.expect("search").hits;
            hits.into_iter()
                .map(|h| (h.hit.repository, h.hit.file_path))
                .collect::<Vec<_>>()
        }
    };
    let found = search("marker1234", "large").await;
    assert_eq!(found[0], ("large".to_owned(), "f1234.rs".to_owned()));
    let found = search("common", "small").await;
    assert_eq!(found.len(), 3);
    assert!(found.iter().all(|(r, _)| r == "small"), "{found:?}");
    assert!(search("marker1234", "small").await.is_empty());
}

#[tokio::test]
async fn a_root_that_is_gone_or_empty_keeps_its_index_until_it_is_back() {
    let (repo, store, indexer) = setup(&[
        ("src/a.rs", "pub fn kept_while_away() {}\n"),
        ("src/b.py", "def also_kept():\n    pass\n"),
    ])
    .await;
    let cancel = CancellationToken::new();
    let root = repo.path().to_owned();
    let repository = indexer.repository(&root).expect("repository");
    let first = indexer
        .index_repository(&repository, None, &cancel)
        .await
        .expect("indexed");
    assert_eq!(first.indexed, 2, "{first:?}");
    let chunks = "SELECT count(*) FROM codebase_index";
    let before = rows(&store, chunks).await;
    assert!(before >= 2);

    // The checkout is moved away: neither a reconcile nor a watcher's batch sweeps its files.
    let away = root.with_extension("away");
    std::fs::rename(&root, &away).expect("move the root away");
    let gone = indexer
        .index_repository(&repository, None, &cancel)
        .await
        .expect_err("no root to walk");
    assert!(
        matches!(gone, IndexError::RootGone { .. }) && gone.to_string().contains("is gone"),
        "{gone}"
    );
    let batch = indexer
        .index_paths(&repository, vec!["src/a.rs".into()], &cancel)
        .await
        .expect_err("no root to read");
    assert!(matches!(batch, IndexError::RootGone { .. }), "{batch}");
    assert_eq!(rows(&store, chunks).await, before);

    // An empty directory where it was, as an unmounted volume leaves its mount point.
    std::fs::create_dir(&root).expect("an empty root");
    let empty = indexer
        .index_repository(&repository, None, &cancel)
        .await
        .expect_err("an empty root");
    assert!(
        empty.to_string().contains("is empty") && empty.to_string().contains("2 of its files"),
        "{empty}"
    );
    assert_eq!(rows(&store, chunks).await, before);

    // Back where it was: nothing to index again, nothing removed.
    std::fs::remove_dir(&root).expect("remove the empty root");
    std::fs::rename(&away, &root).expect("move the root back");
    let back = indexer
        .index_repository(&repository, None, &cancel)
        .await
        .expect("indexed");
    assert_eq!(
        (back.indexed, back.unchanged, back.removed),
        (0, 2, 0),
        "{back:?}"
    );
    assert_eq!(rows(&store, chunks).await, before);
}

#[tokio::test]
async fn oversized_generated_and_unstorable_files_are_each_that_files_problem() {
    // A minified bundle (one line of a megabyte of distinct names), a 5 MB generated file,
    // and just under a megabyte of distinct identifiers on short lines, whose whole-file
    // tsvector PostgreSQL refused ("string is too long for tsvector") before lexical text was
    // capped, failing the whole pass.
    let bundle: String = (0..50_000).map(|i| format!("var a{i}q=b{i}z;")).collect();
    let generated = "INSERT INTO t VALUES (1);\n".repeat(200_000);
    let names: String = (0..42_000)
        .map(|i| format!("k{i}x{}={i}\n", i * 7919))
        .collect();
    assert!(names.len() < 1_048_576 && bundle.len() < 1_048_576);
    // And a file its generator marked as such (Go's convention), on short lines.
    let stringer = "// Code generated by \"stringer -type=Kind\"; DO NOT EDIT.\n\npackage kind\n\n\
                    func (i Kind) String() string { return _Kind_name[i] }\n";
    // A hand-written module that carries a base64 image on one line: indexed, the image cut.
    let logo = "iVBORw0KGgoAAAANSUhEUgAAAH0AAAC8CAYAAABVNKE0".repeat(300);
    let debugger = format!(
        "defmodule Plug.Debugger do\n  @logo \"data:image/png;base64,{logo}\"\n\n  \
         def render_exception_page(conn), do: conn\nend\n"
    );
    let (repo, store, indexer) = setup(&[
        ("lib/plug/debugger.ex", debugger.as_str()),
        ("public/app.bundle.js", bundle.as_str()),
        ("db/seed.sql", generated.as_str()),
        ("kind/kind_string.go", stringer),
        ("src/names.py", names.as_str()),
        ("src/invoice.service.ts", SERVICE),
    ])
    .await;
    let cancel = CancellationToken::new();
    let first = indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("the pass completes");
    assert_eq!(first.indexed, 3, "{first:?}");
    let module: String = sqlx::query_scalar(
        "SELECT string_agg(chunk_content, '') FROM codebase_index WHERE file_path = 'lib/plug/debugger.ex'",
    )
    .fetch_one(store.pool())
    .await
    .expect("the module's chunks");
    assert!(
        module.contains("def render_exception_page(conn)"),
        "{module}"
    );
    assert!(module.contains(&format!("{}…\"", &logo[..48])), "{module}");
    assert!(!module.contains(&logo[..100]), "{module}");
    assert_eq!(
        first.skipped.get("minified or generated"),
        Some(&1),
        "{first:?}"
    );
    assert_eq!(first.skipped.get("too large"), Some(&1), "{first:?}");
    assert_eq!(first.skipped.get("generated"), Some(&1), "{first:?}");
    let errors: Vec<(String, String)> = sqlx::query_as(
        "SELECT file_path, error FROM indexed_files WHERE error IS NOT NULL ORDER BY 1",
    )
    .fetch_all(store.pool())
    .await
    .expect("errors");
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert_eq!(errors[0].0, "db/seed.sql");
    assert_eq!(errors[1].0, "kind/kind_string.go");
    assert!(
        errors[1]
            .1
            .starts_with("generated: its header says `// Code generated by"),
        "{errors:?}"
    );
    assert!(errors[2].1.contains("a line of"), "{errors:?}");
    // The names file is searchable by its chunks' words.
    assert!(
        rows(
            &store,
            "SELECT count(*) FROM codebase_index WHERE file_path = 'src/names.py'"
        )
        .await
            > 100
    );

    // A file whose rows the database refuses is recorded with the reason, the pass goes on,
    // and it is not tried again until it changes. (Vectors wider than the column: refused.)
    let db = test_db().await;
    let cfg = support::config(&db, "nats://unused");
    let store = Store::connect(&cfg.database).await.expect("connect");
    let wide: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(1000));
    let indexer = Indexer::new(store.clone(), wide, cfg.index.clone()).expect("indexer");
    let report = indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("the pass completes");
    assert_eq!(report.indexed, 0, "{report:?}");
    assert_eq!(
        report.skipped.get("cannot be stored"),
        Some(&3),
        "{report:?}"
    );
    let again = indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("second pass");
    assert_eq!(
        (again.indexed, again.embedded, again.unchanged),
        (0, 0, 3),
        "{again:?}"
    );
    let reason: String = sqlx::query_scalar(
        "SELECT error FROM indexed_files WHERE file_path = 'src/invoice.service.ts'",
    )
    .fetch_one(store.pool())
    .await
    .expect("reason");
    assert!(reason.starts_with("cannot be stored: model"), "{reason}");
}

/// A notebook is indexed as its cells, on its own lines, its definitions Python's; its
/// checkpoint copy is not indexed, and one written on a single line is skipped with the reason.
#[tokio::test]
async fn a_notebooks_cells_are_indexed_on_its_own_lines() {
    let notebook = include_str!("../fixtures/chunk/bigrams.ipynb");
    let one_line: String = notebook.lines().map(str::trim).collect();
    let (repo, store, indexer) = setup(&[
        ("lectures/bigrams.ipynb", notebook),
        (
            "lectures/.ipynb_checkpoints/bigrams-checkpoint.ipynb",
            notebook,
        ),
        ("lectures/minified.ipynb", one_line.as_str()),
    ])
    .await;
    let cancel = CancellationToken::new();
    let report = indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("the pass completes");
    assert_eq!(report.indexed, 1, "{report:?}");
    assert_eq!(
        report.skipped.get("unreadable notebook"),
        Some(&1),
        "{report:?}"
    );
    let language: String = sqlx::query_scalar(
        "SELECT DISTINCT language FROM codebase_index WHERE file_type = 'ipynb'",
    )
    .fetch_one(store.pool())
    .await
    .expect("the notebook's chunks");
    assert_eq!(language, "python");
    // The function's definition is on the line of the file that holds its first line.
    let line: i32 =
        sqlx::query_scalar("SELECT start_line FROM code_definitions WHERE name = 'bigram_counts'")
            .fetch_one(store.pool())
            .await
            .expect("the function's definition");
    let def = notebook.lines().nth(line as usize - 1);
    assert_eq!(def, Some("    \"def bigram_counts(words, stoi):\\n\","));
    let reason: String = sqlx::query_scalar(
        "SELECT error FROM indexed_files WHERE file_path = 'lectures/minified.ipynb'",
    )
    .fetch_one(store.pool())
    .await
    .expect("reason");
    assert!(
        reason.starts_with("unreadable notebook: two lines of its cells on line 1"),
        "{reason}"
    );
}

/// A database out of disk space refuses every file's rows, but that is no file's problem: the
/// pass fails (and is retried), nothing is recorded as unstorable, and once there is space
/// again every file is indexed. (Before, each file written while the disk was full was
/// recorded as "cannot be stored" and skipped until it changed.)
#[tokio::test]
async fn a_database_out_of_space_fails_the_pass_and_marks_no_file() {
    let (repo, store, indexer) = setup(&[
        ("src/invoice.service.ts", SERVICE),
        ("src/a.py", "def alpha():\n    return 1\n"),
    ])
    .await;
    let cancel = CancellationToken::new();
    // PostgreSQL's own error for a full disk, raised where the chunks are written.
    sqlx::raw_sql(
        "CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           RAISE EXCEPTION 'could not extend file \"base/1/2\": No space left on device'
             USING ERRCODE = 'disk_full';
         END $$;
         CREATE TRIGGER disk_full BEFORE INSERT ON codebase_index
           FOR EACH ROW EXECUTE FUNCTION disk_full();",
    )
    .execute(store.pool())
    .await
    .expect("trigger");
    let failed = indexer.index_root(repo.path(), None, &cancel).await;
    match failed {
        Err(IndexError::Store(e)) => {
            assert!(e.is_transient(), "{e}");
            assert!(e.to_string().contains("No space left on device"), "{e}");
        }
        other => panic!("the pass should fail on a full disk: {other:?}"),
    }
    assert_eq!(
        rows(
            &store,
            "SELECT count(*) FROM indexed_files WHERE error IS NOT NULL"
        )
        .await,
        0,
        "no file is recorded as unstorable"
    );

    sqlx::raw_sql("DROP TRIGGER disk_full ON codebase_index")
        .execute(store.pool())
        .await
        .expect("space again");
    let report = indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("the pass completes");
    assert_eq!((report.indexed, report.unchanged), (2, 0), "{report:?}");
    assert!(report.skipped.is_empty(), "{report:?}");
}

/// Rows of `chunk_vectors` (migration 0018) that differ from the copy `codebase_index` calls
/// for, counted both ways: a missing, stale or extra copy each count.
async fn narrow_copies_out_of_step(store: &Store) -> i64 {
    rows(
        store,
        "WITH expected AS (
           SELECT id, chunk_file_key(repository, file_path), repository, workspace, module,
                  language, file_type, component_type, embedding_model,
                  subvector(embedding, 1, embedding_dim)::halfvec::text
           FROM codebase_index WHERE embedding IS NOT NULL AND embedding_model IS NOT NULL),
         actual AS (
           SELECT chunk_id, file_key, repository, workspace, module, language, file_type,
                  component_type, embedding_model, embedding::text
           FROM chunk_vectors)
         SELECT (SELECT count(*) FROM (SELECT * FROM expected EXCEPT SELECT * FROM actual) a)
              + (SELECT count(*) FROM (SELECT * FROM actual EXCEPT SELECT * FROM expected) b)",
    )
    .await
}

#[tokio::test]
async fn narrow_vector_copies_follow_every_write() {
    let (repo, store, indexer) = setup(&[
        ("backend/src/invoice/invoice.service.ts", SERVICE),
        (
            "docs/guide.md",
            "# Guide\n\nHow invoices work.\n\n## Payment\n\nBy transfer.\n",
        ),
        ("frontend/app.py", "def main():\n    print('hi')\n"),
    ])
    .await;
    let cancel = CancellationToken::new();
    let copies = || rows(&store, "SELECT count(*) FROM chunk_vectors");
    let vectors = || {
        rows(
            &store,
            "SELECT count(*) FROM codebase_index WHERE embedding IS NOT NULL",
        )
    };
    indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("index");
    assert!(copies().await > 0);
    assert_eq!(copies().await, vectors().await);
    assert_eq!(narrow_copies_out_of_step(&store).await, 0, "after indexing");

    // An edit, a deletion and a new file.
    support::write(
        repo.path(),
        "docs/guide.md",
        "# Guide\n\nInvoices, rewritten.\n",
    );
    std::fs::remove_file(repo.path().join("frontend/app.py")).expect("delete");
    support::write(
        repo.path(),
        "tests/test_app.py",
        "def test_main():\n    assert True\n",
    );
    indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("index");
    assert_eq!(narrow_copies_out_of_step(&store).await, 0, "after edits");

    // A vector pending (the embedder was down), then filled by the backfill.
    let (id, model): (uuid::Uuid, String) = sqlx::query_as(
        "UPDATE codebase_index SET embedding = NULL, embedding_model = NULL, embedding_dim = NULL
         WHERE id = (SELECT id FROM codebase_index WHERE file_path = 'docs/guide.md' LIMIT 1)
         RETURNING id, (SELECT max(embedding_model) FROM codebase_index)",
    )
    .fetch_one(store.pool())
    .await
    .expect("a pending vector");
    assert_eq!(narrow_copies_out_of_step(&store).await, 0, "while pending");
    let before = copies().await;
    let filled = store
        .fill_vectors(&model, 384, &[(id, vec![0.5; 384])], &[])
        .await
        .expect("fill");
    assert_eq!(filled, 1);
    assert_eq!(copies().await, before + 1);
    assert_eq!(
        narrow_copies_out_of_step(&store).await,
        0,
        "after the backfill"
    );

    // The repository moves to another workspace, then is removed.
    let name: String = sqlx::query_scalar("SELECT name FROM repositories")
        .fetch_one(store.pool())
        .await
        .expect("the repository");
    store
        .move_to_workspace(&name, "elsewhere")
        .await
        .expect("move");
    assert_eq!(narrow_copies_out_of_step(&store).await, 0, "after the move");
    assert_eq!(
        rows(
            &store,
            "SELECT count(*) FROM chunk_vectors WHERE workspace <> 'elsewhere'"
        )
        .await,
        0
    );
    assert!(store.remove_repository(&name).await.expect("remove"));
    assert_eq!(copies().await, 0);
}

#[tokio::test]
async fn changed_rules_reclassify_unchanged_files_without_reading_them_again() {
    // More files than one transaction of reclassifications records.
    let generated: Vec<(String, String)> = (0..520)
        .map(|i| {
            (
                format!("backend/src/invoice/gen/m{i}.service.ts"),
                format!("export const v{i} = {i};\n"),
            )
        })
        .collect();
    let mut files: Vec<(&str, &str)> = vec![
        ("backend/src/invoice/invoice.service.ts", SERVICE),
        ("frontend/app.py", "def main():\n    print('hi')\n"),
    ];
    files.extend(generated.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    let (repo, store, indexer) = setup(&files).await;
    let cancel = CancellationToken::new();
    let first = indexer
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("index");
    assert_eq!((first.indexed, first.reclassified), (522, 0));

    // The rules change: the service now belongs to module "billing" as a "domain" file.
    let mut index = codesearch::config::Config::defaults()
        .expect("defaults")
        .index;
    index.module_rules.insert(
        0,
        codesearch::config::ModuleRule {
            prefix: "backend/src/invoice/".into(),
            module: "billing".into(),
        },
    );
    index.component_rules.insert(
        0,
        codesearch::config::ComponentRule {
            pattern: "**/*.service.*".into(),
            component: "domain".into(),
        },
    );
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(384));
    let changed = Indexer::new(store.clone(), embedder, index).expect("indexer");
    let second = changed
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("index");
    assert_eq!(
        (
            second.indexed,
            second.unchanged,
            second.reclassified,
            second.embedded
        ),
        (0, 522, 521, 0),
        "{second:?}"
    );
    let billed = rows(
        &store,
        "SELECT count(*) FROM indexed_files WHERE module = 'billing' AND component_type = 'domain'",
    )
    .await;
    assert_eq!(billed, 521);
    let path = "backend/src/invoice/invoice.service.ts";
    for table in ["codebase_index", "chunk_vectors", "indexed_files"] {
        let column = if table == "chunk_vectors" {
            "file_key = chunk_file_key(repository, $1)"
        } else {
            "file_path = $1"
        };
        let (module, component): (Option<String>, Option<String>) = sqlx::query_as(&format!(
            "SELECT DISTINCT module, component_type FROM {table} WHERE {column}"
        ))
        .bind(path)
        .fetch_one(store.pool())
        .await
        .expect(table);
        assert_eq!(
            (module.as_deref(), component.as_deref()),
            (Some("billing"), Some("domain")),
            "{table}"
        );
    }

    // Recorded: the next pass has nothing to do.
    let third = changed
        .index_root(repo.path(), None, &cancel)
        .await
        .expect("index");
    assert_eq!((third.unchanged, third.reclassified), (522, 0));
}
