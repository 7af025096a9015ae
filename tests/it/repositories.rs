//! Repositories and workspaces: names that two roots would share, isolation between
//! workspaces (in the service and through the NATS server's own permissions), and repository
//! requests.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use codesearch::config::{Config, SearchMode};
use codesearch::embed::{Embedder, HashEmbedder};
use codesearch::pipeline::Indexer;
use codesearch::search::{RawSearch, SearchRequest, SearchService};
use codesearch::store::Store;
use serde_json::{Value, json};
use sqlx::Row;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::support::{self, test_db, write};

/// One `codesearch index` run over `repos`, without a progress bar.
async fn index_once(
    cfg: &Config,
    store: &Store,
    embedder: &Arc<dyn Embedder>,
    repos: &[codesearch::repository::Repository],
) -> anyhow::Result<Vec<codesearch::pipeline::IndexReport>> {
    let cancel = CancellationToken::new();
    codesearch::daemon::index(
        cfg,
        store.clone(),
        Arc::clone(embedder),
        repos,
        &cancel,
        false,
    )
    .await
}

async fn count(store: &Store, sql: &str) -> i64 {
    sqlx::query(sql)
        .fetch_one(store.pool())
        .await
        .expect("query")
        .get::<i64, _>(0)
}

/// A git repository to clone by `file://` URL: one commit holding `lib/refund.rs`.
fn refund_origin() -> tempfile::TempDir {
    let origin = support::repo(&[(
        "lib/refund.rs",
        "pub fn issue_refund_now(amount: u64) -> u64 { amount }\n",
    )]);
    support::git_init_commit(origin.path());
    origin
}

/// Two daemons' configurations on one index and one NATS, with `workspaces` (a line of the
/// `[workspaces]` table): A answers on `agog.*`, B on `fleetb.*` (so which one a request
/// reaches is known), both checking leases and records every second.
fn fleet_configs(base: &Config, workspaces: &str) -> (Config, Config) {
    let a = config_with(
        base,
        &format!("[workspaces]\n{workspaces}\n[watch]\nlease_check_secs = 1\n"),
    );
    let mut b = a.clone();
    b.nats.subject_prefix = "fleetb".into();
    (a, b)
}

fn config_with(cfg: &Config, toml: &str) -> Config {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("c.toml");
    std::fs::write(&file, toml).expect("write");
    let mut c = Config::load(Some(&file), |_| None, &[]).expect("config");
    c.database = cfg.database.clone();
    c.nats = cfg.nats.clone();
    c.embed = cfg.embed.clone();
    c.health = cfg.health.clone();
    c
}

#[tokio::test]
async fn roots_with_the_same_directory_name_never_sweep_each_other() {
    let db = test_db().await;
    let base = tempfile::tempdir().expect("tempdir");
    let one = base.path().join("one/app");
    let two = base.path().join("two/app");
    write(&one, "src/billing.py", "def bill():\n    return 'one'\n");
    write(&one, "src/only_one.py", "def first():\n    return 1\n");
    write(&two, "src/billing.py", "def bill():\n    return 'two'\n");
    write(
        &two,
        "lib/only_two.ts",
        "export function second() { return 2; }\n",
    );

    // One root at a time, both named after their directory: the second is refused before
    // anything of the first is touched.
    let cfg = support::config(&db, "nats://unused");
    let (store, embedder) = codesearch::daemon::open(&cfg).await.expect("open");
    let first = index_once(&cfg, &store, &embedder, &support::repos(&cfg, &[&one]))
        .await
        .expect("index one/app");
    assert_eq!(first[0].indexed, 2);
    let err = index_once(&cfg, &store, &embedder, &support::repos(&cfg, &[&two]))
        .await
        .expect_err("two/app may not take `app`");
    let message = format!("{err:#}");
    assert!(
        message.contains("`app`") && message.contains("still exists"),
        "{message}"
    );
    assert_eq!(
        count(
            &store,
            "SELECT count(*) FROM indexed_files WHERE repository = 'app'"
        )
        .await,
        2
    );

    // Named on the command line (NAME=PATH), the second root takes a name of its own; the
    // first root under a second name is its files twice, which the claim warns of.
    let named_two = PathBuf::from(format!("two-app={}", two.display()));
    let again = PathBuf::from(format!("again={}", one.display()));
    let repos = support::repos(&cfg, &[&named_two, &again]);
    assert_eq!(repos[0].name, "two-app");
    index_once(&cfg, &store, &embedder, &repos)
        .await
        .expect("index two-app and again");
    let root = repos[1].root.to_string_lossy();
    assert_eq!(
        store
            .other_names_at(&root, "default", "again")
            .await
            .expect("names"),
        ["app"]
    );
    assert!(
        store
            .other_names_at(&repos[0].root.to_string_lossy(), "default", "two-app")
            .await
            .expect("names")
            .is_empty()
    );
    // With no daemon to ask, `repo remove` removes from the database itself, but never under
    // a pass: not while the repository's lease is held.
    let remove = |name: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_codesearch"))
            .args(["repo", "remove", name])
            .env("DATABASE_URL", &cfg.database.url)
            .env("NATS_URL", "nats://127.0.0.1:1")
            .output()
            .expect("run codesearch repo remove")
    };
    let lease = store
        .try_lease("again")
        .await
        .expect("lease")
        .expect("free");
    let out = remove("again");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("lease"),
        "{stderr}"
    );
    lease.release().await;
    for name in ["two-app", "again"] {
        let out = remove(name);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.starts_with(&format!("workspace default: removed {name} (")),
            "{stdout}"
        );
        assert!(store.repository(name).await.expect("read").is_none());
    }
    let out = remove("never-was");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("no repository `never-was`"),
        "{stderr}"
    );
    assert!(store.repository("app").await.expect("read").is_some());

    // Named in the configuration, both live side by side, pass after pass.
    let named = config_with(
        &cfg,
        &format!(
            "[[repositories]]\npath = {:?}\nname = \"app\"\n\n[[repositories]]\npath = {:?}\nname = \"two-app\"\n",
            one.display().to_string(),
            two.display().to_string()
        ),
    );
    let repos = support::repos(&named, &[] as &[&Path]);
    for pass in 0..3 {
        let reports = index_once(&named, &store, &embedder, &repos)
            .await
            .expect("index both");
        let removed: u64 = reports.iter().map(|r| r.removed).sum();
        let embedded: usize = reports.iter().map(|r| r.embedded).sum();
        assert_eq!(removed, 0, "pass {pass}: {reports:?}");
        if pass > 0 {
            assert_eq!(embedded, 0, "pass {pass}: {reports:?}");
            assert!(reports.iter().all(|r| r.indexed == 0), "pass {pass}");
        }
    }
    let files: Vec<(String, String)> =
        sqlx::query_as("SELECT repository, file_path FROM indexed_files ORDER BY 1, 2")
            .fetch_all(store.pool())
            .await
            .expect("files");
    let expect = [
        ("app", "src/billing.py"),
        ("app", "src/only_one.py"),
        ("two-app", "lib/only_two.ts"),
        ("two-app", "src/billing.py"),
    ];
    assert_eq!(
        files,
        expect
            .iter()
            .map(|(r, p)| ((*r).to_owned(), (*p).to_owned()))
            .collect::<Vec<_>>()
    );

    // A root whose recorded directory is gone is taken as moved, not refused.
    std::fs::remove_dir_all(&one).expect("rm");
    let moved = base.path().join("moved/app");
    write(&moved, "src/only_one.py", "def first():\n    return 1\n");
    let reports = index_once(&cfg, &store, &embedder, &support::repos(&cfg, &[&moved]))
        .await
        .expect("moved root");
    assert_eq!(reports[0].removed, 1, "billing.py is not in the moved tree");
    assert_eq!(reports[0].embedded, 0, "vectors are reused");
}

/// Two workspaces of look-alike code, searched through one service.
struct TwoWorkspaces {
    _dirs: Vec<tempfile::TempDir>,
    store: Store,
    indexer: Indexer,
    repos: Vec<codesearch::repository::Repository>,
    cfg: Config,
}

fn look_alike(tag: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for i in 0..12 {
        files.push((
            format!("src/invoice_{i}.py"),
            format!(
                "def validate_invoice_{i}(total, lines):\n    \"\"\"Checks invoice {i} totals for {tag}.\"\"\"\n    return abs(sum(lines) - total) < 0.01\n\n\ndef retry_payment_{i}(attempts):\n    for _ in range(attempts):\n        pass\n"
            ),
        ));
    }
    files.push((
        "tests/test_invoice.py".into(),
        format!(
            "def test_validate_invoice():\n    assert validate_invoice_1(3, [1, 2])  # {tag}\n"
        ),
    ));
    files.push((
        "README.md".into(),
        format!("# Billing {tag}\n\nHow invoices are validated and payments retried.\n"),
    ));
    files
}

impl TwoWorkspaces {
    async fn new() -> Self {
        let db = test_db().await;
        let base = support::config(&db, "nats://unused");
        let dirs = vec![
            support::repo(&look_alike("alpha")),
            support::repo(&look_alike("alpha two")),
            support::repo(&look_alike("beta")),
        ];
        let cfg = config_with(
            &base,
            &format!(
                "[[repositories]]\npath = {:?}\nname = \"a1\"\nworkspace = \"alpha\"\n\n\
                 [[repositories]]\npath = {:?}\nname = \"a2\"\nworkspace = \"alpha\"\n\n\
                 [[repositories]]\npath = {:?}\nname = \"b1\"\nworkspace = \"beta\"\n",
                dirs[0].path().display().to_string(),
                dirs[1].path().display().to_string(),
                dirs[2].path().display().to_string()
            ),
        );
        let store = Store::connect(&cfg.database).await.expect("connect");
        store.migrate().await.expect("migrate");
        let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(384));
        let indexer = Indexer::new(store.clone(), embedder, cfg.index.clone()).expect("indexer");
        let repos = support::repos(&cfg, &[] as &[&Path]);
        let t = Self {
            _dirs: dirs,
            store,
            indexer,
            repos,
            cfg,
        };
        for r in &t.repos {
            t.indexer
                .index_repository(r, None, &CancellationToken::new())
                .await
                .expect("index");
        }
        t
    }

    fn service(&self) -> SearchService {
        SearchService::new(
            self.store.clone(),
            Arc::clone(self.indexer.embedder()),
            self.cfg.search.clone(),
        )
    }
}

/// Every query of a battery in `workspace`: (query, mode, repository, file type, offset) ->
/// the (repository, path, score) of each hit.
/// Whether each repository of the summary is watched (a daemon holds its lease), by name.
async fn watched(store: &Store) -> Vec<(String, Option<bool>)> {
    store
        .index_summary()
        .await
        .expect("summary")
        .repositories
        .into_iter()
        .map(|r| (r.name, r.watched))
        .collect()
}

#[tokio::test]
async fn a_repository_is_watched_while_a_daemon_holds_its_lease() {
    let db = test_db().await;
    let base = tempfile::tempdir().expect("tempdir");
    let (one, two) = (base.path().join("one"), base.path().join("two"));
    write(&one, "a.py", "def a():\n    return 1\n");
    write(&two, "b.py", "def b():\n    return 2\n");
    let cfg = support::config(&db, "nats://unused");
    let (store, embedder) = codesearch::daemon::open(&cfg).await.expect("open");
    index_once(
        &cfg,
        &store,
        &embedder,
        &support::repos(&cfg, &[&one, &two]),
    )
    .await
    .expect("index");
    // Indexed once and left: nobody keeps either up to date.
    let none = vec![
        ("one".to_owned(), Some(false)),
        ("two".to_owned(), Some(false)),
    ];
    assert_eq!(watched(&store).await, none);

    // A lease (what a serving daemon holds for each repository it watches), on a connection
    // of its own, marks that repository only.
    let lease = store.try_lease("two").await.expect("lease").expect("free");
    assert_eq!(
        watched(&store).await,
        vec![
            ("one".to_owned(), Some(false)),
            ("two".to_owned(), Some(true))
        ]
    );
    // The same advisory key in another database is another lease.
    let other = test_db().await;
    let (other_store, _) = codesearch::daemon::open(&support::config(&other, "nats://unused"))
        .await
        .expect("open the other database");
    let elsewhere = other_store
        .try_lease("one")
        .await
        .expect("lease")
        .expect("free");
    assert_eq!(watched(&store).await[0], ("one".to_owned(), Some(false)));

    // Given up (a daemon that stops), it is not watched any more.
    lease.release().await;
    elsewhere.release().await;
    assert_eq!(watched(&store).await, none);
}

async fn battery(service: &SearchService, workspace: &str) -> Vec<Vec<(String, String, f64)>> {
    let queries = [
        "validate invoice totals",
        "retry_payment_3",
        "validate_invoice_7",
        "how are payments retried",
        "Billing",
        "test validate invoice",
        "alpha",
        "beta",
    ];
    let mut out = Vec::new();
    for query in queries {
        for mode in [SearchMode::Hybrid, SearchMode::Vector, SearchMode::Lexical] {
            for (file_type, offset) in [(None, None), (Some("py"), None), (None, Some(5))] {
                let raw = RawSearch {
                    mode: Some(mode.as_str().into()),
                    file_types: file_type.map(|t: &str| vec![t.to_owned()]),
                    offset,
                    limit: Some(10),
                    workspace: Some(workspace.to_owned()),
                    ..RawSearch::query(query)
                };
                let req = SearchRequest::new(raw, service.config()).expect("valid");
                let outcome = service.search(&req).await.expect("search");
                assert_eq!(outcome.workspace, workspace);
                out.push(
                    outcome
                        .hits
                        .into_iter()
                        .map(|h| (h.hit.repository, h.hit.file_path, h.score))
                        .collect(),
                );
            }
        }
    }
    out
}

#[tokio::test]
async fn no_result_ever_comes_from_another_workspace_and_its_writes_do_not_move_scores() {
    let t = TwoWorkspaces::new().await;
    let service = t.service();
    let mut searches = 0;
    // Twice: cold, then from the warm caches.
    for _ in 0..2 {
        for (workspace, own) in [("alpha", ["a1", "a2"]), ("beta", ["b1", "b1"])] {
            for hits in battery(&service, workspace).await {
                searches += 1;
                for (repository, path, _) in &hits {
                    assert!(
                        own.contains(&repository.as_str()),
                        "{workspace}: {repository}/{path}"
                    );
                }
            }
        }
    }
    assert!(searches >= 288, "{searches}");
    // A repository of another workspace is not a filter that finds nothing: it is unknown here.
    let req = SearchRequest::new(
        RawSearch {
            repository: Some("b1".into()),
            workspace: Some("alpha".into()),
            ..RawSearch::query("invoice")
        },
        service.config(),
    )
    .expect("valid");
    let err = service.search(&req).await.expect_err("b1 is not in alpha");
    assert!(err.to_string().contains("a1, a2"), "{err}");
    // A workspace nobody indexed into finds nothing, and says so.
    let req = SearchRequest::new(
        RawSearch {
            workspace: Some("gamma".into()),
            ..RawSearch::query("invoice")
        },
        service.config(),
    )
    .expect("valid");
    let outcome = service.search(&req).await.expect("search");
    assert!(outcome.hits.is_empty() && outcome.warning.is_some());

    // Re-index beta with many more files: alpha's results and scores do not move, from a
    // fresh service (no cache) as from the warm one.
    let before = battery(&t.service(), "alpha").await;
    let beta = &t.repos[2];
    for i in 0..40 {
        write(
            &beta.root,
            &format!("more/invoice_extra_{i}.py"),
            &format!(
                "def validate_invoice_extra_{i}(total):\n    return total  # invoice validate retry payment\n"
            ),
        );
    }
    t.indexer
        .index_repository(beta, None, &CancellationToken::new())
        .await
        .expect("re-index beta");
    t.store.vacuum_analyze().await.expect("analyze");
    same(&battery(&t.service(), "alpha").await, &before);
    same(&battery(&service, "alpha").await, &before);
    // ... while beta's own results did change.
    assert_ne!(
        battery(&t.service(), "beta").await,
        battery(&service, "alpha").await
    );
}

/// Asserts two batteries' results are the same, naming the first search that differs: the same
/// scores at every rank (to 1e-9: sums in another order differ in the last bits), and the same
/// results except among the ones tied with the last (which of several equal candidates fills a
/// page is up to the database's plan).
fn same(after: &[Vec<(String, String, f64)>], before: &[Vec<(String, String, f64)>]) {
    assert_eq!(after.len(), before.len());
    for (i, (a, b)) in after.iter().zip(before).enumerate() {
        let scores = |v: &[(String, String, f64)]| v.iter().map(|h| h.2).collect::<Vec<_>>();
        assert_eq!(a.len(), b.len(), "search {i}: {a:?} != {b:?}");
        for (x, y) in scores(a).iter().zip(scores(b)) {
            assert!(
                (x - y).abs() < 1e-9,
                "search {i}: scores moved: {a:?} != {b:?}"
            );
        }
        let last = b.last().map_or(0.0, |h| h.2);
        let untied = |v: &[(String, String, f64)]| {
            let mut ids: Vec<(String, String)> = v
                .iter()
                .filter(|h| (h.2 - last).abs() >= 1e-9)
                .map(|h| (h.0.clone(), h.1.clone()))
                .collect();
            ids.sort();
            ids
        };
        assert_eq!(untied(a), untied(b), "search {i}: results moved");
    }
}

/// A daemon serving `repos` with `cfg` until dropped.
struct Daemon {
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Daemon {
    async fn start(cfg: Config, repos: Vec<codesearch::repository::Repository>) -> Self {
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(codesearch::daemon::serve(cfg, repos, async move {
            let _ = stopped.await;
        }));
        Self {
            stop: Some(stop),
            task,
        }
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(30), &mut self.task).await;
    }
}

/// Sends `body` to `subject` until a daemon answers (it may still be starting).
async fn ask(client: &async_nats::Client, subject: &str, body: Value) -> Value {
    let payload = serde_json::to_vec(&body).expect("json");
    for _ in 0..100 {
        match tokio::time::timeout(
            Duration::from_secs(10),
            client.request(subject.to_owned(), payload.clone().into()),
        )
        .await
        {
            Ok(Ok(reply)) => return serde_json::from_slice(&reply.payload).expect("json reply"),
            _ => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
    panic!("no reply on {subject}");
}

/// Whether `file` of `repository` (any, when empty) answers `query` on `prefix`'s search
/// subject within 30 s.
async fn answers(
    client: &async_nats::Client,
    prefix: &str,
    query: &str,
    repository: &str,
    file: &str,
) -> bool {
    let subject = format!("{prefix}.codebase.search");
    for _ in 0..150 {
        let reply = ask(client, &subject, json!({"query": query})).await;
        let hit = |r: &Value| {
            r["filePath"] == file && (repository.is_empty() || r["repository"] == repository)
        };
        if reply["results"]
            .as_array()
            .is_some_and(|r| r.iter().any(hit))
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    false
}

/// A repository's status, asked until `done` holds (for 30 s at most); the last reply.
async fn status_until(
    client: &async_nats::Client,
    name: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    status_at_until(client, "agog", name, done).await
}

/// [`status_until`], asked of the daemon answering on `prefix`.
async fn status_at_until(
    client: &async_nats::Client,
    prefix: &str,
    name: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let subject = format!("{prefix}.codebase.repo.request");
    let mut state = Value::Null;
    for _ in 0..150 {
        state = ask(client, &subject, json!({"action": "status", "name": name})).await;
        if done(&state) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    state
}

#[tokio::test]
async fn a_client_allowed_one_workspace_cannot_read_another() {
    let db = test_db().await;
    let (nats, _conf) = support::nats_with_config(
        r#"
        authorization {
          users = [
            { user: daemon, password: daemon-secret }
            { user: alpha, password: alpha-secret,
              permissions: { publish: ["agog.workspace.alpha.>"], subscribe: ["_INBOX.>"] } }
          ]
        }
        "#,
    );
    let port = nats.url.rsplit(':').next().expect("port");
    let base = support::config(
        &db,
        &format!("nats://daemon:daemon-secret@127.0.0.1:{port}"),
    );
    let a = support::repo(&look_alike("alpha"));
    let b = support::repo(&look_alike("beta"));
    let cfg = config_with(
        &base,
        &format!(
            "[workspaces]\nplain_subjects = \"default\"\ndefault = \"alpha\"\n\n\
             [[repositories]]\npath = {:?}\nname = \"a1\"\nworkspace = \"alpha\"\n\n\
             [[repositories]]\npath = {:?}\nname = \"b1\"\nworkspace = \"beta\"\n",
            a.path().display().to_string(),
            b.path().display().to_string()
        ),
    );
    let repos = support::repos(&cfg, &[] as &[&Path]);
    let daemon = Daemon::start(cfg, repos).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!daemon.task.is_finished(), "{:?}", (daemon.task).await);

    let alpha =
        async_nats::ConnectOptions::with_user_and_password("alpha".into(), "alpha-secret".into())
            .connect(format!("nats://127.0.0.1:{port}"))
            .await
            .expect("alpha connects");
    // Its own subject answers, from its workspace only (once the daemon has indexed it).
    let mut found = Value::Null;
    for _ in 0..100 {
        found = ask(
            &alpha,
            "agog.workspace.alpha.codebase.search",
            json!({"query": "invoice", "limit": 20}),
        )
        .await;
        if found["results"].as_array().is_some_and(|r| !r.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let results = found["results"].as_array().expect("results");
    assert!(!results.is_empty(), "{found}");
    assert!(results.iter().all(|r| r["repository"] == "a1"), "{found}");
    // Naming another workspace on its own subject is refused by the daemon...
    let refused = ask(
        &alpha,
        "agog.workspace.alpha.codebase.search",
        json!({"query": "invoice", "workspace": "beta"}),
    )
    .await;
    assert_eq!(refused["error"]["code"], "permission_denied", "{refused}");
    // ...and publishing to beta's subject or the plain one is refused by the NATS server.
    for subject in [
        "agog.workspace.beta.codebase.search",
        "agog.codebase.search",
    ] {
        let reply = tokio::time::timeout(
            Duration::from_secs(3),
            alpha.request(
                subject.to_owned(),
                br#"{"query":"invoice"}"#.to_vec().into(),
            ),
        )
        .await;
        assert!(
            !matches!(reply, Ok(Ok(_))),
            "{subject} answered a client without permission"
        );
    }
    // The daemon's own user may use the plain subject, limited to the default workspace.
    let admin =
        async_nats::ConnectOptions::with_user_and_password("daemon".into(), "daemon-secret".into())
            .connect(format!("nats://127.0.0.1:{port}"))
            .await
            .expect("admin");
    let plain = ask(
        &admin,
        "agog.codebase.search",
        json!({"query": "invoice", "workspace": "beta"}),
    )
    .await;
    assert_eq!(plain["error"]["code"], "permission_denied", "{plain}");
    let plain = ask(&admin, "agog.codebase.search", json!({"query": "invoice"})).await;
    assert_eq!(plain["workspace"], "alpha", "{plain}");
    daemon.stop().await;
    drop(nats);
}

#[tokio::test]
async fn repository_requests_add_remove_and_survive_a_restart() {
    let db = test_db().await;
    let nats = support::nats();
    let allowed = tempfile::tempdir().expect("allowed");
    let outside = tempfile::tempdir().expect("outside");
    let clones = tempfile::tempdir().expect("clones");
    write(
        &allowed.path().join("svc"),
        "src/ledger.py",
        "def post_ledger_entry(amount):\n    return amount\n",
    );
    write(
        outside.path(),
        "secret/keys.py",
        "def read_private_keys():\n    return 'nope'\n",
    );
    std::os::unix::fs::symlink(outside.path(), allowed.path().join("sneaky")).expect("symlink");
    // A git repository to clone by file:// URL.
    let origin = refund_origin();

    let base = support::config(&db, &nats.url);
    let cfg = config_with(
        &base,
        &format!(
            "[workspaces]\nallowed_roots = [{:?}]\nclone_dir = {:?}\n",
            allowed.path().display().to_string(),
            clones.path().display().to_string()
        ),
    );
    let client = async_nats::connect(&nats.url).await.expect("client");
    let daemon = Daemon::start(cfg.clone(), Vec::new()).await;
    let repo_subject = "agog.codebase.repo.request";

    // Escapes are refused, each with its reason.
    let svc = allowed.path().join("svc");
    for (path, why) in [
        (
            format!("{}/../{}", svc.display(), outside.path().display()),
            "outside",
        ),
        (
            allowed.path().join("sneaky").display().to_string(),
            "outside",
        ),
        (outside.path().display().to_string(), "outside"),
        ("relative/path".to_owned(), "relative"),
    ] {
        let reply = ask(
            &client,
            repo_subject,
            json!({"action": "add", "path": path}),
        )
        .await;
        assert_eq!(
            reply["error"]["code"], "invalid_argument",
            "{path}: {reply}"
        );
        let message = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(why) || message.contains("not a readable"),
            "{path}: {message}"
        );
    }

    // An allowed path: the reply comes at once, and the code becomes searchable.
    let added = ask(
        &client,
        repo_subject,
        json!({"action": "add", "path": svc.display().to_string()}),
    )
    .await;
    assert_eq!(added["success"], true, "{added}");
    assert_eq!(added["repository"]["name"], "svc");
    assert_eq!(added["repository"]["origin"], "request");
    // The same directory under a second name would be indexed twice: refused.
    let twice = ask(
        &client,
        repo_subject,
        json!({"action": "add", "path": svc.display().to_string(), "name": "svc2"}),
    )
    .await;
    assert_eq!(twice["error"]["code"], "invalid_argument", "{twice}");
    assert!(
        twice["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("`svc`"),
        "{twice}"
    );
    let url = format!("file://{}", origin.path().display());
    let cloned = ask(
        &client,
        repo_subject,
        json!({"action": "add", "url": url, "name": "refunds"}),
    )
    .await;
    assert_eq!(cloned["success"], true, "{cloned}");

    // `file` of repository `want` answers `query` (within 30 s).
    let found = |query: &'static str, repository: &'static str, file: &'static str| {
        answers(&client, "agog", query, repository, file)
    };
    assert!(
        found("post_ledger_entry", "svc", "src/ledger.py").await,
        "the added path is searchable"
    );
    assert!(
        found("issue_refund_now", "refunds", "lib/refund.rs").await,
        "the cloned URL is searchable"
    );
    let listed = ask(&client, repo_subject, json!({"action": "list"})).await;
    let names: Vec<&str> = listed["repositories"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["refunds", "svc"], "{listed}");
    let status = ask(
        &client,
        repo_subject,
        json!({"action": "status", "name": "refunds"}),
    )
    .await;
    assert_eq!(status["repository"]["state"], "ready", "{status}");
    assert_eq!(status["repository"]["languages"]["rust"], 1, "{status}");

    // After a restart the requested repositories are served again.
    daemon.stop().await;
    let daemon = Daemon::start(cfg.clone(), Vec::new()).await;
    let status = ask(
        &client,
        repo_subject,
        json!({"action": "status", "name": "svc"}),
    )
    .await;
    assert_eq!(status["success"], true, "{status}");
    write(
        &svc,
        "src/audit.py",
        "def audit_trail_after_restart():\n    return 1\n",
    );
    assert!(
        found("audit_trail_after_restart", "svc", "src/audit.py").await,
        "watched again after the restart"
    );

    // A requested root that is not there when the daemon starts (a volume not mounted yet):
    // its index is served, its state says why, and it is indexed once the root is back.
    daemon.stop().await;
    let parked = allowed.path().join("svc.parked");
    std::fs::rename(&svc, &parked).expect("move the root away");
    let daemon = Daemon::start(cfg.clone(), Vec::new()).await;
    let state = status_until(&client, "svc", |s| s["repository"]["state"] == "failed").await;
    assert_eq!(state["repository"]["state"], "failed", "{state}");
    assert!(
        state["repository"]["error"]
            .as_str()
            .unwrap_or_default()
            .contains("is gone"),
        "{state}"
    );
    assert!(
        found("post_ledger_entry", "svc", "src/ledger.py").await,
        "the index is served while the root is away"
    );
    std::fs::rename(&parked, &svc).expect("move the root back");
    write(
        &svc,
        "src/back.py",
        "def back_from_the_mount():\n    return 1\n",
    );
    assert!(
        found("back_from_the_mount", "svc", "src/back.py").await,
        "indexed once the root is back"
    );

    // A clone that vanished while the daemon was down (a fresh volume) is cloned again.
    let clone_dir = clones.path().join("refunds");
    assert!(clone_dir.join(".git").is_dir());
    daemon.stop().await;
    std::fs::remove_dir_all(&clone_dir).expect("remove the clone");
    let daemon = Daemon::start(cfg.clone(), Vec::new()).await;
    let state = status_until(&client, "refunds", |s| {
        s["repository"]["state"] == "ready" && clone_dir.join(".git").is_dir()
    })
    .await;
    assert_eq!(state["repository"]["state"], "ready", "{state}");
    assert!(clone_dir.join("lib/refund.rs").is_file(), "cloned again");
    assert_eq!(state["repository"]["languages"]["rust"], 1, "{state}");

    // Removal leaves no rows, and the clone is gone.
    let store = Store::connect(&cfg.database).await.expect("connect");
    let removed = ask(
        &client,
        repo_subject,
        json!({"action": "remove", "name": "refunds"}),
    )
    .await;
    assert_eq!(removed["success"], true, "{removed}");
    for table in [
        "codebase_index",
        "indexed_files",
        "repo_terms",
        "repositories",
    ] {
        let column = if table == "repositories" {
            "name"
        } else {
            "repository"
        };
        let n = count(
            &store,
            &format!("SELECT count(*) FROM {table} WHERE {column} = 'refunds'"),
        )
        .await;
        assert_eq!(n, 0, "{table}");
    }
    assert!(!clone_dir.exists(), "the clone is deleted");
    let again = ask(
        &client,
        repo_subject,
        json!({"action": "remove", "name": "refunds"}),
    )
    .await;
    assert_eq!(again["error"]["code"], "not_found", "{again}");
    daemon.stop().await;
}

/// With no PATH and no configured repositories, the working directory is indexed only when it
/// is a git repository: `codesearch index` elsewhere (a home directory, /tmp) refuses instead
/// of indexing whatever lies there into the shared index.
#[tokio::test]
async fn the_working_directory_is_indexed_only_when_it_is_a_git_repository() {
    let db = test_db().await;
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "src/lib.rs", "pub fn settle_invoice() {}\n");
    let index = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_codesearch"))
            .arg("index")
            .current_dir(dir.path())
            .env("DATABASE_URL", &db.url)
            .env("CODESEARCH_EMBEDDER", "hash")
            .env("RUST_LOG", "warn")
            .output()
            .expect("run codesearch index")
    };
    let refused = index();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success(),
        "indexed a directory that is not a repository"
    );
    assert!(stderr.contains("nothing to index"), "{stderr}");
    let pool = sqlx::PgPool::connect(&db.url).await.expect("connect");
    let files = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM indexed_files")
            .fetch_one(&pool)
            .await
            .unwrap_or(0)
    };
    assert_eq!(files().await, 0);

    std::fs::create_dir(dir.path().join(".git")).expect("mkdir .git");
    let done = index();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(files().await, 1);
}

/// Several daemons on one index keep the repositories requests add, whichever daemon answered
/// the request, and a removal reaches every one of them. Daemon A answers on `agog.*` and B on
/// `fleetb.*` (one database, one NATS), so which one a request reaches is known.
#[tokio::test]
async fn every_daemon_of_a_fleet_follows_repository_requests_whichever_answers() {
    let db = test_db().await;
    let nats = support::nats();
    let allowed = tempfile::tempdir().expect("allowed");
    let svc = allowed.path().join("svc");
    write(
        &svc,
        "src/ledger.py",
        "def post_ledger_entry(amount):\n    return amount\n",
    );
    let billing = support::repo(&[(
        "billing.py",
        "def charge_the_card(amount):\n    return amount\n",
    )]);
    let (a, b) = fleet_configs(
        &support::config(&db, &nats.url),
        &format!(
            "allowed_roots = [{:?}]",
            allowed.path().display().to_string()
        ),
    );
    // B alone keeps `billing`, from its command line.
    let billing_repo = codesearch::repository::Repository::new(
        "billing",
        billing.path(),
        "default",
        codesearch::store::Origin::Local,
        b.index.clone(),
    )
    .expect("billing");
    let client = async_nats::connect(&nats.url).await.expect("client");
    let daemon_a = Daemon::start(a.clone(), Vec::new()).await;
    let daemon_b = Daemon::start(b.clone(), vec![billing_repo.clone()]).await;
    let found = |prefix: &'static str, query: &'static str, file: &'static str| {
        answers(&client, prefix, query, "", file)
    };

    // Both up (B has indexed its own) before the request, so B's start-up is not what gives
    // it the repository.
    assert!(found("fleetb", "charge_the_card", "billing.py").await);
    let listed = ask(
        &client,
        "agog.codebase.repo.request",
        json!({"action": "list"}),
    )
    .await;
    assert_eq!(listed["success"], true, "{listed}");

    // A answers the request; B keeps the repository too: it indexes it once A is gone.
    let added = ask(
        &client,
        "agog.codebase.repo.request",
        json!({"action": "add", "path": svc.display().to_string()}),
    )
    .await;
    assert_eq!(added["success"], true, "{added}");
    assert!(found("agog", "post_ledger_entry", "src/ledger.py").await);
    daemon_a.stop().await;
    write(
        &svc,
        "src/audit.py",
        "def audit_trail_kept_by_the_other_daemon():\n    return 1\n",
    );
    assert!(
        found(
            "fleetb",
            "audit_trail_kept_by_the_other_daemon",
            "src/audit.py"
        )
        .await,
        "B took over the repository A was asked to add"
    );

    // A, started again, is asked to remove it while B holds its lease: B lets go, and nobody
    // writes its rows again.
    let daemon_a = Daemon::start(a.clone(), Vec::new()).await;
    let removed = ask(
        &client,
        "agog.codebase.repo.request",
        json!({"action": "remove", "name": "svc"}),
    )
    .await;
    assert_eq!(removed["success"], true, "{removed}");
    assert_eq!(removed["repository"]["name"], "svc", "{removed}");
    let store = Store::connect(&a.database).await.expect("connect");
    let rows = || async {
        count(
            &store,
            "SELECT (SELECT count(*) FROM repositories WHERE name = 'svc')
                  + (SELECT count(*) FROM indexed_files WHERE repository = 'svc')
                  + (SELECT count(*) FROM codebase_index WHERE repository = 'svc')",
        )
        .await
    };
    assert_eq!(rows().await, 0, "removed at once");
    write(
        &svc,
        "src/late.py",
        "def written_after_removal():\n    return 1\n",
    );
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(rows().await, 0, "no daemon indexes a removed repository");
    let status = ask(
        &client,
        "fleetb.codebase.repo.request",
        json!({"action": "status", "name": "svc"}),
    )
    .await;
    assert_eq!(status["error"]["code"], "not_found", "{status}");

    // A holder that does not let go (the test holds the lease, as a wedged daemon would): the
    // removal is pending, the name cannot be added again meanwhile, and the rows go once the
    // lease is free.
    let wedged = store.try_lease("svc").await.expect("lease").expect("free");
    let added = ask(
        &client,
        "fleetb.codebase.repo.request",
        json!({"action": "add", "path": svc.display().to_string()}),
    )
    .await;
    assert_eq!(added["success"], true, "{added}");
    let pending = ask(
        &client,
        "agog.codebase.repo.request",
        json!({"action": "remove", "name": "svc"}),
    )
    .await;
    assert_eq!(pending["success"], true, "{pending}");
    assert_eq!(pending["repository"]["state"], "removing", "{pending}");
    let again = ask(
        &client,
        "fleetb.codebase.repo.request",
        json!({"action": "add", "path": svc.display().to_string()}),
    )
    .await;
    assert_eq!(again["error"]["code"], "invalid_argument", "{again}");
    assert!(rows().await > 0, "nothing deleted under the lease");
    wedged.release().await;
    let mut left = rows().await;
    for _ in 0..50 {
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        left = rows().await;
    }
    assert_eq!(left, 0, "removed once the lease was free");

    // A repository another daemon keeps from its command line would come back: refused.
    let refused = ask(
        &client,
        "agog.codebase.repo.request",
        json!({"action": "remove", "name": "billing"}),
    )
    .await;
    assert_eq!(refused["error"]["code"], "invalid_argument", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("command line"),
        "{refused}"
    );
    assert!(found("agog", "charge_the_card", "billing.py").await);
    daemon_a.stop().await;
    daemon_b.stop().await;
}

/// A daemon of a fleet whose clone of a requested git URL is missing (a replica with a volume
/// of its own; here the clone is deleted under it) clones it itself while it runs, and takes
/// the repository over; an unfinished clone left beside it is never taken for one.
#[tokio::test]
async fn a_daemon_of_a_fleet_clones_a_requested_url_its_volume_lacks() {
    let db = test_db().await;
    let nats = support::nats();
    let clones = tempfile::tempdir().expect("clones");
    let origin = refund_origin();
    let (a, b) = fleet_configs(
        &support::config(&db, &nats.url),
        &format!("clone_dir = {:?}", clones.path().display().to_string()),
    );
    let client = async_nats::connect(&nats.url).await.expect("client");
    let daemon_a = Daemon::start(a.clone(), Vec::new()).await;
    let daemon_b = Daemon::start(b.clone(), Vec::new()).await;

    let url = format!("file://{}", origin.path().display());
    let added = ask(
        &client,
        "agog.codebase.repo.request",
        json!({"action": "add", "url": url, "name": "refunds"}),
    )
    .await;
    assert_eq!(added["success"], true, "{added}");
    assert!(
        answers(
            &client,
            "agog",
            "issue_refund_now",
            "refunds",
            "lib/refund.rs"
        )
        .await
    );
    let clone = clones.path().join("refunds");
    assert!(clone.join(".git").is_dir());
    assert!(
        !clones.path().join(".refunds.cloning").exists(),
        "cloned aside, then moved"
    );

    // A stops; B's volume has no clone (and holds what a killed clone left).
    daemon_a.stop().await;
    std::fs::remove_dir_all(&clone).expect("remove the clone");
    write(
        &clones.path().join(".refunds.cloning"),
        "half.txt",
        "a clone that never finished\n",
    );
    let state = status_at_until(&client, "fleetb", "refunds", |s| {
        s["repository"]["state"] == "ready" && clone.join(".git").is_dir()
    })
    .await;
    assert_eq!(state["repository"]["state"], "ready", "{state}");
    assert!(clone.join("lib/refund.rs").is_file(), "B cloned it");
    assert!(!clones.path().join(".refunds.cloning").exists());
    // B indexes it: a file written into its clone is found through B.
    write(
        &clone,
        "lib/audit.rs",
        "pub fn audited_by_the_daemon_that_cloned_it() {}\n",
    );
    assert!(
        answers(
            &client,
            "fleetb",
            "audited_by_the_daemon_that_cloned_it",
            "refunds",
            "lib/audit.rs"
        )
        .await,
        "B took the repository over"
    );

    // A first clone whose daemon died: recorded `initializing`, no clone, its lease free.
    let store = Store::connect(&b.database).await.expect("connect");
    let orphan = clones.path().join("orphan");
    store
        .claim_repository(&codesearch::store::RepoClaim {
            name: "orphan",
            root: &orphan.to_string_lossy(),
            workspace: "default",
            origin: codesearch::store::Origin::Request,
            git_url: Some(&url),
        })
        .await
        .expect("record");
    let state = status_at_until(&client, "fleetb", "orphan", |s| {
        s["repository"]["state"] == "ready"
    })
    .await;
    assert_eq!(state["repository"]["state"], "ready", "{state}");
    assert!(orphan.join("lib/refund.rs").is_file(), "B cloned it");
    daemon_b.stop().await;
}
