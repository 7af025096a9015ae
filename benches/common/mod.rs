//! What the benchmarks share: the local cargo registry as a corpus of real code, and
//! percentiles. Each bench uses part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Every crate source directory of the local cargo registry (`$CARGO_HOME/registry/src/*/*`),
/// sorted by path: a crate's versions are then together, the newest (usually) last.
pub fn registry_dirs() -> Vec<PathBuf> {
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cargo")
        });
    let Ok(indexes) = std::fs::read_dir(home.join("registry/src")) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = indexes
        .flatten()
        .filter_map(|index| std::fs::read_dir(index.path()).ok())
        .flat_map(|entries| entries.flatten().map(|e| e.path()))
        .collect();
    dirs.sort();
    dirs
}

fn dir_name(p: &std::path::Path) -> &str {
    p.file_name().and_then(|n| n.to_str()).unwrap_or_default()
}

/// The newest version of the crate whose directory name starts with `prefix`.
pub fn registry_crate(prefix: &str) -> Option<PathBuf> {
    registry_dirs()
        .into_iter()
        .rev()
        .find(|p| dir_name(p).starts_with(prefix))
}

/// The newest version of every crate in the registry, in name order.
pub fn registry_crates() -> Vec<PathBuf> {
    let mut newest: BTreeMap<String, PathBuf> = BTreeMap::new();
    for dir in registry_dirs() {
        let name = dir_name(&dir);
        // `name-1.2.3`: the crate name is everything before the last dash followed by a digit.
        let crate_name = name
            .char_indices()
            .filter(|&(i, c)| c == '-' && name[i + 1..].starts_with(|c: char| c.is_ascii_digit()))
            .map(|(i, _)| &name[..i])
            .next_back()
            .unwrap_or(name)
            .to_owned();
        newest.insert(crate_name, dir);
    }
    newest.into_values().collect()
}

/// The `p` quantile (0 to 1) of sorted figures, NaN when there are none.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

const VERBS: [&str; 20] = [
    "parse",
    "read",
    "write",
    "spawn",
    "retry",
    "validate",
    "serialize",
    "compile",
    "handle",
    "acquire",
    "build",
    "encode",
    "decode",
    "connect to",
    "close",
    "hash",
    "sort",
    "format",
    "lock",
    "allocate",
];
const OBJECTS: [&str; 20] = [
    "a connection url",
    "the http response body",
    "a tls certificate",
    "a json value",
    "a regular expression",
    "a websocket message",
    "a semaphore permit",
    "the command line arguments",
    "a task on the runtime",
    "a utf-8 string",
    "a timeout duration",
    "a file path",
    "the error message",
    "a thread pool",
    "a channel sender",
    "a byte buffer",
    "an environment variable",
    "a hash map entry",
    "a socket address",
    "a unicode identifier",
];

/// 400 distinct search phrases about the cargo registry's code ("verb object").
pub fn search_queries() -> Vec<String> {
    VERBS
        .iter()
        .flat_map(|v| OBJECTS.iter().map(move |o| format!("{v} {o}")))
        .collect()
}

/// One search request over NATS (`agog.codebase.search`) and its JSON reply; `None` when it
/// times out, fails or the reply is not JSON.
pub async fn nats_search(
    client: &async_nats::Client,
    request: &serde_json::Value,
    timeout: std::time::Duration,
) -> Option<serde_json::Value> {
    let reply = tokio::time::timeout(
        timeout,
        client.request("agog.codebase.search", request.to_string().into()),
    )
    .await
    .ok()?
    .ok()?;
    serde_json::from_slice(&reply.payload).ok()
}
