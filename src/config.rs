//! Layered configuration: the compiled-in `config/default.toml`, then an optional file, then the
//! environment, then command-line overrides. Every key has an environment variable (the table
//! [`ENV_VARS`]); `config/default.toml` documents each key with its default and its variable, and
//! a test keeps the two in step. Unknown keys are errors.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;

/// The documented defaults, compiled in.
pub const DEFAULT_TOML: &str = include_str!("../config/default.toml");

/// The workspace of everything that names none, unless `workspaces.default` says otherwise.
pub const DEFAULT_WORKSPACE: &str = "default";

/// Environment variable -> dotted configuration key.
pub const ENV_VARS: &[(&str, &str)] = &[
    ("DATABASE_URL", "database.url"),
    (
        "CODESEARCH_DATABASE_PASSWORD_FILE",
        "database.password_file",
    ),
    (
        "CODESEARCH_DATABASE_MAX_CONNECTIONS",
        "database.max_connections",
    ),
    (
        "CODESEARCH_DATABASE_CONNECT_TIMEOUT_SECS",
        "database.connect_timeout_secs",
    ),
    (
        "CODESEARCH_INDEX_BUILD_MEMORY_MB",
        "database.index_build_memory_mb",
    ),
    (
        "CODESEARCH_VECTOR_CACHE_CHUNKS",
        "database.vector_cache_chunks",
    ),
    ("NATS_URL", "nats.url"),
    ("CODESEARCH_NATS_SUBJECT_PREFIX", "nats.subject_prefix"),
    ("CODESEARCH_NATS_TOKEN", "nats.token"),
    ("CODESEARCH_NATS_USER", "nats.user"),
    ("CODESEARCH_NATS_PASSWORD", "nats.password"),
    ("CODESEARCH_NATS_NKEY_FILE", "nats.nkey_file"),
    ("CODESEARCH_NATS_CREDENTIALS_FILE", "nats.credentials_file"),
    ("CODESEARCH_NATS_TLS_REQUIRED", "nats.tls_required"),
    ("CODESEARCH_NATS_TLS_CA_FILE", "nats.tls_ca_file"),
    ("CODESEARCH_NATS_TLS_CERT_FILE", "nats.tls_cert_file"),
    ("CODESEARCH_NATS_TLS_KEY_FILE", "nats.tls_key_file"),
    ("CODESEARCH_NATS_QUEUE_GROUP", "nats.queue_group"),
    (
        "CODESEARCH_NATS_REQUEST_TIMEOUT_SECS",
        "nats.request_timeout_secs",
    ),
    ("CODESEARCH_NATS_MAX_IN_FLIGHT", "nats.max_in_flight"),
    ("CODESEARCH_NATS_MAX_QUEUED", "nats.max_queued"),
    (
        "CODESEARCH_NATS_ANSWER_DEADLINE_SECS",
        "nats.answer_deadline_secs",
    ),
    ("CODESEARCH_REPOSITORY", "index.repository"),
    ("CODESEARCH_INCLUDE_PATHS", "index.include_paths"),
    ("CODESEARCH_INCLUDE_EXTENSIONS", "index.include_extensions"),
    ("CODESEARCH_INCLUDE_FILE_NAMES", "index.include_file_names"),
    ("CODESEARCH_EXCLUDE_PATHS", "index.exclude_paths"),
    ("CODESEARCH_SECRET_FILES", "index.secret_files"),
    ("CODESEARCH_REDACT_SECRETS", "index.redact_secrets"),
    ("CODESEARCH_RESPECT_GITIGNORE", "index.respect_gitignore"),
    ("CODESEARCH_MAX_FILE_BYTES", "index.max_file_bytes"),
    ("CODESEARCH_MAX_LINE_CHARS", "index.max_line_chars"),
    ("CODESEARCH_SKIP_GENERATED", "index.skip_generated"),
    ("CODESEARCH_MAX_CHUNK_CHARS", "index.max_chunk_chars"),
    (
        "CODESEARCH_CHUNK_OVERLAP_CHARS",
        "index.chunk_overlap_chars",
    ),
    ("CODESEARCH_MIN_CHUNK_CHARS", "index.min_chunk_chars"),
    ("CODESEARCH_PARSE_TIMEOUT_MS", "index.parse_timeout_ms"),
    ("CODESEARCH_HISTORY_COMMITS", "index.history_commits"),
    (
        "CODESEARCH_MODULE_FROM_FIRST_DIR",
        "index.module_from_first_dir",
    ),
    ("CODESEARCH_MODULE_RULES", "index.module_rules"),
    ("CODESEARCH_COMPONENT_RULES", "index.component_rules"),
    ("CODESEARCH_EMBEDDER", "embed.backend"),
    ("OLLAMA_URL", "embed.ollama_url"),
    ("CODESEARCH_OLLAMA_MODEL", "embed.ollama_model"),
    (
        "CODESEARCH_OLLAMA_TIMEOUT_SECS",
        "embed.ollama_timeout_secs",
    ),
    ("CODESEARCH_OLLAMA_BATCH_SIZE", "embed.ollama_batch_size"),
    ("CODESEARCH_MODEL_DIR", "embed.model_dir"),
    ("CODESEARCH_LOCAL_MAX_TOKENS", "embed.local_max_tokens"),
    ("CODESEARCH_LOCAL_BATCH_SIZE", "embed.local_batch_size"),
    ("CODESEARCH_LOCAL_ENGINE", "embed.local_engine"),
    ("CODESEARCH_LOCAL_THREADS", "embed.local_threads"),
    ("CODESEARCH_LOCAL_QUERY_INT8", "embed.local_query_int8"),
    ("CODESEARCH_LOCAL_QUERY_MAP", "embed.local_query_map"),
    ("CODESEARCH_ONNXRUNTIME", "embed.onnxruntime"),
    ("CODESEARCH_EMBED_CONCURRENCY", "embed.concurrency"),
    (
        "CODESEARCH_OLLAMA_MAX_INPUT_CHARS",
        "embed.ollama_max_input_chars",
    ),
    ("CODESEARCH_WATCH", "watch.enabled"),
    ("CODESEARCH_WATCH_DEBOUNCE_MS", "watch.debounce_ms"),
    ("CODESEARCH_WATCH_MAX_DELAY_MS", "watch.max_delay_ms"),
    (
        "CODESEARCH_RECONCILE_INTERVAL_SECS",
        "watch.reconcile_interval_secs",
    ),
    ("CODESEARCH_LEASE_CHECK_SECS", "watch.lease_check_secs"),
    (
        "CODESEARCH_BACKFILL_INTERVAL_SECS",
        "watch.backfill_interval_secs",
    ),
    ("CODESEARCH_WORKSPACE", "workspaces.default"),
    ("CODESEARCH_PLAIN_SUBJECTS", "workspaces.plain_subjects"),
    ("CODESEARCH_ALLOWED_ROOTS", "workspaces.allowed_roots"),
    ("CODESEARCH_CLONE_DIR", "workspaces.clone_dir"),
    ("CODESEARCH_SEARCH_DEFAULT_LIMIT", "search.default_limit"),
    (
        "CODESEARCH_QUERY_EMBEDDING_TIMEOUT_MS",
        "search.query_embedding_timeout_ms",
    ),
    ("CODESEARCH_HNSW_EF_SEARCH", "search.hnsw_ef_search"),
    ("CODESEARCH_SEARCH_MAX_LIMIT", "search.max_limit"),
    (
        "CODESEARCH_SEARCH_MAX_QUERY_CHARS",
        "search.max_query_chars",
    ),
    ("CODESEARCH_SEARCH_MODE", "search.mode"),
    ("CODESEARCH_CONTEXT_BUDGET_TOKENS", "context.budget_tokens"),
    (
        "CODESEARCH_CONTEXT_MAX_BUDGET_TOKENS",
        "context.max_budget_tokens",
    ),
    ("CODESEARCH_CONTEXT_CANDIDATES", "context.candidates"),
    (
        "CODESEARCH_CONTEXT_HISTORY_WEIGHT",
        "context.history_weight",
    ),
    ("CODESEARCH_MCP_HTTP", "mcp.http"),
    ("CODESEARCH_MCP_ALLOWED_HOSTS", "mcp.allowed_hosts"),
    ("CODESEARCH_HEALTH_INTERVAL_SECS", "health.interval_secs"),
    ("CODESEARCH_HTTP_ADDR", "health.http_addr"),
    ("CODESEARCH_SEARCH_FUSION", "search.fusion"),
    ("CODESEARCH_SEARCH_RRF_K", "search.rrf_k"),
    ("CODESEARCH_SEARCH_VECTOR_WEIGHT", "search.vector_weight"),
    ("CODESEARCH_SEARCH_LEXICAL_WEIGHT", "search.lexical_weight"),
    ("CODESEARCH_SEARCH_FILE_WEIGHT", "search.file_weight"),
    (
        "CODESEARCH_SEARCH_DEFINITION_WEIGHT",
        "search.definition_weight",
    ),
    (
        "CODESEARCH_SEARCH_FILE_VECTOR_TEMPERATURE",
        "search.file_vector_temperature",
    ),
    ("CODESEARCH_SEARCH_HISTORY_WEIGHT", "search.history_weight"),
    ("CODESEARCH_SEARCH_TEST_WEIGHT", "search.test_weight"),
    (
        "CODESEARCH_SEARCH_CHANGELOG_WEIGHT",
        "search.changelog_weight",
    ),
    (
        "CODESEARCH_SEARCH_PROJECT_FILE_WEIGHT",
        "search.project_file_weight",
    ),
    ("CODESEARCH_SEARCH_DOCS_WEIGHT", "search.docs_weight"),
    (
        "CODESEARCH_SEARCH_TRANSLATION_WEIGHT",
        "search.translation_weight",
    ),
    (
        "CODESEARCH_SEARCH_MAX_CHUNKS_PER_FILE",
        "search.max_chunks_per_file",
    ),
    (
        "CODESEARCH_SEARCH_RESULT_CACHE_ENTRIES",
        "search.result_cache_entries",
    ),
    (
        "CODESEARCH_SEARCH_QUERY_CACHE_ENTRIES",
        "search.query_cache_entries",
    ),
];

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path} is not valid TOML: {source}")]
    Parse {
        path: PathBuf,
        source: toml::de::Error,
    },
    #[error("invalid configuration: {0}")]
    Invalid(String),
    #[error("environment variable {var} (key `{key}`): {message}")]
    Env {
        var: String,
        key: String,
        message: String,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub database: DatabaseConfig,
    pub nats: NatsConfig,
    pub index: IndexConfig,
    pub embed: EmbedConfig,
    pub search: SearchConfig,
    pub context: ContextConfig,
    pub mcp: McpConfig,
    pub health: HealthConfig,
    pub watch: WatchConfig,
    pub workspaces: WorkspacesConfig,
    /// Repositories to index, besides the roots given on the command line.
    #[serde(default)]
    pub repositories: Vec<RepositoryConfig>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspacesConfig {
    pub default: String,
    pub plain_subjects: PlainSubjects,
    pub allowed_roots: Vec<PathBuf>,
    pub clone_dir: PathBuf,
}

/// Which workspaces the plain subjects (`<prefix>.codebase.search`, ...) serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlainSubjects {
    /// Any workspace a request names (the default one when it names none).
    All,
    /// Only the default workspace; a request naming another is refused.
    Default,
    /// Not served: only the per-workspace subjects answer.
    Off,
}

/// One `[[repositories]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepositoryConfig {
    /// Default: the directory's name.
    #[serde(default)]
    pub name: Option<String>,
    pub path: PathBuf,
    /// Default: `workspaces.default`.
    #[serde(default)]
    pub workspace: Option<String>,
    /// Replaces `index.include_paths` for this repository.
    #[serde(default)]
    pub include_paths: Option<Vec<String>>,
    /// Added to `index.exclude_paths`.
    #[serde(default)]
    pub exclude_paths: Vec<String>,
    /// Tried before `index.module_rules`.
    #[serde(default)]
    pub module_rules: Vec<ModuleRule>,
    /// Tried before `index.component_rules`.
    #[serde(default)]
    pub component_rules: Vec<ComponentRule>,
}

impl RepositoryConfig {
    /// The index rules of this repository: the global ones with its own applied.
    pub fn rules(&self, global: &IndexConfig) -> IndexConfig {
        let mut cfg = global.clone();
        if let Some(include) = &self.include_paths {
            cfg.include_paths = include.clone();
        }
        cfg.exclude_paths.extend(self.exclude_paths.iter().cloned());
        cfg.module_rules = self
            .module_rules
            .iter()
            .chain(&global.module_rules)
            .cloned()
            .collect();
        cfg.component_rules = self
            .component_rules
            .iter()
            .chain(&global.component_rules)
            .cloned()
            .collect();
        cfg
    }
}

/// Checks a workspace name: it is part of NATS subjects, so letters, digits, `_` and `-`
/// only, at most 64 characters.
pub fn check_workspace_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 {
        return Err(format!(
            "workspace name {name:?} must have 1 to 64 characters"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "workspace name {name:?} may hold only letters, digits, `_` and `-` (it is part of NATS subjects)"
        ));
    }
    Ok(())
}

/// Checks a repository name: 1 to 128 characters, no control characters, no `/` or `\`, not
/// `.` or `..` (a requested repository's name names its clone's directory).
pub fn check_repository_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() || name.chars().count() > 128 {
        return Err(format!(
            "repository name {name:?} must have 1 to 128 characters"
        ));
    }
    // `.` and `..` would name a clone directory's own or parent directory.
    if name == "." || name == ".." {
        return Err(format!("repository name {name:?} is not allowed"));
    }
    if name
        .chars()
        .any(|c| c.is_control() || c == '/' || c == '\\')
        || name != name.trim()
    {
        return Err(format!(
            "repository name {name:?} may not hold control characters, `/`, or surrounding spaces"
        ));
    }
    Ok(())
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchConfig {
    pub enabled: bool,
    pub debounce_ms: u64,
    pub max_delay_ms: u64,
    pub reconcile_interval_secs: u64,
    pub backfill_interval_secs: u64,
    pub lease_check_secs: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HealthConfig {
    pub interval_secs: u64,
    pub http_addr: String,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseConfig {
    pub url: String,
    pub password_file: String,
    pub max_connections: u32,
    pub connect_timeout_secs: u64,
    pub index_build_memory_mb: u32,
    pub vector_cache_chunks: u64,
}

impl std::fmt::Debug for DatabaseConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseConfig")
            .field("url", &redact_url(&self.url))
            .field("password_file", &self.password_file)
            .field("max_connections", &self.max_connections)
            .field("connect_timeout_secs", &self.connect_timeout_secs)
            .field("index_build_memory_mb", &self.index_build_memory_mb)
            .field("vector_cache_chunks", &self.vector_cache_chunks)
            .finish()
    }
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NatsConfig {
    pub url: String,
    pub subject_prefix: String,
    pub token: String,
    pub user: String,
    pub password: String,
    pub nkey_file: String,
    pub credentials_file: String,
    pub tls_required: bool,
    pub tls_ca_file: String,
    pub tls_cert_file: String,
    pub tls_key_file: String,
    pub queue_group: String,
    pub request_timeout_secs: u64,
    pub max_in_flight: usize,
    pub max_queued: usize,
    pub answer_deadline_secs: u64,
}

impl std::fmt::Debug for NatsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsConfig")
            .field("url", &redact_url(&self.url))
            .field("subject_prefix", &self.subject_prefix)
            .field("token", &secret(&self.token))
            .field("user", &self.user)
            .field("password", &secret(&self.password))
            .field("nkey_file", &self.nkey_file)
            .field("credentials_file", &self.credentials_file)
            .field("tls_required", &self.tls_required)
            .field("tls_ca_file", &self.tls_ca_file)
            .field("tls_cert_file", &self.tls_cert_file)
            .field("tls_key_file", &self.tls_key_file)
            .field("queue_group", &self.queue_group)
            .field("request_timeout_secs", &self.request_timeout_secs)
            .field("max_in_flight", &self.max_in_flight)
            .field("max_queued", &self.max_queued)
            .field("answer_deadline_secs", &self.answer_deadline_secs)
            .finish()
    }
}

impl NatsConfig {
    /// The search subject, e.g. `agog.codebase.search`.
    pub fn search_subject(&self) -> String {
        self.subject("search")
    }

    /// A plain subject, e.g. `agog.codebase.repo.request` for `repo.request`.
    pub fn subject(&self, name: &str) -> String {
        format!("{}.codebase.{name}", self.subject_prefix)
    }

    /// A workspace's own subject, e.g. `agog.workspace.billing.codebase.search`; `*` as the
    /// workspace gives the wildcard the daemon listens on.
    pub fn workspace_subject(&self, workspace: &str, name: &str) -> String {
        format!(
            "{}.workspace.{workspace}.codebase.{name}",
            self.subject_prefix
        )
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexConfig {
    pub repository: String,
    pub include_paths: Vec<String>,
    pub include_extensions: Vec<String>,
    pub include_file_names: Vec<String>,
    pub exclude_paths: Vec<String>,
    pub secret_files: Vec<String>,
    pub redact_secrets: bool,
    pub respect_gitignore: bool,
    pub max_file_bytes: u64,
    pub max_line_chars: usize,
    pub skip_generated: bool,
    pub max_chunk_chars: usize,
    pub chunk_overlap_chars: usize,
    pub min_chunk_chars: usize,
    pub parse_timeout_ms: u64,
    pub history_commits: usize,
    pub module_from_first_dir: bool,
    pub module_rules: Vec<ModuleRule>,
    pub component_rules: Vec<ComponentRule>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleRule {
    pub prefix: String,
    pub module: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentRule {
    pub pattern: String,
    pub component: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedBackend {
    Auto,
    Ollama,
    Local,
    /// Deterministic hashed bag-of-words vectors: for tests and benchmarks of everything but the
    /// model. Not a product default.
    Hash,
}

impl EmbedBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            EmbedBackend::Auto => "auto",
            EmbedBackend::Ollama => "ollama",
            EmbedBackend::Local => "local",
            EmbedBackend::Hash => "hash",
        }
    }
}

/// What runs the in-process model. Both give the same vectors (the same model id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LocalEngine {
    /// ONNX Runtime when its library is where `embed.onnxruntime` says, else candle.
    Auto,
    Onnx,
    Candle,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbedConfig {
    pub backend: EmbedBackend,
    pub ollama_url: String,
    pub ollama_model: String,
    pub ollama_timeout_secs: u64,
    pub ollama_batch_size: usize,
    pub model_dir: PathBuf,
    pub local_max_tokens: usize,
    pub local_batch_size: usize,
    pub local_engine: LocalEngine,
    /// Threads ONNX Runtime computes one batch with; 0 = every core.
    pub local_threads: usize,
    /// Queries through a copy of the model with 8-bit weights (ONNX Runtime only).
    pub local_query_int8: bool,
    /// Queries' vectors through the learned map of `embed::query_map`.
    pub local_query_map: bool,
    /// ONNX Runtime's shared library (`libonnxruntime.so.*`).
    pub onnxruntime: PathBuf,
    pub concurrency: usize,
    pub ollama_max_input_chars: usize,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    pub query_embedding_timeout_ms: u64,
    pub default_limit: usize,
    pub max_limit: usize,
    pub max_query_chars: usize,
    pub mode: SearchMode,
    pub fusion: Fusion,
    pub rrf_k: f64,
    pub vector_weight: f64,
    pub lexical_weight: f64,
    pub file_weight: f64,
    pub definition_weight: f64,
    pub file_vector_temperature: f64,
    pub history_weight: f64,
    pub test_weight: f64,
    pub changelog_weight: f64,
    pub project_file_weight: f64,
    pub docs_weight: f64,
    pub translation_weight: f64,
    pub max_chunks_per_file: usize,
    pub hnsw_ef_search: u32,
    pub result_cache_entries: usize,
    pub query_cache_entries: usize,
}

/// The context pre-fetch (`codesearch context`, `<prefix>.codebase.context`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextConfig {
    /// Token budget of a block when the request names none.
    pub budget_tokens: usize,
    /// Largest budget a request may ask for.
    pub max_budget_tokens: usize,
    /// Search results considered for a block, best first.
    pub candidates: usize,
    /// What a file's change history adds to its search score for a block, in place of
    /// `search.history_weight`.
    pub history_weight: f64,
}

/// MCP over streamable HTTP (`/mcp` on the daemon's HTTP port).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Serve `/mcp`.
    pub http: bool,
    /// Host names a request's `Host` header may carry; `*` allows any.
    pub allowed_hosts: Vec<String>,
}

/// How hybrid search combines its lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fusion {
    /// Reciprocal rank fusion: ranks only.
    Rrf,
    /// A weighted sum of each list's scores, scaled to [0, 1] within the candidates.
    Convex,
}

/// How a search ranks: by meaning, by words, or both fused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    Hybrid,
    Vector,
    Lexical,
}

impl SearchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Hybrid => "hybrid",
            SearchMode::Vector => "vector",
            SearchMode::Lexical => "lexical",
        }
    }
}

impl Config {
    /// The compiled-in defaults alone.
    pub fn defaults() -> Result<Self, ConfigError> {
        Self::load(None, |_| None, &[])
    }

    /// Builds the configuration from all layers. `env` looks a variable up (so tests need not
    /// touch the process environment); `overrides` are `(dotted key, value)` pairs from flags.
    pub fn load(
        file: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
        overrides: &[(&str, toml::Value)],
    ) -> Result<Self, ConfigError> {
        let mut root: toml::Table = DEFAULT_TOML.parse().map_err(|e| ConfigError::Parse {
            path: PathBuf::from("config/default.toml (compiled in)"),
            source: e,
        })?;
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.to_owned(),
                source,
            })?;
            let layer: toml::Table = text.parse().map_err(|source| ConfigError::Parse {
                path: path.to_owned(),
                source,
            })?;
            merge(&mut root, layer);
        }
        for (var, key) in ENV_VARS {
            let Some(raw) = env(var) else { continue };
            let current = lookup(&root, key);
            let value = env_value(&raw, current).map_err(|message| ConfigError::Env {
                var: (*var).to_owned(),
                key: (*key).to_owned(),
                message,
            })?;
            set(&mut root, key, value);
        }
        for (key, value) in overrides {
            set(&mut root, key, value.clone());
        }
        // The merged layers have no line numbers left: the error names the key instead
        // (`search.default_limit: invalid type: ...`).
        let config: Config =
            serde_path_to_error::deserialize(toml::Value::Table(root)).map_err(|e| {
                let path = e.path().to_string();
                let message = e.into_inner().message().to_owned();
                // A value a flag or an environment variable set says which one set it.
                let from = if overrides.iter().any(|(key, _)| *key == path) {
                    " (set by a command-line flag)".to_owned()
                } else {
                    ENV_VARS
                        .iter()
                        .find(|(var, key)| *key == path && env(var).is_some())
                        .map(|(var, _)| format!(" (set by the environment variable {var})"))
                        .unwrap_or_default()
                };
                ConfigError::Invalid(if path == "." {
                    message
                } else {
                    format!("{path}{from}: {message}")
                })
            })?;
        config.validate()?;
        Ok(config)
    }

    /// Loads from the process environment.
    pub fn from_env(
        file: Option<&Path>,
        overrides: &[(&str, toml::Value)],
    ) -> Result<Self, ConfigError> {
        Self::load(file, |var| std::env::var(var).ok(), overrides)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let ix = &self.index;
        let bad = |m: &str| Err(ConfigError::Invalid(m.to_owned()));
        if ix.max_chunk_chars < 100 {
            return bad("index.max_chunk_chars must be at least 100");
        }
        let n = &self.nats;
        let ways = [
            !n.token.is_empty(),
            !n.user.is_empty() || !n.password.is_empty(),
            !n.nkey_file.is_empty(),
            !n.credentials_file.is_empty(),
        ];
        if ways.iter().filter(|w| **w).count() > 1 {
            return bad(
                "nats: set one of token, user + password, nkey_file and credentials_file, not several",
            );
        }
        if n.user.is_empty() != n.password.is_empty() {
            return bad("nats.user and nats.password go together: set both or neither");
        }
        if n.tls_cert_file.is_empty() != n.tls_key_file.is_empty() {
            return bad(
                "nats.tls_cert_file and nats.tls_key_file go together: set both or neither",
            );
        }
        if ix.chunk_overlap_chars * 2 >= ix.max_chunk_chars {
            return bad(
                "index.chunk_overlap_chars must be less than half of index.max_chunk_chars",
            );
        }
        if ix.min_chunk_chars > ix.max_chunk_chars {
            return bad("index.min_chunk_chars must not exceed index.max_chunk_chars");
        }
        let t = self.search.file_vector_temperature;
        if !(t == 0.0 || (0.005..=1.0).contains(&t)) {
            return bad("search.file_vector_temperature must be 0 or between 0.005 and 1");
        }
        if self.search.hnsw_ef_search > 1000 {
            return bad("search.hnsw_ef_search must be between 0 (automatic) and 1000");
        }
        for (name, w) in [
            ("search.history_weight", self.search.history_weight),
            ("context.history_weight", self.context.history_weight),
        ] {
            if !(w.is_finite() && w >= 0.0) {
                return bad(&format!("{name} must be 0 or more"));
            }
        }
        if self.search.default_limit == 0 || self.search.default_limit > self.search.max_limit {
            return bad("search.default_limit must be between 1 and search.max_limit");
        }
        let cx = &self.context;
        if cx.max_budget_tokens < 100 || !(100..=cx.max_budget_tokens).contains(&cx.budget_tokens) {
            return bad(
                "context.budget_tokens must be between 100 and context.max_budget_tokens (at least 100)",
            );
        }
        if cx.candidates == 0 || cx.candidates > self.search.max_limit {
            return bad("context.candidates must be between 1 and search.max_limit");
        }
        if self.embed.ollama_batch_size == 0 || self.embed.local_batch_size == 0 {
            return bad("embed batch sizes must be at least 1");
        }
        if !(16..=512).contains(&self.embed.local_max_tokens) {
            return bad("embed.local_max_tokens must be between 16 and 512");
        }
        if self.embed.concurrency == 0 {
            return bad("embed.concurrency must be at least 1");
        }
        if self.embed.ollama_max_input_chars < 256 {
            return bad("embed.ollama_max_input_chars must be at least 256");
        }
        if self.watch.debounce_ms > self.watch.max_delay_ms {
            return bad("watch.debounce_ms must not exceed watch.max_delay_ms");
        }
        if self.nats.answer_deadline_secs == 0 {
            return bad("nats.answer_deadline_secs must be at least 1");
        }
        if self.nats.max_in_flight == 0 {
            return bad("nats.max_in_flight must be at least 1");
        }
        if self.database.max_connections == 0 {
            return bad("database.max_connections must be at least 1");
        }
        if self.database.index_build_memory_mb < 64 {
            return bad("database.index_build_memory_mb must be at least 64");
        }
        check_workspace_name(&self.workspaces.default)
            .map_err(|m| ConfigError::Invalid(format!("workspaces.default: {m}")))?;
        if !self.index.repository.is_empty() {
            check_repository_name(&self.index.repository)
                .map_err(|m| ConfigError::Invalid(format!("index.repository: {m}")))?;
        }
        for (i, r) in self.repositories.iter().enumerate() {
            let at = |m: String| ConfigError::Invalid(format!("repositories[{i}]: {m}"));
            if let Some(name) = &r.name {
                check_repository_name(name).map_err(at)?;
            }
            if let Some(ws) = &r.workspace {
                check_workspace_name(ws).map_err(at)?;
            }
        }
        Ok(())
    }
}

/// Which database a URL names, without who connects or how: `127.0.0.1:54329/codesearch` of
/// `postgres://user:secret@127.0.0.1:54329/codesearch?sslmode=require`, a `host=` parameter
/// kept (`/idx?host=/run/postgresql`). Daemons publish it in their service info, so that
/// `codesearch status` and a starting daemon tell a daemon of another index on the same bus.
pub fn database_identity(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
    let socket = query
        .split('&')
        .find(|pair| pair.to_ascii_lowercase().starts_with("host="));
    match socket {
        Some(pair) => format!("{host}{path}?{pair}"),
        None => format!("{host}{path}"),
    }
}

/// Hides the password in a URL for logs: `postgres://user:secret@host` -> `postgres://user:***@host`.
pub fn redact_url(url: &str) -> String {
    url.split(',')
        .map(|one| redact_one_url(one.trim()))
        .collect::<Vec<_>>()
        .join(",")
}

/// One URL with its secret replaced by `***`: the password of `user:password@`, the token of a
/// NATS `token@` (a user alone is a user name elsewhere), and a `password=` query parameter.
fn redact_one_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None if is_nats_scheme(scheme) => format!("***@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => {
                        format!("{key}=***")
                    }
                    _ => pair.to_owned(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

fn is_nats_scheme(scheme: &str) -> bool {
    matches!(
        scheme.to_ascii_lowercase().as_str(),
        "nats" | "tls" | "ws" | "wss"
    )
}

/// A secret for `Debug`: whether it is set, never what it is.
fn secret(value: &str) -> &'static str {
    if value.is_empty() { "" } else { "***" }
}

fn merge(base: &mut toml::Table, layer: toml::Table) {
    for (k, v) in layer {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(l)) => merge(b, l),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

fn lookup<'a>(root: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let (section, leaf) = key.split_once('.')?;
    root.get(section)?.as_table()?.get(leaf)
}

fn set(root: &mut toml::Table, key: &str, value: toml::Value) {
    let (section, leaf) = key.split_once('.').unwrap_or(("", key));
    let table = root
        .entry(section)
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let toml::Value::Table(t) = table {
        t.insert(leaf.to_owned(), value);
    }
}

/// Interprets an environment string as a value of the same kind as the key's default.
fn env_value(raw: &str, current: Option<&toml::Value>) -> Result<toml::Value, String> {
    use toml::Value;
    let raw = raw.trim();
    match current {
        Some(Value::Integer(_)) => raw
            .parse::<i64>()
            .map(Value::Integer)
            .map_err(|_| format!("expected an integer, got {raw:?}")),
        Some(Value::Float(_)) => raw
            .trim()
            .parse::<f64>()
            .map(Value::Float)
            .map_err(|e| e.to_string()),
        Some(Value::Boolean(_)) => match raw.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(Value::Boolean(true)),
            "0" | "false" | "no" | "off" => Ok(Value::Boolean(false)),
            _ => Err(format!("expected true or false, got {raw:?}")),
        },
        Some(Value::Array(_)) if raw.starts_with('[') => {
            let doc: toml::Table = format!("v = {raw}")
                .parse()
                .map_err(|e: toml::de::Error| format!("not a TOML array: {}", e.message()))?;
            doc.get("v")
                .cloned()
                .ok_or_else(|| "not a TOML array".to_owned())
        }
        Some(Value::Array(_)) => Ok(Value::Array(
            raw.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Value::String(s.to_owned()))
                .collect(),
        )),
        _ => Ok(Value::String(raw.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn defaults_parse_and_validate() {
        let c = Config::defaults().expect("default.toml is valid");
        assert_eq!(c.index.max_chunk_chars, 1500);
        assert_eq!(c.index.chunk_overlap_chars, 100);
        assert_eq!(c.embed.ollama_model, "nomic-embed-text");
        assert_eq!(c.nats.search_subject(), "agog.codebase.search");
        for dir in ["node_modules", "dist", ".git", "coverage"] {
            assert!(c.index.exclude_paths.iter().any(|p| p == dir), "{dir}");
        }
    }

    #[test]
    fn every_key_has_a_documented_env_var() {
        let root: toml::Table = DEFAULT_TOML.parse().expect("valid toml");
        let mut keys = Vec::new();
        for (section, table) in &root {
            for leaf in table.as_table().expect("sections are tables").keys() {
                keys.push(format!("{section}.{leaf}"));
            }
        }
        for key in &keys {
            let var = ENV_VARS
                .iter()
                .find(|(_, k)| k == key)
                .map(|(v, _)| *v)
                .unwrap_or_else(|| panic!("{key} has no environment variable"));
            assert!(
                DEFAULT_TOML.contains(&format!("# env: {var}\n")),
                "default.toml does not document {var} for {key}"
            );
        }
        assert_eq!(
            keys.len(),
            ENV_VARS.len(),
            "ENV_VARS names keys that do not exist"
        );
    }

    #[test]
    fn layers_apply_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("c.toml");
        std::fs::write(
            &file,
            "[nats]\nurl = \"nats://file:1\"\n[index]\nmax_chunk_chars = 900\n",
        )
        .expect("write");
        let env: HashMap<&str, &str> = [
            ("NATS_URL", "nats://env:2"),
            ("CODESEARCH_EXCLUDE_PATHS", "a, b"),
            ("CODESEARCH_RESPECT_GITIGNORE", "off"),
            ("CODESEARCH_EMBEDDER", "local"),
            (
                "CODESEARCH_MODULE_RULES",
                r#"[{ prefix = "api/", module = "backend" }]"#,
            ),
        ]
        .into();
        let c = Config::load(
            Some(&file),
            |v| env.get(v).map(|s| s.to_string()),
            &[("index.max_file_bytes", toml::Value::Integer(7))],
        )
        .expect("loads");
        assert_eq!(c.nats.url, "nats://env:2");
        assert_eq!(c.index.max_chunk_chars, 900);
        assert_eq!(c.index.exclude_paths, vec!["a", "b"]);
        assert!(!c.index.respect_gitignore);
        assert_eq!(c.embed.backend, EmbedBackend::Local);
        assert_eq!(c.index.module_rules[0].module, "backend");
        assert_eq!(c.index.max_file_bytes, 7);
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("c.toml");
        std::fs::write(&file, "[index]\nmax_chunk_char = 900\n").expect("write");
        let err = Config::load(Some(&file), |_| None, &[]).expect_err("typo rejected");
        assert!(err.to_string().contains("max_chunk_char"), "{err}");
        // A value of the wrong type names its key: the merged layers have no line numbers.
        std::fs::write(&file, "[search]\ndefault_limit = \"five\"\n").expect("write");
        let err = Config::load(Some(&file), |_| None, &[]).expect_err("a string for a number");
        assert!(
            err.to_string()
                .contains("search.default_limit: invalid type"),
            "{err}"
        );
        std::fs::write(&file, "[[repositories]]\nname = \"x\"\n").expect("write");
        let err = Config::load(Some(&file), |_| None, &[]).expect_err("no path");
        assert!(err.to_string().contains("repositories[0]"), "{err}");
        let err = Config::load(
            None,
            |v| (v == "CODESEARCH_EMBEDDER").then(|| "ollma".to_owned()),
            &[],
        )
        .expect_err("no such backend");
        assert!(
            err.to_string()
                .contains("embed.backend (set by the environment variable CODESEARCH_EMBEDDER)"),
            "{err}"
        );

        let err = Config::load(
            None,
            |v| (v == "CODESEARCH_MAX_FILE_BYTES").then(|| "lots".to_owned()),
            &[],
        )
        .expect_err("non-integer rejected");
        assert!(
            err.to_string().contains("CODESEARCH_MAX_FILE_BYTES"),
            "{err}"
        );
        for (var, key) in [
            ("CODESEARCH_SEARCH_HISTORY_WEIGHT", "search.history_weight"),
            (
                "CODESEARCH_CONTEXT_HISTORY_WEIGHT",
                "context.history_weight",
            ),
        ] {
            let err = Config::load(None, |v| (v == var).then(|| "-0.2".to_owned()), &[])
                .expect_err("a negative prior rejected");
            assert!(err.to_string().contains(key), "{err}");
        }
    }

    #[test]
    fn repository_names_cannot_leave_the_clone_directory() {
        for bad in ["..", ".", "a/b", "a\\b", "", " x", "a\0"] {
            assert!(check_repository_name(bad).is_err(), "{bad:?}");
        }
        for ok in ["app", "billing-app", "my.repo", "..app"] {
            assert!(check_repository_name(ok).is_ok(), "{ok:?}");
        }
    }

    #[test]
    fn urls_are_redacted() {
        assert_eq!(
            redact_url("postgres://u:secret@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(redact_url("nats://h:4222"), "nats://h:4222");
        // A NATS token is all of the user information.
        assert_eq!(redact_url("nats://s3cr3t@h:4222"), "nats://***@h:4222");
        assert_eq!(
            redact_url("nats://a:pw1@h1:4222, tls://b:pw2@h2:4222"),
            "nats://a:***@h1:4222,tls://b:***@h2:4222"
        );
        // A PostgreSQL user alone is a name, not a secret; a password parameter is.
        assert_eq!(
            redact_url("postgres://app@db/x?sslmode=verify-full&password=pw"),
            "postgres://app@db/x?sslmode=verify-full&password=***"
        );
        assert_eq!(
            redact_url("postgres://u:p%40ss@db:5432"),
            "postgres://u:***@db:5432"
        );
    }

    #[test]
    fn a_database_is_named_without_who_connects() {
        assert_eq!(
            database_identity("postgres://u:secret@127.0.0.1:54329/codesearch?sslmode=require"),
            "127.0.0.1:54329/codesearch"
        );
        assert_eq!(
            database_identity("postgres://app@db/x?password=pw&host=/run/postgresql"),
            "db/x?host=/run/postgresql"
        );
        assert_eq!(database_identity("postgres://h:5432"), "h:5432");
    }

    #[test]
    fn nats_authentication_is_one_way_and_pairs_go_together() {
        let load = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            Config::load(
                None,
                |var| pairs.iter().find(|(k, _)| k == var).map(|(_, v)| v.clone()),
                &[],
            )
        };
        assert!(load(&[("CODESEARCH_NATS_TOKEN", "t")]).is_ok());
        let err = load(&[
            ("CODESEARCH_NATS_TOKEN", "t"),
            ("CODESEARCH_NATS_NKEY_FILE", "/k"),
        ])
        .expect_err("two ways");
        assert!(err.to_string().contains("not several"), "{err}");
        let err = load(&[("CODESEARCH_NATS_USER", "u")]).expect_err("user alone");
        assert!(err.to_string().contains("go together"), "{err}");
        let err = load(&[("CODESEARCH_NATS_TLS_CERT_FILE", "/c")]).expect_err("cert alone");
        assert!(err.to_string().contains("tls_key_file"), "{err}");
        // Debug output names that a secret is set, never the secret.
        let cfg = load(&[
            ("CODESEARCH_NATS_USER", "u"),
            ("CODESEARCH_NATS_PASSWORD", "hunter22"),
        ])
        .expect("user and password");
        assert!(!format!("{cfg:?}").contains("hunter22"));
    }
}
