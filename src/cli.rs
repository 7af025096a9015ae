//! Command-line interface. Doc comments here are the `--help` text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// A live code index for AI agents: tree-sitter chunks, embeddings in PostgreSQL + pgvector,
/// searches over NATS.
///
/// Configuration comes from config/default.toml (compiled in), then --config FILE, then the
/// environment (DATABASE_URL, NATS_URL, OLLAMA_URL, CODESEARCH_EMBEDDER, CODESEARCH_MODEL_DIR,
/// ... see docs/CONFIGURATION.md), then these flags. Logs go to stderr (RUST_LOG filters them).
#[derive(Debug, Parser)]
#[command(name = "codesearch", version, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Configuration file (TOML, same keys as config/default.toml).
    #[arg(long, global = true, env = "CODESEARCH_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// PostgreSQL URL (overrides DATABASE_URL).
    #[arg(long, global = true, value_name = "URL")]
    pub database_url: Option<String>,
    /// NATS URL (overrides NATS_URL).
    #[arg(long, global = true, value_name = "URL")]
    pub nats_url: Option<String>,
    /// Embedding backend: auto, ollama or local (overrides CODESEARCH_EMBEDDER).
    #[arg(long, global = true, value_name = "BACKEND")]
    pub embedder: Option<String>,
    /// Directory of the local model files (overrides CODESEARCH_MODEL_DIR).
    #[arg(long, global = true, value_name = "DIR")]
    pub model_dir: Option<PathBuf>,
    /// Log filter when RUST_LOG is not set: error, warn, info, debug or trace.
    #[arg(long, global = true, default_value = "info", value_name = "LEVEL")]
    pub log_level: String,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Index directories once and exit (only changed files are re-indexed).
    ///
    /// With no PATH and no [[repositories]] in the configuration, indexes the working
    /// directory. Each root is a repository named after its directory; two roots with the same
    /// directory name need names of their own: NAME=PATH, or [[repositories]] in the
    /// configuration.
    Index {
        /// Directories to index, each as PATH or NAME=PATH (`one-app=~/one/app`).
        paths: Vec<PathBuf>,
        /// Name of the repository, when one PATH is given (default: its directory's name).
        #[arg(long)]
        repository: Option<String>,
    },
    /// Index directories, then serve searches on NATS until stopped (Ctrl-C or SIGTERM).
    ///
    /// Also serves the repositories added by repository requests (`codesearch repo add`).
    Serve {
        /// Directories to index and serve, each as PATH or NAME=PATH (`one-app=~/one/app`).
        paths: Vec<PathBuf>,
        /// Name of the repository, when one PATH is given (default: its directory's name).
        #[arg(long)]
        repository: Option<String>,
    },
    /// Add, remove, list or show repositories of a running daemon (a NATS repository
    /// request).
    Repo {
        #[command(subcommand)]
        action: RepoAction,
    },
    /// Search as an agent host would: a NATS request to the running daemon.
    Search {
        /// What to look for, in words or code. May start with `-` (`-n` and the other options
        /// are still read as options).
        #[arg(allow_hyphen_values = true)]
        query: String,
        /// Number of results.
        #[arg(long, short = 'n')]
        limit: Option<i64>,
        /// Only files with this extension (repeatable), e.g. --file-type ts.
        #[arg(long = "file-type", short = 't', value_name = "EXT")]
        file_types: Vec<String>,
        /// Only this module (repeatable).
        #[arg(long = "module", short = 'm', value_name = "MODULE")]
        modules: Vec<String>,
        /// Only this component type (repeatable), e.g. --component-type service.
        #[arg(long = "component-type", short = 'c', value_name = "TYPE")]
        component_types: Vec<String>,
        /// Only this language (repeatable), e.g. --language rust.
        #[arg(long = "language", short = 'l', value_name = "LANG")]
        languages: Vec<String>,
        /// Only this repository.
        #[arg(long)]
        repository: Option<String>,
        /// Only paths matching this glob, e.g. --path 'src/**/*.ts'.
        #[arg(long = "path", short = 'p', value_name = "GLOB")]
        path_glob: Option<String>,
        /// Skip this many results (paging).
        #[arg(long)]
        offset: Option<i64>,
        /// hybrid (default), vector or lexical.
        #[arg(long)]
        mode: Option<String>,
        /// Drop results below this cosine similarity.
        #[arg(long)]
        min_similarity: Option<f64>,
        /// Search this workspace (default: the daemon's default workspace).
        #[arg(long, short = 'w', value_parser = workspace_name)]
        workspace: Option<String>,
        /// Print the raw JSON reply.
        #[arg(long)]
        json: bool,
    },
    /// Print the code a task needs, as a block for an agent's prompt: a NATS request to the
    /// running daemon (`<prefix>.codebase.context`). The task is TASK, or stdin without it.
    Context {
        /// The task: a ticket's title and body, in prose. Read from stdin when absent.
        #[arg(allow_hyphen_values = true)]
        task: Option<String>,
        /// Largest block, in tokens (as docs/WIRE.md counts them; default: the daemon's
        /// context.budget_tokens).
        #[arg(long)]
        budget_tokens: Option<i64>,
        /// markdown: the block alone; json: the block, the files and ranges in it, and its
        /// token count.
        #[arg(long, value_enum, default_value_t = ContextFormat::Markdown)]
        format: ContextFormat,
        /// Only this repository.
        #[arg(long)]
        repository: Option<String>,
        /// Workspace (default: the daemon's default workspace).
        #[arg(long, short = 'w', value_parser = workspace_name)]
        workspace: Option<String>,
    },
    /// Code intelligence from the running daemon: definitions, callers, callees, call graphs,
    /// impact, imports.
    Code {
        #[command(subcommand)]
        query: CodeQuery,
        #[command(flatten)]
        common: CodeArgs,
    },
    /// The MCP adapter.
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// Show the index (files, chunks, pending vectors, per repository) and whether the
    /// database, NATS, the daemons and Ollama answer. Exits 1 when the database or NATS is down.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show every running daemon's request figures: requests, errors by code, p50/p95/p99
    /// latency and cache hit rate (from the NATS service API's $SRV.STATS).
    Stats {
        /// Print the raw $SRV.STATS replies.
        #[arg(long)]
        json: bool,
    },
    /// Apply database migrations and exit.
    Migrate,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ContextFormat {
    Markdown,
    Json,
}

#[derive(Debug, Args)]
pub struct CodeArgs {
    /// Only this repository.
    #[arg(long, global = true)]
    pub repository: Option<String>,
    /// Workspace (default: the daemon's default workspace).
    #[arg(long, short = 'w', global = true, value_parser = workspace_name)]
    pub workspace: Option<String>,
    /// Print the daemon's JSON reply as it is.
    #[arg(long, global = true)]
    pub json: bool,
}

/// Which definition a question is about.
#[derive(Debug, Args)]
pub struct SymbolArgs {
    /// `push`, `Stack::push`, `Stack.push`, `auth.routes.login`; an operator (`-`, `<=>`) too.
    #[arg(allow_hyphen_values = true)]
    pub symbol: String,
    /// The file that defines it, when several do.
    #[arg(long)]
    pub path: Option<String>,
    /// A line inside the definition, when one file has several.
    #[arg(long)]
    pub line: Option<i32>,
}

#[derive(Debug, Subcommand)]
pub enum CodeQuery {
    /// Definitions of a name, then its call sites.
    Symbols {
        #[arg(allow_hyphen_values = true)]
        query: String,
        /// Names starting with QUERY (any case) instead of exactly QUERY.
        #[arg(long)]
        prefix: bool,
        /// Only these kinds: function, method, class, struct, trait, interface, type, const,
        /// variable, ...
        #[arg(long = "kind")]
        kinds: Vec<String>,
        #[arg(long)]
        language: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// The call sites that call a definition, each with how it was resolved.
    Callers {
        #[command(flatten)]
        target: SymbolArgs,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// The calls a definition makes, each with what it resolves to.
    Callees {
        #[command(flatten)]
        target: SymbolArgs,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// The call graph around a definition.
    Graph {
        #[command(flatten)]
        target: SymbolArgs,
        /// callers, callees or both.
        #[arg(long, default_value = "both")]
        direction: String,
        #[arg(long, default_value_t = 2)]
        depth: u32,
        #[arg(long, default_value_t = 50)]
        max_nodes: usize,
        /// Leave out edges less sure than this (0..1).
        #[arg(long, default_value_t = 0.35)]
        min_confidence: f32,
    },
    /// What calls a definition, transitively, by file; tests listed last.
    Impact {
        #[command(flatten)]
        target: SymbolArgs,
        #[arg(long, default_value_t = 3)]
        depth: u32,
        #[arg(long, default_value_t = 0.35)]
        min_confidence: f32,
    },
    /// The files a file imports and the files that import it.
    Related {
        #[arg(allow_hyphen_values = true)]
        path: String,
        /// imports, importedBy or both.
        #[arg(long, default_value = "both")]
        direction: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// Serve MCP over stdio (newline-delimited JSON-RPC; stdout is protocol only, logs go to
    /// stderr). A thin client of the running daemon over NATS: it loads no model and opens no
    /// database. Handshake clients, the stateless revision and spawn-per-call clients (one bare
    /// tools/call, then end of input) all work.
    Serve {
        /// Serve this workspace only: every call reads it, and a call naming another is
        /// refused (default: each call's own `workspace`, else the daemon's default).
        #[arg(long, short = 'w', value_parser = workspace_name)]
        workspace: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum RepoAction {
    /// Add a directory (absolute; under the daemon's workspaces.allowed_roots) or a git URL
    /// (cloned by the daemon). Returns at once; `codesearch repo status NAME` shows progress.
    Add {
        /// A directory or a git URL (https://, ssh://, git@host:path, file://).
        source: String,
        /// Repository name (default: the directory's or the URL's last segment).
        #[arg(long)]
        name: Option<String>,
        #[command(flatten)]
        common: RepoArgs,
    },
    /// Remove a repository: its rows, its watcher and its clone. With no daemon answering, the
    /// rows are deleted from the database directly (refused while the repository is indexed).
    Remove {
        name: String,
        #[command(flatten)]
        common: RepoArgs,
    },
    /// List the workspace's repositories with their state and figures.
    List {
        #[command(flatten)]
        common: RepoArgs,
    },
    /// One repository's state and figures.
    Status {
        name: String,
        #[command(flatten)]
        common: RepoArgs,
    },
}

#[derive(Debug, Args)]
pub struct RepoArgs {
    /// Workspace (default: the daemon's default workspace).
    #[arg(long, short = 'w', value_parser = workspace_name)]
    pub workspace: Option<String>,
    /// Print the raw JSON reply.
    #[arg(long)]
    pub json: bool,
}

/// `s` with its control characters other than newline and tab written out (`\x1b`, `\u{9b}`)
/// instead of sent. A file name or a file's text from an indexed repository must not drive the
/// terminal that shows it (colours, cursor moves, a window title, a line hidden behind a
/// carriage return): `src/esc\x1b[31mred.py` is a valid file name.
pub fn terminal_safe(s: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !s.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if !unsafe_char(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A file's path on one line: a newline (or carriage return) in a file name, written out, would
/// otherwise start a line of its own in text answers.
pub fn one_line(path: &str) -> std::borrow::Cow<'_, str> {
    if path.contains(['\n', '\r']) {
        path.replace('\n', "\\n").replace('\r', "\\r").into()
    } else {
        path.into()
    }
}

/// `println!` for command output, through [`print_line`]; a failed write is returned as the
/// function's error (`?`). `main` ends quietly, with success, when that error is a broken pipe
/// (`codesearch search ... | head`), where `println!` would panic.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::print_line(&format!($($arg)*))?
    };
}

/// Writes `line` and a newline to stdout, its control characters written out
/// ([`terminal_safe`]) when stdout is a terminal; a program reading a pipe gets the text as it
/// is (and `--json` for anything it parses).
pub fn print_line(line: &str) -> std::io::Result<()> {
    use std::io::{IsTerminal, Write};
    let mut stdout = std::io::stdout().lock();
    if stdout.is_terminal() {
        writeln!(stdout, "{}", terminal_safe(line))
    } else {
        writeln!(stdout, "{line}")
    }
}

/// `--workspace`: refused at once when it cannot be a workspace's name, instead of as a
/// malformed NATS subject.
fn workspace_name(name: &str) -> Result<String, String> {
    crate::config::check_workspace_name(name)?;
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::{Cli, CodeQuery, Command, one_line, terminal_safe};
    use clap::Parser;

    #[test]
    fn a_workspace_that_cannot_be_one_is_refused_by_name() {
        for args in [
            &["codesearch", "search", "retry", "--workspace", "bad ws!"][..],
            &["codesearch", "context", "a task", "-w", "a.b"],
            &["codesearch", "repo", "list", "--workspace", ""],
            &["codesearch", "mcp", "serve", "--workspace", "x>"],
        ] {
            let err = Cli::try_parse_from(args).expect_err("refused").to_string();
            assert!(err.contains("workspace name"), "{args:?}: {err}");
        }
        assert!(Cli::try_parse_from(["codesearch", "search", "q", "-w", "team-a_2"]).is_ok());
    }

    #[test]
    fn a_query_or_symbol_may_start_with_a_hyphen() {
        let parse = |args: &[&str]| Cli::try_parse_from(args).expect("parses").command;
        match parse(&["codesearch", "search", "-v flag", "-n", "3"]) {
            Command::Search { query, limit, .. } => {
                assert_eq!((query.as_str(), limit), ("-v flag", Some(3)));
            }
            other => panic!("{other:?}"),
        }
        match parse(&["codesearch", "search", "-n", "3", "--", "--json"]) {
            Command::Search { query, json, .. } => {
                assert_eq!((query.as_str(), json), ("--json", false))
            }
            other => panic!("{other:?}"),
        }
        match parse(&["codesearch", "context", "--verbose output is lost"]) {
            Command::Context { task, .. } => {
                assert_eq!(task.as_deref(), Some("--verbose output is lost"));
            }
            other => panic!("{other:?}"),
        }
        for args in [
            &["codesearch", "code", "callers", "-", "--path", "src/ops.rs"][..],
            &["codesearch", "code", "callers", "--path", "src/ops.rs", "-"][..],
        ] {
            match parse(args) {
                Command::Code {
                    query: CodeQuery::Callers { target, .. },
                    ..
                } => assert_eq!(
                    (target.symbol.as_str(), target.path.as_deref()),
                    ("-", Some("src/ops.rs"))
                ),
                other => panic!("{other:?}"),
            }
        }
        match parse(&["codesearch", "code", "symbols", "-init", "--prefix"]) {
            Command::Code {
                query: CodeQuery::Symbols { query, prefix, .. },
                ..
            } => assert_eq!((query.as_str(), prefix), ("-init", true)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_file_name_with_a_newline_stays_on_its_line() {
        assert_eq!(one_line("src/new\nline.py"), "src/new\\nline.py");
        assert_eq!(one_line("src/cr\r.py"), "src/cr\\r.py");
        assert_eq!(one_line("src/plain.py"), "src/plain.py");
    }

    #[test]
    fn control_characters_from_a_repository_are_shown_not_obeyed() {
        assert_eq!(
            terminal_safe("src/main.rs:1-9\tfn main() {"),
            "src/main.rs:1-9\tfn main() {"
        );
        assert_eq!(
            terminal_safe("src/esc\u{1b}[31mred.py"),
            "src/esc\\x1b[31mred.py"
        );
        assert_eq!(terminal_safe("a\rb\u{7}c\u{7f}"), "a\\x0db\\x07c\\x7f");
        // C1 controls: U+009B is a one-character CSI to some terminals.
        assert_eq!(terminal_safe("x\u{9b}2Jy"), "x\\u{9b}2Jy");
        assert_eq!(terminal_safe("两行\n第二行"), "两行\n第二行");
    }
}
