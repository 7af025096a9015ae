//! Questions about code: symbols, callers and callees, call graphs, impact, related files.
//!
//! Calls are resolved to definitions here, when asked, by one resolver used in both
//! directions: the callers of `T` are the call sites whose resolution includes `T`, so
//! callers and callees always agree. A call resolves, in order, through
//! 1. its qualifier naming the definition's owner (`Stack::new`, `self.push` in `Stack`):
//!    `same_file` or `qualified` (`import` for the one of several the file imports);
//! 2. the file's imports: a name imported from a file that defines it, or a module imported
//!    under the qualifier (`utils.parse`): `import`. A name imported from outside the
//!    repository (a package) resolves to nothing here: the call is `external`;
//! 3. a definition in the same file: `same_file`;
//! 4. a definition in the same directory (a Go package, a Python package), the same Swift
//!    package target, or the same Java or Kotlin package in another source set:
//!    `same_module`;
//! 5. otherwise every definition of the name in the workspace, in the same language family:
//!    `name_only`, with a confidence divided among them.
//!
//! A bare call (`foo()`) never resolves to a method, and a call on a receiver (`x.foo()`)
//! only to methods, or to Kotlin's extension functions, which are reached both ways. Java's
//! and Kotlin's `private` definitions are reached from their own file only. Confidence is a plain number in 0..1 per resolution kind, divided by the
//! number of definitions the call could be; answers carry it so a caller can filter.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::{Arc, LazyLock};

use regex::Regex;
use thiserror::Error;

use crate::search::{SearchError, SearchService};
use crate::source::SourceError;
use crate::store::{
    DefinitionLookup, DefinitionRow, ImportRow, MemberRow, NameMatch, Narrowing, ReferenceRow,
    Scope, Store, StoreError,
};

use super::arity;
use super::cargo::{Crates, MAX_MANIFESTS};
use super::elements::{
    ELEMENT, ELEMENT_ACCESS, ELEMENT_ADAPTERS, after_chain, after_element, element_holder,
};
use super::extract::{
    IMPLICIT_RECEIVER, RUST_PRIMITIVES, UNNAMED_RECEIVER, split_outside_brackets,
};
use super::imports::{PACKAGE, SWIFT_MODULE};
use super::inherit::bases_in;
use super::tsconfig::{Aliases, BARE, nearest_config};
use super::workspaces::Packages;
use super::{Fit, fit, go_import_key, path_keys};

/// Most definitions one name may have before a lookup gives up resolving it by name.
const MAX_DEFINITIONS_PER_NAME: i64 = 500;
/// Calls from other repositories that only a name shared by many definitions could tie to a
/// symbol (confidence below this: more than 10 definitions for a bare call) are not read for
/// its callers; the answer says so (`Calls::name_only_unread`).
pub const FAR_NAME_ONLY_FLOOR: f32 = 0.05;
/// Most call sites read for one question's names.
const MAX_REFERENCES: i64 = 20_000;
/// Graph limits: depth and nodes, default and most.
pub const DEFAULT_DEPTH: u32 = 2;
pub const MAX_DEPTH: u32 = 6;
pub const DEFAULT_MAX_NODES: usize = 50;
pub const MAX_NODES: usize = 500;

#[derive(Debug, Error)]
pub enum IntelError {
    /// The caller's: a bad request.
    #[error("{0}")]
    Invalid(String),
    /// A path that leads out of its repository.
    #[error("{0}")]
    Forbidden(String),
    /// No definition (or no file) by that name; the message lists near names when there are.
    #[error("{0}")]
    NotFound(String),
    /// Several definitions match: the caller must say which.
    #[error("`{symbol}` names {} definitions; ask again with a qualified name or a path", candidates.len())]
    Ambiguous {
        symbol: String,
        candidates: Vec<Symbol>,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<SearchError> for IntelError {
    fn from(e: SearchError) -> Self {
        match e {
            SearchError::Store(s) => IntelError::Store(s),
            other => IntelError::Invalid(other.to_string()),
        }
    }
}

/// How a call was resolved to a definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    Import,
    SameFile,
    Qualified,
    SameModule,
    NameOnly,
    /// Imported from outside the indexed code, or defined nowhere in it (callees only).
    External,
}

/// A definition, as answers show it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Symbol {
    /// `repository:path:startLine`: unique in a workspace while the file is unchanged.
    pub id: String,
    pub name: String,
    pub qualified: String,
    pub kind: String,
    pub repository: String,
    pub path: String,
    pub language: Option<String>,
    pub start_line: i32,
    pub end_line: i32,
    pub signature: String,
    /// The trait a Rust method's `impl Trait for Type` implements: `DirEntry::path` may be
    /// defined in `impl DirEntry` and in `impl Colorable for DirEntry`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implements: Option<String>,
}

impl Symbol {
    fn of(d: &DefinitionRow) -> Self {
        Symbol {
            id: format!("{}:{}:{}", d.repository, d.file_path, d.start_line),
            name: d.name.clone(),
            qualified: d.qualified.clone(),
            kind: d.kind.clone(),
            repository: d.repository.clone(),
            path: d.file_path.clone(),
            language: d.language.clone(),
            start_line: d.start_line,
            end_line: d.end_line,
            signature: d.signature.clone(),
            implements: d.implements.clone(),
        }
    }

    /// The top level of a file, as the "caller" of calls made outside any definition.
    fn top_level(r: &ReferenceRow) -> Self {
        Symbol {
            id: format!("{}:{}:0", r.repository, r.file_path),
            name: "<top level>".to_owned(),
            qualified: format!("{} (top level)", r.file_path),
            kind: "file".to_owned(),
            repository: r.repository.clone(),
            path: r.file_path.clone(),
            language: None,
            start_line: 0,
            end_line: 0,
            signature: String::new(),
            implements: None,
        }
    }
}

/// One call site and what it resolved to.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Call {
    /// The definition the call is in (for callers), or the one it calls (for callees; `None`
    /// when `external`).
    pub symbol: Option<Symbol>,
    pub repository: String,
    /// Where the call is.
    pub path: String,
    pub line: i32,
    /// The call as written: `stack.push`, `Stack::new`, `parse`.
    pub call: String,
    pub resolution: Resolution,
    pub confidence: f32,
}

/// What to look up: a name, qualified or not, optionally pinned to a file or a line.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// `push`, `Stack::push`, `Stack.push`, `auth.routes.login`.
    pub symbol: String,
    /// The file that defines it, to choose among several.
    pub path: Option<String>,
    /// A line inside the definition, to choose among several in one file.
    pub line: Option<i32>,
    pub repository: Option<String>,
    pub workspace: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct SymbolsRequest {
    pub query: String,
    /// `exact` (default: the name, or a qualified name's last part, exactly) or `prefix`.
    pub prefix: bool,
    pub kinds: Vec<String>,
    pub language: Option<String>,
    pub repository: Option<String>,
    pub workspace: Option<String>,
    pub limit: usize,
    pub offset: usize,
    /// Also list call sites of the name (after the definitions).
    pub references: bool,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Symbols {
    pub workspace: String,
    pub definitions: Vec<Symbol>,
    /// Call sites of the name as written (not resolved: see callers for that).
    pub references: Vec<Call>,
    /// More definitions may follow at `offset + limit`.
    pub has_more: bool,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Calls {
    pub workspace: String,
    pub symbol: Symbol,
    pub calls: Vec<Call>,
    /// Some call sites were not read (more than the limit).
    pub truncated: bool,
    /// Calls from other repositories that only the name could tie to the symbol were not
    /// read: the name has so many definitions in the workspace that such a call would reach
    /// this one with a confidence below [`FAR_NAME_ONLY_FLOOR`]. Calls naming its owner
    /// (`Stack::new`) and every call in its own repository were read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub name_only_unread: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Callers,
    Callees,
    Both,
}

#[derive(Debug, Clone)]
pub struct GraphRequest {
    pub target: Target,
    pub direction: Direction,
    pub depth: u32,
    pub max_nodes: usize,
    /// Edges below this confidence are left out (default 0.35: leaves out calls on receivers of unknown type that only the name links).
    pub min_confidence: f32,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Edge {
    /// Caller's node id.
    pub from: String,
    /// Callee's node id.
    pub to: String,
    pub path: String,
    pub line: i32,
    pub resolution: Resolution,
    pub confidence: f32,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Graph {
    pub workspace: String,
    pub root: String,
    /// Each with the depth at which it was reached.
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<Edge>,
    /// The node limit stopped the walk before its depth.
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphNode {
    #[serde(flatten)]
    pub symbol: Symbol,
    pub depth: u32,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Impact {
    pub workspace: String,
    pub symbol: Symbol,
    pub depth: u32,
    /// Files holding transitive callers, tests last.
    pub files: Vec<ImpactFile>,
    pub callers: usize,
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImpactFile {
    pub repository: String,
    pub path: String,
    /// A test file (component type "test" by `index.component_rules`), or callers that are
    /// all test functions.
    pub test: bool,
    pub symbols: Vec<GraphNode>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelatedDirection {
    Imports,
    ImportedBy,
    Both,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Related {
    pub workspace: String,
    pub repository: String,
    pub path: String,
    /// What the file imports: resolved to a file of the repository, or `path: null` for
    /// what comes from outside it.
    pub imports: Vec<RelatedFile>,
    pub imported_by: Vec<RelatedFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelatedFile {
    pub path: Option<String>,
    /// The import statement's line (in the importing file).
    pub line: i32,
    pub specifier: String,
    /// Names it binds.
    pub names: Vec<String>,
}

/// Answers code-intelligence questions. Cheap to clone.
#[derive(Clone)]
pub struct IntelService {
    search: SearchService,
    manifests: Manifests,
}

/// What each repository's manifests say, kept between questions, with the fingerprint of the
/// scope they were read under: read again when the workspace's index changes, since a `**`
/// pattern may walk many directories and a Rust workspace has a manifest per crate.
#[derive(Clone, Default)]
struct Manifests {
    /// Its JavaScript workspace packages ([`Resolver::packages`]).
    packages: ManifestCache<Packages>,
    /// Its Rust crates ([`Resolver::crates`]).
    crates: ManifestCache<Crates>,
}

type ManifestCache<T> = Arc<std::sync::Mutex<HashMap<String, (u64, Arc<T>)>>>;

impl IntelService {
    pub fn new(search: SearchService) -> Self {
        Self {
            search,
            manifests: Manifests::default(),
        }
    }

    fn store(&self) -> &Store {
        self.search.store()
    }

    async fn scope(
        &self,
        workspace: Option<&str>,
        repository: Option<&str>,
    ) -> Result<Scope, IntelError> {
        let workspace = workspace.unwrap_or_else(|| self.search.default_workspace());
        let scope = self.store().scope(workspace).await?;
        if let Some(r) = repository
            && !scope.contains(r)
        {
            return Err(IntelError::NotFound(format!(
                "no repository `{r}` in workspace `{workspace}`; it has: {}",
                scope.repositories().join(", ")
            )));
        }
        Ok(scope)
    }

    /// Definitions of a name (exact or prefix), then its call sites.
    pub async fn symbols(&self, req: SymbolsRequest) -> Result<Symbols, IntelError> {
        let scope = self
            .scope(req.workspace.as_deref(), req.repository.as_deref())
            .await?;
        let segments = segments(&req.query);
        let Some(name) = segments.last().cloned() else {
            return Err(IntelError::Invalid("`query` is empty".to_owned()));
        };
        let limit = req.limit.clamp(1, 200);
        // The names a search's `languages` filter takes (`ts`, `TypeScript`, `golang`, ...).
        let languages = req
            .language
            .as_deref()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| crate::search::with_language_aliases(vec![l.to_lowercase()]))
            .unwrap_or_default();
        let lookup = DefinitionLookup {
            scope: &scope,
            repository: req.repository.as_deref(),
            names: std::slice::from_ref(&name),
            matching: if req.prefix {
                NameMatch::Prefix
            } else {
                NameMatch::Exact
            },
            kinds: &req.kinds,
            languages: &languages,
            limit: if segments.len() > 1 {
                MAX_DEFINITIONS_PER_NAME
            } else {
                (req.offset + limit + 1) as i64
            },
            offset: if segments.len() > 1 {
                0
            } else {
                req.offset as i64
            },
            within: owner_segment(&segments),
        };
        let mut defs = self.store().find_definitions(&lookup).await?;
        if segments.len() > 1 {
            defs.retain(|d| qualifies(d, &segments));
            defs = defs.into_iter().skip(req.offset).collect();
        }
        let has_more = defs.len() > limit;
        defs.truncate(limit);
        let references = if req.references && !req.prefix {
            self.store()
                .references_named(
                    &scope,
                    req.repository.as_deref(),
                    // A macro's calls are recorded as written, `name!`.
                    &[name.clone(), format!("{name}!")],
                    limit as i64,
                )
                .await?
                .iter()
                .map(|r| call_site(r, None, Resolution::NameOnly, 0.0))
                .collect()
        } else {
            Vec::new()
        };
        Ok(Symbols {
            workspace: scope.workspace().to_owned(),
            definitions: defs.iter().map(Symbol::of).collect(),
            references,
            has_more,
        })
    }

    /// The definition a target names: exactly one, or an error with the candidates.
    async fn target(&self, t: &Target) -> Result<(Scope, DefinitionRow), IntelError> {
        let scope = self
            .scope(t.workspace.as_deref(), t.repository.as_deref())
            .await?;
        let segments = segments(&t.symbol);
        let Some(name) = segments.last().cloned() else {
            return Err(IntelError::Invalid("`symbol` is empty".to_owned()));
        };
        let mut defs = self
            .store()
            .find_definitions(&DefinitionLookup {
                within: owner_segment(&segments),
                ..DefinitionLookup::named(
                    &scope,
                    t.repository.as_deref(),
                    std::slice::from_ref(&name),
                    MAX_DEFINITIONS_PER_NAME,
                )
            })
            .await?;
        if segments.len() > 1 {
            defs.retain(|d| qualifies(d, &segments));
        }
        if let Some(path) = &t.path {
            let path = path.trim_start_matches("./");
            defs.retain(|d| d.file_path == path || d.file_path.ends_with(&format!("/{path}")));
        }
        if let Some(line) = t.line {
            defs.retain(|d| d.start_line <= line && line <= d.end_line);
            // The innermost definition around the line.
            if let Some(min) = defs.iter().map(|d| d.end_line - d.start_line).min() {
                defs.retain(|d| d.end_line - d.start_line == min);
            }
        }
        // A class's constructors are named like it: `Stack` is the class (whose callers are
        // the `new Stack()` sites), `Stack.Stack` a constructor.
        let classes: HashSet<(i64, String)> = defs
            .iter()
            .filter(|d| d.kind != "constructor")
            .map(|d| (d.file_id, d.name.clone()))
            .collect();
        defs.retain(|d| d.kind != "constructor" || !classes.contains(&(d.file_id, d.name.clone())));
        // Rust's `DirEntry::path` is the inherent method, not a trait impl's of that name
        // (asked for with its `path` and `line`).
        let mut shadowed = shadowed_by_inherent(defs.iter()).into_iter();
        defs.retain(|_| !shadowed.next().unwrap_or(false));
        // A declaration and its body (TypeScript overloads, a trait method's default) in one
        // file with one qualified name are one symbol: keep the largest.
        defs.sort_by_key(|d| {
            (
                d.repository.clone(),
                d.file_path.clone(),
                d.qualified.clone(),
                -(d.end_line - d.start_line),
            )
        });
        defs.dedup_by(|b, a| {
            a.repository == b.repository && a.file_path == b.file_path && a.qualified == b.qualified
        });
        match defs.len() {
            1 => Ok((scope, defs.remove(0))),
            0 => Err(IntelError::NotFound(
                self.not_found(&scope, t, &name).await?,
            )),
            _ => Err(IntelError::Ambiguous {
                symbol: t.symbol.clone(),
                candidates: defs.iter().take(50).map(Symbol::of).collect(),
            }),
        }
    }

    /// "No such symbol", with names that start the same way when there are some.
    async fn not_found(&self, scope: &Scope, t: &Target, name: &str) -> Result<String, StoreError> {
        let near = self
            .store()
            .find_definitions(&DefinitionLookup {
                matching: NameMatch::Prefix,
                ..DefinitionLookup::named(
                    scope,
                    t.repository.as_deref(),
                    &[name.chars().take(4).collect::<String>()],
                    200,
                )
            })
            .await?;
        let mut names: Vec<String> = near
            .into_iter()
            .filter(|d| d.name.to_lowercase().contains(&name.to_lowercase()) || name.len() <= 4)
            .map(|d| d.qualified)
            .collect();
        names.sort();
        names.dedup();
        names.truncate(8);
        let mut message = format!(
            "no definition `{}`{} in workspace `{}`",
            t.symbol,
            t.path
                .as_deref()
                .map(|p| format!(" in `{p}`"))
                .unwrap_or_default(),
            scope.workspace()
        );
        if !names.is_empty() {
            message.push_str(&format!("; similar: {}", names.join(", ")));
        }
        Ok(message)
    }

    /// The call sites that resolve to the target, with the definitions they are in.
    pub async fn callers(&self, t: Target, limit: usize) -> Result<Calls, IntelError> {
        let (scope, def) = self.target(&t).await?;
        let mut resolver = Resolver::new(self.store(), &scope, &self.manifests);
        let read = resolver
            .callers_of(std::slice::from_ref(&def), FAR_NAME_ONLY_FLOOR)
            .await?;
        let mut calls: Vec<Call> = read
            .edges
            .into_iter()
            .map(|(r, caller, _, resolution, confidence)| {
                let caller = match &caller {
                    Some(d) => Symbol::of(d),
                    None => Symbol::top_level(&r),
                };
                call_site(&r, Some(&caller), resolution, confidence)
            })
            .collect();
        sort_calls(&mut calls);
        let truncated = read.truncated || calls.len() > limit;
        calls.truncate(limit);
        Ok(Calls {
            workspace: scope.workspace().to_owned(),
            symbol: Symbol::of(&def),
            calls,
            truncated,
            name_only_unread: read.name_only_unread,
        })
    }

    /// The calls the target makes, each with the definition(s) it resolves to.
    pub async fn callees(&self, t: Target, limit: usize) -> Result<Calls, IntelError> {
        let (scope, def) = self.target(&t).await?;
        let mut resolver = Resolver::new(self.store(), &scope, &self.manifests);
        let edges = resolver.callees_of(std::slice::from_ref(&def)).await?;
        let mut calls: Vec<Call> = edges
            .into_iter()
            .map(|(r, _, callee, resolution, confidence)| {
                call_site(
                    &r,
                    callee.map(|d| Symbol::of(&d)).as_ref(),
                    resolution,
                    confidence,
                )
            })
            .collect();
        calls.sort_by(|a, b| (a.line, &a.call).cmp(&(b.line, &b.call)));
        let truncated = calls.len() > limit;
        calls.truncate(limit);
        Ok(Calls {
            workspace: scope.workspace().to_owned(),
            symbol: Symbol::of(&def),
            calls,
            truncated,
            name_only_unread: false,
        })
    }

    /// Nodes and edges around the target, breadth first, within the depth and node limits.
    pub async fn graph(&self, req: GraphRequest) -> Result<Graph, IntelError> {
        let (scope, root) = self.target(&req.target).await?;
        let depth = req.depth.clamp(1, MAX_DEPTH);
        let max_nodes = req.max_nodes.clamp(1, MAX_NODES);
        let mut resolver = Resolver::new(self.store(), &scope, &self.manifests);
        let mut walk = Walk::new(&root, max_nodes);
        let directions: &[Direction] = match req.direction {
            Direction::Both => &[Direction::Callers, Direction::Callees],
            d @ (Direction::Callers | Direction::Callees) => {
                if d == Direction::Callers {
                    &[Direction::Callers]
                } else {
                    &[Direction::Callees]
                }
            }
        };
        for &direction in directions {
            let mut frontier = vec![root.clone()];
            for level in 1..=depth {
                if frontier.is_empty() || walk.full {
                    break;
                }
                let edges = match direction {
                    // Edges under the minimum confidence are dropped: calls that could reach
                    // the frontier by a crowded name alone need not be read.
                    Direction::Callers => {
                        let floor = req.min_confidence.max(FAR_NAME_ONLY_FLOOR);
                        resolver.callers_of(&frontier, floor).await?.edges
                    }
                    _ => resolver.callees_of(&frontier).await?,
                };
                frontier = walk.add(direction, edges, level, req.min_confidence);
            }
        }
        Ok(Graph {
            workspace: scope.workspace().to_owned(),
            root: Symbol::of(&root).id,
            nodes: walk.nodes,
            edges: walk.edges,
            truncated: walk.full,
        })
    }

    /// Transitive callers up to `depth`, grouped by file, tests marked and listed last.
    pub async fn impact(
        &self,
        target: Target,
        depth: u32,
        min_confidence: f32,
    ) -> Result<Impact, IntelError> {
        let graph = self
            .graph(GraphRequest {
                target,
                direction: Direction::Callers,
                depth,
                max_nodes: MAX_NODES,
                min_confidence,
            })
            .await?;
        let mut by_file: HashMap<(String, String), Vec<GraphNode>> = HashMap::new();
        let mut root = None;
        for node in graph.nodes {
            if node.depth == 0 {
                root = Some(node.symbol);
                continue;
            }
            by_file
                .entry((node.symbol.repository.clone(), node.symbol.path.clone()))
                .or_default()
                .push(node);
        }
        let callers = by_file.values().map(Vec::len).sum();
        let keys: Vec<(String, String)> = by_file.keys().cloned().collect();
        let tests = self.store().test_files(&keys).await?;
        let mut files: Vec<ImpactFile> = by_file
            .into_iter()
            .map(|(key, mut symbols)| {
                symbols.sort_by_key(|n| (n.depth, n.symbol.start_line));
                let test = tests.contains(&key)
                    || symbols
                        .iter()
                        .all(|n| is_test_symbol(&n.symbol.qualified, &n.symbol.name));
                let (repository, path) = key;
                ImpactFile {
                    repository,
                    path,
                    test,
                    symbols,
                }
            })
            .collect();
        files.sort_by(|a, b| {
            let min_depth = |f: &ImpactFile| f.symbols.iter().map(|n| n.depth).min();
            (a.test, min_depth(a), &a.path).cmp(&(b.test, min_depth(b), &b.path))
        });
        let symbol = root.ok_or_else(|| IntelError::Invalid("graph lost its root".to_owned()))?;
        Ok(Impact {
            workspace: graph.workspace,
            symbol,
            depth: depth.clamp(1, MAX_DEPTH),
            files,
            callers,
            truncated: graph.truncated,
        })
    }

    /// The files a file imports (resolved where they are in the repository) and the files
    /// that import it.
    pub async fn related(
        &self,
        path: &str,
        repository: Option<&str>,
        workspace: Option<&str>,
        direction: RelatedDirection,
        limit: usize,
    ) -> Result<Related, IntelError> {
        let scope = self.scope(workspace, repository).await?;
        let path = crate::source::clean_path(path).map_err(|e| match e {
            SourceError::Forbidden(m) => IntelError::Forbidden(m),
            other => IntelError::Invalid(other.to_string()),
        })?;
        let mut found = self.store().file_ids(&scope, repository, &path).await?;
        let (repo, file_id) = match found.len() {
            0 => {
                return Err(IntelError::NotFound(format!(
                    "no indexed file `{path}` in workspace `{}`",
                    scope.workspace()
                )));
            }
            1 => found.remove(0),
            _ => {
                return Err(IntelError::Invalid(format!(
                    "`{path}` is in several repositories ({}); name one with `repository`",
                    found
                        .iter()
                        .map(|(r, _)| r.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        };
        let limit = limit.clamp(1, 1000);
        let mut resolver = Resolver::new(self.store(), &scope, &self.manifests);
        let mut imports = Vec::new();
        if direction != RelatedDirection::ImportedBy {
            let rows = self.store().imports_of(&[file_id], None).await?;
            let resolved = resolver.resolve_imports(&rows).await?;
            imports = group_related(rows.iter().zip(resolved).flat_map(|(row, targets)| {
                if targets.is_empty() {
                    vec![(None, row)]
                } else {
                    targets.into_iter().map(|t| (Some(t), row)).collect()
                }
            }));
            imports.truncate(limit);
        }
        let mut imported_by = Vec::new();
        if direction != RelatedDirection::Imports {
            let mut keys = path_keys(&path);
            if path.ends_with(".go")
                && let Some(module) = resolver.go_module(&repo).await?
            {
                let dir = path.rfind('/').map_or("", |i| &path[..i]);
                keys.push(go_import_key(&module, dir));
            }
            // A Swift file is imported with its module: its package target's, else (an Xcode
            // target's directory is named for it) any directory above it.
            if path.ends_with(".swift") {
                let modules: Vec<&str> = match swift_module(&path) {
                    Some(m) => vec![m],
                    None => parent_dir(&path)
                        .split('/')
                        .filter(|d| !d.is_empty())
                        .collect(),
                };
                keys.extend(modules.iter().map(|m| format!("{SWIFT_MODULE}{m}")));
            }
            // The bare specifiers that name it: as a workspace package's file, and through
            // the aliases in force wherever a file imports one.
            if family(&path) == "ecma" {
                let mut specs: BTreeSet<String> = resolver
                    .packages(&repo)
                    .await?
                    .specifiers(&path)
                    .into_iter()
                    .collect();
                for dir in self.store().bare_importer_dirs(&scope, &repo).await?.iter() {
                    if let Some(a) = resolver.aliases(&repo, dir).await? {
                        specs.extend(a.specifiers(&path));
                    }
                }
                keys.extend(specs.into_iter().map(|s| format!("{BARE}{s}")));
            }
            let rows = self.store().importers(&repo, &keys, MAX_REFERENCES).await?;
            let resolved = resolver.resolve_imports(&rows).await?;
            imported_by = group_related(
                rows.iter()
                    .zip(resolved)
                    .filter(|(_, targets)| targets.contains(&path))
                    .map(|(row, _)| (Some(row.file_path.clone()), row)),
            );
            imported_by.truncate(limit);
        }
        Ok(Related {
            workspace: scope.workspace().to_owned(),
            repository: repo,
            path,
            imports,
            imported_by,
        })
    }
}

/// The name an import brings in as its module defines it (`commonReadByte` of `import
/// okio.internal.commonReadByte as read`): the specifier's last part.
fn imported_name(row: &ImportRow) -> &str {
    row.specifier.rsplit('.').next().unwrap_or(&row.specifier)
}

/// The key of [`Resolver::resolve_imports`]' answers for a name in a Kotlin package's directory.
fn package_key(dir: &str, name: &str) -> String {
    format!("{PACKAGE}{dir}\0{name}")
}

/// One related file per (path, statement line), with the names bound.
fn group_related<'r>(
    items: impl Iterator<Item = (Option<String>, &'r ImportRow)>,
) -> Vec<RelatedFile> {
    let mut out: Vec<RelatedFile> = Vec::new();
    for (path, row) in items {
        match out
            .iter_mut()
            .find(|f| f.path == path && f.line == row.line && f.specifier == row.specifier)
        {
            Some(f) => {
                if !row.name.is_empty() && !f.names.contains(&row.name) {
                    f.names.push(row.name.clone());
                }
            }
            None => out.push(RelatedFile {
                path,
                line: row.line,
                specifier: row.specifier.clone(),
                names: if row.name.is_empty() {
                    Vec::new()
                } else {
                    vec![row.name.clone()]
                },
            }),
        }
    }
    out
}

fn call_site(
    r: &ReferenceRow,
    symbol: Option<&Symbol>,
    resolution: Resolution,
    confidence: f32,
) -> Call {
    Call {
        symbol: symbol.cloned(),
        repository: r.repository.clone(),
        path: r.file_path.clone(),
        line: r.line,
        call: match &r.qualifier {
            Some(q) => format!("{q}.{}", r.name),
            None => r.name.clone(),
        },
        resolution,
        confidence: (confidence * 1000.0).round() / 1000.0,
    }
}

/// Callers best first: most confident, then by place.
fn sort_calls(calls: &mut [Call]) {
    calls.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then_with(|| (&a.repository, &a.path, a.line).cmp(&(&b.repository, &b.path, b.line)))
    });
}

/// The graph being built: nodes by id, edges, and the limit.
struct Walk {
    nodes: Vec<GraphNode>,
    ids: HashSet<String>,
    edges: Vec<Edge>,
    edge_keys: HashSet<(String, String, i32)>,
    max_nodes: usize,
    full: bool,
}

/// A resolved call: the call site, the definition it is in, the one it calls, how, how sure.
/// A caller of `None` is the file's top level; a callee of `None` is outside the index.
type Resolved = (
    ReferenceRow,
    Option<DefinitionRow>,
    Option<DefinitionRow>,
    Resolution,
    f32,
);

impl Walk {
    fn new(root: &DefinitionRow, max_nodes: usize) -> Self {
        let symbol = Symbol::of(root);
        Walk {
            ids: HashSet::from([symbol.id.clone()]),
            nodes: vec![GraphNode { symbol, depth: 0 }],
            edges: Vec::new(),
            edge_keys: HashSet::new(),
            max_nodes,
            full: false,
        }
    }

    /// Adds one level's edges; returns the definitions first reached (the next frontier).
    fn add(
        &mut self,
        direction: Direction,
        edges: Vec<Resolved>,
        level: u32,
        min_confidence: f32,
    ) -> Vec<DefinitionRow> {
        let mut next = Vec::new();
        for (r, caller_row, callee_row, resolution, confidence) in edges {
            if confidence < min_confidence {
                continue;
            }
            let Some(callee_row) = callee_row else {
                continue;
            };
            let callee = Symbol::of(&callee_row);
            let caller = match &caller_row {
                Some(d) => Symbol::of(d),
                None => Symbol::top_level(&r),
            };
            // The top level of a file is a node, not a definition to walk from.
            let (new, row) = match direction {
                Direction::Callers => (&caller, caller_row),
                _ => (&callee, Some(callee_row)),
            };
            if !self.ids.contains(&new.id) {
                if self.nodes.len() >= self.max_nodes {
                    self.full = true;
                    continue;
                }
                self.ids.insert(new.id.clone());
                self.nodes.push(GraphNode {
                    symbol: new.clone(),
                    depth: level,
                });
                next.extend(row);
            }
            if self
                .edge_keys
                .insert((caller.id.clone(), callee.id.clone(), r.line))
            {
                self.edges.push(Edge {
                    from: caller.id.clone(),
                    to: callee.id.clone(),
                    path: r.file_path.clone(),
                    line: r.line,
                    resolution,
                    confidence: (confidence * 1000.0).round() / 1000.0,
                });
            }
        }
        next
    }
}

/// Resolves calls, with what it has read cached for the question's lifetime.
struct Resolver<'s> {
    store: &'s Store,
    scope: &'s Scope,
    /// The service's manifests, kept between questions.
    manifests: &'s Manifests,
    /// The Rust crates of the repositories of the calls read so far ([`Resolver::load_imports`]).
    crates: HashMap<String, Arc<Crates>>,
    /// Definitions by name in the scope.
    by_name: HashMap<String, Vec<DefinitionRow>>,
    /// Each file's imports read so far, resolved: (row, target paths).
    imports: HashMap<i64, Vec<(ImportRow, Vec<String>)>>,
    /// The names whose imports are in `imports`, by file: a call needs only those binding
    /// its name, its qualifier's first part, and wildcards ([`import_names`]).
    imports_read: HashMap<i64, HashSet<String>>,
    /// A repository's root directory (from its row), once read.
    roots: HashMap<String, Option<PathBuf>>,
    /// A repository's Go module path (from its root's go.mod), when it has one.
    go_modules: HashMap<String, Option<String>>,
    /// The `tsconfig.json` aliases in force in a directory, by (repository, directory).
    aliases: HashMap<(String, String), Option<Arc<Aliases>>>,
    /// Each config's aliases, by (repository, config file): [`Resolver::aliases`] reads a
    /// config once however many directories it serves.
    configs: HashMap<(String, String), Option<Arc<Aliases>>>,
    /// JavaScript and TypeScript modules' re-exports, by (repository, path): the files their
    /// `export … from` statements name (a barrel's `export * from './common'`).
    reexports: HashMap<(String, String), Vec<String>>,
    /// What each class read so far derives from, by name ([`Resolver::load_bases`]): the
    /// bases of all its definitions.
    bases: HashMap<String, Vec<String>>,
    /// The same by (name, file) for each definition: a Kotlin `expect class` and its `actual`
    /// ones, in several files, derive from different classes.
    file_bases: HashMap<(String, i64), Vec<String>>,
    /// Rust types' members read so far ([`Resolver::load_members`]), by type name: fields,
    /// traits implemented, deref targets, aliased types.
    members: HashMap<String, Vec<MemberRow>>,
    /// The class each receiver chain returns, by (file, enclosing definition, chain)
    /// ([`Resolver::chain_class`]): the calls of one chain share its links, and a query
    /// builder's `.where().andWhere().orderBy()` would resolve its first links again for each.
    chains: ChainClasses,
}

/// (file, enclosing definition, receiver chain) -> the class it returns, if known.
type ChainClasses = std::sync::Mutex<HashMap<(i64, Option<i32>, String), Option<String>>>;

/// How confident the resolution of a call in a receiver chain must be, over all the
/// definitions it reaches, for the class they return to type the next call: the graph's default
/// threshold.
const CHAIN_FLOOR: f32 = 0.35;

/// Calls that return what they are called on, as far as the next call's receiver goes:
/// `Router::new().clone().route()`, `File::open(p).unwrap().read()`.
const PASS_THROUGH: &[&str] = &[
    "unwrap",
    "expect",
    "clone",
    "to_owned",
    "as_ref",
    "as_mut",
    "borrow",
    "borrow_mut",
    "unwrap_or_default",
];

/// How many calls deep a receiver chain is written (extraction's `CHAIN_DEPTH`): how many
/// links [`Resolver::element_class`] reads back through at most.
const CHAIN_LINKS: usize = 8;

/// How many fields deep a Rust field path (`context.config.color`) is followed.
const FIELD_DEPTH: usize = 6;

/// Where a Rust field path leads ([`Resolver::field_class`]).
enum FieldPath {
    /// The class of the last field's declared type.
    Known(String),
    /// A field whose type is unknown: the fields on a receiver of unknown type, as
    /// extraction wrote `self`'s before (`self.config.color`): named like the last field, and
    /// named like no import.
    Unknown(String),
    /// A field whose type is a dependency's (`cookie::CookieJar`).
    External,
}

/// How many levels of base classes are read above the class a call is made in or on.
const INHERITANCE_DEPTH: usize = 4;

/// How many barrels deep a name is followed through `export … from`.
const REEXPORT_DEPTH: usize = 3;

/// What [`Resolver::callers_of`] read and resolved.
struct CallersRead {
    edges: Vec<Resolved>,
    /// Call sites were left unread ([`MAX_REFERENCES`]).
    truncated: bool,
    /// Calls from outside the targets' repositories that could reach them by name alone were
    /// not read (see [`Calls::name_only_unread`]).
    name_only_unread: bool,
}

/// What one call resolves to: (definition, how, confidence), or nothing inside the index.
/// The definitions are borrowed from the resolver: a call of a crowded name spreads over
/// hundreds, of which a callers question keeps the one or two it asked about.
enum Outcome<'a> {
    Targets(Vec<(&'a DefinitionRow, Resolution, f32)>),
    External,
}

impl<'s> Resolver<'s> {
    fn new(store: &'s Store, scope: &'s Scope, manifests: &'s Manifests) -> Self {
        Resolver {
            store,
            scope,
            manifests,
            crates: HashMap::new(),
            by_name: HashMap::new(),
            imports: HashMap::new(),
            imports_read: HashMap::new(),
            roots: HashMap::new(),
            go_modules: HashMap::new(),
            aliases: HashMap::new(),
            configs: HashMap::new(),
            reexports: HashMap::new(),
            bases: HashMap::new(),
            file_bases: HashMap::new(),
            members: HashMap::new(),
            chains: Default::default(),
        }
    }

    /// Reads the base classes of the classes `refs` are made on (a qualifier written like a
    /// type: `Scope.make`, `this.SetToken` with `this` as its class) or in (a call without a
    /// receiver in Java, C#, C++ or Ruby), and theirs, [`INHERITANCE_DEPTH`] levels up.
    async fn load_bases(&mut self, refs: &[ReferenceRow]) -> Result<(), StoreError> {
        // A call on a lambda's implicit receiver may be read as bare too: the class it is in.
        let bare = |r: &ReferenceRow| {
            let implicit = r
                .qualifier
                .as_deref()
                .is_some_and(|q| q.starts_with(IMPLICIT_RECEIVER));
            implicit.then(|| {
                class_of_call(&ReferenceRow {
                    qualifier: None,
                    ..r.clone()
                })
                .map(str::to_owned)
            })?
        };
        // A Rust call on a field (`Recipe.attributes`) is on the field's type.
        let mut wanted: BTreeSet<String> = BTreeSet::new();
        // A Rust type's bases are its members' (the traits it implements, what it derefs to).
        let mut rust: BTreeSet<String> = BTreeSet::new();
        for r in refs {
            let class = match self.field_class(r) {
                Some(FieldPath::Known(class)) => Some(class),
                Some(FieldPath::Unknown(_) | FieldPath::External) => None,
                None => class_of_call(r).map(str::to_owned),
            };
            let Some(class) = class.or_else(|| bare(r)) else {
                continue;
            };
            if family(&r.file_path) == "rust" {
                rust.insert(class.clone());
            }
            wanted.insert(class);
        }
        wanted.retain(|c| !self.bases.contains_key(c));
        for _ in 0..INHERITANCE_DEPTH {
            if wanted.is_empty() {
                break;
            }
            self.load_names(wanted.iter().cloned()).await?;
            self.load_members_of(wanted.iter().filter(|c| rust.contains(*c)).cloned())
                .await?;
            let mut next = BTreeSet::new();
            for class in &wanted {
                let mut found: Vec<String> = Vec::new();
                let types = self.by_name.get(class).into_iter().flatten();
                let mut in_files: Vec<((String, i64), Vec<String>)> = Vec::new();
                for d in types.filter(|d| is_type(&d.kind)) {
                    let own: Vec<String> = bases_in(&d.signature, family(&d.file_path))
                        .into_iter()
                        .filter(|b| b != class)
                        .collect();
                    for b in &own {
                        if !found.contains(b) {
                            found.push(b.clone());
                        }
                    }
                    in_files.push(((class.clone(), d.file_id), own));
                }
                if rust.contains(class) {
                    for b in member_bases(self.members.get(class)) {
                        if !found.contains(&b) {
                            found.push(b);
                        }
                    }
                    rust.extend(found.iter().cloned());
                }
                self.file_bases.extend(in_files);
                next.extend(
                    found
                        .iter()
                        .filter(|b| !self.bases.contains_key(*b) && !wanted.contains(*b))
                        .cloned(),
                );
                self.bases.insert(class.clone(), found);
            }
            wanted = next;
        }
        Ok(())
    }

    /// Reads what resolving the calls `refs`' receivers are made of needs
    /// ([`receiver_calls`]).
    async fn load_receiver_calls(&mut self, refs: &[ReferenceRow]) -> Result<(), StoreError> {
        let calls = receiver_calls(refs);
        if calls.is_empty() {
            return Ok(());
        }
        self.load_names(calls.iter().map(|r| defined_as(&r.name).to_owned()))
            .await?;
        self.load_imports(&calls).await?;
        self.load_members(&calls).await?;
        self.load_bases(&calls).await?;
        self.load_awaited(refs).await
    }

    /// Reads the members of the classes the Rust chains among `refs` return at each link, for
    /// what awaiting one gives ([`Self::awaited`]).
    async fn load_awaited(&mut self, refs: &[ReferenceRow]) -> Result<(), StoreError> {
        let classes: BTreeSet<String> = {
            let mut callables = Callables::default();
            for r in refs.iter().filter(|r| family(&r.file_path) == "rust") {
                let Some(q) = r.qualifier.as_deref() else {
                    continue;
                };
                // And of what a receiver read past a chain starts from, and of what the
                // chain's elements come from (its class's `item`).
                let past = after_chain(q);
                let holder = past
                    .filter(|(_, rest)| after_element(rest).is_some())
                    .map(|(chain, _)| element_holder(chain));
                for chain in [Some(q), past.map(|(chain, _)| chain), holder]
                    .into_iter()
                    .flatten()
                    .filter(|c| is_chain(c))
                {
                    self.chain_class(r, chain, &mut callables);
                }
            }
            crate::lock(&self.chains)
                .values()
                .flatten()
                .cloned()
                .collect()
        };
        if classes.is_empty() {
            return Ok(());
        }
        self.load_members_of(classes.iter().cloned()).await?;
        // The fields read past a chain (`Compiler::compile().justfile`) or an element of what
        // it returns (`Justfile.recipes().[].name`): from the class it gives.
        let past_chains: Vec<ReferenceRow> = {
            let mut callables = Callables::default();
            refs.iter()
                .filter_map(|r| {
                    let (chain, rest) = after_chain(r.qualifier.as_deref()?)?;
                    let on = ReferenceRow {
                        qualifier: Some(self.past_chain(r, chain, rest, &mut callables)?),
                        ..r.clone()
                    };
                    field_path(&on).is_some().then_some(on)
                })
                .collect()
        };
        self.load_members(&past_chains).await?;
        // A chain through an awaited link is read again, with what awaiting it gives.
        let awaits = classes.iter().any(|c| {
            self.members
                .get(c)
                .is_some_and(|m| m.iter().any(|m| m.kind == "await"))
        });
        if awaits {
            crate::lock(&self.chains).clear();
        }
        Ok(())
    }

    /// Reads the members of the Rust types `classes` not read yet.
    async fn load_members_of(
        &mut self,
        classes: impl IntoIterator<Item = String>,
    ) -> Result<(), StoreError> {
        let missing = not_loaded(classes, &self.members);
        if missing.is_empty() {
            return Ok(());
        }
        let rows = self.store.members_of(self.scope, &missing).await?;
        for c in &missing {
            self.members.entry(c.clone()).or_default();
        }
        for m in rows {
            self.members.entry(m.owner.clone()).or_default().push(m);
        }
        // A bare name no type has members under may be an enum's variant a glob brought in
        // (`use Kind::*`, then `Redefinition { first, .. }`): its fields are the variant's, of
        // whichever enums have one of that name (the nearest count, as for types).
        let variants: Vec<String> = missing
            .into_iter()
            .filter(|c| !c.contains("::") && self.members.get(c).is_some_and(Vec::is_empty))
            .collect();
        for m in self.store.variant_members_of(self.scope, &variants).await? {
            let variant = m.owner.rsplit("::").next().unwrap_or(&m.owner).to_owned();
            self.members.entry(variant).or_default().push(m);
        }
        Ok(())
    }

    /// Reads what following the Rust field paths among `refs`' qualifiers (`Recipe.attributes`
    /// of `self.attributes.get()`, [`field_path`]) needs: the members of each type on the way,
    /// and of the types it aliases or derefs to, whose fields it has too.
    async fn load_members(&mut self, refs: &[ReferenceRow]) -> Result<(), StoreError> {
        // An element of a field through the calls that keep it (`Recipe.body.iter().[]`) is
        // the field path's (`Recipe.body.[]`).
        let through: Vec<ReferenceRow> = refs
            .iter()
            .filter_map(|r| {
                let (chain, rest) = after_chain(r.qualifier.as_deref()?)?;
                let fields = after_element(rest)?;
                let holder = element_holder(chain);
                (!is_chain(holder)).then(|| ReferenceRow {
                    qualifier: Some(format!("{holder}.{ELEMENT}{fields}")),
                    ..r.clone()
                })
            })
            .collect();
        let mut paths: Vec<(String, Vec<&str>, &ReferenceRow)> = refs
            .iter()
            .chain(&through)
            .filter_map(|r| field_path(r).map(|(class, fields)| (class.to_owned(), fields, r)))
            .collect();
        for _ in 0..FIELD_DEPTH {
            if paths.is_empty() {
                break;
            }
            let mut wanted: BTreeSet<String> = paths.iter().map(|(c, ..)| c.clone()).collect();
            for _ in 0..INHERITANCE_DEPTH {
                self.load_members_of(wanted.iter().cloned()).await?;
                wanted = wanted
                    .iter()
                    .flat_map(|c| self.same_as(c))
                    .filter(|t| !self.members.contains_key(t))
                    .collect();
                if wanted.is_empty() {
                    break;
                }
            }
            paths = paths
                .into_iter()
                .filter_map(|(class, fields, r)| {
                    let (next, used) = self.field_step(&class, &fields, r)?;
                    let rest = &fields[used..];
                    (!rest.is_empty()).then(|| (last_segment(&next).to_owned(), rest.to_vec(), r))
                })
                .collect();
        }
        Ok(())
    }

    /// The types whose fields and methods a Rust type has as its own: those it aliases and
    /// derefs to, as read.
    fn same_as(&self, class: &str) -> Vec<String> {
        self.members
            .get(class)
            .into_iter()
            .flatten()
            .filter(|m| matches!(m.kind.as_str(), "alias" | "deref"))
            .map(|m| m.ty.clone())
            .collect()
    }

    /// One step along a Rust field path ([`field_path`]) from `class`: the type of the field
    /// `fields[0]`; with `[]` after it, what iterating over the field gives (its `item`
    /// member), taking both; `[]` alone, what iterating over `class` itself gives. With how
    /// many segments it took; `None` when unknown.
    fn field_step(
        &self,
        class: &str,
        fields: &[&str],
        r: &ReferenceRow,
    ) -> Option<(String, usize)> {
        match fields {
            [ELEMENT, ..] => Some((self.member_type(class, "item", "", r)?, 1)),
            [field, ELEMENT, ..] => match self.member_type(class, "item", field, r) {
                Some(element) => Some((element, 2)),
                // A field of a type that is iterated itself (`References`).
                None => Some((self.member_type(class, "field", field, r)?, 1)),
            },
            [field, ..] => Some((self.member_type(class, "field", field, r)?, 1)),
            [] => None,
        }
    }

    /// The type of `class`'s member `name` of `kind` (a `field`, an `item`), or of the types
    /// it aliases or derefs to, as read, seen from the call `r`: of several types of that
    /// name (a test's own `Recipe`), those nearest its file ([`nearest_members`]); `None` when
    /// unknown or when they disagree.
    fn member_type(&self, class: &str, kind: &str, name: &str, r: &ReferenceRow) -> Option<String> {
        let mut level = vec![class.to_owned()];
        for _ in 0..INHERITANCE_DEPTH {
            let fields: Vec<&MemberRow> = level
                .iter()
                .flat_map(|c| self.members.get(c).into_iter().flatten())
                .filter(|m| m.kind == kind && m.name == name)
                .collect();
            if !fields.is_empty() {
                return agreed_type(nearest_members(fields, r));
            }
            level = level.iter().flat_map(|c| self.same_as(c)).collect();
            if level.is_empty() {
                break;
            }
        }
        None
    }

    /// Where `r`'s qualifier, a Rust field path ([`field_path`]), leads, as far as
    /// [`Self::load_members`] read; `None` for any other qualifier.
    fn field_class(&self, r: &ReferenceRow) -> Option<FieldPath> {
        let (class, fields) = field_path(r)?;
        let mut class = class.to_owned();
        let mut at = 0;
        while at < fields.len() {
            let Some((next, used)) = self.field_step(&class, &fields[at..], r) else {
                let named: Vec<&str> = fields.iter().copied().filter(|f| *f != ELEMENT).collect();
                return Some(FieldPath::Unknown(format!("self.{}", named.join("."))));
            };
            at += used;
            // A type written with a path (`cookie::CookieJar`): a dependency's is outside the
            // index, whatever the repository names alike; the repository's own is its class.
            class = match next.split_once("::") {
                Some((root, _))
                    if self
                        .crates
                        .get(&r.repository)
                        .is_some_and(|c| c.is_external(root)) =>
                {
                    return Some(FieldPath::External);
                }
                Some(_) => last_segment(&next).to_owned(),
                None => next,
            };
        }
        Some(FieldPath::Known(class))
    }

    /// The classes `class` derives from, nearest first, as far as [`Self::load_bases`] read;
    /// those its definition in `file` names first, when that file defines it.
    fn ancestors<'a>(&'a self, class: &'a str, file: Option<i64>) -> Vec<&'a str> {
        let mut out: Vec<&str> = Vec::new();
        let mut level = vec![class];
        for depth in 0..INHERITANCE_DEPTH {
            let mut next = Vec::new();
            for c in level {
                let own = file
                    .filter(|_| depth == 0)
                    .and_then(|f| self.file_bases.get(&(c.to_owned(), f)));
                for b in own
                    .into_iter()
                    .flatten()
                    .chain(self.bases.get(c).into_iter().flatten())
                {
                    if b != class && !out.contains(&b.as_str()) {
                        out.push(b);
                        next.push(b.as_str());
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            level = next;
        }
        out
    }

    /// The methods among `callable` that the nearest of `class`'s ancestors defines, as seen
    /// from `r`'s file ([`Self::ancestors`]), and first, for a call without a receiver
    /// (`bare`) in a language whose classes span files, those `class` defines in another file
    /// (a Kotlin extension function's receiver, an `actual` class); of several copies (a Kotlin `expect` class's and its `actual`
    /// ones'), those nearest that file.
    fn inherited<'a>(
        &self,
        callable: &[&'a DefinitionRow],
        class: &str,
        r: &ReferenceRow,
        bare: bool,
    ) -> Vec<&'a DefinitionRow> {
        // Languages whose classes span files: Kotlin's extension functions and `actual`
        // classes, Swift's and Dart's extensions. C#'s partial classes and Ruby's reopened
        // ones are left out until measured: a class there may share its name with one in
        // another namespace.
        let spans_files =
            is_kotlin(&r.file_path) || matches!(family(&r.file_path), "swift" | "dart");
        let own = (bare && spans_files).then_some(class);
        for a in own
            .into_iter()
            .chain(self.ancestors(class, Some(r.file_id)))
        {
            let owned: Vec<&DefinitionRow> = callable
                .iter()
                .copied()
                .filter(|d| d.kind == "method" && owner_last(&d.qualified) == Some(a))
                .collect();
            if !owned.is_empty() {
                return nearest(owned, r);
            }
        }
        Vec::new()
    }

    /// Reads the definitions of names not read yet.
    async fn load_names(
        &mut self,
        names: impl IntoIterator<Item = String>,
    ) -> Result<(), StoreError> {
        let missing = not_loaded(names, &self.by_name);
        if missing.is_empty() {
            return Ok(());
        }
        let rows = self
            .store
            .definitions_named(self.scope, &missing, MAX_DEFINITIONS_PER_NAME)
            .await?;
        for n in missing {
            self.by_name.entry(n).or_default();
        }
        for d in rows {
            self.by_name.entry(d.name.clone()).or_default().push(d);
        }
        Ok(())
    }

    /// Reads and resolves the imports that resolving `refs` looks at, those not read yet.
    /// A file's other imports are left unread: a crowded name's calls sit in hundreds of
    /// files, whose every import used to be read and resolved (400 rows a question at 1M
    /// chunks).
    async fn load_imports(&mut self, refs: &[ReferenceRow]) -> Result<(), StoreError> {
        // A Rust path may start with a crate's name, which no import binds.
        let rust: BTreeSet<&str> = refs
            .iter()
            .filter(|r| r.file_path.ends_with(".rs"))
            .map(|r| r.repository.as_str())
            .collect();
        for repository in rust {
            self.crates(repository).await?;
        }
        let mut wanted: HashSet<(i64, &str)> = HashSet::new();
        for r in refs {
            let read = self.imports_read.get(&r.file_id);
            for n in import_names(r) {
                if !read.is_some_and(|names| names.contains(n)) {
                    wanted.insert((r.file_id, n));
                }
            }
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let files: Vec<i64> = wanted
            .iter()
            .map(|(f, _)| *f)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let names: Vec<String> = wanted
            .iter()
            .map(|(_, n)| *n)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(str::to_owned)
            .collect();
        // The statement reads every pair of those files and names; the pairs not wanted are
        // left for a later question to read, so that none is read twice.
        let rows: Vec<ImportRow> = self
            .store
            .imports_of(&files, Some(&names))
            .await?
            .into_iter()
            .filter(|row| wanted.contains(&(row.file_id, row.name.as_str())))
            .collect();
        for (f, n) in wanted {
            self.imports_read.entry(f).or_default().insert(n.to_owned());
        }
        let targets = self.resolve_imports(&rows).await?;
        let mut imported: HashSet<(String, String)> = HashSet::new();
        for (row, t) in rows.into_iter().zip(targets) {
            if has_reexports(&row.file_path) {
                imported.extend(t.iter().map(|t| (row.repository.clone(), t.clone())));
            }
            self.imports.entry(row.file_id).or_default().push((row, t));
        }
        self.load_reexports(imported).await
    }

    /// Reads the re-exports of the JavaScript, TypeScript and Dart modules at `frontier`
    /// ((repository, path) pairs that imports name), and of the modules those re-export from,
    /// [`REEXPORT_DEPTH`] levels down.
    async fn load_reexports(
        &mut self,
        mut frontier: HashSet<(String, String)>,
    ) -> Result<(), StoreError> {
        for _ in 0..REEXPORT_DEPTH {
            frontier.retain(|k| !self.reexports.contains_key(k) && has_reexports(&k.1));
            if frontier.is_empty() {
                break;
            }
            let mut by_repo: HashMap<String, Vec<String>> = HashMap::new();
            for (repo, path) in frontier.drain() {
                self.reexports
                    .insert((repo.clone(), path.clone()), Vec::new());
                by_repo.entry(repo).or_default().push(path);
            }
            for (repo, paths) in by_repo {
                // Statements that bind no local name: `export … from`, and side-effect imports,
                // which name no function anyway.
                let rows: Vec<ImportRow> = self
                    .store
                    .imports_at(&repo, &paths)
                    .await?
                    .into_iter()
                    .filter(|r| r.name.is_empty())
                    .collect();
                let targets = self.resolve_imports(&rows).await?;
                for (row, t) in rows.into_iter().zip(targets) {
                    for target in &t {
                        frontier.insert((repo.clone(), target.clone()));
                    }
                    self.reexports
                        .entry((repo.clone(), row.file_path))
                        .or_default()
                        .extend(t);
                }
            }
        }
        Ok(())
    }

    /// The files `targets` re-export from, through barrels, nearest first.
    fn reexported(&self, repository: &str, targets: &[String]) -> Vec<String> {
        let mut seen: HashSet<&str> = targets.iter().map(String::as_str).collect();
        let mut level: Vec<&str> = targets.iter().map(String::as_str).collect();
        let mut out = Vec::new();
        for _ in 0..REEXPORT_DEPTH {
            let mut next = Vec::new();
            for t in level {
                let key = (repository.to_owned(), t.to_owned());
                for r in self.reexports.get(&key).into_iter().flatten() {
                    if seen.insert(r) {
                        next.push(r.as_str());
                        out.push(r.clone());
                    }
                }
            }
            level = next;
        }
        out
    }

    async fn root(&mut self, repository: &str) -> Result<Option<PathBuf>, StoreError> {
        if let Some(r) = self.roots.get(repository) {
            return Ok(r.clone());
        }
        let root = self
            .store
            .repository(repository)
            .await?
            .map(|r| PathBuf::from(r.root));
        self.roots.insert(repository.to_owned(), root.clone());
        Ok(root)
    }

    async fn go_module(&mut self, repository: &str) -> Result<Option<String>, StoreError> {
        if let Some(m) = self.go_modules.get(repository) {
            return Ok(m.clone());
        }
        let module = self
            .root(repository)
            .await?
            .and_then(|root| read_go_module(root.join("go.mod")));
        self.go_modules
            .insert(repository.to_owned(), module.clone());
        Ok(module)
    }

    /// The `tsconfig.json` aliases in force for the files of `dir` in `repository`.
    async fn aliases(
        &mut self,
        repository: &str,
        dir: &str,
    ) -> Result<Option<Arc<Aliases>>, StoreError> {
        let key = (repository.to_owned(), dir.to_owned());
        if let Some(a) = self.aliases.get(&key) {
            return Ok(a.clone());
        }
        let Some(root) = self.root(repository).await? else {
            return Ok(None);
        };
        // Directories under one config share its aliases, read once.
        let aliases = nearest_config(&root, dir).and_then(|file| {
            self.configs
                .entry((repository.to_owned(), file))
                .or_insert_with_key(|(_, file)| Aliases::of_config(&root, file).map(Arc::new))
                .clone()
        });
        self.aliases.insert(key, aliases.clone());
        Ok(aliases)
    }

    /// The packages of `repository`'s workspaces.
    async fn packages(&mut self, repository: &str) -> Result<Arc<Packages>, StoreError> {
        let fingerprint = self.scope.fingerprint();
        if let Some(p) = cached(&self.manifests.packages, repository, fingerprint) {
            return Ok(p);
        }
        let packages = Arc::new(
            self.root(repository)
                .await?
                .map(|root| Packages::read(&root))
                .unwrap_or_default(),
        );
        crate::lock(&self.manifests.packages)
            .insert(repository.to_owned(), (fingerprint, packages.clone()));
        Ok(packages)
    }

    /// The crates of `repository`, from its indexed `Cargo.toml` files and its root's.
    async fn crates(&mut self, repository: &str) -> Result<Arc<Crates>, StoreError> {
        if let Some(c) = self.crates.get(repository) {
            return Ok(c.clone());
        }
        let fingerprint = self.scope.fingerprint();
        let crates = match cached(&self.manifests.crates, repository, fingerprint) {
            Some(c) => c,
            None => {
                let read = match self.root(repository).await? {
                    Some(root) => {
                        let manifests = self
                            .store
                            .files_named(repository, "Cargo.toml", MAX_MANIFESTS as i64)
                            .await?;
                        Crates::read(&root, &manifests)
                    }
                    None => Crates::default(),
                };
                let read = Arc::new(read);
                crate::lock(&self.manifests.crates)
                    .insert(repository.to_owned(), (fingerprint, read.clone()));
                read
            }
        };
        self.crates.insert(repository.to_owned(), crates.clone());
        Ok(crates)
    }

    /// Each row's candidates with its bare specifiers (`bare:@app/user`) turned into the files
    /// the aliases of its file's `tsconfig.json`, then the workspace's packages, name (none
    /// without either).
    async fn expand_bare(&mut self, rows: &[ImportRow]) -> Result<Vec<Vec<String>>, StoreError> {
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            // `use axum_core::body::Body`: a crate of the repository, as `crate::` is in it.
            if row.candidates.is_empty() && row.file_path.ends_with(".rs") {
                let path: Vec<String> = row.specifier.split("::").map(str::to_owned).collect();
                let crates = self.crates(&row.repository).await?;
                out.push(crates.candidates(&path).unwrap_or_default());
                continue;
            }
            if !row.candidates.iter().any(|c| c.starts_with(BARE)) {
                out.push(row.candidates.clone());
                continue;
            }
            let dir = row.file_path.rfind('/').map_or("", |i| &row.file_path[..i]);
            let aliases = self.aliases(&row.repository, dir).await?;
            let packages = self.packages(&row.repository).await?;
            let mut expanded = Vec::new();
            for c in &row.candidates {
                match c.strip_prefix(BARE) {
                    // The aliases first, as the compiler tries them, then a package of the
                    // workspace, as `node_modules` would link it.
                    Some(spec) => {
                        let bases = aliases.iter().flat_map(|a| a.bases(spec));
                        for base in bases.chain(packages.bases(spec)) {
                            super::imports::ecma_files(&base, &mut expanded);
                        }
                    }
                    None => expanded.push(c.clone()),
                }
            }
            out.push(expanded);
        }
        Ok(out)
    }

    /// The files each import resolves to: the first candidate that exists (the nearest file
    /// when a suffix names several), every file of a Go package or a Swift module, the files of
    /// the nearest directory of a Kotlin package that define the name; empty for what is
    /// outside.
    async fn resolve_imports(
        &mut self,
        rows: &[ImportRow],
    ) -> Result<Vec<Vec<String>>, StoreError> {
        let candidates = self.expand_bare(rows).await?;
        let mut by_repo: HashMap<&str, (HashSet<String>, HashSet<String>)> = HashMap::new();
        // (repository) -> (name, package directory)
        let mut members: HashMap<&str, BTreeSet<(String, String)>> = HashMap::new();
        let mut swift: HashMap<&str, BTreeSet<String>> = HashMap::new();
        for (row, candidates) in rows.iter().zip(&candidates) {
            let (keys, dirs) = by_repo.entry(row.repository.as_str()).or_default();
            for c in candidates {
                if c.starts_with("go:") {
                    dirs.insert(c.clone());
                } else if let Some(module) = c.strip_prefix(SWIFT_MODULE) {
                    swift
                        .entry(row.repository.as_str())
                        .or_default()
                        .insert(module.to_owned());
                } else if let Some(dir) = c.strip_prefix(PACKAGE) {
                    members
                        .entry(row.repository.as_str())
                        .or_default()
                        .insert((imported_name(row).to_owned(), dir.to_owned()));
                } else {
                    keys.insert(c.clone());
                }
            }
        }
        // (repository, key) -> paths; a package's key is `package:<dir>` and the name.
        let mut found: HashMap<(String, String), Vec<String>> = HashMap::new();
        for (repo, wanted) in members {
            let wanted: Vec<(String, String)> = wanted.into_iter().collect();
            for (name, dir, p) in self.store.package_definers(repo, &wanted).await? {
                found
                    .entry((repo.to_owned(), package_key(&dir, &name)))
                    .or_default()
                    .push(p);
            }
        }
        for (repo, modules) in swift {
            let modules: Vec<String> = modules.into_iter().collect();
            for (module, p) in self.store.swift_module_files(repo, &modules).await? {
                found
                    .entry((repo.to_owned(), format!("{SWIFT_MODULE}{module}")))
                    .or_default()
                    .push(p);
            }
        }
        for (repo, (keys, go_keys)) in by_repo {
            let keys: Vec<String> = keys.into_iter().collect();
            if !keys.is_empty() {
                for (k, p) in self.store.files_for_keys(repo, &keys).await? {
                    found.entry((repo.to_owned(), k)).or_default().push(p);
                }
            }
            if !go_keys.is_empty()
                && let Some(module) = self.go_module(repo).await?
            {
                let prefix = format!("go:{module}");
                let dirs: Vec<(String, String)> = go_keys
                    .iter()
                    .filter_map(|k| {
                        let rest = k.strip_prefix(&prefix)?;
                        if rest.is_empty() {
                            Some((k.clone(), String::new()))
                        } else {
                            rest.strip_prefix('/').map(|d| (k.clone(), d.to_owned()))
                        }
                    })
                    .collect();
                let dir_names: Vec<String> = dirs.iter().map(|(_, d)| d.clone()).collect();
                for (d, p) in self.store.files_in_dirs(repo, &dir_names).await? {
                    if !p.ends_with(".go") || p.ends_with("_test.go") {
                        continue;
                    }
                    for (k, _) in dirs.iter().filter(|(_, dd)| *dd == d) {
                        found
                            .entry((repo.to_owned(), k.clone()))
                            .or_default()
                            .push(p.clone());
                    }
                }
            }
        }
        Ok(rows
            .iter()
            .zip(&candidates)
            .map(|(row, candidates)| {
                let repo = row.repository.clone();
                for c in candidates {
                    if let Some(dir) = c.strip_prefix(PACKAGE) {
                        let key = (repo.clone(), package_key(dir, imported_name(row)));
                        if let Some(paths) = found.get(&key) {
                            // One package is often several directories (a multiplatform
                            // project's `commonMain/…/okio` and `jvmMain/…/okio`): the nearest.
                            let near = |p: &&String| common_prefix(p, &row.file_path);
                            let best = paths.iter().map(|p| near(&p)).max().unwrap_or(0);
                            return paths.iter().filter(|p| near(p) == best).cloned().collect();
                        }
                        continue;
                    }
                    if let Some(paths) = found.get(&(repo.clone(), c.clone())) {
                        if c.starts_with("go:") || c.starts_with(SWIFT_MODULE) {
                            return paths.clone();
                        }
                        // The nearest of several files a suffix names.
                        let best = paths
                            .iter()
                            .max_by_key(|p| {
                                (common_prefix(p, &row.file_path), std::cmp::Reverse(p.len()))
                            })
                            .cloned();
                        return best.into_iter().collect();
                    }
                }
                Vec::new()
            })
            .collect())
    }

    /// Call sites that resolve to any of `targets`: (site, caller, callee, how, confidence),
    /// and what was left unread. Calls from other repositories that could reach a target by
    /// its name alone with a confidence below `floor` are not read.
    async fn callers_of(
        &mut self,
        targets: &[DefinitionRow],
        floor: f32,
    ) -> Result<CallersRead, StoreError> {
        let names: Vec<String> = {
            let mut n: Vec<String> = targets.iter().map(|d| d.name.clone()).collect();
            n.sort();
            n.dedup();
            n
        };
        if names.is_empty() {
            return Ok(CallersRead {
                edges: Vec::new(),
                truncated: false,
                name_only_unread: false,
            });
        }
        self.load_names(names.clone()).await?;
        // A name with more definitions than a lookup loads is crowded: resolved by the name
        // alone, a call of it would be spread over an arbitrary few hundred of them (a
        // confidence near 0), so only its calls from a target's repository or on a qualifier
        // naming a target's owner can reach one (steps 1 to 4 of the resolution): only those
        // are read. 16,518 calls of `new` at 100k chunks, most of them elsewhere.
        //
        // A call from another repository reaches a target only through a qualifier naming its
        // owner (step 1, read through the same narrowing) or by the name alone (step 5): every
        // other step stays in the call's repository. By the name alone its confidence is at
        // most 0.5 / n (0.45 / n on a receiver), n the definitions it would be spread over; a
        // name whose every target would get less than `floor` that way is narrowed too: `max`
        // has hundreds of definitions and tens of thousands of calls at 1M chunks.
        let crowded_name = |t: &DefinitionRow| {
            self.by_name
                .get(&t.name)
                .is_some_and(|d| d.len() as i64 >= MAX_DEFINITIONS_PER_NAME)
        };
        let far_below = |t: &DefinitionRow| {
            let loaded = self.by_name.get(&t.name).map(Vec::as_slice).unwrap_or(&[]);
            name_only_ceiling(t, loaded) < floor
        };
        let mut crowded: BTreeSet<String> = BTreeSet::new();
        for name in targets.iter().map(|t| called_as(t)) {
            let all_narrowed = targets
                .iter()
                .filter(|t| called_as(t) == name)
                .all(|t| crowded_name(t) || far_below(t));
            if all_narrowed {
                crowded.insert(name.into_owned());
            }
        }
        // Such a name may leave a target out of the definitions loaded: it is put in, so that
        // the calls naming its owner reach it.
        for t in targets {
            let loaded = self.by_name.entry(t.name.clone()).or_default();
            if !loaded
                .iter()
                .any(|d| d.file_id == t.file_id && d.ordinal == t.ordinal)
            {
                loaded.push(t.clone());
            }
        }
        // A macro's calls are recorded as written, `name!`.
        let called: Vec<String> = targets
            .iter()
            .map(|d| called_as(d).into_owned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        // In a language without base classes, a call on a type (`Vec::new`, `Self::new` where
        // `Self` was not rewritten) reaches only that type's methods: when every target of a
        // narrowed name is a method there, the calls on other types need not be read: 443 of
        // the 446 calls of `new` in `tokenizers` name another type than `ByteLevel`.
        let typed: Vec<String> = crowded
            .iter()
            .filter(|name| {
                targets
                    .iter()
                    .filter(|t| called_as(t) == name.as_str())
                    .all(|t| {
                        t.kind == "method"
                            && owner_last(&t.qualified).is_some()
                            && matches!(family(&t.file_path), "rust" | "go")
                    })
            })
            .cloned()
            .collect();
        let crowded: Vec<String> = crowded.into_iter().collect();
        let repositories: Vec<String> = targets
            .iter()
            .map(|t| t.repository.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let owners: Vec<String> = targets
            .iter()
            .filter_map(|t| owner_last(&t.qualified).map(str::to_owned))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let refs = self
            .store
            .references_narrowed(
                self.scope,
                None,
                &called,
                &Narrowing {
                    names: &crowded,
                    repositories: &repositories,
                    owners: &owners,
                    typed: &typed,
                },
                MAX_REFERENCES,
            )
            .await?;
        let truncated = refs.len() as i64 >= MAX_REFERENCES;
        // Said only when the workspace has other repositories to leave unread.
        let name_only_unread = !crowded.is_empty()
            && self
                .scope
                .repositories()
                .iter()
                .any(|r| repositories.binary_search(r).is_err());
        self.load_imports(&refs).await?;
        self.load_members(&refs).await?;
        self.load_bases(&refs).await?;
        self.load_receiver_calls(&refs).await?;
        let wanted: HashSet<(i64, i32)> = targets.iter().map(|d| (d.file_id, d.ordinal)).collect();
        let target_rows: HashMap<(i64, i32), &DefinitionRow> = targets
            .iter()
            .map(|d| ((d.file_id, d.ordinal), d))
            .collect();
        let callers = self.enclosing(&refs).await?;
        let mut out = Vec::new();
        let mut callables = Callables::default();
        for r in refs {
            let Outcome::Targets(hits) = self.resolve(&r, &mut callables) else {
                continue;
            };
            for (d, how, confidence) in hits {
                let key = (d.file_id, d.ordinal);
                if !wanted.contains(&key) {
                    continue;
                }
                let caller = r
                    .enclosing
                    .and_then(|o| callers.get(&(r.file_id, o)))
                    .cloned();
                let callee = target_rows.get(&key).map(|d| (*d).clone());
                out.push((r.clone(), caller, callee, how, confidence));
            }
        }
        Ok(CallersRead {
            edges: out,
            truncated,
            name_only_unread,
        })
    }

    /// The calls made in `sources`, each with what it resolves to (one entry per candidate;
    /// `None` for calls that resolve outside the index).
    async fn callees_of(&mut self, sources: &[DefinitionRow]) -> Result<Vec<Resolved>, StoreError> {
        let keys: Vec<(i64, i32)> = sources.iter().map(|d| (d.file_id, d.ordinal)).collect();
        let refs = self.store.references_in(&keys).await?;
        self.load_names(refs.iter().map(|r| defined_as(&r.name).to_owned()))
            .await?;
        self.load_imports(&refs).await?;
        self.load_members(&refs).await?;
        self.load_bases(&refs).await?;
        self.load_receiver_calls(&refs).await?;
        let by_key: HashMap<(i64, i32), &DefinitionRow> = sources
            .iter()
            .map(|d| ((d.file_id, d.ordinal), d))
            .collect();
        let mut out = Vec::new();
        let mut callables = Callables::default();
        for r in refs {
            let caller = r
                .enclosing
                .and_then(|o| by_key.get(&(r.file_id, o)))
                .map(|d| (*d).clone());
            match self.resolve(&r, &mut callables) {
                Outcome::Targets(hits) if !hits.is_empty() => {
                    for (d, how, confidence) in hits {
                        out.push((r.clone(), caller.clone(), Some(d.clone()), how, confidence));
                    }
                }
                _ => out.push((r.clone(), caller.clone(), None, Resolution::External, 0.0)),
            }
        }
        Ok(out)
    }

    /// The definitions call sites are in, by (file, ordinal).
    async fn enclosing(
        &self,
        refs: &[ReferenceRow],
    ) -> Result<HashMap<(i64, i32), DefinitionRow>, StoreError> {
        let mut keys: Vec<(i64, i32)> = refs
            .iter()
            .filter_map(|r| r.enclosing.map(|o| (r.file_id, o)))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        Ok(self
            .store
            .definitions_at(&keys)
            .await?
            .into_iter()
            .map(|d| ((d.file_id, d.ordinal), d))
            .collect())
    }

    /// What the call `r` reaches ([`Self::resolve_by_name`]), narrowed to the definitions it
    /// can see ([`visible_from`]) and to the overloads that take its arguments best
    /// ([`by_arity`]), when some do and some do not.
    fn resolve<'a>(&'a self, r: &ReferenceRow, callables: &mut Callables<'a>) -> Outcome<'a> {
        if let Some(on) = self.unaliased(r) {
            return self.resolve(&on, callables);
        }
        // A Rust call on a field (`Recipe.attributes.get()`) is a call on the field's type;
        // on a field of unknown type, one on a receiver named like the field, as written.
        if let Some(path) = self.field_class(r) {
            let on = ReferenceRow {
                qualifier: Some(match path {
                    FieldPath::Known(class) | FieldPath::Unknown(class) => class,
                    FieldPath::External => return Outcome::External,
                }),
                ..r.clone()
            };
            return self.resolve(&on, callables);
        }
        // A call without a receiver in a Kotlin lambda whose `this` is known (`writeUtf8(s)` in
        // `Buffer().apply { … }`): the receiver's method where its class (or a base) has one,
        // or an extension of it; else the bare call it looks like (the enclosing class's
        // method, a top-level function).
        if let Some(receivers) = r
            .qualifier
            .as_deref()
            .and_then(|q| q.strip_prefix(IMPLICIT_RECEIVER))
        {
            // The lambdas' receivers, innermost first, as Kotlin tries them.
            for receiver in receivers.split(' ') {
                let Some(class) = self.receiver_class(r, receiver, callables) else {
                    continue;
                };
                let on = ReferenceRow {
                    qualifier: Some(class.clone()),
                    ..r.clone()
                };
                // Only what the class (or a base) owns: a name only another class's extension
                // defines is a lambda's further in (`putEntry(…)` in `with(fs) { zip { … } }`).
                if let Outcome::Targets(mut hits) = self.resolve_one(&on, callables) {
                    let ancestors = self.ancestors(&class, None);
                    hits.retain(|(d, ..)| {
                        owner_last(&d.qualified)
                            .is_some_and(|o| o == class || ancestors.contains(&o))
                    });
                    if !hits.is_empty() {
                        return Outcome::Targets(hits);
                    }
                }
            }
            let bare = ReferenceRow {
                qualifier: None,
                ..r.clone()
            };
            return self.resolve_one(&bare, callables);
        }
        // A call on the fields of what a chain returns (`Compiler::compile().justfile`), on
        // an element of it (`module.recipes().[]`, `x.iter().[]`) and on its fields.
        if let Some((chain, rest)) = r.qualifier.as_deref().and_then(after_chain)
            && family(&r.file_path) == "rust"
        {
            let on = ReferenceRow {
                qualifier: Some(
                    self.past_chain(r, chain, rest, callables)
                        .unwrap_or_else(|| UNNAMED_RECEIVER.to_owned()),
                ),
                ..r.clone()
            };
            return match field_path(&on) {
                Some(_) => self.resolve(&on, callables),
                None => self.resolve_one(&on, callables),
            };
        }
        // A call on what a chain of calls returns: `Router::new().route(…).layer(…)`.
        if let Some(chain) = r.qualifier.as_deref().filter(|q| is_chain(q)) {
            let class = self.chain_class(r, chain, callables);
            // A Go type of another package (`http.Handler`) is named by an import of the file
            // that returns it: unless the call's file imports that package too, it is taken to
            // be outside the index, not any type of that name.
            if let Some((package, _)) = class.as_deref().and_then(|c| c.split_once('.'))
                && family(&r.file_path) == "go"
                && !self
                    .imports
                    .get(&r.file_id)
                    .is_some_and(|rows| rows.iter().any(|(row, _)| row.name == package))
            {
                return Outcome::External;
            }
            // The chain is written without its `.await`s: a Rust class without the method,
            // that awaiting gives another (`client.get(url).await.text()`, a `RequestBuilder`
            // whose `IntoFuture` output is a `TestResponse`), is read as what it gives.
            let class = class.map(|c| match self.awaited(&c, r) {
                Some(output) if !self.owns(&c, &r.name) => output,
                _ => c,
            });
            let on = ReferenceRow {
                qualifier: Some(class.unwrap_or_else(|| UNNAMED_RECEIVER.to_owned())),
                ..r.clone()
            };
            return self.resolve_one(&on, callables);
        }
        self.resolve_one(r, callables)
    }

    /// What awaiting the Rust class `class` gives (its `IntoFuture` or `Future` output), as
    /// read ([`Self::load_awaited`]), seen from the call `r`; `None` when unknown or when the
    /// types of that name disagree.
    fn awaited(&self, class: &str, r: &ReferenceRow) -> Option<String> {
        let outputs: Vec<&MemberRow> = self
            .members
            .get(class)?
            .iter()
            .filter(|m| m.kind == "await")
            .collect();
        agreed_type(nearest_members(outputs, r))
    }

    /// Whether the index has a method `name` of the class `class`, as read.
    fn owns(&self, class: &str, name: &str) -> bool {
        self.by_name
            .get(defined_as(name))
            .into_iter()
            .flatten()
            .any(|d| owner_last(&d.qualified) == Some(class))
    }

    /// The class the last call of a receiver chain returns (`Router::new().route()` is a
    /// `Router`: `route` returns `Self`), as the signatures of what it resolves to say, when
    /// they all agree and the call resolves to them with [`CHAIN_FLOOR`] together; `None`
    /// when unknown.
    fn chain_class<'a>(
        &'a self,
        r: &ReferenceRow,
        chain: &str,
        callables: &mut Callables<'a>,
    ) -> Option<String> {
        let key = (r.file_id, r.enclosing, chain.to_owned());
        if let Some(known) = crate::lock(&self.chains).get(&key) {
            return known.clone();
        }
        let class = self.chain_class_read(r, chain, callables);
        crate::lock(&self.chains).insert(key, class.clone());
        class
    }

    fn chain_class_read<'a>(
        &'a self,
        r: &ReferenceRow,
        chain: &str,
        callables: &mut Callables<'a>,
    ) -> Option<String> {
        let call = chain_call(r, chain)?;
        if PASS_THROUGH.contains(&call.name.as_str()) {
            // `x.clone()`, `x.unwrap()`: what `x` is; a Rust field's type
            // (`Recipe.name.clone()`).
            if let Some(FieldPath::Known(class)) = self.field_class(&call) {
                return Some(class);
            }
            return match call.qualifier.as_deref() {
                Some(q) if is_chain(q) => self.chain_class(&call, q, callables),
                Some(q) if last_segment(q).starts_with(|c: char| c.is_uppercase()) => {
                    Some(last_segment(q).to_owned())
                }
                _ => None,
            };
        }
        let rust = family(&r.file_path) == "rust";
        let hits = match self.resolve(&call, callables) {
            Outcome::Targets(hits) if !hits.is_empty() => hits,
            // A Rust collection's `get`, `last`, `pop`: one of its elements.
            _ if rust && ELEMENT_ACCESS.contains(&call.name.as_str()) => {
                let holder = call.qualifier.as_deref()?;
                return self.element_class(&call, holder, callables);
            }
            // `Stack::default()`, `Path::new(p)` the index lacks (a derive's, a dependency's):
            // what a type's function makes is taken to be one of it.
            _ if rust => {
                let path = chain.strip_suffix(&format!("::{}()", call.name))?;
                let ty = last_segment(path);
                return (ty.starts_with(char::is_uppercase) && ty != "Self").then(|| ty.to_owned());
            }
            _ => return None,
        };
        match agreed_return(&hits, returned) {
            // A generic collection's `get()` (`-> Option<&V>`): one of the receiver's elements.
            Some(class) if rust && is_type_parameter(&class) => {
                let holder = call.qualifier.as_deref()?;
                ELEMENT_ACCESS
                    .contains(&call.name.as_str())
                    .then(|| self.element_class(&call, holder, callables))?
            }
            class => class,
        }
    }

    /// The receiver `rest` (fields, elements) read past the Rust chain `chain` is
    /// ([`after_chain`]), from what the chain returns or what iterating over it gives:
    /// `Compilation.justfile` of `Compiler::compile()` and `.justfile`, `Recipe.name` of
    /// `Justfile.recipes()` and `.[].name`; `None` when unknown.
    fn past_chain<'a>(
        &'a self,
        r: &ReferenceRow,
        chain: &str,
        rest: &str,
        callables: &mut Callables<'a>,
    ) -> Option<String> {
        let (class, fields) = match after_element(rest) {
            Some(fields) => (self.element_class(r, chain, callables)?, fields),
            None => (self.chain_class(r, chain, callables)?, rest),
        };
        Some(format!("{class}{fields}"))
    }

    /// What iterating over the Rust receiver `holder` gives (an element of a collection, an
    /// `Option`'s value), seen from the call `r`: through the calls that keep the elements
    /// (`iter()`, [`ELEMENT_ADAPTERS`]), a field's or a type's `item` member, the element type
    /// of what a call returns (`-> Vec<Recipe>`, `-> impl Iterator<Item = &Recipe>`), the
    /// `item` of the class it returns, or what a call that gives an element
    /// ([`ELEMENT_ACCESS`]) gives; `None` when unknown.
    fn element_class<'a>(
        &'a self,
        r: &ReferenceRow,
        holder: &str,
        callables: &mut Callables<'a>,
    ) -> Option<String> {
        let mut holder = holder;
        for _ in 0..CHAIN_LINKS {
            if !is_chain(holder) {
                let on = ReferenceRow {
                    qualifier: Some(format!("{holder}.{ELEMENT}")),
                    ..r.clone()
                };
                return match self.field_class(&on)? {
                    FieldPath::Known(class) => Some(class),
                    _ => None,
                };
            }
            let call = chain_call(r, holder)?;
            let name = call.name.as_str();
            if let Outcome::Targets(hits) = self.resolve(&call, callables) {
                // `-> Vec<&Recipe>`; a repository's own `iter()` (`-> slice::Iter<Name>`);
                // not a generic collection's (`-> Values<&str, V>`).
                let returns = |d: &DefinitionRow| {
                    let owner = owner_last(&d.qualified);
                    super::returns::returned_element(&d.signature, &d.name, owner)
                };
                if let Some(element) = agreed_return(&hits, returns)
                    && !is_type_parameter(&element)
                {
                    return Some(element);
                }
            }
            let class = self.chain_class(r, holder, callables);
            // What the class it returns gives when iterated (`impl Iterator for References`).
            if let Some(element) = class
                .as_deref()
                .and_then(|c| self.member_type(c, "item", "", r))
            {
                return Some(element);
            }
            if ELEMENT_ACCESS.contains(&name) {
                // `self.tokens.last()` is an `Option` of one of `tokens`: its value.
                return class;
            }
            if ELEMENT_ADAPTERS.contains(&name) {
                holder = call.qualifier.as_deref().map(|q| &holder[..q.len()])?;
                continue;
            }
            return None;
        }
        None
    }

    /// The class a lambda's receiver is: written (`Buffer`), or, for the lambda passed to a
    /// call (`fileSystem.read()`), the receiver its function declares for its last parameter
    /// (`readerAction: BufferedSource.() -> T`), when every definition it resolves to agrees.
    fn receiver_class<'a>(
        &'a self,
        r: &ReferenceRow,
        receiver: &str,
        callables: &mut Callables<'a>,
    ) -> Option<String> {
        let Some(call) = chain_call(r, receiver) else {
            return Some(receiver.to_owned());
        };
        let Outcome::Targets(hits) = self.resolve(&call, callables) else {
            return None;
        };
        let mut classes = hits.iter().map(|(d, ..)| lambda_receiver(&d.signature));
        let first = classes.next()??;
        classes.all(|c| c == Some(first)).then(|| first.to_owned())
    }

    /// Whether `r`'s file binds `name` only by `use` paths into other crates than the
    /// repository's, while the repository defines a type of that name too (Rust).
    fn imported_from_dependency(&self, r: &ReferenceRow, name: &str) -> bool {
        let Some(crates) = self.crates.get(&r.repository) else {
            return false;
        };
        if !self.defines_type(&r.repository, name) {
            return false;
        }
        let mut bound = self
            .imports
            .get(&r.file_id)
            .into_iter()
            .flatten()
            .filter(|(row, _)| row.name == name)
            .peekable();
        bound.peek().is_some()
            && bound.all(|(row, targets)| {
                targets.is_empty() && crates.is_external(first_segment(&row.specifier))
            })
    }

    /// Whether `repository` defines a type (a struct, an enum, a trait, ...) named `name`.
    fn defines_type(&self, repository: &str, name: &str) -> bool {
        self.by_name
            .get(name)
            .into_iter()
            .flatten()
            .any(|d| d.repository == repository && is_type(&d.kind))
    }

    /// Whether `r` (Rust) calls on a path into a dependency's type (`syn::Error::new()`) that
    /// the repository has a namesake of (its own `Error`): no `use` of the file binds the
    /// path's first segment, which is a declared dependency and none of the repository's
    /// crates. A dependency's type the repository has no namesake of keeps its methods in the
    /// index: they are the repository's trait impls for it (`impl IntoResponse for
    /// StatusCode`, called as `http::StatusCode::OK.into_response()`).
    fn dependency_namesake(&self, r: &ReferenceRow) -> bool {
        let Some((root, rest)) = r.qualifier.as_deref().and_then(|q| q.split_once("::")) else {
            return false;
        };
        self.crates
            .get(&r.repository)
            .is_some_and(|c| c.is_external(root) && !c.owns(root))
            && self.defines_type(&r.repository, last_segment(rest))
            && !self
                .imports
                .get(&r.file_id)
                .is_some_and(|rows| rows.iter().any(|(row, _)| row.name == root))
    }

    /// Rust: `r` read with the name its qualifier's first segment is imported as another
    /// (`use crate::error::Error as ClapError`, then `ClapError::no_equals()` or a `ClapError`
    /// value's method): `Error::no_equals`. `None` when the file imports it under its own name,
    /// for a module's alias, for a dependency's type, and for an alias of an alias, which is
    /// left as written.
    fn unaliased(&self, r: &ReferenceRow) -> Option<ReferenceRow> {
        if !r.file_path.ends_with(".rs") {
            return None;
        }
        let q = r.qualifier.as_deref()?;
        let root = first_segment(q);
        let imports = self.imports.get(&r.file_id)?;
        // A type of the repository's own (a module's alias is read through the import itself,
        // as any module's; `use std::io::Error as IoError` is not the repository's `Error`).
        let imported_as = |name: &str| {
            imports.iter().find_map(|(row, targets)| {
                let imported = last_segment(&row.specifier);
                (row.name == name
                    && imported != name
                    && !targets.is_empty()
                    && row.specifier.contains("::")
                    && imported.starts_with(char::is_uppercase))
                .then_some(imported)
            })
        };
        let imported = imported_as(root)?;
        if imported_as(imported).is_some() {
            return None;
        }
        Some(ReferenceRow {
            qualifier: Some(format!("{imported}{}", &q[root.len()..])),
            ..r.clone()
        })
    }

    /// [`Self::resolve`] of a call read as written.
    fn resolve_one<'a>(&'a self, r: &ReferenceRow, callables: &mut Callables<'a>) -> Outcome<'a> {
        match self.resolve_by_name(r, callables) {
            Outcome::Targets(hits) if !hits.is_empty() => {
                let hits = inherent_first(by_receiver(r, visible_from(r, hits)));
                let hits = by_written_argument(r, hits);
                Outcome::Targets(match r.args {
                    Some(args) if hits.len() > 1 => by_arity(r, hits, args.max(0) as u16),
                    _ => hits,
                })
            }
            outcome => outcome,
        }
    }

    /// What one call site resolves to by its name and qualifier (see the module docs for the
    /// order). `callables` keeps the candidates of each name between the call sites of one
    /// question: a crowded name's hundreds of definitions were filtered again for each of its
    /// thousands of calls.
    fn resolve_by_name<'a>(
        &'a self,
        r: &ReferenceRow,
        callables: &mut Callables<'a>,
    ) -> Outcome<'a> {
        let macro_call = r.name.ends_with('!');
        let ref_lang = family(r.file_path.as_str());
        let candidates: Rc<Candidates<'_>> = match self.by_name.get_key_value(defined_as(&r.name)) {
            None => Rc::default(),
            Some((name, all)) => Rc::clone(
                callables
                    .entry((name.as_str(), ref_lang, macro_call))
                    .or_insert_with(|| Rc::new(Candidates::new(all, ref_lang, macro_call))),
            ),
        };
        let callable = candidates.all.as_slice();
        // A Rust type the file imports from a dependency (`use nu_ansi_term::Style`, then
        // `Style::new()`) is that crate's when the repository defines a type of that name, whose
        // methods are its own. (Without one, the methods the index has for the name are the
        // repository's trait impls for the dependency's type: `Bytes::from_request`.)
        if ref_lang == "rust"
            && let Some(q) = &r.qualifier
            && self.imported_from_dependency(r, first_segment(q))
        {
            return Outcome::External;
        }
        // A Rust path into a dependency's type (`syn::Error::new()`): the dependency's,
        // whatever the repository names alike.
        if ref_lang == "rust" && self.dependency_namesake(r) {
            return Outcome::External;
        }
        // 1. The qualifier names the owner: `Stack::new`, `self.push` (rewritten as the type),
        // or a class that inherits it: `Scope.make` of `LinkedList.make`.
        if let Some(q) = &r.qualifier
            && let Some(owned) = candidates.by_owner.get(last_segment(q))
        {
            let mut owned = if ref_lang == "go" {
                match self.go_owned(r, q, owned) {
                    Some(owned) => owned,
                    None => return Outcome::External,
                }
            } else {
                owned.clone()
            };
            // A Rust primitive's methods from another repository's impls are not this crate's
            // to call (`i32::from(u8::MAX)` here, `impl From<ExitCode> for i32` there): the
            // standard library's, unless the repository has its own.
            if ref_lang == "rust" && RUST_PRIMITIVES.contains(&last_segment(q)) {
                owned.retain(|d| d.repository == r.repository);
                if owned.is_empty() {
                    return Outcome::External;
                }
            }
            let local: Vec<&DefinitionRow> = owned
                .iter()
                .copied()
                .filter(|d| d.file_id == r.file_id)
                .collect();
            if !local.is_empty() {
                return spread(local, Resolution::SameFile, 0.9);
            }
            // Of several (a multiplatform project's `expect` and `actual` copies, a class
            // defined in two modules), the one the file imports, by the name or its owner's.
            if owned.len() > 1 {
                let owner = first_segment(q);
                let files: Vec<&String> = self
                    .imports
                    .get(&r.file_id)
                    .map(Vec::as_slice)
                    .unwrap_or(&[])
                    .iter()
                    .filter(|(row, _)| row.name == r.name || row.name == owner)
                    .flat_map(|(_, targets)| targets)
                    .collect();
                let imported: Vec<&DefinitionRow> = owned
                    .iter()
                    .copied()
                    .filter(|d| d.repository == r.repository && files.contains(&&d.file_path))
                    .collect();
                if !imported.is_empty() {
                    return spread(imported, Resolution::Import, 0.95);
                }
            }
            // Else the copies nearest the call's file (its source set's `actual` class).
            return spread(nearest(owned, r), Resolution::Qualified, 0.85);
        }
        if r.qualifier.is_some()
            && let Some(class) = class_of_call(r)
        {
            let inherited = self.inherited(callable, class, r, false);
            if !inherited.is_empty() {
                return spread(inherited, Resolution::Qualified, 0.8);
            }
        }
        // A method of a Rust primitive that neither it nor a trait of the index it implements
        // has is the standard library's (`count.saturating_sub(1)` on a `usize`).
        if ref_lang == "rust"
            && r.qualifier
                .as_deref()
                .is_some_and(|q| RUST_PRIMITIVES.contains(&q))
        {
            return Outcome::External;
        }
        // `super.close()` that no base class in the index defines reaches one outside it
        // (Rust's `super::` is a module path, resolved below).
        if matches!(r.qualifier.as_deref(), Some("super" | "base"))
            && matches!(ref_lang, "java" | "csharp" | "ruby" | "python")
        {
            return Outcome::External;
        }
        // 2. The file's imports.
        let imports = self
            .imports
            .get(&r.file_id)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let q_root = r.qualifier.as_deref().map(first_segment);
        let binding = |name: &str| -> Vec<&(ImportRow, Vec<String>)> {
            imports.iter().filter(|(row, _)| row.name == name).collect()
        };
        let in_files = |targets: &[String], receiver: bool| -> Vec<&DefinitionRow> {
            callable
                .iter()
                .copied()
                .filter(|d| d.repository == r.repository && targets.contains(&d.file_path))
                .filter(|d| receiver || d.kind != "method")
                .collect()
        };
        // A Rust path from the crate, this module or its parent (`crate::source::clean_path()`),
        // or from another crate of the repository that no import shadows
        // (`axum_core::body::Body::new()`, a binary's `codesearch::roots::remove()`).
        if let (Some(q), Some(root), "rust") = (&r.qualifier, q_root, ref_lang) {
            let crates = self.crates.get(&r.repository);
            let relative = matches!(root, "crate" | "self" | "super");
            if relative || (crates.is_some_and(|c| c.owns(root)) && binding(root).is_empty()) {
                let mut path: Vec<String> = q.split("::").map(str::to_owned).collect();
                path.push(r.name.clone());
                let keys = match crates {
                    _ if relative => super::imports::rust_candidates(&r.file_path, &path),
                    Some(c) => c.candidates(&path).unwrap_or_default(),
                    None => Vec::new(),
                };
                let files: Vec<String> = keys
                    .into_iter()
                    .map(|k| k.trim_start_matches('/').to_owned())
                    .collect();
                let hits = in_files(&files, false);
                if !hits.is_empty() {
                    return spread(hits, Resolution::Import, 0.95);
                }
            } else if q.contains("::")
                && crates.is_some_and(|c| c.is_external(root))
                && binding(root).is_empty()
            {
                // A path into a dependency (`tokio::sync::mpsc::channel()`) leaves the index. A
                // path of one segment may be a variable's (`bytes.len()` beside the `bytes`
                // crate).
                return Outcome::External;
            } else if root.starts_with(|c: char| c.is_lowercase())
                && binding(root).is_empty()
                && crates.is_none_or(|c| !c.is_external(root))
                && q.chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | ':'))
            {
                // A module no `use` names, which a glob (`use super::*`) brings in:
                // `testing::compile()` is `compile` at the top of the nearest `testing` module
                // file above the call's. A call on a variable is written alike (`value.join()`
                // beside `value.rs`): only a function at the top of the file is taken, never a
                // test function of its `mod tests`.
                let module: Vec<&str> = q.split("::").collect();
                let files = super::imports::rust_module_files(&r.file_path, &module);
                let mut hits = in_files(&files, false);
                hits.retain(|d| d.qualified == d.name);
                if let Some(file) = files
                    .iter()
                    .find(|f| hits.iter().any(|d| d.file_path == **f))
                {
                    let hits = hits.into_iter().filter(|d| d.file_path == *file).collect();
                    return spread(hits, Resolution::Import, 0.9);
                }
            }
        }
        // A module imported under the qualifier: `utils.parse()`, `store::open()`, Go's `pkg.F()`.
        if let Some(q_root) = q_root {
            let mut via = binding(q_root);
            via.retain(|(row, _)| !row.name.is_empty());
            if !via.is_empty() {
                let targets: Vec<String> = via.iter().flat_map(|(_, t)| t.clone()).collect();
                if targets.is_empty() {
                    return Outcome::External;
                }
                let mut hits = in_files(&targets, false);
                if hits.is_empty() {
                    // CommonJS's `module.exports = { parse: (s) => … }`: members of an object
                    // that no name owns are the module's functions.
                    hits = in_files(&targets, true);
                    hits.retain(|d| d.kind == "method" && d.qualified == d.name);
                }
                if !hits.is_empty() {
                    return spread(hits, Resolution::Import, 0.95);
                }
                // The module re-exports it, or it is a method on an imported value: go on.
            }
        }
        // Kotlin imports an extension function by its name, and calls it on a receiver:
        // `import okio.ByteString.Companion.encodeUtf8` then `name.encodeUtf8()`.
        let kotlin = is_kotlin(&r.file_path);
        let bare = r.qualifier.is_none();
        if bare || kotlin {
            let direct = binding(&r.name);
            if !direct.is_empty() {
                let targets: Vec<String> = direct.iter().flat_map(|(_, t)| t.clone()).collect();
                if targets.is_empty() && bare {
                    return Outcome::External;
                }
                let mut hits = in_files(&targets, false);
                if !bare {
                    hits.retain(|d| is_receiver_function(d));
                }
                if !hits.is_empty() {
                    return spread(hits, Resolution::Import, 0.95);
                }
                // A barrel (`index.ts`, `internal.ts`) that re-exports it: the modules it
                // re-exports from, where the name is a module-level definition.
                let through = if bare {
                    in_files(&self.reexported(&r.repository, &targets), false)
                } else {
                    Vec::new()
                };
                let top: Vec<&DefinitionRow> = through
                    .iter()
                    .copied()
                    .filter(|d| d.qualified == d.name)
                    .collect();
                if !top.is_empty() {
                    return spread(top, Resolution::Import, 0.9);
                }
            }
        }
        // C#'s extension methods (`static string FormatWith(this string s, …)`) are called on
        // a receiver of any type: a call whose name only extension methods define reaches them.
        if ref_lang == "csharp" && r.qualifier.is_some() {
            let methods = || callable.iter().copied().filter(|d| d.kind == "method");
            let extensions: Vec<&DefinitionRow> = methods().filter(|d| is_extension(d)).collect();
            if !extensions.is_empty() && methods().all(is_extension) {
                return spread(extensions, Resolution::NameOnly, 0.8);
            }
        }
        // So are Kotlin's (`fun Moshi.Builder.addAdapter()`, on `Moshi.Builder().addAdapter(a)`),
        // as sure as a bare call by the name alone: the standard library's `toLong()` or
        // `replace()`, which the index does not hold, share their names with some.
        if kotlin && r.qualifier.is_some() {
            let on_receivers = || {
                callable
                    .iter()
                    .copied()
                    .filter(|d| d.kind == "method" || is_receiver_function(d))
            };
            let extensions: Vec<&DefinitionRow> = on_receivers().collect();
            if !extensions.is_empty() && on_receivers().all(is_receiver_function) {
                return spread(extensions, Resolution::NameOnly, 0.5);
            }
        }
        // A qualifier written like a type (`Vec::new`, `Math.max`), or C++'s standard library,
        // that names no owner here and no import is a type from outside the index. C#'s
        // properties are capitalised too: `reader.Path` is a value, `System.IO.Path` a type.
        let upper = |s: &str| s.starts_with(|c: char| c.is_uppercase());
        if r.qualifier.as_deref().is_some_and(|q| {
            let type_like = if ref_lang == "csharp" {
                q.split('.').all(upper)
            } else {
                upper(last_segment(q))
            };
            type_like || first_segment(q) == "std"
        }) {
            return Outcome::External;
        }
        let receiver = r.qualifier.is_some();
        let q_last = r.qualifier.as_deref().map(last_segment).unwrap_or_default();
        let q_norm = normalized(q_last);
        let fits = |d: &&DefinitionRow| {
            if receiver {
                // JavaScript's `result.once = function` belongs to that object, not to a type:
                // another receiver (`body.once()`) reaches it only if it is named alike.
                (d.kind == "method" || (kotlin && is_receiver_function(d)))
                    && (ref_lang != "ecma"
                        || owner_last(&d.qualified).is_none_or(|o| {
                            !o.starts_with(|c: char| c.is_lowercase())
                                || candidates.resembles(&q_norm, o)
                        }))
            } else {
                d.kind != "method"
            }
        };
        // A call on a receiver whose type is unknown (`token.cancel()`) is weaker evidence
        // than a bare call, unless the receiver's name resembles the method's owner.
        let outcome = self.by_place(r, callable, receiver, &fits);
        match (outcome, r.qualifier.is_some()) {
            (Outcome::Targets(hits), true) => Outcome::Targets(
                hits.into_iter()
                    .map(|(d, how, c)| {
                        let boost = owner_last(&d.qualified)
                            .is_some_and(|o| candidates.resembles(&q_norm, o));
                        let c = if boost { (c * 1.5).min(0.85) } else { c };
                        (d, how, c)
                    })
                    .collect(),
            ),
            (outcome, _) => outcome,
        }
    }

    /// Go: which of `owned` (the methods of types named like the qualifier's last part) a
    /// call on a value of type `q` reaches. `pkg.T`'s are those of the package the file imports
    /// as `pkg`, and none in the index (`None`) when that package is outside it; `T`'s are
    /// those of the call's own package (its directory) if it has some. A qualifier that is no
    /// type (`mx.routes`, a field) keeps them all.
    fn go_owned<'a>(
        &self,
        r: &ReferenceRow,
        q: &str,
        owned: &[&'a DefinitionRow],
    ) -> Option<Vec<&'a DefinitionRow>> {
        if let Some((package, _)) = q.split_once('.') {
            let bound: Vec<&(ImportRow, Vec<String>)> = self
                .imports
                .get(&r.file_id)
                .map(Vec::as_slice)
                .unwrap_or(&[])
                .iter()
                .filter(|(row, _)| row.name == package)
                .collect();
            if bound.is_empty() {
                return Some(owned.to_vec());
            }
            let via: Vec<&String> = bound.iter().flat_map(|(_, targets)| targets).collect();
            let reached: Vec<&DefinitionRow> = owned
                .iter()
                .copied()
                .filter(|d| d.repository == r.repository && via.contains(&&d.file_path))
                .collect();
            return (!reached.is_empty()).then_some(reached);
        }
        let dir = parent_dir(&r.file_path);
        let own_package: Vec<&DefinitionRow> = owned
            .iter()
            .copied()
            .filter(|d| d.repository == r.repository && parent_dir(&d.file_path) == dir)
            .collect();
        Some(if own_package.is_empty() {
            owned.to_vec()
        } else {
            own_package
        })
    }

    /// Steps 3 to 5 of the resolution: the same file, wildcard imports, the same directory,
    /// the name alone.
    fn by_place<'a>(
        &'a self,
        r: &ReferenceRow,
        callable: &[&'a DefinitionRow],
        receiver: bool,
        fits: &dyn Fn(&&DefinitionRow) -> bool,
    ) -> Outcome<'a> {
        // A component's template calls its own methods bare (`@click="select(u)"`, the options
        // API's `methods`): its calls are the component's own (or the file's top level).
        let template = is_component(&r.file_path)
            && r.enclosing_qualified
                .as_deref()
                .is_none_or(|q| crate::parse::component_name(&r.file_path).is_some_and(|c| c == q));
        let implicit_self = !receiver && (template || calls_own_methods_bare(family(&r.file_path)));
        let mut local: Vec<&DefinitionRow> = callable
            .iter()
            .copied()
            .filter(|d| d.file_id == r.file_id)
            .filter(|d| fits(d) || (implicit_self && d.kind == "method"))
            .collect();
        // A function defined in a definition the call is in (`const escape = (a) => …` in the
        // method that calls `escape(…)`) is the one its scope sees, whatever other methods of
        // the file define by the same name.
        // The innermost scope wins: the one whose qualified name is the longest start of the
        // call's definition's (`S.insert.escape` for a call in `S.insert.createSubQuery`).
        if !receiver
            && local.len() > 1
            && let Some(around) = r.enclosing_qualified.as_deref()
        {
            let around = segments(around);
            let scope_of = |d: &DefinitionRow| -> Option<usize> {
                let own = segments(&d.qualified);
                let scope = &own[..own.len().saturating_sub(1)];
                (d.parent.is_some() && around.starts_with(scope)).then_some(scope.len())
            };
            if let Some(innermost) = local.iter().filter_map(|d| scope_of(d)).max() {
                local.retain(|d| scope_of(d) == Some(innermost));
            }
        }
        if !local.is_empty() {
            return spread(
                local,
                Resolution::SameFile,
                if receiver { 0.5 } else { 0.9 },
            );
        }
        // A method the class inherits: `SetToken(…)` in a `JsonTextReader : JsonReader`.
        if implicit_self && let Some(class) = r.enclosing_qualified.as_deref().and_then(owner_last)
        {
            let inherited = self.inherited(callable, class, r, true);
            if !inherited.is_empty() {
                return spread(inherited, Resolution::Qualified, 0.8);
            }
        }
        if !receiver {
            let imports = self
                .imports
                .get(&r.file_id)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let mut star: Vec<String> = imports
                .iter()
                .filter(|(row, _)| row.name == "*")
                .flat_map(|(_, t)| t.iter().cloned())
                .collect();
            // Dart's library file (`flutter_bloc.dart`) exports its `src/` files.
            if family(&r.file_path) == "dart" {
                let through = self.reexported(&r.repository, &star);
                star.extend(through);
            }
            // A C or C++ header declares what a source file of the same name defines:
            // `#include "str.h"` reaches `str.c`'s definitions.
            let implemented: Vec<&str> = if family(&r.file_path) == "c" {
                star.iter()
                    .filter(|p| is_header(p))
                    .map(|p| file_stem(p))
                    .collect()
            } else {
                Vec::new()
            };
            let hits: Vec<&DefinitionRow> = callable
                .iter()
                .copied()
                .filter(|d| {
                    d.repository == r.repository
                        && (star.contains(&d.file_path)
                            || (!is_header(&d.file_path)
                                && implemented.contains(&file_stem(&d.file_path))))
                })
                .filter(fits)
                .collect();
            if !hits.is_empty() {
                return spread(hits, Resolution::Import, 0.9);
            }
        }
        let dir = parent_dir(&r.file_path);
        // A Swift package target is a module, whatever its subdirectories, and a Java or Kotlin
        // package one whatever its source set (`src/main/java/a/b`, `src/test/java/a/b`,
        // `src/jvmMain/kotlin/a/b`): their files see each other's declarations without an
        // import.
        let module = swift_module(&r.file_path);
        let package = jvm_package(&r.file_path);
        let near: Vec<&DefinitionRow> = callable
            .iter()
            .copied()
            .filter(|d| {
                d.repository == r.repository
                    && (parent_dir(&d.file_path) == dir
                        || module.is_some_and(|m| swift_module(&d.file_path) == Some(m))
                        || package.is_some_and(|p| jvm_package(&d.file_path) == Some(p)))
            })
            .filter(fits)
            .collect();
        if !near.is_empty() {
            let base = match (receiver, family(&r.file_path)) {
                (true, _) => 0.3,
                // Go packages, Java packages and Swift modules: what one file names, its
                // package defines.
                (false, "go" | "java" | "swift") => 0.85,
                (false, _) => 0.5,
            };
            return spread(near, Resolution::SameModule, base);
        }
        let named: Vec<&DefinitionRow> = callable.iter().copied().filter(fits).collect();
        if named.is_empty() {
            return Outcome::External;
        }
        spread(
            named,
            Resolution::NameOnly,
            if receiver { 0.3 } else { 0.5 },
        )
    }
}

/// A name's [`Candidates`] for calls of one language family, and whether the call is a
/// macro's ([`Resolver::resolve`]).
type Callables<'a> = HashMap<(&'a str, &'static str, bool), Rc<Candidates<'a>>>;

/// The definitions of one name a call can reach, in the order they were loaded.
#[derive(Default)]
struct Candidates<'a> {
    all: Vec<&'a DefinitionRow>,
    /// The same, by the last segment of their owner ([`owner_last`]).
    by_owner: HashMap<&'a str, Vec<&'a DefinitionRow>>,
    /// Those owners, [`normalized`].
    owners: HashMap<&'a str, String>,
}

impl<'a> Candidates<'a> {
    /// A bare call never reaches a method; a call on a receiver reaches only methods (or
    /// functions of a module named by the qualifier, found through the imports). A macro's
    /// call (`name!`) reaches only macros, and nothing else does.
    fn new(loaded: &'a [DefinitionRow], lang: &str, macro_call: bool) -> Self {
        let all: Vec<&DefinitionRow> = loaded
            .iter()
            .filter(|d| family(&d.file_path) == lang)
            .filter(|d| is_callable(&d.kind) && (d.kind == "macro") == macro_call)
            .collect();
        let mut by_owner: HashMap<&str, Vec<&DefinitionRow>> = HashMap::new();
        for d in &all {
            if let Some(owner) = owner_last(&d.qualified) {
                by_owner.entry(owner).or_default().push(d);
            }
        }
        let owners = by_owner.keys().map(|o| (*o, normalized(o))).collect();
        Self {
            all,
            by_owner,
            owners,
        }
    }

    /// [`resembles`], for a receiver already [`normalized`] and an owner of these candidates
    /// (normalized once for them all).
    fn resembles(&self, receiver: &str, owner: &str) -> bool {
        match self.owners.get(owner) {
            Some(o) => resembles(receiver, o),
            None => resembles(receiver, &normalized(owner)),
        }
    }
}

/// The `hits` that take the call's `args` arguments best ([`super::arity::fit`]: as they are,
/// then with default values, then through `params`), sharing the confidence all of them had;
/// a signature that says nothing counts as a fit. All of them when none fits.
fn by_arity<'a>(
    r: &ReferenceRow,
    hits: Vec<(&'a DefinitionRow, Resolution, f32)>,
    args: u16,
) -> Vec<(&'a DefinitionRow, Resolution, f32)> {
    let grades: Vec<Option<Fit>> = hits
        .iter()
        .map(|(d, ..)| {
            // On a value, unless the qualifier is the method's own class: `s.FormatWith(p)`.
            let on_value = r
                .qualifier
                .as_deref()
                .is_some_and(|q| owner_last(&d.qualified) != Some(last_segment(q)));
            fit(&d.signature, &d.name, args, on_value).unwrap_or(Some(Fit::Exact))
        })
        .collect();
    let Some(best) = grades.iter().flatten().max().copied() else {
        return hits;
    };
    keep_sharing(hits, |i, _| grades[i] == Some(best))
}

/// Java's, Kotlin's and C#'s `private` definitions are called from their own class (or, in
/// Kotlin, file): from another file, the other candidates; in Java and Kotlin none when all are
/// private (`x.toLong()` is the standard library's, not a file's `private fun
/// LARGE_INTEGER.toLong()`), in C#, whose partial classes span files, all of them then.
fn visible_from<'a>(
    r: &ReferenceRow,
    hits: Vec<(&'a DefinitionRow, Resolution, f32)>,
) -> Vec<(&'a DefinitionRow, Resolution, f32)> {
    // The modifiers come before the parameters: `class Source(private val s: S)` is public.
    let visible = |d: &DefinitionRow| {
        let modifiers = d
            .signature
            .split(['(', '<', '=', '{'])
            .next()
            .unwrap_or_default();
        d.file_id == r.file_id || !modifiers.split_whitespace().any(|w| w == "private")
    };
    match family(&r.file_path) {
        "java" if !hits.iter().any(|(d, ..)| visible(d)) => Vec::new(),
        "java" | "csharp" => keep_sharing(hits, |_, d| visible(d)),
        _ => hits,
    }
}

/// The `hits` that `keep` keeps, with the confidence all of them had shared among them in
/// proportion; all of them when it keeps none.
fn keep_sharing(
    hits: Vec<(&DefinitionRow, Resolution, f32)>,
    keep: impl Fn(usize, &DefinitionRow) -> bool,
) -> Vec<(&DefinitionRow, Resolution, f32)> {
    let kept: Vec<bool> = hits.iter().enumerate().map(|(i, h)| keep(i, h.0)).collect();
    let n = kept.iter().filter(|k| **k).count();
    if n == 0 || n == hits.len() {
        return hits;
    }
    let total: f32 = hits.iter().map(|h| h.2).sum();
    let kept_total: f32 = hits
        .iter()
        .zip(&kept)
        .filter(|(_, k)| **k)
        .map(|(h, _)| h.2)
        .sum();
    let scale = if kept_total > 0.0 {
        total / kept_total
    } else {
        1.0
    };
    hits.into_iter()
        .zip(kept)
        .filter(|(_, k)| *k)
        .map(|((d, how, c), _)| (d, how, (c * scale).min(0.95)))
        .collect()
}

/// The class a call is made on (a qualifier written like a type, or `this` rewritten as one)
/// or, in the languages that call their own methods without `this.`, in.
fn class_of_call(r: &ReferenceRow) -> Option<&str> {
    // Go has no base classes: nothing to read for its calls. A Rust type's are what it
    // implements and derefs to ([`Resolver::load_bases`]).
    if matches!(family(&r.file_path), "go" | "other") {
        return None;
    }
    let enclosing_class = || r.enclosing_qualified.as_deref().and_then(owner_last);
    match r.qualifier.as_deref() {
        // `super.close()` (Java, Ruby), `base.Dispose()` (C#), Python's `super().close()`:
        // the class the call is in.
        Some("super" | "base")
            if matches!(family(&r.file_path), "java" | "csharp" | "ruby" | "python") =>
        {
            enclosing_class()
        }
        // A lambda's receivers: the first one known to be a class.
        Some(q) if q.starts_with(IMPLICIT_RECEIVER) => q[IMPLICIT_RECEIVER.len()..]
            .split(' ')
            .find(|c| !c.ends_with("()") && c.starts_with(|c: char| c.is_uppercase())),
        // A Rust primitive a crate's trait extends (`impl Ordinal for usize`) is a class too.
        Some(q) if RUST_PRIMITIVES.contains(&q) && family(&r.file_path) == "rust" => Some(q),
        Some(q) => {
            let last = last_segment(q);
            last.starts_with(|c: char| c.is_uppercase()).then_some(last)
        }
        None if calls_own_methods_bare(family(&r.file_path)) => enclosing_class(),
        None => None,
    }
}

/// Whether the file was read as a Vue, Svelte or Astro component.
fn is_component(path: &str) -> bool {
    matches!(
        crate::chunk::Language::from_path(path),
        crate::chunk::Language::Component(_)
    )
}

/// Java (and Kotlin), C#, C++, Ruby, Swift, Scala, Dart and Groovy call their own class's
/// methods without `this.`/`self.`.
fn calls_own_methods_bare(family: &str) -> bool {
    matches!(
        family,
        "java" | "csharp" | "c" | "ruby" | "swift" | "scala" | "dart" | "groovy"
    )
}

/// Kinds of definitions that can have base classes.
fn is_type(kind: &str) -> bool {
    matches!(kind, "class" | "struct" | "interface" | "module" | "trait")
}

/// Whether a C# method is an extension method: its first parameter is `this T x`. Read from
/// the signature as written, so that one cut short (240 characters) still says so.
fn is_extension(d: &DefinitionRow) -> bool {
    d.signature.contains("(this ")
}

/// Whether a file is Kotlin's.
fn is_kotlin(path: &str) -> bool {
    path.ends_with(".kt") || path.ends_with(".kts")
}

/// Whether a definition is a Kotlin extension function, one declared with a receiver type
/// before its name (`fun Buffer.readByte()`, `fun <T> List<T>.second()`), which its owner is.
/// Read from the signature as written, as [`is_extension`] is.
fn is_receiver_function(d: &DefinitionRow) -> bool {
    if d.kind != "function" || !is_kotlin(&d.file_path) {
        return false;
    }
    let Some(at) = d.signature.find("fun ") else {
        return false;
    };
    let head = &d.signature[at + 4..];
    head.find('(').is_some_and(|paren| {
        let before = head[..paren].trim_end();
        before
            .strip_suffix(d.name.as_str())
            .is_some_and(|rest| rest.ends_with('.'))
    })
}

/// Of several Kotlin extension functions a call may reach (`Buffer.commonReadByte` and
/// `RealBufferedSource.commonReadByte`), those for the class it is made on, when some are: its
/// receiver's type, or where it is bare, the class it is in (`this`). Other hits stay, and so
/// do all when none is for that class (a call that looks bare may be on a literal,
/// `"ab".encodeUtf8()`).
fn by_receiver<'a>(
    r: &ReferenceRow,
    hits: Vec<(&'a DefinitionRow, Resolution, f32)>,
) -> Vec<(&'a DefinitionRow, Resolution, f32)> {
    if !is_kotlin(&r.file_path) {
        return hits;
    }
    let Some(class) = class_of_call(r) else {
        return hits;
    };
    let for_class = |d: &DefinitionRow| owner_last(&d.qualified) == Some(class);
    if !hits
        .iter()
        .any(|(d, ..)| is_receiver_function(d) && for_class(d))
    {
        return hits;
    }
    keep_sharing(hits, |_, d| !is_receiver_function(d) || for_class(d))
}

/// Rust: of a type's inherent method and its trait impl's method of one name
/// (`DirEntry::path` in `impl DirEntry` and in `impl Colorable for DirEntry`), a call on the
/// type, by method or path syntax, reaches the inherent one. The trait's is reached through the
/// trait (`Colorable::path(&entry)`, a generic `T: Colorable`), which names another owner.
fn inherent_first(
    hits: Vec<(&DefinitionRow, Resolution, f32)>,
) -> Vec<(&DefinitionRow, Resolution, f32)> {
    if hits.len() < 2 || hits.iter().all(|(d, ..)| d.implements.is_none()) {
        return hits;
    }
    let shadowed = shadowed_by_inherent(hits.iter().map(|(d, ..)| *d));
    keep_sharing(hits, |i, _| !shadowed[i])
}

/// Rust: of a type's impls of one generic trait (`impl From<&str> for Value`, `impl From<bool>
/// for Value`), a call whose first argument is written as a type ([`arity::written_argument`]:
/// `Value::from("a")`) reaches the impl for that type, when one is among `hits`.
fn by_written_argument<'a>(
    r: &ReferenceRow,
    hits: Vec<(&'a DefinitionRow, Resolution, f32)>,
) -> Vec<(&'a DefinitionRow, Resolution, f32)> {
    let Some(written) = r.argument.as_deref() else {
        return hits;
    };
    if hits.len() < 2 {
        return hits;
    }
    keep_sharing(hits, |_, d| {
        d.implements
            .as_deref()
            .and_then(first_type_argument)
            .is_some_and(|a| arity::takes_written(a, written))
    })
}

/// The first type argument of a trait as stored: `&str` of `From<&str>`, `Vec<String>` of
/// `From<Vec<String>>`.
fn first_type_argument(implements: &str) -> Option<&str> {
    let (_, args) = implements.split_once('<')?;
    split_outside_brackets(args.strip_suffix('>')?, ',')
        .first()
        .copied()
}

/// For each of `defs`, whether it is a Rust trait impl's method that an inherent method of
/// `defs` (same repository, qualified name and kind) shadows: `DirEntry::path` of `impl
/// Colorable for DirEntry` beside that of `impl DirEntry`.
fn shadowed_by_inherent<'d>(defs: impl Iterator<Item = &'d DefinitionRow> + Clone) -> Vec<bool> {
    fn key(d: &DefinitionRow) -> (&str, &str, &str) {
        (&d.repository, &d.qualified, &d.kind)
    }
    let inherent: HashSet<(&str, &str, &str)> = defs
        .clone()
        .filter(|d| d.implements.is_none())
        .map(key)
        .collect();
    defs.map(|d| d.implements.is_some() && inherent.contains(&key(d)))
        .collect()
}

/// Each of `hits` with an equal share of `base`.
fn spread(hits: Vec<&DefinitionRow>, how: Resolution, base: f32) -> Outcome<'_> {
    let n = hits.len() as f32;
    Outcome::Targets(hits.into_iter().map(|d| (d, how, base / n)).collect())
}

/// The most confidence a call from another repository can reach `target` with by its name
/// alone (step 5 of the resolution), given the definitions of its name loaded: the step's
/// base (0.5 for a bare call, 0.3 raised by half for a receiver resembling the owner) over the
/// definitions the call would be spread over. Counted low (JavaScript methods of lowercase
/// owners fit some receivers only, and are left out), so the ceiling is never under the truth.
fn name_only_ceiling(target: &DefinitionRow, loaded: &[DefinitionRow]) -> f32 {
    let method = target.kind == "method";
    let lang = family(&target.file_path);
    let always_fits = |d: &DefinitionRow| {
        is_callable(&d.kind)
            && family(&d.file_path) == lang
            && (d.kind == "macro") == (target.kind == "macro")
            && (d.kind == "method") == method
            && !(method
                && lang == "ecma"
                && owner_last(&d.qualified).is_some_and(|o| o.starts_with(char::is_lowercase)))
    };
    let others = loaded
        .iter()
        .filter(|d| !(d.file_id == target.file_id && d.ordinal == target.ordinal))
        .filter(|d| always_fits(d))
        .count();
    let n = (others + 1) as f32;
    if method {
        (0.45 / n).min(0.85)
    } else {
        0.5 / n
    }
}

/// Whether a receiver's name suggests the type: `token` and `CancellationToken`, `param`
/// and `Parameter`, `repo` and `UserRepository`. Both names are [`normalized`].
fn resembles(receiver: &str, owner: &str) -> bool {
    receiver.len() >= 3 && (owner.contains(receiver) || receiver.contains(owner))
}

/// A name as [`resembles`] compares it: lower case, without underscores (nor the `@` of a
/// Ruby instance variable).
fn normalized(name: &str) -> String {
    name.replace(['_', '@'], "").to_lowercase()
}

/// What `cache` holds for `repository`, if it was read under `fingerprint`.
fn cached<T>(cache: &ManifestCache<T>, repository: &str, fingerprint: u64) -> Option<Arc<T>> {
    crate::lock(cache)
        .get(repository)
        .filter(|(known, _)| *known == fingerprint)
        .map(|(_, read)| read.clone())
}

fn read_go_module(go_mod: std::path::PathBuf) -> Option<String> {
    let text = std::fs::read_to_string(go_mod).ok()?;
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("module")?;
        let m = rest.trim().trim_matches('"');
        (!m.is_empty()).then(|| m.to_owned())
    })
}

fn is_header(path: &str) -> bool {
    matches!(
        path.rsplit('.').next().unwrap_or_default(),
        "h" | "hh" | "hpp" | "hxx" | "h++"
    )
}

/// `src/str.c` -> `str`.
fn file_stem(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.split('.').next().unwrap_or(file)
}

/// Of `defs`, those whose files share the most leading directories with `r`'s in its
/// repository: okio's `jvmMain/kotlin/okio/ForwardingSource.kt` for a call in
/// `jvmMain/kotlin/okio/HashingSource.kt`, not the `commonMain` or `nonJvmMain` copies.
fn nearest<'a>(defs: Vec<&'a DefinitionRow>, r: &ReferenceRow) -> Vec<&'a DefinitionRow> {
    nearest_by(defs, r, |d| (&d.repository, &d.file_path))
}

/// Those of `items` in `r`'s repository whose files (`place`: repository and path) share the
/// longest path with `r`'s; all of them when none is in its repository.
fn nearest_by<T>(items: Vec<T>, r: &ReferenceRow, place: impl Fn(&T) -> (&str, &str)) -> Vec<T> {
    let near = |t: &T| {
        let (repository, path) = place(t);
        (repository == r.repository).then(|| common_prefix(path, &r.file_path))
    };
    let best = items.iter().map(near).max().flatten();
    if best.is_none() {
        return items;
    }
    items.into_iter().filter(|t| near(t) == best).collect()
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.split('/')
        .zip(b.split('/'))
        .take_while(|(x, y)| x == y)
        .count()
}

/// The Swift package target a Swift file belongs to, its module: `ArgumentParser` of
/// `Sources/ArgumentParser/Parsing/Name.swift` (or `Tests/…`, at any depth).
fn swift_module(path: &str) -> Option<&str> {
    if !path.ends_with(".swift") {
        return None;
    }
    let mut segments = path.split('/');
    segments.find(|s| matches!(*s, "Sources" | "Tests"))?;
    let module = segments.next()?;
    // The target's directory, not the file itself.
    segments.next().map(|_| module)
}

/// The package directory of a Java or Kotlin file under a Gradle or Maven source root,
/// `src/<set>/java/` or `src/<set>/kotlin/`: `com/squareup/moshi` of
/// `moshi/src/main/java/com/squareup/moshi/Moshi.kt`; `None` elsewhere, or in the default
/// package.
fn jvm_package(path: &str) -> Option<&str> {
    if family(path) != "java" {
        return None;
    }
    let dir = parent_dir(path);
    // The source root: a `java` or `kotlin` directory two below a `src`.
    let (mut two_up, mut one_up) = ("", "");
    let mut end = 0;
    for segment in dir.split('/') {
        end += segment.len() + 1;
        if matches!(segment, "java" | "kotlin") && two_up == "src" {
            return dir.get(end..).filter(|p| !p.is_empty());
        }
        (two_up, one_up) = (one_up, segment);
    }
    None
}

fn parent_dir(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

/// Languages whose code can call each other's definitions.
fn family(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or_default() {
        "ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs" | "vue" | "svelte"
        | "astro" | "mdx" => "ecma",
        "py" | "pyi" | "ipynb" => "python",
        "rs" => "rust",
        "go" => "go",
        // Kotlin and Java call each other in one program (Android's, moshi's): one family.
        "java" | "kt" | "kts" => "java",
        "cs" => "csharp",
        "c" | "h" | "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ipp" | "tpp" => {
            "c"
        }
        "rb" | "rake" | "gemspec" => "ruby",
        // Read by their outline (intel/outline.rs): calls resolve within their own language.
        "php" => "php",
        "swift" => "swift",
        "scala" | "sc" => "scala",
        "ex" | "exs" => "elixir",
        "lua" => "lua",
        "dart" => "dart",
        "groovy" | "gradle" => "groovy",
        _ => "other",
    }
}

/// Whether a module's `export … from` (JavaScript, TypeScript) or `export '…'` (Dart) re-export
/// what other files define, which a name imported from it is followed into.
fn has_reexports(path: &str) -> bool {
    matches!(family(path), "ecma" | "dart")
}

/// The name a call of `d` is recorded under: a macro's is `name!`, as written.
fn called_as(d: &DefinitionRow) -> std::borrow::Cow<'_, str> {
    if d.kind == "macro" {
        format!("{}!", d.name).into()
    } else {
        d.name.as_str().into()
    }
}

/// The name a call's target is defined under: `write!` calls the macro `write`.
fn defined_as(called: &str) -> &str {
    called.strip_suffix('!').unwrap_or(called)
}

/// Kinds a call can reach: functions, methods, and classes or structs (constructors,
/// tuple structs).
fn is_callable(kind: &str) -> bool {
    matches!(
        kind,
        "function" | "method" | "class" | "struct" | "macro" | "enum" | "component"
    )
}

/// A symbol's parts: `Stack::push`, `Stack.push`, Ruby's `Stack#push` and `a/b.py`
/// separators. A `#` that starts a name is part of it (TypeScript's private `Ky.#retry`).
fn segments(symbol: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in symbol.chars() {
        match c {
            '.' | ':' | '/' | '\\' => out.push(std::mem::take(&mut current)),
            '#' if !current.trim().is_empty() => out.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    out.push(current);
    out.into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty() && s != "#")
        .collect()
}

/// The keys among `keys` that `loaded` does not hold yet, sorted and without repeats.
fn not_loaded<K: Ord + std::hash::Hash, V>(
    keys: impl IntoIterator<Item = K>,
    loaded: &HashMap<K, V>,
) -> Vec<K> {
    let mut missing: Vec<K> = keys
        .into_iter()
        .filter(|k| !loaded.contains_key(k))
        .collect();
    missing.sort_unstable();
    missing.dedup();
    missing
}

fn last_segment(s: &str) -> &str {
    s.rsplit(['.', ':']).next().unwrap_or(s)
}

/// The names whose imports resolving `r` looks at ([`Resolver::resolve`]): its own, its
/// qualifier's first part (a module, a package, a namespace), and wildcards.
fn import_names(r: &ReferenceRow) -> impl Iterator<Item = &str> {
    let qualifier = r.qualifier.as_deref().unwrap_or_default();
    let qualifiers = match qualifier.strip_prefix(IMPLICIT_RECEIVER) {
        // A lambda's receivers, each a class or a call.
        Some(receivers) => receivers.split(' ').collect::<Vec<_>>(),
        None if qualifier.is_empty() => Vec::new(),
        None => vec![qualifier],
    };
    ["*", r.name.as_str()]
        .into_iter()
        .chain(qualifiers.into_iter().map(first_segment))
}

/// The last call of a receiver written as calls, as a call at `r`'s place: `route` on
/// `Router::new()` of a chain `Router::new().route()`, `read` on `fileSystem` of the lambda's
/// receiver `fileSystem.read()` ([`IMPLICIT_RECEIVER`]); `None` for a class (`Buffer`).
fn chain_call(r: &ReferenceRow, receiver: &str) -> Option<ReferenceRow> {
    let call = receiver.strip_suffix("()")?;
    let (qualifier, name) = match call.rfind(['.', ':']) {
        Some(i) => (
            Some(call[..i].trim_end_matches(':').to_owned()),
            &call[i + 1..],
        ),
        None => (None, call),
    };
    (!name.is_empty()).then(|| ReferenceRow {
        name: name.to_owned(),
        qualifier,
        args: None,
        ..r.clone()
    })
}

/// Whether a type's name is that of a generic's type parameter, as Rust names them (`T`,
/// `V`, `S2`), which no call can be resolved on.
fn is_type_parameter(name: &str) -> bool {
    name.len() <= 2
        && name.starts_with(|c: char| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// The class every definition a call may be returns, as `returns` reads each (a TypeScript
/// function's overloads and its implementation, each with a share of the confidence), when
/// they agree and together reach [`CHAIN_FLOOR`].
fn agreed_return(
    hits: &[(&DefinitionRow, Resolution, f32)],
    returns: impl Fn(&DefinitionRow) -> Option<String>,
) -> Option<String> {
    let mut class: Option<String> = None;
    let mut total = 0.0;
    for (d, _, confidence) in hits {
        let returned = returns(d)?;
        if class.as_ref().is_some_and(|c| *c != returned) {
            return None;
        }
        class = Some(returned);
        total += confidence;
    }
    class.filter(|_| total >= CHAIN_FLOOR)
}

/// Whether a qualifier is a receiver chain (`Router::new().route()`, see
/// [`super::extract`]'s `receiver_chain`), which [`Resolver::chain_class`] follows.
fn is_chain(qualifier: &str) -> bool {
    qualifier.ends_with("()") && !qualifier.starts_with(IMPLICIT_RECEIVER)
}

/// The calls resolving `refs` needs first: those whose lambdas hold their calls without a
/// receiver, and those their receiver chains are made of, so that their names, imports and
/// bases are read too.
fn receiver_calls(refs: &[ReferenceRow]) -> Vec<ReferenceRow> {
    let mut out = Vec::new();
    for r in refs {
        let Some(q) = r.qualifier.as_deref() else {
            continue;
        };
        if let Some(receivers) = q.strip_prefix(IMPLICIT_RECEIVER) {
            out.extend(receivers.split(' ').filter_map(|x| chain_call(r, x)));
        } else {
            // An element of what a chain returns is read through the chain's calls.
            let chain_of = |q: &str| -> Option<String> {
                match after_chain(q) {
                    Some((chain, _)) => Some(chain.to_owned()),
                    None => is_chain(q).then(|| q.to_owned()),
                }
            };
            let mut next = chain_of(q).and_then(|c| chain_call(r, &c));
            while let Some(call) = next {
                next = call
                    .qualifier
                    .as_deref()
                    .and_then(chain_of)
                    .and_then(|c| chain_call(&call, &c));
                out.push(call);
            }
        }
    }
    out
}

/// The receiver a Kotlin function declares for a lambda parameter, the last one written
/// (`readerAction: BufferedSource.() -> T`, `block: suspend CoroutineScope.() -> Unit`).
fn lambda_receiver(signature: &str) -> Option<&str> {
    static RECEIVER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r":\s*(?:@\w+\s+)*(?:suspend\s+)?(?:[a-z]\w*\.)*([A-Z]\w*)(?:<[^<>]*>)?\.\s*\(")
            .expect("a valid regex")
    });
    RECEIVER
        .captures_iter(signature)
        .last()
        .and_then(|c| c.get(1))
        .map(|m| m.as_str())
}

/// The class a definition returns ([`super::returns`]): a class or struct called as a
/// function (Python's `Client()`) and a constructor return their own.
fn returned(d: &DefinitionRow) -> Option<String> {
    match d.kind.as_str() {
        "class" | "struct" => Some(d.name.clone()),
        "constructor" => Some(owner_last(&d.qualified).unwrap_or(&d.name).to_owned()),
        _ => super::returns::returned_class(
            family(&d.file_path),
            &d.signature,
            &d.name,
            owner_last(&d.qualified),
        ),
    }
}

/// A Rust qualifier that is a type's field path, after extraction wrote the variable or
/// `self` as its type (`Recipe.attributes`, `Body.0`, `Config.color.palette`), or a pattern's
/// name as its enum variant's field (`Expression::And.lhs`): the type and the fields; `None`
/// for any other qualifier (a path, a chain, a variable).
fn field_path(r: &ReferenceRow) -> Option<(&str, Vec<&str>)> {
    // Read for every call resolved: the qualifier's shape is checked before the language.
    let (class, fields) = r.qualifier.as_deref()?.split_once('.')?;
    if !class.starts_with(|c: char| c.is_uppercase()) || family(&r.file_path) != "rust" {
        return None;
    }
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
    let type_path = match class.split_once("::") {
        Some((ty, variant)) => ident(ty) && ident(variant),
        None => ident(class),
    };
    let fields: Vec<&str> = fields.split('.').collect();
    (type_path
        && fields
            .iter()
            .all(|f| (ident(f) && *f != "await") || *f == ELEMENT))
    .then_some((class, fields))
}

/// Of the members of several types of one name, those of the call `r`'s file, else of its
/// repository's files nearest it (the longest common path), else all.
fn nearest_members<'a>(members: Vec<&'a MemberRow>, r: &ReferenceRow) -> Vec<&'a MemberRow> {
    if members.iter().any(|m| m.file_id == r.file_id) {
        return members
            .into_iter()
            .filter(|m| m.file_id == r.file_id)
            .collect();
    }
    nearest_by(members, r, |m| (&m.repository, &m.file_path))
}

/// The type `members` all name; `None` when there are none or they disagree.
fn agreed_type(members: Vec<&MemberRow>) -> Option<String> {
    let (first, rest) = members.split_first()?;
    rest.iter()
        .all(|m| m.ty == first.ty)
        .then(|| first.ty.clone())
}

/// The bases a Rust type's members give it, in the order its methods are looked up: what it
/// aliases (the same type), the traits it implements, what it derefs to.
fn member_bases(members: Option<&Vec<MemberRow>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for kind in ["alias", "trait", "deref"] {
        for m in members.into_iter().flatten().filter(|m| m.kind == kind) {
            if !out.contains(&m.ty) {
                out.push(m.ty.clone());
            }
        }
    }
    out
}

fn first_segment(s: &str) -> &str {
    s.split(['.', ':']).next().unwrap_or(s)
}

/// `Stack` of `Stack::push` and `a.Stack.push`; `None` for a top-level name.
fn owner_last(qualified: &str) -> Option<&str> {
    let cut = qualified.rfind(['.', ':'])?;
    let owner = qualified[..cut].trim_end_matches(':');
    Some(last_segment(owner))
}

/// The segment before a qualified name's last (`Stack` of `Stack::new`), which a definition
/// that [`qualifies`] holds in its qualified name or its path.
fn owner_segment(segments: &[String]) -> Option<&str> {
    (segments.len() > 1).then(|| segments[segments.len() - 2].as_str())
}

/// Whether a definition answers to a qualified name: the name's parts are the last parts of
/// the definition's module path (from its file path) followed by its qualified name.
fn qualifies(d: &DefinitionRow, wanted: &[String]) -> bool {
    let path = d.file_path.as_str();
    let stem = path.rsplit_once('.').map_or(path, |(s, _)| s);
    let mut full: Vec<&str> = stem
        .split('/')
        .filter(|s| !matches!(*s, "mod" | "lib" | "main" | "__init__" | "index"))
        .collect();
    let q = segments(&d.qualified);
    full.extend(q.iter().map(String::as_str));
    full.len() >= wanted.len()
        && full[full.len() - wanted.len()..]
            .iter()
            .zip(wanted)
            .all(|(a, b)| *a == b.as_str())
}

/// A test function or a member of a test module: `test_parse`, `tests::parses`, `TestParse`.
fn is_test_symbol(qualified: &str, name: &str) -> bool {
    name.starts_with("test_")
        || name.starts_with("Test")
        || segments(qualified)
            .iter()
            .any(|s| s == "tests" || s == "test")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names_match_by_their_last_parts() {
        let d = DefinitionRow {
            repository: "r".into(),
            file_id: 1,
            file_path: "src/auth/routes.py".into(),
            language: Some("python".into()),
            ordinal: 0,
            name: "login".into(),
            qualified: "login".into(),
            kind: "function".into(),
            signature: String::new(),
            start_line: 1,
            end_line: 2,
            parent: None,
            implements: None,
        };
        assert!(qualifies(&d, &segments("auth.routes.login")));
        assert!(qualifies(&d, &segments("routes.login")));
        assert!(!qualifies(&d, &segments("users.login")));
        let m = DefinitionRow {
            file_path: "src/stack/mod.rs".into(),
            qualified: "Stack::push".into(),
            name: "push".into(),
            ..d
        };
        assert!(qualifies(&m, &segments("Stack::push")));
        assert!(qualifies(&m, &segments("stack::Stack::push")));
        assert_eq!(segments("Stack#push"), ["Stack", "push"]);
        assert_eq!(segments("#retry"), ["#retry"]);
        assert_eq!(segments("Ky.#retry"), ["Ky", "#retry"]);
        assert_eq!(owner_last("Stack::push"), Some("Stack"));
        assert_eq!(owner_last("a.B.c"), Some("B"));
        assert_eq!(owner_last("push"), None);
    }

    #[test]
    fn a_swift_file_belongs_to_its_package_target() {
        for (path, module) in [
            (
                "Sources/ArgumentParser/Parsing/Name.swift",
                Some("ArgumentParser"),
            ),
            (
                "Tests/ArgumentParserUnitTests/HelpTests.swift",
                Some("ArgumentParserUnitTests"),
            ),
            ("packages/kit/Sources/Kit/Kit.swift", Some("Kit")),
            ("Sources/main.swift", None),
            ("App/Views/Home.swift", None),
            ("Sources/ArgumentParser/Name.kt", None),
        ] {
            assert_eq!(swift_module(path), module, "{path}");
        }
    }

    #[test]
    fn a_jvm_file_belongs_to_the_package_under_its_source_root() {
        for (path, package) in [
            (
                "moshi/src/main/java/com/squareup/moshi/Moshi.kt",
                Some("com/squareup/moshi"),
            ),
            ("src/test/java/com/x/FooTest.java", Some("com/x")),
            ("okio/src/jvmMain/kotlin/okio/Buffer.kt", Some("okio")),
            ("src/main/java/Main.java", None),
            ("lib/com/x/Foo.java", None),
            ("src/main/java/com/x/util.py", None),
        ] {
            assert_eq!(jvm_package(path), package, "{path}");
        }
    }

    #[test]
    fn receivers_resemble_the_types_they_hold() {
        let alike = |r: &str, o: &str| resembles(&normalized(r), &normalized(o));
        assert!(alike("token", "CancellationToken"));
        assert!(alike("user_repo", "UserRepository"));
        assert!(alike("repo", "UserRepository"));
        assert!(alike("param", "Parameter"));
        assert!(!alike("db", "Database"), "too short to say");
        assert!(!alike("reader", "Writer"));
    }

    #[test]
    fn test_functions_are_recognised_by_name() {
        assert!(is_test_symbol("tests::parses", "parses"));
        assert!(!is_test_symbol("Parser::parse", "parse"));
    }
}
