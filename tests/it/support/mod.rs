//! Real services on ephemeral resources for the integration tests.
//!
//! - PostgreSQL: one cluster per test process (initdb into a temporary directory, a free port,
//!   run as the unprivileged user when we are root), one database per test cloned from a
//!   migrated template. The cluster is stopped and its directory removed when the test process
//!   exits: a shell watchdog holds a pipe from us and stops PostgreSQL when the pipe closes.
//!   `CODESEARCH_TEST_DATABASE_URL` (an admin URL of a server with pgvector) skips all that.
//! - NATS: one `nats-server -p -1` per test, killed on drop, and when the test process dies
//!   (the same watchdog: a shell that kills it when our pipe closes). `CODESEARCH_TEST_NATS_URL`
//!   uses a running server instead.
//! - Tool locations come from `CODESEARCH_PG_BIN`, `CODESEARCH_NATS_SERVER`,
//!   `CODESEARCH_PG_USER` and `CODESEARCH_MODEL_DIR`, as written by `scripts/setup.sh` into
//!   `.codesearch/tools.env`; that file is read when they are not set.

#![allow(dead_code)]

pub mod ollama;
pub mod tls;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use codesearch::config::Config;
use codesearch::repository::Repository;
use codesearch::store::{Origin, RepoClaim, Store};

const TEMPLATE: &str = "codesearch_template";

/// Where the tools are.
pub struct Tools {
    pub pg_bin: PathBuf,
    pub nats_server: PathBuf,
    pub pg_user: Option<String>,
    pub model_dir: PathBuf,
    pub onnxruntime: PathBuf,
}

pub fn tools() -> &'static Tools {
    static TOOLS: OnceLock<Tools> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let file_env = tools_env_file();
        let get = |k: &str| {
            std::env::var(k)
                .ok()
                .or_else(|| file_env.get(k).cloned())
                .filter(|v| !v.is_empty())
        };
        let need = |k: &str| {
            get(k).unwrap_or_else(|| {
                panic!("{k} is not set: run scripts/setup.sh (or the tests with scripts/test.sh)")
            })
        };
        Tools {
            pg_bin: PathBuf::from(need("CODESEARCH_PG_BIN")),
            nats_server: PathBuf::from(need("CODESEARCH_NATS_SERVER")),
            pg_user: get("CODESEARCH_PG_USER"),
            model_dir: PathBuf::from(need("CODESEARCH_MODEL_DIR")),
            onnxruntime: PathBuf::from(need("CODESEARCH_ONNXRUNTIME")),
        }
    })
}

fn tools_env_file() -> HashMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(".codesearch/tools.env");
    let Ok(text) = std::fs::read_to_string(path) else {
        return HashMap::new();
    };
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("export "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
        .collect()
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// Hands `path` and everything under it to the PostgreSQL user, when we are root and it is
/// another user.
fn give_to_pg(path: &Path) {
    let (Some(user), true) = (&tools().pg_user, is_root()) else {
        return;
    };
    let status = Command::new("chown")
        .arg("-R")
        .arg(format!("{user}:"))
        .arg(path)
        .status()
        .expect("run chown");
    assert!(status.success(), "chown -R {user} {}", path.display());
}

/// A command run as the PostgreSQL user when we are root.
fn pg_command(program: &Path) -> Command {
    match (&tools().pg_user, is_root()) {
        (Some(user), true) => {
            let mut c = Command::new("setpriv");
            c.arg(format!("--reuid={user}"))
                .arg(format!("--regid={user}"))
                .arg("--init-groups")
                .arg(program);
            c
        }
        _ => Command::new(program),
    }
}

struct Cluster {
    /// Admin URL without a database name.
    base_url: String,
    /// Held for the life of the process: its shell stops PostgreSQL when the process exits.
    _server: Mutex<Option<Postgres>>,
}

fn cluster() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        if let Ok(url) = std::env::var("CODESEARCH_TEST_DATABASE_URL") {
            let base_url = url
                .rsplit_once('/')
                .map(|(b, _)| b.to_owned())
                .unwrap_or(url);
            let c = Cluster {
                base_url,
                _server: Mutex::new(None),
            };
            create_template(&c.base_url);
            return c;
        }
        let pg = Postgres::start();
        let c = Cluster {
            base_url: pg.base_url.clone(),
            _server: Mutex::new(Some(pg)),
        };
        create_template(&c.base_url);
        c
    })
}

/// A PostgreSQL server of our own. A shell holds it: it stops and starts the server when told
/// on its stdin, and stops it and removes its directory when stdin closes (however this
/// process exits).
pub struct Postgres {
    pub base_url: String,
    pub port: u16,
    dir: PathBuf,
    shell: Child,
    commands: Option<ChildStdin>,
}

impl Postgres {
    pub fn start() -> Self {
        Self::start_with(&[], |_, _| {})
    }

    /// A server started with `settings` (`name=value`, as `-c` gives them) after `prepare` has
    /// put what they need into its directory or data directory (certificates, `pg_hba.conf`).
    /// What `prepare` writes is handed to the server's user.
    pub fn start_with(settings: &[&str], prepare: impl FnOnce(&Path, &Path)) -> Self {
        let t = tools();
        let dir = tempfile::Builder::new()
            .prefix("codesearch-pg-")
            .tempdir()
            .expect("temp dir")
            .keep();
        let data = dir.join("data");
        if let (Some(user), true) = (&t.pg_user, is_root()) {
            let id = |flag: &str| -> u32 {
                let out = Command::new("id").arg(flag).arg(user).output().expect("id");
                String::from_utf8_lossy(&out.stdout)
                    .trim()
                    .parse()
                    .expect("numeric id")
            };
            std::os::unix::fs::chown(&dir, Some(id("-u")), Some(id("-g"))).expect("chown");
        }
        let out = pg_command(&t.pg_bin.join("initdb"))
            .args(["-D"])
            .arg(&data)
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .output()
            .expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        prepare(&dir, &data);
        give_to_pg(&dir);
        let port = free_port();
        let postgres = pg_command(&t.pg_bin.join("postgres"));
        let mut argv: Vec<String> = std::iter::once(postgres.get_program())
            .chain(postgres.get_args())
            .map(|a| shell_quote(&a.to_string_lossy()))
            .collect();
        argv.extend(
            [
                "-D".to_owned(),
                data.display().to_string(),
                "-p".to_owned(),
                port.to_string(),
                "-k".to_owned(),
                dir.display().to_string(),
                "-c".to_owned(),
                "listen_addresses=127.0.0.1".to_owned(),
                "-c".to_owned(),
                "fsync=off".to_owned(),
                "-c".to_owned(),
                "max_connections=300".to_owned(),
            ]
            .iter()
            .chain(
                settings
                    .iter()
                    .flat_map(|s| ["-c".to_owned(), (*s).to_owned()])
                    .collect::<Vec<_>>()
                    .iter(),
            )
            .map(|a| shell_quote(a)),
        );
        let q = shell_quote(&dir.display().to_string());
        let script = format!(
            "up() {{ {} >>{q}/postgres.log 2>&1 & pid=$!; }}; up; \
             while read cmd; do case $cmd in stop) kill -INT $pid; wait $pid;; start) up;; \
             pause) kill -STOP $pid; pkill -STOP -P $pid;; resume) pkill -CONT -P $pid; kill -CONT $pid;; \
             esac; done; \
             kill -INT $pid; wait $pid; rm -rf {q}",
            argv.join(" "),
        );
        let mut shell = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .spawn()
            .expect("start postgres");
        let commands = shell.stdin.take();
        let pg = Self {
            base_url: format!("postgres://postgres@127.0.0.1:{port}"),
            port,
            dir,
            shell,
            commands,
        };
        pg.wait_ready();
        pg
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = Command::new(tools().pg_bin.join("pg_isready"))
                .args([
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &self.port.to_string(),
                    "-U",
                    "postgres",
                ])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "PostgreSQL did not start; see {}/postgres.log",
                self.dir.display()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the server (fast shutdown: connections are cut) and waits until it is down.
    pub fn stop(&mut self) {
        use std::io::Write;
        let shell = self.commands.as_mut().expect("running");
        writeln!(shell, "stop").expect("tell the shell");
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
            assert!(Instant::now() < deadline, "PostgreSQL did not stop");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Freezes the server and its backends (SIGSTOP): connections stay open and nothing
    /// answers, as when its host hangs or drops off the network without closing them.
    pub fn pause(&mut self) {
        use std::io::Write;
        let shell = self.commands.as_mut().expect("running");
        writeln!(shell, "pause").expect("tell the shell");
    }

    /// Lets a paused server run again.
    pub fn resume(&mut self) {
        use std::io::Write;
        let shell = self.commands.as_mut().expect("running");
        writeln!(shell, "resume").expect("tell the shell");
    }

    /// Starts it again on the same port and data, and waits until it answers.
    pub fn restart(&mut self) {
        use std::io::Write;
        let shell = self.commands.as_mut().expect("running");
        writeln!(shell, "start").expect("tell the shell");
        self.wait_ready();
    }

    /// A migrated database on this server.
    pub async fn database(&self) -> TestDb {
        use sqlx::Connection;
        let name = format!("t_{}", uuid::Uuid::new_v4().simple());
        let mut admin = sqlx::PgConnection::connect(&format!("{}/postgres", self.base_url))
            .await
            .expect("connect to postgres");
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await
            .expect("create database");
        let url = format!("{}/{name}", self.base_url);
        let pool = sqlx::PgPool::connect(&url).await.expect("connect");
        codesearch::store::Store::from_pool(pool.clone())
            .migrate()
            .await
            .expect("migrate");
        pool.close().await;
        TestDb { url }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // Closing stdin makes the shell stop the server and remove the directory.
        drop(self.commands.take());
        let _ = self.shell.wait();
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Creates the migrated template database, on a runtime of its own (the caller's runtime
/// belongs to one test).
fn create_template(base_url: &str) {
    let base_url = base_url.to_owned();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        rt.block_on(async {
            use sqlx::Connection;
            let mut admin = sqlx::PgConnection::connect(&format!("{base_url}/postgres"))
                .await
                .expect("connect to postgres");
            sqlx::query(&format!("DROP DATABASE IF EXISTS {TEMPLATE}"))
                .execute(&mut admin)
                .await
                .expect("drop template");
            sqlx::query(&format!("CREATE DATABASE {TEMPLATE}"))
                .execute(&mut admin)
                .await
                .expect("create template");
            let pool = sqlx::PgPool::connect(&format!("{base_url}/{TEMPLATE}"))
                .await
                .expect("connect to template");
            codesearch::store::Store::from_pool(pool.clone())
                .migrate()
                .await
                .expect("migrations apply");
            pool.close().await;
        });
    })
    .join()
    .expect("template thread");
}

/// A fresh, migrated database for one test.
pub struct TestDb {
    pub url: String,
}

pub async fn test_db() -> TestDb {
    use sqlx::Connection;
    static CREATE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let base = tokio::task::spawn_blocking(|| cluster().base_url.clone())
        .await
        .expect("cluster");
    let name = format!("t_{}", uuid::Uuid::new_v4().simple());
    let _guard = CREATE.lock().await;
    let mut admin = sqlx::PgConnection::connect(&format!("{base}/postgres"))
        .await
        .expect("connect to postgres");
    sqlx::query(&format!("CREATE DATABASE {name} TEMPLATE {TEMPLATE}"))
        .execute(&mut admin)
        .await
        .expect("create test database");
    TestDb {
        url: format!("{base}/{name}"),
    }
}

/// A nats-server of our own on a random port, killed on drop.
pub struct Nats {
    pub url: String,
    child: Option<Child>,
}

impl Drop for Nats {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            kill_nats(child);
        }
    }
}

/// Kills a server [`spawn_nats`] started, as a crash would, and waits for it: closing the
/// shell's stdin makes it kill the server and exit.
fn kill_nats(mut shell: Child) {
    drop(shell.stdin.take());
    let _ = shell.wait();
}

pub fn nats() -> Nats {
    if let Ok(url) = std::env::var("CODESEARCH_TEST_NATS_URL") {
        return Nats { url, child: None };
    }
    let (child, port) = spawn_nats("-1", &[]);
    Nats {
        url: format!("nats://127.0.0.1:{port}"),
        child: Some(child),
    }
}

/// A nats-server of our own with a configuration file (users, permissions), on a random port.
pub fn nats_with_config(conf: &str) -> (Nats, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("nats.conf");
    std::fs::write(&file, conf).expect("write nats.conf");
    let (child, port) = spawn_nats("-1", &["-c".to_owned(), file.display().to_string()]);
    (
        Nats {
            url: format!("nats://127.0.0.1:{port}"),
            child: Some(child),
        },
        dir,
    )
}

impl Nats {
    /// Kills the server (as a crash would) and starts a new one on the same port.
    pub fn restart(&mut self) {
        let Some(old) = self.child.take() else {
            panic!("cannot restart a NATS server the tests did not start");
        };
        kill_nats(old);
        let port = self.url.rsplit(':').next().expect("port").to_owned();
        let (child, _) = spawn_nats(&port, &[]);
        self.child = Some(child);
    }
}

/// Starts nats-server on `port` ("-1": any) and returns it with the port it listens on. The
/// server runs under a shell that kills it when its stdin closes: when the test drops it, and
/// when the test process dies, even by SIGKILL (as Postgres's shell does), so that no server
/// outlives the tests.
fn spawn_nats(port: &str, extra: &[String]) -> (Child, String) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(r#""$@" >/dev/null & pid=$!; while read _; do :; done; kill -KILL $pid; wait $pid"#)
        .arg("sh")
        .arg(&tools().nats_server)
        .args(extra)
        .args(["-a", "127.0.0.1", "-p", port])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nats-server");
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    let mut port = None;
    for line in lines.by_ref() {
        let line = line.expect("nats-server output");
        if let Some(addr) = line.split("Listening for client connections on ").nth(1) {
            port = addr.trim().rsplit(':').next().map(str::to_owned);
            break;
        }
    }
    // Keep draining its log so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, port.expect("nats-server printed its port"))
}

/// The default configuration pointed at test services, with the hash embedder.
pub fn config(db: &TestDb, nats_url: &str) -> Config {
    let mut c = Config::defaults().expect("defaults");
    c.database.url = db.url.clone();
    c.database.max_connections = 4;
    c.nats.url = nats_url.to_owned();
    c.embed.backend = codesearch::config::EmbedBackend::Hash;
    c.embed.model_dir = tools().model_dir.clone();
    c.embed.onnxruntime = tools().onnxruntime.clone();
    // Tests run in parallel: never fight over the default port.
    c.health.http_addr = "127.0.0.1:0".into();
    c
}

/// Writes files under a new temporary directory: `[(relative path, content)]`.
pub fn repo<S: AsRef<str>>(files: &[(S, S)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, content) in files {
        write(dir.path(), path.as_ref(), content.as_ref());
    }
    dir
}

/// Runs `git args` in `dir` as a test author; panics with git's message when it fails.
pub fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Makes `dir` a git repository whose one commit holds all its files.
pub fn git_init_commit(dir: &Path) {
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

pub fn write(root: &Path, rel: &str, content: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, content).expect("write");
}

/// The repositories of `paths` as `index` and `serve` resolve them from the command line.
pub fn repos<P: AsRef<Path>>(cfg: &Config, paths: &[P]) -> Vec<Repository> {
    let paths: Vec<PathBuf> = paths.iter().map(|p| p.as_ref().to_owned()).collect();
    codesearch::repository::resolve(cfg, &paths, codesearch::repository::MissingRoot::Refuse)
        .expect("repositories resolve")
}

/// Records repository `name` in `workspace` (for tests that write rows directly).
pub async fn claim(store: &Store, name: &str, workspace: &str) {
    store
        .claim_repository(&RepoClaim {
            name,
            root: &format!("/nonexistent/{name}"),
            workspace,
            origin: Origin::Local,
            git_url: None,
        })
        .await
        .expect("claim");
}

/// `codesearch::daemon::serve` on a task of this process, until [`Serving::stop`].
pub struct Serving {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
}

impl Serving {
    pub fn start(cfg: Config, repos: Vec<Repository>) -> Self {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(codesearch::daemon::serve(cfg, repos, async move {
            let _ = stopped.await;
        }));
        Self {
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Panics, with what the daemon returned, when it has stopped on its own.
    pub async fn assert_running(&mut self) {
        if self.task.as_ref().is_some_and(|t| t.is_finished()) {
            let result = self.task.take().expect("task").await;
            panic!("the daemon stopped: {result:?}");
        }
    }

    /// Stops it as SIGTERM would and checks that it ran and stopped cleanly.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let task = self.task.take().expect("running");
        tokio::time::timeout(Duration::from_secs(30), task)
            .await
            .expect("daemon stops")
            .expect("join")
            .expect("daemon ran cleanly");
    }
}
