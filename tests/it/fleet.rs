//! Several daemons on one index, as separate processes: every one answers searches through the
//! queue group, one at a time indexes the repository (its lease), and when that one is
//! SIGKILLed under load another takes the repository over, losing no request beyond the ones
//! the dead daemon had in hand.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{self, nats, test_db};

/// Concurrent searchers of the load: at most this many requests are in hand at any moment.
const SEARCHERS: usize = 4;

fn daemon(db_url: &str, nats_url: &str, root: &std::path::Path) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_codesearch"))
        .arg("serve")
        .arg(root)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", db_url)
        .env("NATS_URL", nats_url)
        .env("CODESEARCH_EMBEDDER", "hash")
        .env("CODESEARCH_HTTP_ADDR", "127.0.0.1:0")
        .env("CODESEARCH_DATABASE_MAX_CONNECTIONS", "6")
        .env("CODESEARCH_LEASE_CHECK_SECS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start codesearch serve")
}

/// The process ids holding a lease in this database.
async fn holders(pool: &sqlx::PgPool) -> Vec<u32> {
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database()",
    )
    .fetch_all(pool)
    .await
    .expect("pg_locks");
    names
        .iter()
        .filter_map(|n| n.strip_prefix("codesearch lease pid="))
        .filter_map(|p| p.parse().ok())
        .collect()
}

async fn search(client: &async_nats::Client, query: &str) -> Option<Value> {
    let payload = serde_json::to_vec(&json!({ "query": query })).expect("json");
    let reply = tokio::time::timeout(
        Duration::from_secs(3),
        client.request("agog.codebase.search", payload.into()),
    )
    .await
    .ok()?
    .ok()?;
    serde_json::from_slice(&reply.payload).ok()
}

fn has_file(reply: &Option<Value>, path: &str) -> bool {
    reply.as_ref().is_some_and(|r| {
        r["results"]
            .as_array()
            .is_some_and(|hits| hits.iter().any(|h| h["filePath"] == path))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_daemons_one_indexer_and_a_takeover_when_it_is_killed() {
    let n = nats();
    let db = test_db().await;
    let pool = sqlx::PgPool::connect(&db.url).await.expect("pool");
    let repo = support::repo(&[(
        "orders/place.py",
        "def place_order(cart):\n    \"\"\"Places an order for the items in the cart.\"\"\"\n    return cart\n",
    )]);
    let mut daemons: Vec<tokio::process::Child> = (0..3)
        .map(|_| daemon(&db.url, &n.url, repo.path()))
        .collect();
    let client = async_nats::connect(&n.url).await.expect("client");

    // All three up, the repository indexed, one lease.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let answered = has_file(&search(&client, "place an order").await, "orders/place.py");
        if answered && holders(&pool).await.len() == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the daemons never became ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let holder = holders(&pool).await[0];
    let pids: Vec<u32> = daemons.iter().filter_map(|d| d.id()).collect();
    assert!(
        pids.contains(&holder),
        "the holder {holder} is one of {pids:?}"
    );

    // A steady load from SEARCHERS searchers while the holder is killed.
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let load: Vec<_> = (0..SEARCHERS)
        .map(|_| {
            let (client, stop, ok, failed) =
                (client.clone(), stop.clone(), ok.clone(), failed.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    match search(&client, "order cart items").await {
                        Some(r) if r["success"] == true => ok.fetch_add(1, Ordering::Relaxed),
                        _ => failed.fetch_add(1, Ordering::Relaxed),
                    };
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let victim = daemons
        .iter_mut()
        .position(|d| d.id() == Some(holder))
        .expect("holder process");
    let killed_at = Instant::now();
    daemons[victim].start_kill().expect("SIGKILL");
    let _ = daemons[victim].wait().await;

    // Another takes the lease; never two at once.
    let took_over = loop {
        let now = holders(&pool).await;
        assert!(now.len() <= 1, "two leases at once: {now:?}");
        if let [pid] = now[..]
            && pid != holder
        {
            break killed_at.elapsed();
        }
        assert!(
            killed_at.elapsed() < Duration::from_secs(20),
            "no daemon took the repository over"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    eprintln!("failover: lease taken over {took_over:?} after the SIGKILL");

    // The new holder watches: a new file becomes searchable.
    support::write(
        repo.path(),
        "orders/refund.py",
        "def refund_order(order):\n    \"\"\"Refunds a paid order to the customer's card.\"\"\"\n    return order\n",
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !has_file(
        &search(&client, "refund a paid order").await,
        "orders/refund.py",
    ) {
        assert!(
            Instant::now() < deadline,
            "the new holder did not index the change"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    for l in load {
        l.await.expect("searcher");
    }
    let (ok, failed) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    eprintln!("load: {ok} searches answered, {failed} failed");
    assert!(ok > 50, "the load ran: {ok}");
    assert!(
        failed <= SEARCHERS,
        "{failed} searches failed; at most the {SEARCHERS} in hand may"
    );
    assert_eq!(holders(&pool).await.len(), 1);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nats_cluster_is_the_bus_and_losing_a_server_loses_no_service() {
    let (pa, pb) = (support::free_port(), support::free_port());
    let server = |listen: u16, route: u16| {
        support::nats_with_config(&format!(
            "cluster {{ name: \"codesearch-test\", listen: \"127.0.0.1:{listen}\", routes: [\"nats://127.0.0.1:{route}\"] }}"
        ))
    };
    let (a, _a_dir) = server(pa, pb);
    let (b, _b_dir) = server(pb, pa);
    let db = test_db().await;
    // The daemon knows `a` only, the server that is killed: it must move to `b`, which the
    // cluster told it of, on its own.
    let cfg = support::config(&db, &a.url);
    let repo = support::repo(&[(
        "ledger/post.rs",
        "/// Posts a journal entry to the ledger.\npub fn post_journal_entry() {}\n",
    )]);
    let repos = support::repos(&cfg, &[repo.path()]);
    let daemon = support::Serving::start(cfg, repos);
    // A client of the other server: its requests cross the cluster's route.
    let client = async_nats::connect(&b.url).await.expect("client of b");
    let answered = |deadline: Duration| {
        let client = client.clone();
        async move {
            let until = Instant::now() + deadline;
            while Instant::now() < until {
                if has_file(
                    &search(&client, "post a journal entry").await,
                    "ledger/post.rs",
                ) {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            false
        }
    };
    assert!(
        answered(Duration::from_secs(30)).await,
        "served through the cluster"
    );
    drop(a);
    let lost_at = Instant::now();
    assert!(
        answered(Duration::from_secs(30)).await,
        "still served once a server of the cluster is gone"
    );
    eprintln!("served again {:?} after a server died", lost_at.elapsed());
    daemon.stop().await;
}

/// Two daemons of different databases on one NATS would each answer a share of the questions:
/// `codesearch status` names each daemon's database and says which is not its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_names_each_daemons_database_and_flags_another_index() {
    let n = nats();
    let (ours, theirs) = (test_db().await, test_db().await);
    let repo = support::repo(&[("a.py", "def a():\n    return 1\n")]);
    let _daemons = [
        daemon(&ours.url, &n.url, repo.path()),
        daemon(&theirs.url, &n.url, repo.path()),
    ];
    let status_of = |database: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_codesearch"))
            .arg("status")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", database)
            .env("NATS_URL", &n.url)
            .env("OLLAMA_URL", "http://127.0.0.1:1")
            .output()
            .expect("codesearch status")
    };
    let status = || status_of(&ours.url);
    let deadline = Instant::now() + Duration::from_secs(60);
    let out = loop {
        let out = String::from_utf8_lossy(&status().stdout).into_owned();
        if out.matches("daemon ").count() >= 2 {
            break out;
        }
        assert!(
            Instant::now() < deadline,
            "two daemons never answered: {out}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let identity = |url: &str| codesearch::config::database_identity(url);
    let lines: Vec<&str> = out.lines().filter(|l| l.contains("daemon ")).collect();
    let line_of = |db: &str| {
        lines
            .iter()
            .find(|l| l.contains(&format!("database {}", identity(db))))
            .unwrap_or_else(|| panic!("no daemon of {db} in {out}"))
    };
    assert!(!line_of(&ours.url).contains("not this database"), "{out}");
    assert!(line_of(&theirs.url).contains("not this database"), "{out}");
    assert!(!out.contains("repo list"), "{out}");
    // From outside a deployment, whose database this command cannot reach: the daemons'
    // account of their index is one request away, and the output says so.
    let outside = status_of("postgres://codesearch@127.0.0.1:1/codesearch");
    let out = String::from_utf8_lossy(&outside.stdout);
    assert!(!outside.status.success(), "{out}");
    assert!(out.contains("index     down"), "{out}");
    assert!(out.contains("`codesearch repo list`"), "{out}");
}
