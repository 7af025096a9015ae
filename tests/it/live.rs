//! The live daemon: watching, reconciling, a sick embedder, crashes, restarts of its services.

use std::path::Path;
use std::time::{Duration, Instant};

use codesearch::config::{Config, EmbedBackend};
use serde_json::{Value, json};
use sqlx::Row;
use tokio::sync::oneshot;

use crate::support::ollama::{FakeOllama, Mode};
use crate::support::{self, Nats, Postgres, TestDb, nats, test_db, write};

/// `codesearch serve` running in this process.
struct Serving {
    pool: sqlx::PgPool,
    client: async_nats::Client,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Serving {
    async fn start(cfg: Config, root: &Path) -> Self {
        let pool = sqlx::PgPool::connect(&cfg.database.url)
            .await
            .expect("connect");
        let client = async_nats::ConnectOptions::new()
            .retry_on_initial_connect()
            .connect(&cfg.nats.url)
            .await
            .expect("client");
        let (stop, stopped) = oneshot::channel::<()>();
        let repos = support::repos(&cfg, &[root]);
        let task = tokio::spawn(codesearch::daemon::serve(cfg, repos, async move {
            let _ = stopped.await;
        }));
        Self {
            pool,
            client,
            stop: Some(stop),
            task,
        }
    }

    /// (chunks, chunks without a vector, chunks refused by the model) of one file.
    async fn rows(&self, path: &str) -> (i64, i64, i64) {
        let r = sqlx::query(
            "SELECT count(*) AS n, count(*) FILTER (WHERE embedding IS NULL) AS pending,
                    count(*) FILTER (WHERE embed_error IS NOT NULL) AS refused
             FROM codebase_index WHERE file_path = $1",
        )
        .bind(path)
        .fetch_one(&self.pool)
        .await
        .expect("count");
        (r.get("n"), r.get("pending"), r.get("refused"))
    }

    async fn contents(&self, path: &str) -> String {
        let rows: Vec<String> = sqlx::query_scalar(
            "SELECT chunk_content FROM codebase_index WHERE file_path = $1 ORDER BY chunk_index",
        )
        .bind(path)
        .fetch_all(&self.pool)
        .await
        .expect("contents");
        rows.join("\n")
    }

    async fn search(&self, request: Value) -> Option<Value> {
        let reply = tokio::time::timeout(
            Duration::from_secs(10),
            self.client
                .request("agog.codebase.search", request.to_string().into()),
        )
        .await
        .ok()?
        .ok()?;
        serde_json::from_slice(&reply.payload).ok()
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(Duration::from_secs(30), &mut self.task)
            .await
            .expect("stops in time")
            .expect("no panic")
            .expect("clean exit");
    }
}

/// Polls `check` until it holds, failing with `what` after `limit`. A bound on liveness, not a
/// speed target: the figures are measured by the benchmark.
async fn eventually<F, Fut>(what: &str, limit: Duration, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    loop {
        if check().await {
            return started.elapsed();
        }
        assert!(started.elapsed() < limit, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn live_config(db: &TestDb, nats_url: &str) -> Config {
    let mut cfg = support::config(db, nats_url);
    cfg.watch.debounce_ms = 50;
    cfg.watch.max_delay_ms = 500;
    cfg.watch.backfill_interval_secs = 1;
    cfg
}

const WAIT: Duration = Duration::from_secs(20);

fn top_path(reply: &Option<Value>) -> Option<String> {
    reply.as_ref()?["results"][0]["filePath"]
        .as_str()
        .map(str::to_owned)
}

#[tokio::test]
async fn edits_deletes_renames_and_atomic_saves_reach_search() {
    let n = nats();
    let db = test_db().await;
    let repo = support::repo(&[
        (
            "src/billing.rs",
            "pub fn compute_invoice_total(lines: &[u64]) -> u64 {\n    lines.iter().sum()\n}\n",
        ),
        (
            "src/users.rs",
            "pub fn find_user_by_email(email: &str) -> Option<User> {\n    None\n}\n",
        ),
        ("src/old.rs", "pub fn legacy_exporter() {}\n"),
        (
            "src/moved.rs",
            "pub fn relocated_helper_function() -> u32 { 7 }\n",
        ),
    ]);
    let root = repo.path();
    let d = Serving::start(live_config(&db, &n.url), root).await;
    eventually("the start-up reconcile", WAIT, || async {
        d.rows("src/moved.rs").await.0 > 0
    })
    .await;

    // An edited function is found by its new content.
    write(
        root,
        "src/billing.rs",
        "pub fn compute_invoice_total(lines: &[u64]) -> u64 {\n    apply_zebracorn_discount(lines.iter().sum())\n}\n",
    );
    eventually("the edit is searchable", WAIT, || async {
        let reply = d
            .search(json!({"query": "zebracorn discount", "limit": 1}))
            .await;
        top_path(&reply).as_deref() == Some("src/billing.rs")
            && reply.as_ref().is_some_and(|r| {
                r["results"][0]["content"]
                    .as_str()
                    .is_some_and(|c| c.contains("zebracorn"))
            })
    })
    .await;

    // A deleted file's chunks are gone.
    std::fs::remove_file(root.join("src/old.rs")).expect("rm");
    eventually("the deleted file is gone", WAIT, || async {
        d.rows("src/old.rs").await.0 == 0
    })
    .await;

    // A renamed file answers under its new path, and only there.
    std::fs::create_dir_all(root.join("lib")).expect("mkdir");
    std::fs::rename(root.join("src/moved.rs"), root.join("lib/moved_here.rs")).expect("mv");
    eventually("the rename", WAIT, || async {
        d.rows("src/moved.rs").await.0 == 0 && d.rows("lib/moved_here.rs").await.0 > 0
    })
    .await;
    let reply = d
        .search(json!({"query": "relocated helper function", "limit": 1}))
        .await;
    assert_eq!(top_path(&reply).as_deref(), Some("lib/moved_here.rs"));

    // Editors' saves: vim probes with `4913` and keeps a `~` backup, JetBrains writes a
    // `___jb_tmp___` copy, and an atomic save renames a temporary file over the original.
    write(root, "src/4913", "");
    std::fs::remove_file(root.join("src/4913")).expect("rm");
    write(root, "src/users.rs~", "pub fn stale_backup() {}\n");
    write(
        root,
        "src/users.rs___jb_tmp___",
        "pub fn jetbrains_tmp() {}\n",
    );
    write(
        root,
        "src/.users.rs.tmp",
        "pub fn find_user_by_handle(handle: &str) -> Option<User> {\n    None\n}\n",
    );
    std::fs::rename(root.join("src/.users.rs.tmp"), root.join("src/users.rs")).expect("mv");
    eventually("the atomic save", WAIT, || async {
        d.contents("src/users.rs")
            .await
            .contains("find_user_by_handle")
    })
    .await;
    let files: Vec<String> =
        sqlx::query_scalar("SELECT DISTINCT file_path FROM codebase_index ORDER BY 1")
            .fetch_all(&d.pool)
            .await
            .expect("paths");
    assert_eq!(
        files,
        ["lib/moved_here.rs", "src/billing.rs", "src/users.rs"]
    );

    // A new directory is watched from the moment it appears.
    write(
        root,
        "new/deeper/fresh.rs",
        "pub fn brand_new_module() {}\n",
    );
    eventually("a file in a new directory", WAIT, || async {
        d.rows("new/deeper/fresh.rs").await.0 > 0
    })
    .await;
    write(
        root,
        "new/deeper/later.rs",
        "pub fn added_afterwards() {}\n",
    );
    eventually("a later file in the new directory", WAIT, || async {
        d.rows("new/deeper/later.rs").await.0 > 0
    })
    .await;
    d.stop().await;
}

/// A watched root deleted and made again (a fresh `git clone` into the same place, a checkout
/// moved away and back) is watched again: the old watches were on the directories it had.
#[tokio::test]
async fn a_root_deleted_and_made_again_is_watched_again() {
    let n = nats();
    let db = test_db().await;
    let base = tempfile::tempdir().expect("tempdir");
    let root = base.path().join("app");
    write(&root, "src/first.rs", "pub fn first_function_here() {}\n");
    let root = std::fs::canonicalize(&root).expect("canonical");
    let d = Serving::start(live_config(&db, &n.url), &root).await;
    eventually("the start-up reconcile", WAIT, || async {
        d.rows("src/first.rs").await.0 > 0
    })
    .await;
    for round in 0..2 {
        // Replaced at once (round 0), or gone for a while first (round 1).
        std::fs::remove_dir_all(&root).expect("rm -rf");
        if round == 1 {
            tokio::time::sleep(Duration::from_millis(1500)).await;
        }
        std::fs::create_dir_all(&root).expect("mkdir");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let name = format!("src/made_again_{round}.rs");
        write(
            &root,
            &name,
            &format!("pub fn quokka_marmot_{round}() {{}}\n"),
        );
        eventually(
            &format!("round {round}: the new file is indexed"),
            WAIT,
            || async { d.rows(&name).await.0 > 0 },
        )
        .await;
        // And later edits reach the index: the new directory is watched, not just reconciled.
        write(
            &root,
            &name,
            &format!("pub fn quokka_ocelot_{round}() {{}}\n"),
        );
        eventually(
            &format!("round {round}: the edit is indexed"),
            WAIT,
            || async { d.contents(&name).await.contains("ocelot") },
        )
        .await;
    }
    d.stop().await;
}

#[tokio::test]
async fn a_burst_of_changes_is_coalesced_into_few_batches() {
    use codesearch::watch::{Change, RootWatcher};
    let repo = support::repo(&[("src/lib.rs", "fn a() {}\n"), ("node_modules/x/i.js", "x")]);
    let root = std::fs::canonicalize(repo.path()).expect("canonical");
    let cfg = Config::defaults().expect("defaults");
    let walker = codesearch::scan::Walker::new(&root, &cfg.index).expect("walker");
    let mut watch = cfg.watch.clone();
    watch.debounce_ms = 100;
    watch.max_delay_ms = 2000;
    let mut w = RootWatcher::start(walker, &watch, None).expect("watch");
    // Excluded trees are not watched at all.
    assert_eq!(w.watched(), 2, "the root and src/");

    for i in 0..1000 {
        write(
            &root,
            &format!("src/gen/m{i}.rs"),
            &format!("fn f{i}() {{}}\n"),
        );
    }
    write(&root, "node_modules/x/j.js", "ignored");
    // Batches until the watcher has been quiet for a while.
    let mut seen = std::collections::BTreeSet::new();
    let mut batches = 0;
    while let Ok(change) = tokio::time::timeout(Duration::from_millis(1500), w.next()).await {
        batches += 1;
        match change.expect("watcher alive") {
            Change::Paths { paths, .. } => seen.extend(paths),
            Change::Rescan { reason } | Change::RootGone { reason } => {
                panic!("unexpected rescan: {reason}")
            }
            Change::History => panic!("no history is watched"),
        }
    }
    // Files created before the new directory's watch was in place are covered by the
    // directory itself, which the indexer walks whole.
    let covered =
        (0..1000).all(|i| seen.contains(&format!("src/gen/m{i}.rs"))) || seen.contains("src/gen");
    assert!(covered, "{} paths seen", seen.len());
    assert!(batches <= 5, "1000 files took {batches} batches");
    assert!(
        !seen.iter().any(|p| p.starts_with("node_modules")),
        "excluded paths are dropped"
    );
}

#[tokio::test]
async fn a_commit_updates_the_change_counts_without_waiting_for_a_reconcile() {
    let n = nats();
    let db = test_db().await;
    let repo = support::repo(&[
        ("app/a.py", "def a():\n    return 1\n"),
        ("app/b.py", "x = 1\n"),
    ]);
    let root = std::fs::canonicalize(repo.path()).expect("canonical");
    support::git_init_commit(&root);
    let mut cfg = live_config(&db, &n.url);
    // Only the start-up pass: anything after it comes from the watcher.
    cfg.watch.reconcile_interval_secs = 0;
    let name = support::repos(&cfg, &[&root])[0].name.clone();
    let serving = Serving::start(cfg, &root).await;
    let key = (name, "app/a.py".to_owned());
    let store = codesearch::store::Store::from_pool(serving.pool.clone());
    let changes = || {
        let (store, key) = (store.clone(), key.clone());
        async move {
            store
                .file_changes(std::slice::from_ref(&key))
                .await
                .expect("read")
                .get(&key)
                .copied()
        }
    };
    eventually(
        "the start-up pass records the first commit",
        WAIT,
        || async { changes().await == Some(1.0) },
    )
    .await;
    for (i, text) in ["def a():\n    return 2\n", "def a():\n    return 3\n"]
        .iter()
        .enumerate()
    {
        write(&root, "app/a.py", text);
        support::git(&root, &["commit", "-q", "-am", &format!("change {i}")]);
        let want = i as f64 + 2.0;
        eventually("a commit counts at once", WAIT, || async {
            changes().await == Some(want)
        })
        .await;
    }
    serving.stop().await;
}

/// A git that does not answer `git log` (here: its object store's list of alternates is a
/// FIFO nobody writes, so git blocks opening it) delays no file change, and a stop kills it.
#[tokio::test]
async fn a_hung_git_log_holds_up_no_file_change() {
    let n = nats();
    let db = test_db().await;
    let repo = support::repo(&[("app/a.py", "def a():\n    return 1\n")]);
    let root = std::fs::canonicalize(repo.path()).expect("canonical");
    support::git_init_commit(&root);
    let mut cfg = live_config(&db, &n.url);
    cfg.watch.reconcile_interval_secs = 0;
    let name = support::repos(&cfg, &[&root])[0].name.clone();
    let serving = Serving::start(cfg, &root).await;
    let store = codesearch::store::Store::from_pool(serving.pool.clone());
    let key = (name, "app/a.py".to_owned());
    eventually("the start-up pass records the commit", WAIT, || async {
        let counts = store.file_changes(std::slice::from_ref(&key)).await;
        counts.expect("read").get(&key) == Some(&1.0)
    })
    .await;

    let fifo = root.join(".git/objects/info/alternates");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.expect("mkfifo").success(), "mkfifo {}", fifo.display());
    // What a commit does to the reflog; git itself would now hang on the FIFO too.
    let mut reflog = std::fs::OpenOptions::new()
        .append(true)
        .open(root.join(".git/logs/HEAD"))
        .expect("reflog");
    std::io::Write::write_all(
        &mut reflog,
        b"0000000000000000000000000000000000000000 1111111111111111111111111111111111111111 A <a@b> 1700000000 +0000\tcommit: hang\n",
    )
    .expect("append");
    // The read of the counts is now stuck for HISTORY_TIMEOUT (120 s); edits go on.
    tokio::time::sleep(Duration::from_millis(500)).await;
    write(
        &root,
        "app/b.py",
        "def ocelot_after_the_hang():\n    return 2\n",
    );
    eventually("an edit made while git hangs is indexed", WAIT, || async {
        serving
            .contents("app/b.py")
            .await
            .contains("ocelot_after_the_hang")
    })
    .await;
    let stopped = Instant::now();
    serving.stop().await;
    assert!(
        stopped.elapsed() < Duration::from_secs(15),
        "the stop waited {:?} on git",
        stopped.elapsed()
    );
}

#[tokio::test]
async fn a_sick_ollama_costs_nothing() {
    let n = nats();
    let db = test_db().await;
    let ollama = FakeOllama::start(Mode::ModelMissing).await;
    let mut cfg = live_config(&db, &n.url);
    cfg.embed.backend = EmbedBackend::Ollama;
    cfg.embed.ollama_url = ollama.url.clone();
    cfg.embed.ollama_timeout_secs = 1;
    cfg.embed.ollama_batch_size = 4;
    let mut files = vec![(
        "src/poisoned.rs".to_owned(),
        "pub fn poison_pill_input() -> f64 { f64::NAN }\n".to_owned(),
    )];
    for i in 0..12 {
        files.push((
            format!("src/module_{i}.rs"),
            format!("pub fn handler_number_{i}(request: Request) -> Response {{\n    respond_{i}(request)\n}}\n"),
        ));
    }
    let repo = support::repo(&files);
    let d = Serving::start(cfg, repo.path()).await;

    // Model missing: every file is stored anyway, its vectors pending.
    eventually("files stored with pending vectors", WAIT, || async {
        let (chunks, pending): (i64, i64) = sqlx::query_as(
            "SELECT count(*), count(*) FILTER (WHERE embedding IS NULL) FROM codebase_index",
        )
        .fetch_one(&d.pool)
        .await
        .expect("count");
        chunks == 13 && pending == 13
    })
    .await;
    // Search keeps answering, lexically, and says why.
    let reply = d
        .search(json!({"query": "handler_number_3"}))
        .await
        .expect("a reply");
    assert_eq!(
        reply["results"][0]["filePath"], "src/module_3.rs",
        "{reply}"
    );
    assert_eq!(reply["mode"], "lexical");
    assert!(
        reply["warning"]
            .as_str()
            .is_some_and(|w| w.contains("ollama pull")),
        "{reply}"
    );

    // 500s, then a server that hangs: still answering, and the breaker keeps calls rare.
    ollama.set_mode(Mode::ServerError);
    tokio::time::sleep(Duration::from_secs(2)).await;
    ollama.set_mode(Mode::Hang);
    let started = Instant::now();
    let reply = d
        .search(json!({"query": "respond_7 request"}))
        .await
        .expect("a reply while Ollama hangs");
    assert_eq!(
        reply["results"][0]["filePath"], "src/module_7.rs",
        "{reply}"
    );
    assert!(started.elapsed() < Duration::from_secs(8));
    let calls_while_sick = ollama.requests();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        ollama.requests() - calls_while_sick <= 6,
        "a dead server is not hammered: {} calls in 3 s",
        ollama.requests() - calls_while_sick
    );

    // Ollama recovers, with one input it cannot embed: every other chunk gets its vector,
    // without a restart; the poisoned one is recorded.
    ollama.set_mode(Mode::Poison);
    eventually(
        "the backlog is embedded",
        Duration::from_secs(90),
        || async {
            let (pending, refused): (i64, i64) = sqlx::query_as(
                "SELECT count(*) FILTER (WHERE embedding IS NULL AND embed_error IS NULL),
                    count(*) FILTER (WHERE embed_error IS NOT NULL)
             FROM codebase_index",
            )
            .fetch_one(&d.pool)
            .await
            .expect("count");
            pending == 0 && refused == 1
        },
    )
    .await;
    assert_eq!(d.rows("src/poisoned.rs").await, (1, 1, 1));
    assert_eq!(d.rows("src/module_0.rs").await, (1, 0, 0));
    let reply = d
        .search(json!({"query": "handler number 5 request response"}))
        .await
        .expect("a reply");
    assert_eq!(reply["mode"], "hybrid", "{reply}");
    assert!(reply.get("warning").is_none_or(Value::is_null), "{reply}");
    d.stop().await;
}

/// Rows against disk: every file on disk recorded with its sha256 and its chunks, nothing else.
async fn assert_matches_disk(pool: &sqlx::PgPool, root: &Path, expected_files: usize) {
    let recorded: Vec<(String, String, i32, i64)> = sqlx::query_as(
        "SELECT f.file_path, f.file_hash, f.chunk_count,
                (SELECT count(*) FROM codebase_index c
                 WHERE c.repository = f.repository AND c.file_path = f.file_path)
         FROM indexed_files f ORDER BY 1",
    )
    .fetch_all(pool)
    .await
    .expect("files");
    assert_eq!(recorded.len(), expected_files);
    for (path, hash, chunk_count, rows) in &recorded {
        let bytes = std::fs::read(root.join(path)).expect("recorded file exists on disk");
        assert_eq!(&codesearch::scan::sha256_hex(&bytes), hash, "{path}");
        assert_eq!(i64::from(*chunk_count), *rows, "{path}: half-written");
    }
    let orphans: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM codebase_index c WHERE NOT EXISTS (
           SELECT 1 FROM indexed_files f
           WHERE f.repository = c.repository AND f.file_path = c.file_path)",
    )
    .fetch_one(pool)
    .await
    .expect("orphans");
    assert_eq!(orphans, 0);
    let stale: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM codebase_index c JOIN indexed_files f
           ON f.repository = c.repository AND f.file_path = c.file_path
         WHERE c.file_hash <> f.file_hash",
    )
    .fetch_one(pool)
    .await
    .expect("stale");
    assert_eq!(stale, 0);
}

#[tokio::test]
async fn sigkill_during_a_cold_index_converges_on_restart() {
    let db = test_db().await;
    let repo = tempfile::tempdir().expect("tempdir");
    let root = repo.path();
    const FILES: usize = 3000;
    for i in 0..FILES {
        let body: String = (0..6)
            .map(|f| {
                format!(
                    "pub fn op_{i}_{f}(input: &Input) -> Output {{\n    transform_{f}(input, {i})\n}}\n\n"
                )
            })
            .collect();
        write(root, &format!("m{}/f{i}.rs", i % 30), &body);
    }
    let pool = sqlx::PgPool::connect(&db.url).await.expect("connect");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_codesearch"))
        .arg("index")
        .arg(root)
        .env("DATABASE_URL", &db.url)
        .env("CODESEARCH_EMBEDDER", "hash")
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start codesearch index");
    eventually("some files written", Duration::from_secs(120), || async {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM indexed_files")
            .fetch_one(&pool)
            .await
            .unwrap_or(0);
        n >= 200
    })
    .await;
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let written: i64 = sqlx::query_scalar("SELECT count(*) FROM indexed_files")
        .fetch_one(&pool)
        .await
        .expect("count");
    assert!(
        (written as usize) < FILES,
        "killed before the end ({written} files)"
    );
    // Whatever was written is whole.
    let torn: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM indexed_files f WHERE f.chunk_count <> (
           SELECT count(*) FROM codebase_index c
           WHERE c.repository = f.repository AND c.file_path = f.file_path)",
    )
    .fetch_one(&pool)
    .await
    .expect("torn");
    assert_eq!(torn, 0, "a file was left half-written");

    // While it was down: one file deleted, one changed.
    std::fs::remove_file(root.join("m0/f0.rs")).expect("rm");
    write(root, "m1/f1.rs", "pub fn changed_while_down() {}\n");

    let cfg = support::config(&db, "nats://unused");
    let (store, embedder) = codesearch::daemon::open(&cfg).await.expect("open");
    let reports = codesearch::daemon::index(
        &cfg,
        store,
        embedder,
        &support::repos(&cfg, &[root]),
        &Default::default(),
        false,
    )
    .await
    .expect("index");
    let r = &reports[0];
    assert_matches_disk(&pool, root, FILES - 1).await;
    // Files written before the kill (bar the two touched) are not read into the model again.
    assert!(
        r.unchanged as i64 >= written - 2,
        "unchanged {} of {written} written before the kill",
        r.unchanged
    );
    assert!(
        r.embedded <= (FILES - written as usize + 2) * 6,
        "embedded {} chunks for {} files left",
        r.embedded,
        FILES - written as usize
    );
}

#[tokio::test]
async fn a_hung_database_gets_index_unavailable_within_the_deadline_not_silence() {
    let mut pg = tokio::task::spawn_blocking(Postgres::start)
        .await
        .expect("postgres");
    let db = pg.database().await;
    let n = nats();
    let repo = support::repo(&[("src/a.rs", "pub fn alpha_before_the_hang() {}\n")]);
    let root = repo.path().to_owned();
    let mut cfg = live_config(&db, &n.url);
    cfg.nats.answer_deadline_secs = 2;
    let d = Serving::start(cfg, &root).await;
    eventually("indexed", WAIT, || async { d.rows("src/a.rs").await.0 > 0 }).await;
    d.pool.close().await;

    // The server stops answering but keeps its connections: no statement can fail fast.
    pg.pause();
    let started = Instant::now();
    let reply = d.search(json!({"query": "alpha before the hang"})).await;
    let waited = started.elapsed();
    pg.resume();
    assert!(
        reply
            .as_ref()
            .is_some_and(|r| r["error"]["code"] == "index_unavailable"),
        "a search while the database hangs is answered index_unavailable, not left to the \
         caller's timeout: {reply:?} after {waited:?}"
    );
    assert!(
        reply.as_ref().is_some_and(|r| r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("answer_deadline_secs"))),
        "{reply:?}"
    );

    // Once it runs again, searches are answered as before.
    eventually(
        "searches after the hang",
        Duration::from_secs(30),
        || async {
            top_path(&d.search(json!({"query": "alpha before the hang"})).await).as_deref()
                == Some("src/a.rs")
        },
    )
    .await;
    d.stop().await;
}

#[tokio::test]
async fn postgres_and_nats_restarts_are_survived() {
    let mut pg = tokio::task::spawn_blocking(Postgres::start)
        .await
        .expect("postgres");
    let db = pg.database().await;
    let mut n: Nats = nats();
    let repo = support::repo(&[("src/a.rs", "pub fn alpha_before_restarts() {}\n")]);
    let root = repo.path().to_owned();
    let mut cfg = live_config(&db, &n.url);
    cfg.database.connect_timeout_secs = 2;
    let d = Serving::start(cfg, &root).await;
    eventually("indexed", WAIT, || async { d.rows("src/a.rs").await.0 > 0 }).await;
    d.pool.close().await;

    // PostgreSQL goes away; a change made meanwhile is indexed once it is back.
    pg = tokio::task::spawn_blocking(move || {
        pg.stop();
        pg
    })
    .await
    .expect("stop");
    write(&root, "src/b.rs", "pub fn beta_during_outage() {}\n");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let reply = d.search(json!({"query": "alpha"})).await;
    assert!(
        reply
            .as_ref()
            .is_some_and(|r| r["error"]["code"] == "index_unavailable"),
        "a search during the outage gets the retryable index_unavailable, not silence: {reply:?}"
    );
    let pg = tokio::task::spawn_blocking(move || {
        pg.restart();
        pg
    })
    .await
    .expect("restart");
    let pool = sqlx::PgPool::connect(&db.url).await.expect("reconnect");
    eventually(
        "the change made during the outage",
        Duration::from_secs(60),
        || async {
            let n: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM codebase_index WHERE file_path = 'src/b.rs'",
            )
            .fetch_one(&pool)
            .await
            .unwrap_or(0);
            n > 0
        },
    )
    .await;
    let reply = d.search(json!({"query": "beta during outage"})).await;
    assert_eq!(top_path(&reply).as_deref(), Some("src/b.rs"), "{reply:?}");

    // nats-server crashes and comes back on the same port: searches are answered again.
    n.restart();
    eventually(
        "searches over the restarted NATS",
        Duration::from_secs(30),
        || async {
            top_path(&d.search(json!({"query": "alpha before restarts"})).await).as_deref()
                == Some("src/a.rs")
        },
    )
    .await;
    d.stop().await;
    drop(pg);
}
