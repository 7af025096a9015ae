//! Adapter: the NATS service.
//!
//! In: requests on the plain subjects `<prefix>.codebase.search`, `....context`, `....file` and
//! `....repo.request` (served as `workspaces.plain_subjects` says), and on each workspace's own
//! subjects `<prefix>.workspace.<name>.codebase.{search,context,file,repo.request}` (queue group
//! `codesearch` by default, so several daemons share the load). A workspace subject answers
//! from that workspace only, so the NATS server's permissions can decide who reads what.
//! Out: the JSON replies of [`wire`]. Built on async-nats' service
//! API, so `$SRV.PING`, `$SRV.INFO` and `$SRV.STATS` answer for free. A request is answered
//! whatever it holds: bad input gets `success: false` with a code, internal details stay in
//! the log under the request id. Requests are handled concurrently, at most
//! `nats.max_in_flight` at a time with at most `nats.max_queued` waiting; past that a request is
//! answered at once with `overloaded` ([`admission`], a bound `/mcp` shares). On cancel the
//! endpoint stops taking requests and the ones in hand are answered.
//!
//! [`dispatch`] answers one request of any kind without NATS: the daemon's `/mcp` endpoint
//! uses it, and [`client`] is the other side, for the CLI and the MCP adapter.

pub mod admission;
pub mod client;
pub mod intel;
pub mod wire;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::service::ServiceExt;
use bytes::Bytes;
use futures::StreamExt;
use thiserror::Error;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::{Config, NatsConfig, PlainSubjects, redact_url};
use crate::context::{ContextError, ContextService};
use crate::health::Metrics;
use crate::intel::graph::IntelService;
use crate::roots::{Removal, Roots, RootsError, Source};
use crate::search::{RawSearch, SearchError, SearchRequest, SearchService};
use crate::source::{SourceError, SourceService};
use admission::Admission;
use wire::{
    ContextResponse, ErrorCode, ErrorResponse, FileResponse, LineRange, RepoInfo, RepoResponse,
    ScoreParts, SearchResponse, SearchResult,
};

/// Largest request accepted, in bytes.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;
/// Name of the service in `$SRV` discovery.
pub const SERVICE_NAME: &str = "codesearch";

#[derive(Debug, Error)]
pub enum BusError {
    #[error("cannot connect to NATS at {url}: {message}")]
    Connect { url: String, message: String },
    #[error("cannot start the NATS service: {0}")]
    Service(String),
}

/// Connects to NATS, naming the connection so operators can see it in `nats server report`.
/// Authentication and TLS come from the configuration ([`NatsConfig`]); credentials in the URL
/// (`nats://user:password@host`, or `nats://token@host`) are used too: async-nats itself ignores
/// them. Errors name the server (its URL redacted) and the file at fault, never a secret.
pub async fn connect(cfg: &NatsConfig) -> Result<async_nats::Client, BusError> {
    let fail = |message: String| BusError::Connect {
        url: redact_url(&cfg.url),
        message,
    };
    let (url, credentials) = split_credentials(&cfg.url);
    let readable = |what: &str, path: &str| {
        std::fs::metadata(path)
            .map(|_| ())
            .map_err(|e| fail(format!("cannot read the {what} {path}: {e}")))
    };
    let mut options = if !cfg.credentials_file.is_empty() {
        readable(
            "credentials file (nats.credentials_file)",
            &cfg.credentials_file,
        )?;
        async_nats::ConnectOptions::with_credentials_file(&cfg.credentials_file)
            .await
            .map_err(|e| {
                fail(format!(
                    "the credentials file {} is not a NATS .creds file: {e}",
                    cfg.credentials_file
                ))
            })?
    } else if !cfg.nkey_file.is_empty() {
        let seed = std::fs::read_to_string(&cfg.nkey_file).map_err(|e| {
            fail(format!(
                "cannot read the NKey seed file {}: {e}",
                cfg.nkey_file
            ))
        })?;
        let seed = seed.trim();
        if !seed.starts_with("SU") {
            return Err(fail(format!(
                "the NKey seed file {} does not hold a user seed (it starts with `SU`)",
                cfg.nkey_file
            )));
        }
        async_nats::ConnectOptions::with_nkey(seed.to_owned())
    } else if !cfg.token.is_empty() {
        async_nats::ConnectOptions::with_token(cfg.token.clone())
    } else if !cfg.user.is_empty() {
        async_nats::ConnectOptions::with_user_and_password(cfg.user.clone(), cfg.password.clone())
    } else {
        match credentials {
            Some((user, Some(password))) => {
                async_nats::ConnectOptions::with_user_and_password(user, password)
            }
            Some((token, None)) => async_nats::ConnectOptions::with_token(token),
            None => async_nats::ConnectOptions::new(),
        }
    };
    if cfg.tls_required || !cfg.tls_ca_file.is_empty() || !cfg.tls_cert_file.is_empty() {
        options = options.require_tls(true);
    }
    if !cfg.tls_ca_file.is_empty() {
        readable("CA file (nats.tls_ca_file)", &cfg.tls_ca_file)?;
        options = options.add_root_certificates(cfg.tls_ca_file.clone().into());
    }
    if !cfg.tls_cert_file.is_empty() {
        readable(
            "client certificate (nats.tls_cert_file)",
            &cfg.tls_cert_file,
        )?;
        readable("client key (nats.tls_key_file)", &cfg.tls_key_file)?;
        options = options.add_client_certificate(
            cfg.tls_cert_file.clone().into(),
            cfg.tls_key_file.clone().into(),
        );
    }
    let url_for_log = redact_url(&cfg.url);
    let outage = Arc::new(std::sync::Mutex::new(crate::outage::Outage::default()));
    options
        .event_callback(move |event| {
            let url = url_for_log.clone();
            let outage = outage.clone();
            async move {
                let mut outage = outage.lock().unwrap_or_else(|e| e.into_inner());
                match event {
                    async_nats::Event::Disconnected => {
                        outage.begin(Instant::now());
                        tracing::warn!(%url, "disconnected from NATS; reconnecting")
                    }
                    async_nats::Event::Connected => match outage.end(Instant::now()) {
                        Some((secs, attempts)) => tracing::info!(
                            %url,
                            down_secs = secs,
                            attempts,
                            "reconnected to NATS"
                        ),
                        // The first connection is not news (every CLI command makes one).
                        None => tracing::debug!(%url, "connected to NATS"),
                    },
                    async_nats::Event::ClientError(e) if outage.is_on() => {
                        match outage.failed(Instant::now()) {
                            Some((secs, attempts)) => tracing::warn!(
                                %url,
                                down_secs = secs,
                                attempts,
                                error = %e,
                                "NATS unreachable; reconnecting"
                            ),
                            None => tracing::debug!(%url, error = %e, "NATS reconnect failed"),
                        }
                    }
                    async_nats::Event::Closed => tracing::debug!(%url, "NATS connection closed"),
                    async_nats::Event::Draining => {
                        tracing::debug!(%url, "NATS connection draining")
                    }
                    async_nats::Event::SlowConsumer(sid) => {
                        tracing::warn!(
                            sid,
                            "NATS: a subscription is falling behind (slow consumer)"
                        )
                    }
                    other => tracing::warn!(%url, event = %other, "NATS"),
                }
            }
        })
        .name("codesearch")
        .connection_timeout(Duration::from_secs(5))
        // The client's own default (10 s) would cut every request short of the configured
        // timeout, whatever the configuration says.
        .request_timeout(Some(Duration::from_secs(cfg.request_timeout_secs.max(1))))
        .connect(url.as_str())
        .await
        .map_err(|e| {
            use async_nats::ConnectErrorKind as K;
            // Nothing answered: the one case where the server may simply not be running (a
            // bad URL, a TLS or an authentication failure each say what they are).
            let hint = match e.kind() {
                K::Io | K::TimedOut | K::Dns | K::MaxReconnects => "; is it running?",
                _ => "",
            };
            fail(format!("{e}{hint}"))
        })
}

/// What a request is for: one per subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Search,
    Context,
    File,
    Repo,
    Symbols,
    Callers,
    Callees,
    Graph,
    Impact,
    Related,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::Search,
        Kind::Context,
        Kind::File,
        Kind::Repo,
        Kind::Symbols,
        Kind::Callers,
        Kind::Callees,
        Kind::Graph,
        Kind::Impact,
        Kind::Related,
    ];

    /// The subject's last part: `search` in `agog.codebase.search`.
    pub fn subject_name(self) -> &'static str {
        match self {
            Kind::Search => "search",
            Kind::Context => "context",
            Kind::File => "file",
            Kind::Repo => "repo.request",
            Kind::Symbols => "symbols",
            Kind::Callers => "callers",
            Kind::Callees => "callees",
            Kind::Graph => "graph",
            Kind::Impact => "impact",
            Kind::Related => "related",
        }
    }

    /// The endpoint's name in `$SRV` discovery.
    fn endpoint_name(self) -> &'static str {
        match self {
            Kind::Search => "search",
            Kind::Context => "context",
            Kind::File => "file",
            Kind::Repo => "repo",
            other => other.subject_name(),
        }
    }

    /// The plain subject, e.g. `agog.codebase.context`.
    pub fn subject(self, cfg: &NatsConfig) -> String {
        cfg.subject(self.subject_name())
    }

    /// A workspace's own subject, e.g. `agog.workspace.acme.codebase.context`.
    pub fn workspace_subject(self, cfg: &NatsConfig, workspace: &str) -> String {
        cfg.workspace_subject(workspace, self.subject_name())
    }
}

/// What the endpoints answer from. Cheap to clone.
#[derive(Clone)]
pub struct Services {
    pub search: SearchService,
    pub context: ContextService,
    pub source: SourceService,
    pub intel: IntelService,
    pub roots: Roots,
    /// The bound on requests in hand, shared by NATS and `/mcp`.
    pub admission: Admission,
    /// How long one read may take before it is answered `index_unavailable`
    /// (`nats.answer_deadline_secs`).
    pub deadline: Duration,
    /// Requests answered that way so far.
    past_deadline: Arc<std::sync::atomic::AtomicU64>,
}

impl Services {
    /// The read services over `search`, as the configuration sets them, and `roots`.
    pub fn new(search: SearchService, roots: Roots, config: &Config) -> Self {
        Self {
            context: ContextService::new(search.clone(), config.context.clone()),
            source: SourceService::new(search.clone(), &config.index),
            intel: IntelService::new(search.clone()),
            search,
            roots,
            admission: Admission::new(config.nats.max_in_flight, config.nats.max_queued),
            deadline: Duration::from_secs(config.nats.answer_deadline_secs.max(1)),
            past_deadline: Arc::default(),
        }
    }
}

/// Which workspace a request may read, from the subject it came on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// A plain subject: as `workspaces.plain_subjects` allows, with this default.
    Plain {
        policy: PlainSubjects,
        default: String,
    },
    /// A workspace's own subject: that workspace only.
    Workspace(String),
}

impl Access {
    /// The workspace a request that names `asked` reads, or why it may not.
    pub fn workspace(&self, asked: Option<&str>) -> Result<String, (ErrorCode, String)> {
        if let Some(w) = asked {
            crate::config::check_workspace_name(w)
                .map_err(|m| (ErrorCode::InvalidArgument, format!("workspace: {m}")))?;
        }
        match self {
            Access::Workspace(own) => match asked {
                Some(w) if w != own => Err((
                    ErrorCode::PermissionDenied,
                    format!("this subject serves workspace `{own}`; the request names `{w}`"),
                )),
                _ => Ok(own.clone()),
            },
            Access::Plain { policy, default } => match (policy, asked) {
                (PlainSubjects::Default, Some(w)) if w != default => Err((
                    ErrorCode::PermissionDenied,
                    format!(
                        "the plain subjects serve only the default workspace `{default}`; \
                         send the request to workspace `{w}`'s own subject"
                    ),
                )),
                (_, Some(w)) => Ok(w.to_owned()),
                (_, None) => Ok(default.clone()),
            },
        }
    }
}

/// The URLs (comma-separated, as NATS takes them) without their user information, and the
/// user and password (or token) of the first that has any, percent-decoded.
fn split_credentials(urls: &str) -> (String, Option<(String, Option<String>)>) {
    let mut credentials = None;
    let stripped: Vec<String> = urls
        .split(',')
        .map(|url| {
            let url = url.trim();
            let Some((scheme, rest)) = url.split_once("://") else {
                return url.to_owned();
            };
            let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
            let Some((userinfo, host)) = authority.rsplit_once('@') else {
                return url.to_owned();
            };
            if credentials.is_none() {
                credentials = Some(match userinfo.split_once(':') {
                    Some((user, password)) => (decode(user), Some(decode(password))),
                    None => (decode(userinfo), None),
                });
            }
            let path = if path.is_empty() {
                String::new()
            } else {
                format!("/{path}")
            };
            format!("{scheme}://{host}{path}")
        })
        .collect();
    (stripped.join(","), credentials)
}

/// Percent-decoding of URL user information (`%40` -> `@`).
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The key of the service info's metadata that names the daemon's database
/// ([`crate::config::database_identity`]).
pub const DATABASE_METADATA: &str = "database";

/// Warns, once the service is up, of the daemons on the same bus that serve one of its
/// `subjects` from another database: each question goes to one of them, so answers would come
/// from either index. Daemons of one database (a fleet) are what the queue group is for.
async fn warn_of_other_databases(client: async_nats::Client, mine: String, subjects: Vec<String>) {
    tokio::time::sleep(Duration::from_secs(1)).await;
    let infos = match crate::report::gather(&client, format!("$SRV.INFO.{SERVICE_NAME}")).await {
        Ok(infos) => infos,
        Err(e) => {
            tracing::debug!(error = %e, "could not list the other daemons");
            return;
        }
    };
    for info in infos {
        let theirs = info["metadata"][DATABASE_METADATA]
            .as_str()
            .unwrap_or_default();
        let shared = info["endpoints"].as_array().is_some_and(|endpoints| {
            endpoints
                .iter()
                .filter_map(|e| e["subject"].as_str())
                .any(|s| subjects.iter().any(|m| m == s))
        });
        if !theirs.is_empty() && theirs != mine && shared {
            tracing::warn!(
                daemon = info["id"].as_str().unwrap_or("?"),
                database = theirs,
                this_database = %mine,
                "another codesearch daemon answers this daemon's subjects from another \
                 database: each question goes to one of the two, so answers come from either \
                 index; give each index its own NATS or `nats.subject_prefix`, or stop one"
            );
        }
    }
}

/// Serves every [`Kind`] of request until `cancel` fires.
pub async fn serve(
    client: async_nats::Client,
    services: Services,
    config: Config,
    metrics: Arc<Metrics>,
    cancel: CancellationToken,
) -> Result<(), BusError> {
    let cfg = &config.nats;
    let figures = Arc::clone(&metrics);
    let service = client
        .service_builder()
        .description("Semantic code search over indexed repositories")
        // Error replies carry a JSON body (the contract), which the service API counts as
        // successes: our own figures, errors included, go in the search endpoints' `data`
        // (one set for searches on both subjects). The other endpoints have the service
        // API's own counts only.
        .stats_handler(move |endpoint, _stats| {
            if endpoint.strip_prefix("workspace-").unwrap_or(&endpoint)
                == Kind::Search.endpoint_name()
            {
                serde_json::to_value(figures.search_figures()).unwrap_or_default()
            } else {
                serde_json::Value::Null
            }
        })
        .queue_group(&cfg.queue_group)
        // Which index it answers from: `codesearch status` and other daemons tell by it a
        // daemon of another database on the same bus, which would answer a share of the
        // questions from that index.
        .metadata(HashMap::from([(
            DATABASE_METADATA.to_owned(),
            crate::config::database_identity(&config.database.url),
        )]))
        .start(SERVICE_NAME, env!("CARGO_PKG_VERSION"))
        .await
        .map_err(|e| BusError::Service(e.to_string()))?;
    let policy = config.workspaces.plain_subjects;
    let mut routes: Vec<(String, String, Kind)> = Vec::new();
    for kind in Kind::ALL {
        if policy != PlainSubjects::Off {
            routes.push((kind.subject(cfg), kind.endpoint_name().to_owned(), kind));
        }
        routes.push((
            kind.workspace_subject(cfg, "*"),
            format!("workspace-{}", kind.endpoint_name()),
            kind,
        ));
    }
    let mut endpoints = Vec::new();
    for (subject, name, kind) in &routes {
        let endpoint = service
            .endpoint_builder()
            .name(name.as_str())
            .add(subject.as_str())
            .await
            .map_err(|e| BusError::Service(e.to_string()))?;
        tracing::debug!(%subject, queue_group = %cfg.queue_group, "serving");
        let kind = *kind;
        endpoints.push(endpoint.map(move |r| (kind, r)).boxed());
    }
    // One line, not one per subject (twenty with the defaults).
    let subjects: Vec<&str> = routes.iter().map(|(s, _, _)| s.as_str()).collect();
    tracing::info!(
        subjects = %subjects.join(" "),
        queue_group = %cfg.queue_group,
        "serving {} subjects",
        subjects.len()
    );
    tokio::spawn(warn_of_other_databases(
        client.clone(),
        crate::config::database_identity(&config.database.url),
        routes.iter().map(|(s, _, _)| s.clone()).collect(),
    ));
    let mut requests = futures::stream::select_all(endpoints);
    let workspace_prefix = format!("{}.workspace.", cfg.subject_prefix);
    let default = config.workspaces.default.clone();

    let tracker = TaskTracker::new();
    loop {
        let (kind, request) = tokio::select! {
            _ = cancel.cancelled() => break,
            r = requests.next() => match r {
                Some(r) => r,
                None => break,
            },
        };
        // A request nobody waits for (published without a reply subject) is not worked on.
        if request.message.reply.is_none() {
            tracing::debug!(subject = %request.message.subject, "request without a reply subject; ignored");
            continue;
        }
        // Admission: a bounded number in hand; past it, an immediate `overloaded` answer.
        let Some(admitted) = services.admission.try_admit() else {
            let body = to_bytes(&services.admission.overloaded());
            let headers = error_headers(ErrorCode::Overloaded);
            if kind == Kind::Search {
                metrics.search_answered(
                    Duration::ZERO,
                    Some(ErrorCode::Overloaded.as_str()),
                    false,
                    None,
                );
            }
            if let Err(e) = request.respond_with_headers(Ok(body), headers).await {
                tracing::debug!(error = %e, "could not send an overloaded reply");
            }
            continue;
        };
        let access = match request
            .message
            .subject
            .strip_prefix(workspace_prefix.as_str())
            .and_then(|rest| rest.split('.').next())
        {
            Some(ws) => Access::Workspace(ws.to_owned()),
            None => Access::Plain {
                policy,
                default: default.clone(),
            },
        };
        let services = services.clone();
        let metrics = Arc::clone(&metrics);
        tracker.spawn(async move {
            let started = std::time::Instant::now();
            let Some(_working) = admitted.start().await else {
                return;
            };
            let handled = dispatch(&services, kind, &access, &request.message.payload).await;
            let headers = handled
                .error
                .map_or_else(async_nats::HeaderMap::new, error_headers);
            if let Err(e) = request
                .respond_with_headers(Ok(handled.body), headers)
                .await
            {
                tracing::warn!(error = %e, "could not send a reply");
            }
            if kind == Kind::Search {
                metrics.search_answered(
                    started.elapsed(),
                    handled.error.map(ErrorCode::as_str),
                    handled.cached,
                    handled.query_embedding,
                );
            }
        });
    }
    tracker.close();
    drop(requests);
    if tokio::time::timeout(Duration::from_secs(10), tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!("requests still running after 10s at shutdown; leaving them");
    }
    let _ = service.stop().await;
    Ok(())
}

/// One answered request.
pub struct Handled {
    pub body: Bytes,
    /// The error code when the reply is a failure.
    pub error: Option<ErrorCode>,
    /// Whether the result came from the result cache.
    pub cached: bool,
    /// How long the query embedding took, when one was computed.
    pub query_embedding: Option<Duration>,
}

/// Answers one request of any kind. A read (search, context, file, code intelligence) is
/// answered within [`Services::deadline`]: past it, its work is dropped (its statements with
/// their connections) and the answer is the retryable `index_unavailable`. Every store call
/// already fails fast when the database is down; this is for the database that hangs, which no
/// statement on it can notice. A repository request is not cut short: removing a large
/// repository may take longer, and a removal dropped half-way would leave it unwatched.
///
/// A bug that panics while answering is answered `internal` (with a request id; the log has
/// the panic under it), not left to the requester's timeout: the daemon goes on serving
/// either way.
pub async fn dispatch(services: &Services, kind: Kind, access: &Access, payload: &[u8]) -> Handled {
    unless_it_panics(kind, answer_in_time(services, kind, access, payload)).await
}

/// `answer`'s reply, or an `internal` error if it panics.
async fn unless_it_panics(kind: Kind, answer: impl Future<Output = Handled>) -> Handled {
    use futures::FutureExt;
    match std::panic::AssertUnwindSafe(answer).catch_unwind().await {
        Ok(handled) => handled,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let bug = format!("a panic: {what}");
            plain::<()>(Err(internal(&bug, &format!("a {kind:?} request"))))
        }
    }
}

async fn answer_in_time(
    services: &Services,
    kind: Kind,
    access: &Access,
    payload: &[u8],
) -> Handled {
    if kind == Kind::Repo {
        return answer_kind(services, kind, access, payload).await;
    }
    match tokio::time::timeout(
        services.deadline,
        answer_kind(services, kind, access, payload),
    )
    .await
    {
        Ok(handled) => handled,
        Err(_) => {
            use std::sync::atomic::Ordering;
            let secs = services.deadline.as_secs();
            let count = services.past_deadline.fetch_add(1, Ordering::Relaxed) + 1;
            if count.is_power_of_two() {
                tracing::warn!(
                    ?kind,
                    deadline_secs = secs,
                    requests = count,
                    "a request took longer than nats.answer_deadline_secs; answered \
                     index_unavailable (is the database hung?)"
                );
            }
            let code = ErrorCode::IndexUnavailable;
            let message = format!(
                "no answer within {secs} s (nats.answer_deadline_secs): the index database is \
                 not answering; retry later"
            );
            Handled {
                body: to_bytes(&ErrorResponse::new(code, message)),
                error: Some(code),
                cached: false,
                query_embedding: None,
            }
        }
    }
}

async fn answer_kind(services: &Services, kind: Kind, access: &Access, payload: &[u8]) -> Handled {
    match kind {
        Kind::Search => handle(&services.search, access, payload).await,
        Kind::Context => plain(answer_context(&services.context, access, payload).await),
        Kind::File => plain(answer_file(&services.source, access, payload).await),
        Kind::Repo => plain(answer_repo(&services.roots, access, payload).await),
        Kind::Symbols
        | Kind::Callers
        | Kind::Callees
        | Kind::Graph
        | Kind::Impact
        | Kind::Related => intel::dispatch(&services.intel, kind, access, payload).await,
    }
}

/// A reply that is neither cached nor embedded a query (as far as the metrics go).
fn plain<T: serde::Serialize>(answer: Result<T, (ErrorCode, String)>) -> Handled {
    let (body, error) = match answer {
        Ok(response) => (to_bytes(&response), None),
        Err((code, message)) => (to_bytes(&ErrorResponse::new(code, message)), Some(code)),
    };
    Handled {
        body,
        error,
        cached: false,
        query_embedding: None,
    }
}

/// Answers one search request.
pub async fn handle(search: &SearchService, access: &Access, payload: &[u8]) -> Handled {
    match answer(search, access, payload).await {
        Ok(response) => Handled {
            cached: response.cached,
            query_embedding: (!response.cached && response.query_embedding_time > 0)
                .then(|| Duration::from_millis(response.query_embedding_time)),
            body: to_bytes(&response),
            error: None,
        },
        Err((code, message)) => Handled {
            body: to_bytes(&ErrorResponse::new(code, message)),
            error: Some(code),
            cached: false,
            query_embedding: None,
        },
    }
}

/// A JSON object of type `T`, or the reply's error. A field of the wrong type is
/// `invalid_argument` naming the field (found by trying each field alone on `minimal`, a
/// smallest valid request); what is not a JSON object, or lacks a required field, is
/// `bad_request`.
fn parse<T: serde::de::DeserializeOwned>(
    payload: &[u8],
    what: &str,
    minimal: serde_json::Value,
) -> Result<T, (ErrorCode, String)> {
    if payload.len() > MAX_REQUEST_BYTES {
        return Err((
            ErrorCode::BadRequest,
            format!("request is larger than {MAX_REQUEST_BYTES} bytes"),
        ));
    }
    let bad = |m: String| (ErrorCode::BadRequest, m);
    let value: serde_json::Value = serde_json::from_slice(payload)
        .map_err(|e| bad(format!("request is not valid JSON: {e}")))?;
    // serde would read a JSON array positionally into the struct: insist on an object.
    if !value.is_object() {
        return Err(bad(format!("request must be a JSON object ({what})")));
    }
    serde_json::from_value::<T>(value.clone()).map_err(|e| {
        let fields = value.as_object().into_iter().flatten();
        for (key, field) in fields {
            let mut probe = minimal.clone();
            probe[key] = field.clone();
            if let Err(e) = serde_json::from_value::<T>(probe) {
                return (ErrorCode::InvalidArgument, format!("{key}: {e}"));
            }
        }
        // No single field is wrong: a required one is missing.
        bad(format!("request is not a valid {what}: {e}"))
    })
}

async fn answer(
    search: &SearchService,
    access: &Access,
    payload: &[u8],
) -> Result<SearchResponse, (ErrorCode, String)> {
    let raw: wire::SearchRequest = parse(
        payload,
        "search request with a `query` field",
        serde_json::json!({ "query": "x" }),
    )?;
    let workspace = access.workspace(raw.workspace.as_deref())?;
    let request = SearchRequest::new(
        RawSearch {
            query: raw.query,
            file_types: raw.file_types,
            modules: raw.modules,
            component_types: raw.component_types,
            languages: raw.languages,
            repository: raw.repository,
            path_glob: raw.path_glob,
            limit: raw.limit,
            offset: raw.offset,
            min_similarity: raw.min_similarity,
            mode: raw.mode,
            max_per_file: raw.max_per_file,
            workspace: Some(workspace),
        },
        search.config(),
    )
    .map_err(|e| fault(&e))?;
    let outcome = search.search(&request).await.map_err(|e| fault(&e))?;
    let results: Vec<SearchResult> = outcome
        .hits
        .into_iter()
        .map(|s| {
            let h = s.hit;
            SearchResult {
                file_path: h.file_path,
                chunk_index: h.chunk_index,
                content: h.content,
                similarity: h.similarity.unwrap_or(0.0),
                module: h.module,
                component_type: h.component_type,
                start_line: h.start_line,
                end_line: h.end_line,
                language: h.language,
                symbol: h.symbol,
                symbols: h.symbols,
                repository: Some(h.repository),
                file_type: h.file_type,
                score: Some(s.score),
                scores: Some(ScoreParts {
                    vector: h.similarity,
                    vector_rank: s.vector_rank,
                    lexical: h.lexical,
                    lexical_rank: s.lexical_rank,
                    file_lexical: s.file_lexical,
                    file_lexical_rank: s.file_lexical_rank,
                    definition: s.definition,
                }),
            }
        })
        .collect();
    Ok(SearchResponse {
        success: true,
        total_found: results.len(),
        results,
        query_embedding_time: outcome.query_embedding_ms,
        search_time: outcome.search_ms,
        mode: Some(outcome.mode.as_str().to_owned()),
        warning: outcome.warning,
        cached: outcome.cached,
        workspace: Some(outcome.workspace),
    })
}

async fn answer_context(
    context: &ContextService,
    access: &Access,
    payload: &[u8],
) -> Result<ContextResponse, (ErrorCode, String)> {
    let raw: wire::ContextRequest = parse(
        payload,
        "context request with a `task` field",
        serde_json::json!({ "task": "x" }),
    )?;
    let workspace = access.workspace(raw.workspace.as_deref())?;
    let block = context
        .build(crate::context::ContextRequest {
            task: raw.task,
            budget_tokens: raw.budget_tokens,
            workspace: Some(workspace),
            repository: raw.repository,
            file_types: raw.file_types,
            languages: raw.languages,
            path_glob: raw.path_glob,
            mode: None,
            per_file: None,
        })
        .await
        .map_err(|e| match e {
            ContextError::Invalid(m) => (ErrorCode::InvalidArgument, m),
            ContextError::Search(e) => fault(&e),
        })?;
    Ok(ContextResponse {
        success: true,
        block: block.block,
        tokens: block.tokens,
        budget_tokens: block.budget_tokens,
        workspace: block.workspace,
        files: block
            .files
            .into_iter()
            .map(|f| wire::ContextFile {
                repository: f.repository,
                file_path: f.file_path,
                language: f.language,
                ranges: f
                    .ranges
                    .into_iter()
                    .map(|(start_line, end_line)| LineRange {
                        start_line,
                        end_line,
                    })
                    .collect(),
                cut: f.cut,
            })
            .collect(),
        warning: block.warning,
        query_embedding_time: block.query_embedding_ms,
        search_time: block.search_ms,
    })
}

async fn answer_file(
    source: &SourceService,
    access: &Access,
    payload: &[u8],
) -> Result<FileResponse, (ErrorCode, String)> {
    let raw: wire::FileRequest = parse(
        payload,
        "file request with a `path` field",
        serde_json::json!({ "path": "x" }),
    )?;
    let workspace = access.workspace(raw.workspace.as_deref())?;
    let lines = source
        .lines(crate::source::FileRequest {
            path: raw.path,
            repository: raw.repository,
            start_line: raw.start_line,
            end_line: raw.end_line,
            context: raw.context,
            workspace: Some(workspace),
        })
        .await
        .map_err(|e| match e {
            SourceError::Invalid(m) => (ErrorCode::InvalidArgument, m),
            SourceError::NotFound(m) => (ErrorCode::NotFound, m),
            SourceError::Forbidden(m) => (ErrorCode::PermissionDenied, m),
            SourceError::Store(s) if s.is_transient() => index_unavailable(&s, "file request"),
            other => internal(&other, "file request"),
        })?;
    Ok(FileResponse {
        success: true,
        workspace: lines.workspace,
        repository: lines.repository,
        path: lines.path,
        language: lines.language,
        start_line: lines.start_line,
        end_line: lines.end_line,
        total_lines: lines.total_lines,
        content: lines.content,
        stale: lines.stale,
    })
}

async fn answer_repo(
    roots: &Roots,
    access: &Access,
    payload: &[u8],
) -> Result<RepoResponse, (ErrorCode, String)> {
    let raw: wire::RepoRequest = parse(
        payload,
        "repository request with an `action` field",
        serde_json::json!({ "action": "list" }),
    )?;
    let workspace = access.workspace(raw.workspace.as_deref())?;
    let invalid = |m: &str| (ErrorCode::InvalidArgument, m.to_owned());
    let store = roots.indexer().store();
    let ws = &workspace;
    let summary = |name: String| async move {
        let all = store
            .workspace_summary(ws)
            .await
            .map_err(|e| repo_fault(&RootsError::Store(e)))?;
        all.repositories
            .into_iter()
            .find(|r| r.name == name)
            .map(RepoInfo::from)
            .ok_or_else(|| {
                (
                    ErrorCode::NotFound,
                    format!("no repository `{name}` in workspace `{ws}`"),
                )
            })
    };
    let reply = |repository: Option<RepoInfo>, repositories: Option<Vec<RepoInfo>>| RepoResponse {
        success: true,
        workspace: workspace.clone(),
        repository,
        repositories,
    };
    match raw.action.trim() {
        "add" => {
            let source = match (raw.path, raw.url) {
                (Some(p), None) => Source::Path(p.into()),
                (None, Some(u)) => Source::Git(u),
                _ => return Err(invalid("add takes either `path` or `url`")),
            };
            let record = roots
                .add(&workspace, source, raw.name.as_deref())
                .await
                .map_err(|e| repo_fault(&e))?;
            Ok(reply(Some(summary(record.name).await?), None))
        }
        "remove" => {
            let name = raw.name.ok_or_else(|| invalid("remove takes `name`"))?;
            let mut info = summary(name.clone()).await?;
            let removal = roots
                .remove(&workspace, &name)
                .await
                .map_err(|e| repo_fault(&e))?;
            if removal == Removal::Pending {
                info.state = Some(crate::store::RepoState::Removing.as_str().to_owned());
            }
            Ok(reply(Some(info), None))
        }
        "status" if raw.name.is_some() => {
            let name = raw.name.unwrap_or_default();
            Ok(reply(Some(summary(name).await?), None))
        }
        "list" | "status" => {
            let all = store
                .workspace_summary(&workspace)
                .await
                .map_err(|e| repo_fault(&RootsError::Store(e)))?;
            Ok(reply(
                None,
                Some(all.repositories.into_iter().map(RepoInfo::from).collect()),
            ))
        }
        other => Err(invalid(&format!(
            "action must be \"add\", \"remove\", \"list\" or \"status\", got {other:?}"
        ))),
    }
}

/// Maps a repository request's error to what the caller is told.
fn repo_fault(e: &RootsError) -> (ErrorCode, String) {
    match e {
        RootsError::Invalid(m) => (ErrorCode::InvalidArgument, m.clone()),
        RootsError::NotFound(m) => (ErrorCode::NotFound, m.clone()),
        RootsError::Store(s) if s.is_transient() => index_unavailable(e, "repository request"),
        RootsError::Store(_) => internal(e, "repository request"),
    }
}

/// Maps a service error to what the caller is told; details go to the log.
fn fault(e: &SearchError) -> (ErrorCode, String) {
    match e {
        SearchError::Invalid(m) => (ErrorCode::InvalidArgument, m.clone()),
        SearchError::Forbidden(m) => (ErrorCode::PermissionDenied, m.clone()),
        SearchError::Embedding(inner) if inner.is_transient() => {
            tracing::warn!(error = %e, "search failed");
            (
                ErrorCode::EmbeddingUnavailable,
                "the embedding model is unavailable; retry later".into(),
            )
        }
        SearchError::Store(inner) if inner.is_transient() => index_unavailable(e, "search"),
        other => internal(other, "search"),
    }
}

/// The database is down: the caller may retry; the log has the cause.
fn index_unavailable(e: &dyn std::fmt::Display, what: &str) -> (ErrorCode, String) {
    tracing::warn!(error = %e, "{what} failed");
    (
        ErrorCode::IndexUnavailable,
        "the index database is unavailable; retry later".into(),
    )
}

/// Our fault: the caller gets a request id, the log has the details under it.
fn internal(e: &dyn std::fmt::Display, what: &str) -> (ErrorCode, String) {
    let id = uuid::Uuid::new_v4().simple().to_string();
    tracing::error!(request_id = %id, error = %e, "{what} failed");
    (
        ErrorCode::Internal,
        format!("internal error (request id {id})"),
    )
}

/// The service-API headers that signal an error reply.
fn error_headers(code: ErrorCode) -> async_nats::HeaderMap {
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Nats-Service-Error", code.as_str());
    headers.insert(
        "Nats-Service-Error-Code",
        code.status().to_string().as_str(),
    );
    headers
}

/// A reply's JSON body.
pub(crate) fn to_bytes<T: serde::Serialize>(value: &T) -> Bytes {
    // Serialising these plain structs cannot fail; fall back to a fixed error body anyway.
    serde_json::to_vec(value)
        .map(Bytes::from)
        .unwrap_or_else(|_| {
            Bytes::from_static(
            br#"{"success":false,"error":{"code":"internal","message":"reply encoding failed"}}"#,
        )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_that_panics_is_answered_internal() {
        let ok = || Handled {
            body: Bytes::from_static(b"{}"),
            error: None,
            cached: false,
            query_embedding: None,
        };
        assert_eq!(
            unless_it_panics(Kind::Search, async { ok() }).await.error,
            None
        );
        let bug = async {
            let path = String::from("CCTV大赛");
            let _ = &path[..6];
            ok()
        };
        let handled = unless_it_panics(Kind::Search, bug).await;
        assert_eq!(handled.error, Some(ErrorCode::Internal));
        let body = String::from_utf8_lossy(&handled.body);
        assert!(
            body.contains("\"internal\"") && body.contains("request id"),
            "{body}"
        );
    }

    #[test]
    fn credentials_are_taken_out_of_the_url() {
        assert_eq!(
            split_credentials("nats://127.0.0.1:4222"),
            ("nats://127.0.0.1:4222".into(), None)
        );
        assert_eq!(
            split_credentials("nats://svc:p%40ss@nats:4222"),
            (
                "nats://nats:4222".into(),
                Some(("svc".into(), Some("p@ss".into())))
            )
        );
        assert_eq!(
            split_credentials("nats://s3cr3t@a:1, nats://s3cr3t@b:2"),
            (
                "nats://a:1,nats://b:2".into(),
                Some(("s3cr3t".into(), None))
            )
        );
    }

    #[test]
    fn a_workspace_subject_serves_its_workspace_only() {
        let own = Access::Workspace("alpha".into());
        assert_eq!(own.workspace(None), Ok("alpha".into()));
        assert_eq!(
            own.workspace(Some("beta")).map_err(|e| e.0),
            Err(ErrorCode::PermissionDenied)
        );
        let plain = |policy| Access::Plain {
            policy,
            default: "main".into(),
        };
        assert_eq!(
            plain(PlainSubjects::All).workspace(Some("beta")),
            Ok("beta".into())
        );
        assert_eq!(plain(PlainSubjects::All).workspace(None), Ok("main".into()));
        assert_eq!(
            plain(PlainSubjects::Default)
                .workspace(Some("beta"))
                .map_err(|e| e.0),
            Err(ErrorCode::PermissionDenied)
        );
        assert_eq!(
            plain(PlainSubjects::All)
                .workspace(Some("a.b"))
                .map_err(|e| e.0),
            Err(ErrorCode::InvalidArgument)
        );
    }
}
