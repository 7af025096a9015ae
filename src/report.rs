//! `codesearch status` and `codesearch stats`: what an operator reads.
//!
//! `status` asks the components directly (database, NATS, Ollama) and the running daemons
//! through the NATS service API (`$SRV.INFO`); `stats` collects `$SRV.STATS` from every daemon
//! answering on the bus.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::bus::SERVICE_NAME;
use crate::config::{Config, redact_url};
use crate::embed::ollama;
use crate::health::EndpointFigures;
use crate::out;
use crate::store::{IndexSummary, Store};

/// How long to wait for daemons to answer a discovery request.
const GATHER: Duration = Duration::from_millis(750);

/// What `status` and `repo list` say of a repository no running daemon holds the lease of.
pub const NOT_WATCHED: &str = "not watched: no running daemon keeps it up to date, so searches \
     see it as last indexed (serve its path again, or `codesearch repo remove NAME`)";

/// Sends `subject` to every listener and gathers the replies that arrive within [`GATHER`].
pub(crate) async fn gather(
    client: &async_nats::Client,
    subject: String,
) -> anyhow::Result<Vec<Value>> {
    let inbox = client.new_inbox();
    let mut sub = client.subscribe(inbox.clone()).await?;
    client
        .publish_with_reply(subject, inbox, bytes::Bytes::new())
        .await?;
    client.flush().await?;
    let mut replies = Vec::new();
    let deadline = tokio::time::sleep(GATHER);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            _ = &mut deadline => break,
            m = sub.next() => match m {
                Some(m) => {
                    if let Ok(v) = serde_json::from_slice::<Value>(&m.payload) {
                        replies.push(v);
                    }
                }
                None => break,
            },
        }
    }
    Ok(replies)
}

async fn connect_nats(config: &Config) -> Result<async_nats::Client, String> {
    match tokio::time::timeout(Duration::from_secs(3), crate::bus::connect(&config.nats)).await {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("no connection within 3s".into()),
    }
}

/// How long `status` waits for the database's figures: a server that hangs (stopped, or
/// its host gone without closing connections) would otherwise cost two connection timeouts,
/// 21 s with the defaults, before `status` says it is down.
const DATABASE_CHECK: Duration = Duration::from_secs(5);

/// The index's figures, its model and how many vectors of chunks that left it are kept, or why
/// they cannot be read.
async fn index_figures(config: &Config) -> Result<(IndexSummary, Option<String>, i64), String> {
    let read = async {
        let store = Store::connect(&config.database)
            .await
            .map_err(|e| e.to_string())?;
        let (summary, model, kept) = tokio::join!(
            store.index_summary(),
            store.indexed_model(),
            store.vector_cache_len()
        );
        let err = |e: crate::store::StoreError| e.to_string();
        Ok((
            summary.map_err(err)?,
            model.map_err(err)?,
            kept.map_err(err)?,
        ))
    };
    tokio::time::timeout(DATABASE_CHECK, read)
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "no answer within {}s from PostgreSQL at {} (the server hangs, or the network \
                 drops its packets)",
                DATABASE_CHECK.as_secs(),
                redact_url(&config.database.url)
            ))
        })
}

/// The state of the index and its components. Returns whether everything is reachable.
pub async fn status(config: &Config, as_json: bool) -> anyhow::Result<bool> {
    // The three are asked at once: a component that does not answer costs its own timeout,
    // not the sum of all of them.
    let bus = async {
        let nats = connect_nats(config).await;
        let daemons: Vec<Value> = match &nats {
            Ok(c) => gather(c, format!("$SRV.INFO.{SERVICE_NAME}"))
                .await
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        };
        (nats, daemons)
    };
    let (index, (nats, daemons), ollama) = tokio::join!(
        index_figures(config),
        bus,
        ollama::list_models(&config.embed.ollama_url, Duration::from_secs(3))
    );
    let ollama_status = match &ollama {
        Ok(models)
            if models
                .iter()
                .any(|m| ollama::model_matches(m, &config.embed.ollama_model)) =>
        {
            "healthy"
        }
        Ok(_) => "degraded",
        Err(_) => "down",
    };
    let ok = index.is_ok() && nats.is_ok();

    if as_json {
        let v = json!({
            "index": match &index {
                Ok((s, model, kept)) => json!({
                    "status": if s.total_chunks > 0 { "healthy" } else { "empty" },
                    "embeddingModel": model,
                    "summary": s,
                    "vectorCache": { "vectors": kept, "max": config.database.vector_cache_chunks },
                }),
                Err(e) => json!({ "status": "down", "error": e }),
            },
            "database": { "url": redact_url(&config.database.url), "ok": index.is_ok() },
            "nats": match &nats {
                Ok(_) => json!({ "url": redact_url(&config.nats.url), "ok": true, "daemons": daemons }),
                Err(e) => json!({ "url": redact_url(&config.nats.url), "ok": false, "error": e }),
            },
            "ollama": match &ollama {
                Ok(models) => json!({ "url": redact_url(&config.embed.ollama_url), "status": ollama_status, "models": models }),
                Err(e) => json!({ "url": redact_url(&config.embed.ollama_url), "status": "down", "error": e.to_string() }),
            },
        });
        out!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ok);
    }

    match &index {
        Ok((s, model, kept)) => {
            out!(
                "index     {}: {} chunks in {} files, {} pending embedding, {} files not indexed; last indexed {}",
                if s.total_chunks > 0 {
                    "healthy"
                } else {
                    "empty"
                },
                s.total_chunks,
                s.total_files,
                s.pending,
                s.errors,
                s.last_indexed.map_or("never".into(), |t| t.to_rfc3339()),
            );
            out!(
                "          vectors by {}; {kept} kept of chunks that left the index (at most {})",
                model.as_deref().unwrap_or("(none yet)"),
                config.database.vector_cache_chunks
            );
            if !s.repositories.is_empty() {
                out!(
                    "          {:<24} {:<12} {:<12} {:>7} {:>8} {:>8} {:>7}  root",
                    "repository",
                    "workspace",
                    "state",
                    "files",
                    "chunks",
                    "pending",
                    "errors"
                );
                for r in &s.repositories {
                    out!(
                        "          {:<24} {:<12} {:<12} {:>7} {:>8} {:>8} {:>7}  {}",
                        r.name,
                        r.workspace.as_deref().unwrap_or("-"),
                        r.state.as_deref().unwrap_or("-"),
                        r.files,
                        r.chunks,
                        r.pending,
                        r.errors,
                        crate::cli::one_line(r.root.as_deref().unwrap_or(""))
                    );
                    if let Some(e) = &r.state_error {
                        out!("            {}: {e}", r.state.as_deref().unwrap_or("error"));
                    }
                    if r.watched == Some(false) {
                        out!("            {NOT_WATCHED}");
                    }
                }
            }
        }
        Err(e) => out!("index     down: {e}"),
    }
    out!(
        "database  {}  {}",
        if index.is_ok() { "ok  " } else { "DOWN" },
        redact_url(&config.database.url)
    );
    match &nats {
        Ok(_) => {
            out!("nats      ok    {}", redact_url(&config.nats.url));
            if daemons.is_empty() {
                out!("          no codesearch daemon answered $SRV.INFO");
            }
            let mine = crate::config::database_identity(&config.database.url);
            for d in &daemons {
                let theirs = d["metadata"][crate::bus::DATABASE_METADATA]
                    .as_str()
                    .unwrap_or("?");
                out!(
                    "          daemon {} v{}  database {theirs}{}",
                    d["id"].as_str().unwrap_or("?"),
                    d["version"].as_str().unwrap_or("?"),
                    if theirs == mine || theirs == "?" {
                        ""
                    } else {
                        "  (not this database: it answers from another index)"
                    }
                );
            }
            // From outside a deployment (docker compose) the daemons' database is often out
            // of this command's reach, while their own account is a request away.
            if index.is_err() && !daemons.is_empty() {
                out!(
                    "          this command reads the index from the database above; the \
                     daemons' own account of it: `codesearch repo list`"
                );
            }
        }
        Err(e) => out!("nats      DOWN  {}: {e}", redact_url(&config.nats.url)),
    }
    match &ollama {
        Ok(models) => out!(
            "ollama    {ollama_status}  {} ({} models; `{}` {})",
            redact_url(&config.embed.ollama_url),
            models.len(),
            config.embed.ollama_model,
            if ollama_status == "healthy" {
                "present".to_owned()
            } else {
                format!("missing: run `ollama pull {}`", config.embed.ollama_model)
            }
        ),
        Err(e) => {
            // Ollama down matters only to an index whose vectors are Ollama's.
            let in_use = match &index {
                Ok((_, Some(model), _)) => model.starts_with("ollama/"),
                _ => config.embed.backend == crate::config::EmbedBackend::Ollama,
            };
            let why_not = match &index {
                Ok((_, Some(model), _)) => format!("the index's vectors are {model}'s"),
                _ => format!("the embedder is `{}`", config.embed.backend.as_str()),
            };
            if in_use {
                out!("ollama    DOWN  {e}");
            } else {
                out!("ollama    not in use ({why_not}); not answering: {e}");
            }
        }
    }
    Ok(ok)
}

/// Per-daemon, per-endpoint request figures from `$SRV.STATS`.
pub async fn stats(config: &Config, as_json: bool) -> anyhow::Result<bool> {
    let client = connect_nats(config).await.map_err(|e| {
        anyhow::anyhow!("cannot reach NATS at {}: {e}", redact_url(&config.nats.url))
    })?;
    let replies = gather(&client, format!("$SRV.STATS.{SERVICE_NAME}")).await?;
    if as_json {
        out!("{}", serde_json::to_string_pretty(&replies)?);
        return Ok(!replies.is_empty());
    }
    if replies.is_empty() {
        out!(
            "no codesearch daemon answered $SRV.STATS on {}",
            redact_url(&config.nats.url)
        );
        return Ok(false);
    }
    out!(
        "{:<34} {:<18} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9}",
        "daemon",
        "endpoint",
        "requests",
        "errors",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "cache hit"
    );
    for r in &replies {
        let id = r["id"].as_str().unwrap_or("?");
        let mut endpoints: Vec<&serde_json::Value> =
            r["endpoints"].as_array().into_iter().flatten().collect();
        endpoints.sort_by_key(|e| e["name"].as_str().unwrap_or("?"));
        for e in endpoints {
            let name = e["name"].as_str().unwrap_or("?");
            if e["data"].is_null() {
                // Only the service API's own count (error replies count as answers there).
                out!(
                    "{:<34} {:<18} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9}",
                    id,
                    name,
                    e["num_requests"].as_u64().unwrap_or(0),
                    "-",
                    "-",
                    "-",
                    "-",
                    "-"
                );
                continue;
            }
            let f: EndpointFigures = serde_json::from_value(e["data"].clone()).unwrap_or_default();
            let hit_rate = if f.requests == 0 {
                0.0
            } else {
                100.0 * f.cache_hits as f64 / f.requests as f64
            };
            out!(
                "{:<34} {:<18} {:>9} {:>7} {:>9.2} {:>9.2} {:>9.2} {:>8.1}%",
                id,
                name,
                f.requests,
                f.errors,
                f.p50_ms,
                f.p95_ms,
                f.p99_ms,
                hit_rate
            );
            for (code, n) in &f.errors_by_code {
                out!("{:<34} {:<18} {:>9} {:>7}  {code}", "", "", "", n);
            }
        }
    }
    Ok(true)
}
