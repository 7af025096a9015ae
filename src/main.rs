//! `codesearch`: parse the command line, set up logging on stderr, run, map errors to exit codes.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use codesearch::bus::Kind;
use codesearch::bus::client::{Client, ClientError};
use codesearch::bus::wire;
use codesearch::cli::{Cli, Command, ContextFormat, GlobalArgs, McpAction, RepoAction};
use codesearch::cli::{one_line, terminal_safe};
use codesearch::config::Config;
use codesearch::out;
use codesearch::pipeline::IndexReport;
use tokio_util::sync::CancellationToken;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Other crates log their warnings, except notify's: its one inotify warning ("Unable to
    // remove the path from the watches") comes whenever a branch switch or `rm -r` deletes a
    // watched directory before its watch is removed, and means nothing. Watch errors that
    // matter reach the daemon as events and are logged by it (`cannot watch for changes`).
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new(format!(
            "warn,notify=error,codesearch={}",
            cli.global.log_level
        ))
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        // The reader went away (`codesearch status | head -3`): nothing more to say.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}", terminal_safe(&error_chain(&e)));
            ExitCode::FAILURE
        }
    }
}

/// An error and its causes, `: `-separated, leaving out a cause whose text the message before
/// it already ends with (our errors put their source in their message, as do sqlx's and
/// std's, so `{:#}` said "connection refused" three times).
fn error_chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

fn load_config(global: &GlobalArgs, repository: Option<&str>) -> anyhow::Result<Config> {
    let mut overrides: Vec<(&str, toml::Value)> = Vec::new();
    let s = |v: &str| toml::Value::String(v.to_owned());
    if let Some(v) = &global.database_url {
        overrides.push(("database.url", s(v)));
    }
    if let Some(v) = &global.nats_url {
        overrides.push(("nats.url", s(v)));
    }
    if let Some(v) = &global.embedder {
        overrides.push(("embed.backend", s(v)));
    }
    if let Some(v) = &global.model_dir {
        overrides.push(("embed.model_dir", s(&v.to_string_lossy())));
    }
    if let Some(v) = repository {
        overrides.push(("index.repository", s(v)));
    }
    Ok(Config::from_env(global.config.as_deref(), &overrides)?)
}

/// Resolves when Ctrl-C or SIGTERM arrives.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Repo { action } => {
            let config = load_config(&cli.global, None)?;
            let (request, common) = match action {
                RepoAction::Add {
                    source,
                    name,
                    common,
                } => {
                    let is_url = source.contains("://") || source.contains('@');
                    let path = (!is_url).then(|| {
                        std::fs::canonicalize(&source)
                            .map(|p| p.to_string_lossy().into_owned())
                            .unwrap_or(source.clone())
                    });
                    let request = wire::RepoRequest {
                        action: "add".into(),
                        workspace: common.workspace.clone(),
                        name,
                        path,
                        url: is_url.then_some(source),
                    };
                    (request, common)
                }
                RepoAction::Remove { name, common } => {
                    (repo_request("remove", Some(name), &common), common)
                }
                RepoAction::List { common } => (repo_request("list", None, &common), common),
                RepoAction::Status { name, common } => {
                    (repo_request("status", Some(name), &common), common)
                }
            };
            let removing = request.action == "remove";
            let payload = serde_json::to_vec(&request)?;
            let reply = match Client::new(&config)
                .request(Kind::Repo, common.workspace.as_deref(), payload)
                .await
            {
                Ok(reply) => reply,
                // Nobody to ask: the database is asked directly, which refuses while anyone
                // indexes the repository.
                Err(e @ (ClientError::NoDaemon { .. } | ClientError::Connect { .. }))
                    if removing =>
                {
                    let name = request.name.unwrap_or_default();
                    let workspace = common
                        .workspace
                        .unwrap_or_else(|| config.workspaces.default.clone());
                    eprintln!("{e}\nremoving `{name}` from the index database itself");
                    let reply = match codesearch::roots::remove_unattended(
                        &config, &workspace, &name,
                    )
                    .await
                    {
                        Ok(summary) => serde_json::to_vec(&wire::RepoResponse {
                            success: true,
                            workspace,
                            repository: Some(summary.into()),
                            repositories: None,
                        })?,
                        Err(e) => {
                            eprintln!("error: {}", terminal_safe(&e.to_string()));
                            return Ok(ExitCode::FAILURE);
                        }
                    };
                    bytes::Bytes::from(reply)
                }
                Err(e) => return Err(e.into()),
            };
            if common.json {
                out!("{}", String::from_utf8_lossy(&reply));
                return Ok(ExitCode::SUCCESS);
            }
            print_repos(&reply, removing)
        }
        Command::Status { json } => {
            let config = load_config(&cli.global, None)?;
            let ok = codesearch::report::status(&config, json).await?;
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Stats { json } => {
            let config = load_config(&cli.global, None)?;
            let ok = codesearch::report::stats(&config, json).await?;
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Migrate => {
            let config = load_config(&cli.global, None)?;
            let store = codesearch::store::Store::connect(&config.database).await?;
            store.migrate().await?;
            println!("migrations applied");
            Ok(ExitCode::SUCCESS)
        }
        Command::Index { paths, repository } => {
            let config = load_config(&cli.global, repository.as_deref())?;
            let repos = codesearch::repository::resolve(
                &config,
                &paths,
                codesearch::repository::MissingRoot::Refuse,
            )?;
            if repos.is_empty() {
                anyhow::bail!(
                    "nothing to index: no PATH was given, no [[repositories]] are configured, and \
                     the working directory is not a git repository (it has no .git); name the \
                     directory to index: codesearch index PATH"
                );
            }
            let (store, embedder) = codesearch::daemon::open(&config).await?;
            let cancel = CancellationToken::new();
            let on_signal = cancel.clone();
            tokio::spawn(async move {
                shutdown_signal().await;
                eprintln!("stopping after the files in hand...");
                on_signal.cancel();
            });
            let reports = codesearch::daemon::index(
                &config,
                store,
                embedder,
                &repos,
                &cancel,
                std::io::stderr().is_terminal(),
            )
            .await?;
            let mut incomplete = false;
            for r in &reports {
                print_report(r);
                incomplete |= r.pending > 0;
            }
            Ok(if incomplete || cancel.is_cancelled() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Serve { paths, repository } => {
            let config = load_config(&cli.global, repository.as_deref())?;
            let repos = codesearch::repository::resolve(
                &config,
                &paths,
                codesearch::repository::MissingRoot::Await,
            )?;
            if repos.is_empty() {
                tracing::warn!(
                    "no PATH was given, no [[repositories]] are configured, and the working \
                     directory is not a git repository: indexing nothing from here, serving the \
                     repositories requested earlier and new requests (codesearch repo add)"
                );
            }
            codesearch::daemon::serve(config, repos, shutdown_signal()).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Search {
            query,
            limit,
            file_types,
            modules,
            component_types,
            languages,
            repository,
            path_glob,
            offset,
            mode,
            min_similarity,
            workspace,
            json,
        } => {
            let config = load_config(&cli.global, None)?;
            let request = wire::SearchRequest {
                query,
                file_types: (!file_types.is_empty()).then_some(file_types),
                modules: (!modules.is_empty()).then_some(modules),
                limit,
                min_similarity,
                component_types: (!component_types.is_empty()).then_some(component_types),
                languages: (!languages.is_empty()).then_some(languages),
                repository,
                path_glob,
                offset,
                mode,
                max_per_file: None,
                workspace,
            };
            let workspace = request.workspace.clone();
            let payload = serde_json::to_vec(&request)?;
            let reply = request_reply(&config, Kind::Search, workspace.as_deref(), payload).await?;
            if json {
                out!("{}", String::from_utf8_lossy(&reply));
                return Ok(ExitCode::SUCCESS);
            }
            print_search(&reply)
        }
        Command::Context {
            task,
            budget_tokens,
            format,
            repository,
            workspace,
        } => {
            let config = load_config(&cli.global, None)?;
            let task = match task {
                Some(t) => t,
                None => {
                    let mut t = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut t)
                        .context("reading the task from stdin")?;
                    t
                }
            };
            let request = wire::ContextRequest {
                task,
                budget_tokens,
                workspace: workspace.clone(),
                repository,
                ..Default::default()
            };
            let payload = serde_json::to_vec(&request)?;
            let reply =
                request_reply(&config, Kind::Context, workspace.as_deref(), payload).await?;
            if let Ok(err) = serde_json::from_slice::<wire::ErrorResponse>(&reply)
                && !err.success
            {
                eprintln!(
                    "error: {} ({})",
                    terminal_safe(&err.error.message),
                    err.error.code.as_str()
                );
                return Ok(ExitCode::FAILURE);
            }
            if format == ContextFormat::Json {
                out!("{}", String::from_utf8_lossy(&reply));
                return Ok(ExitCode::SUCCESS);
            }
            let reply: wire::ContextResponse =
                serde_json::from_slice(&reply).context("the reply is not a context response")?;
            if let Some(w) = &reply.warning {
                eprintln!("warning: {}", terminal_safe(w));
            }
            out!("{}", reply.block.trim_end());
            eprintln!(
                "{} tokens of {} in {} files",
                reply.tokens,
                reply.budget_tokens,
                reply.files.len()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Code { query, common } => {
            let config = load_config(&cli.global, None)?;
            let (kind, payload) = code_request(query, &common);
            let reply = request_reply(
                &config,
                kind,
                common.workspace.as_deref(),
                serde_json::to_vec(&payload)?,
            )
            .await?;
            if let Ok(err) = serde_json::from_slice::<wire::ErrorResponse>(&reply)
                && !err.success
            {
                if common.json {
                    out!("{}", String::from_utf8_lossy(&reply));
                }
                eprintln!(
                    "error: {} ({})",
                    terminal_safe(&err.error.message),
                    err.error.code.as_str()
                );
                for c in err.error.candidates.iter().flatten() {
                    let path = terminal_safe(&c.path);
                    eprintln!(
                        "  {} {}  {path}:{}  (--path {path} --line {})",
                        c.kind,
                        terminal_safe(&c.qualified),
                        c.start_line,
                        c.start_line
                    );
                }
                return Ok(ExitCode::FAILURE);
            }
            if common.json {
                out!("{}", String::from_utf8_lossy(&reply));
                return Ok(ExitCode::SUCCESS);
            }
            let text = render_code(kind, &reply).context("the reply is not what was asked")?;
            out!("{}", text.trim_end());
            Ok(ExitCode::SUCCESS)
        }
        Command::Mcp {
            action: McpAction::Serve { workspace },
        } => {
            let config = load_config(&cli.global, None)?;
            codesearch::mcp::stdio::serve(&config, workspace.as_deref()).await?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The subject and JSON request of a `codesearch code` question.
fn code_request(
    query: codesearch::cli::CodeQuery,
    common: &codesearch::cli::CodeArgs,
) -> (Kind, serde_json::Value) {
    use codesearch::cli::CodeQuery as Q;
    let scope = serde_json::json!({
        "repository": common.repository,
        "workspace": common.workspace,
    });
    let target = |t: &codesearch::cli::SymbolArgs| serde_json::json!({ "symbol": t.symbol, "path": t.path, "line": t.line });
    let (kind, mut body) = match query {
        Q::Symbols {
            query,
            prefix,
            kinds,
            language,
            limit,
        } => (
            Kind::Symbols,
            serde_json::json!({
                "query": query,
                "match": if prefix { "prefix" } else { "exact" },
                "kinds": kinds,
                "language": language,
                "limit": limit,
            }),
        ),
        Q::Callers { target: t, limit } => {
            let mut b = target(&t);
            b["limit"] = limit.into();
            (Kind::Callers, b)
        }
        Q::Callees { target: t, limit } => {
            let mut b = target(&t);
            b["limit"] = limit.into();
            (Kind::Callees, b)
        }
        Q::Graph {
            target: t,
            direction,
            depth,
            max_nodes,
            min_confidence,
        } => {
            let mut b = target(&t);
            b["direction"] = direction.into();
            b["depth"] = depth.into();
            b["maxNodes"] = max_nodes.into();
            b["minConfidence"] = min_confidence.into();
            (Kind::Graph, b)
        }
        Q::Impact {
            target: t,
            depth,
            min_confidence,
        } => {
            let mut b = target(&t);
            b["depth"] = depth.into();
            b["minConfidence"] = min_confidence.into();
            (Kind::Impact, b)
        }
        Q::Related { path, direction } => (
            Kind::Related,
            serde_json::json!({ "path": path, "direction": direction }),
        ),
    };
    if let (Some(body), Some(scope)) = (body.as_object_mut(), scope.as_object()) {
        body.extend(scope.clone());
        // Absent options are left out, not sent as null.
        body.retain(|_, v| !v.is_null());
    }
    (kind, body)
}

/// A code-intelligence reply as text.
fn render_code(kind: Kind, reply: &[u8]) -> anyhow::Result<String> {
    use codesearch::intel::{graph, render};
    Ok(match kind {
        Kind::Symbols => render::symbols(&serde_json::from_slice::<graph::Symbols>(reply)?),
        Kind::Callers => render::calls(&serde_json::from_slice::<graph::Calls>(reply)?, true),
        Kind::Callees => render::calls(&serde_json::from_slice::<graph::Calls>(reply)?, false),
        Kind::Graph => render::graph(&serde_json::from_slice::<graph::Graph>(reply)?),
        Kind::Impact => render::impact(&serde_json::from_slice::<graph::Impact>(reply)?),
        _ => render::related(&serde_json::from_slice::<graph::Related>(reply)?),
    })
}

/// One request to the running daemon, within the configured request timeout; its reply's
/// body (error replies included).
async fn request_reply(
    config: &Config,
    kind: Kind,
    workspace: Option<&str>,
    payload: Vec<u8>,
) -> anyhow::Result<bytes::Bytes> {
    Ok(Client::new(config)
        .request(kind, workspace, payload)
        .await?)
}

fn repo_request(
    action: &str,
    name: Option<String>,
    common: &codesearch::cli::RepoArgs,
) -> wire::RepoRequest {
    wire::RepoRequest {
        action: action.into(),
        workspace: common.workspace.clone(),
        name,
        ..Default::default()
    }
}

/// Prints a repository reply; `removed`: the reply of a `remove`, whose record is what was
/// deleted.
fn print_repos(payload: &[u8], removed: bool) -> anyhow::Result<ExitCode> {
    if let Ok(err) = serde_json::from_slice::<wire::ErrorResponse>(payload)
        && !err.success
    {
        eprintln!(
            "error: {} ({})",
            terminal_safe(&err.error.message),
            err.error.code.as_str()
        );
        return Ok(ExitCode::FAILURE);
    }
    let reply: wire::RepoResponse =
        serde_json::from_slice(payload).context("the reply is not a repository response")?;
    if removed && let Some(r) = &reply.repository {
        if r.state.as_deref() == Some("removing") {
            out!(
                "workspace {}: removing {}: a daemon still indexing it has not let it go yet; \
                 its rows are deleted once it does (`codesearch repo status {}` says when)",
                reply.workspace,
                r.name,
                r.name
            );
            return Ok(ExitCode::SUCCESS);
        }
        out!(
            "workspace {}: removed {} ({}, {})",
            reply.workspace,
            r.name,
            count(r.files as usize, "file", "files"),
            count(r.chunks as usize, "chunk", "chunks")
        );
        return Ok(ExitCode::SUCCESS);
    }
    let repos: Vec<&wire::RepoInfo> = reply
        .repository
        .iter()
        .chain(reply.repositories.iter().flatten())
        .collect();
    // One repository's reply (add, status) says nothing of how many the workspace holds.
    if reply.repository.is_some() {
        out!("workspace {}:", reply.workspace);
    } else {
        out!(
            "workspace {}: {}",
            reply.workspace,
            count(repos.len(), "repository", "repositories")
        );
    }
    for r in repos {
        let languages: Vec<String> = r
            .languages
            .iter()
            .map(|(l, n)| format!("{l} {n}"))
            .collect();
        out!(
            "  {}  [{}]  {} files, {} chunks, {} lines{}{}",
            r.name,
            r.state.as_deref().unwrap_or("unknown"),
            r.files,
            r.chunks,
            r.lines,
            if r.files_with_errors > 0 {
                format!(
                    ", {} not indexed",
                    count(r.files_with_errors as usize, "file", "files")
                )
            } else {
                String::new()
            },
            if r.pending > 0 {
                format!(", {} vectors pending", r.pending)
            } else {
                String::new()
            },
        );
        out!(
            "      {} ({}){}",
            one_line(r.root.as_deref().unwrap_or("?")),
            r.origin.as_deref().unwrap_or("?"),
            if languages.is_empty() {
                String::new()
            } else {
                format!("; {}", languages.join(", "))
            }
        );
        if let Some(e) = &r.error {
            out!("      error: {e}");
        }
        // A daemon answered, and every daemon keeps the requested repositories: one not
        // watched yet is being cloned or taken over.
        if r.watched == Some(false) && r.origin.as_deref() != Some("request") {
            out!("      {}", codesearch::report::NOT_WATCHED);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_report(r: &IndexReport) {
    let skipped = if r.skipped.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = r.skipped.iter().map(|(k, v)| format!("{v} {k}")).collect();
        format!(" ({})", parts.join(", "))
    };
    let secs = r.total_time.as_secs_f64();
    let embed_secs = r.embed_time.as_secs_f64();
    let rate = if embed_secs > 0.0 {
        format!(" ({:.1} chunks/s)", r.embedded as f64 / embed_secs)
    } else {
        String::new()
    };
    println!(
        "{}: {} indexed ({} chunks), {} unchanged, {} skipped{skipped}, {} removed",
        r.repository,
        count(r.indexed, "file", "files"),
        r.chunks,
        r.unchanged,
        r.skipped_total(),
        r.removed,
    );
    if let Some((total, kinds)) = r.unlisted_summary(6) {
        println!(
            "  not indexed: {} of types not listed in index.include_extensions ({kinds})",
            count(total, "file", "files")
        );
    }
    println!(
        "  embedded {} chunks in {embed_secs:.1}s{rate}, reused {}; other work {:.1}s; total {secs:.1}s",
        r.embedded,
        r.reused,
        (secs - embed_secs).max(0.0),
    );
    if r.reclassified > 0 {
        println!(
            "  {} given another module or component type by index.module_rules or index.component_rules",
            count(r.reclassified, "unchanged file", "unchanged files")
        );
    }
    if r.interrupted {
        println!("  interrupted: the files in hand were finished; run it again to index the rest");
    }
    if r.pending > 0 {
        println!(
            "  {} chunks stored without vectors (the embedder was unavailable): searchable by words now; `codesearch serve` embeds them once it answers",
            r.pending
        );
    }
    if r.rejected > 0 {
        println!(
            "  {} chunks the model refused (recorded in codebase_index.embed_error)",
            r.rejected
        );
    }
}

/// The similarity of a result, or, when it has none (lexical mode, a vector still pending:
/// `scores` without `vector`), the score it was ranked by: a 0 similarity would read as "no
/// likeness at all".
fn result_measure(r: &wire::SearchResult) -> String {
    match (&r.scores, r.score) {
        (Some(parts), Some(score)) if parts.vector.is_none() => format!("score {score:.3}"),
        _ => format!("similarity {:.3}", r.similarity),
    }
}

fn print_search(payload: &[u8]) -> anyhow::Result<ExitCode> {
    if let Ok(err) = serde_json::from_slice::<wire::ErrorResponse>(payload)
        && !err.success
    {
        eprintln!(
            "error: {} ({})",
            terminal_safe(&err.error.message),
            err.error.code.as_str()
        );
        return Ok(ExitCode::FAILURE);
    }
    let reply: wire::SearchResponse =
        serde_json::from_slice(payload).context("the reply is not a search response")?;
    for (i, r) in reply.results.iter().enumerate() {
        let lines = match (r.start_line, r.end_line) {
            (Some(s), Some(e)) => format!(":{s}-{e}"),
            _ => String::new(),
        };
        let tags: Vec<&str> = [r.component_type.as_deref(), r.module.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        out!(
            "{}. {}{lines}  {}  {}{}",
            i + 1,
            one_line(&r.file_path),
            result_measure(r),
            result_names(r),
            if tags.is_empty() {
                String::new()
            } else {
                format!("  [{}]", tags.join(", "))
            }
        );
        for line in r.content.lines().take(6) {
            out!("     {line}");
        }
        if r.content.lines().count() > 6 {
            out!("     …");
        }
    }
    if let Some(w) = &reply.warning {
        eprintln!("warning: {}", terminal_safe(w));
    }
    out!(
        "{} · {} · query embedding {} ms · search {} ms{}",
        count(reply.total_found, "result", "results"),
        reply.mode.as_deref().unwrap_or("hybrid"),
        reply.query_embedding_time,
        reply.search_time,
        if reply.cached { " (cached)" } else { "" }
    );
    Ok(ExitCode::SUCCESS)
}

/// What a search result defines, for the CLI: its symbol, or for a chunk that merges several
/// small definitions, the first three of them and how many more.
fn result_names(r: &wire::SearchResult) -> String {
    const SHOWN: usize = 3;
    if r.symbols.len() <= 1 {
        return r.symbol.clone().unwrap_or_default();
    }
    let mut names = r.symbols[..r.symbols.len().min(SHOWN)].join(", ");
    if r.symbols.len() > SHOWN {
        names.push_str(&format!(" +{} more", r.symbols.len() - SHOWN));
    }
    names
}

/// `1 file`, `2 files`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::{error_chain, result_measure, result_names, wire};

    #[test]
    fn a_result_without_a_similarity_shows_its_score() {
        let result = |extra: serde_json::Value| -> wire::SearchResult {
            let mut v = serde_json::json!({ "filePath": "a.py", "chunkIndex": 0, "content": "",
                                            "similarity": 0.0, "module": null,
                                            "componentType": null });
            if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
                v.extend(extra.clone());
            }
            serde_json::from_value(v).expect("a result")
        };
        // Lexical mode: ranked by BM25, no vector part.
        let lexical = result(serde_json::json!({ "score": 7.25, "scores": { "lexical": 7.25 } }));
        assert_eq!(result_measure(&lexical), "score 7.250");
        let hybrid = result(serde_json::json!({ "similarity": 0.61, "score": 0.8,
                                                "scores": { "vector": 0.61 } }));
        assert_eq!(result_measure(&hybrid), "similarity 0.610");
        // An older daemon's reply, without the parts.
        let older = result(serde_json::json!({ "similarity": 0.42 }));
        assert_eq!(result_measure(&older), "similarity 0.420");
    }

    #[test]
    fn a_merged_chunk_is_shown_with_its_names() {
        let mut r: wire::SearchResult = serde_json::from_value(
            serde_json::json!({ "filePath": "a.py", "chunkIndex": 0, "content": "",
                                "similarity": 0.0, "module": null, "componentType": null,
                                "symbol": "a" }),
        )
        .expect("a result");
        assert_eq!(result_names(&r), "a");
        r.symbols = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        assert_eq!(result_names(&r), "a, b, c +2 more");
        r.symbols.truncate(2);
        assert_eq!(result_names(&r), "a, b");
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::other("connection refused");
        let e = anyhow::Error::new(io).context("cannot connect: connection refused");
        assert_eq!(error_chain(&e), "cannot connect: connection refused");
        let e = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_chain(&e), "outer: inner");
    }
}
