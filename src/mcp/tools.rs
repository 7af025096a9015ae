//! The MCP tools: their schemas, and how each maps to a request of the wire contract.
//!
//! Every tool's arguments are the fields of one wire request (same camelCase names), so the
//! daemon validates them as it validates any request; here they are checked against the
//! tool's own schema first (unknown, missing and mistyped arguments), so a client hears what to
//! change without a round trip.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::bus::Kind;

/// One tool.
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The request it sends.
    pub kind: Kind,
    /// Properties of the input schema: name, JSON type, description.
    pub args: &'static [Arg],
    pub required: &'static [&'static str],
    /// Properties of the output schema (the reply's main fields).
    pub output: &'static [(&'static str, &'static str)],
    pub read_only: bool,
    /// Extra fields the request carries (the `action` of a status request).
    pub fixed: &'static [(&'static str, &'static str)],
    /// Arguments renamed on their way to the request (`repository` -> `name`).
    pub renamed: &'static [(&'static str, &'static str)],
}

/// One argument.
pub struct Arg {
    pub name: &'static str,
    /// `string`, `integer`, `number` or `strings` (an array of strings).
    pub ty: &'static str,
    pub description: &'static str,
    /// Allowed values of a string.
    pub one_of: &'static [&'static str],
}

const fn arg(name: &'static str, ty: &'static str, description: &'static str) -> Arg {
    Arg {
        name,
        ty,
        description,
        one_of: &[],
    }
}

const WORKSPACE: Arg = arg(
    "workspace",
    "string",
    "Workspace (tenant) to read. Omit for the default workspace. Results never leave it.",
);

pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "codesearch_search",
        title: "Search the code",
        description: "Find the code relevant to a question or an identifier in the indexed \
            repositories: hybrid search (meaning and exact words). Use plain words for intent \
            (\"where are invoice totals validated\") or paste identifiers and error messages. \
            Returns chunks (whole functions, classes, sections) with file path, line range, \
            symbol and score, best first. Narrow with fileTypes, languages, repository or \
            pathGlob; page with offset.",
        kind: Kind::Search,
        args: &[
            arg(
                "query",
                "string",
                "What to look for, in words or code. A long query (20 words or more) is \
                 matched by meaning on its first sentence and by words on all of it: say the \
                 gist first.",
            ),
            arg(
                "limit",
                "integer",
                "Results to return (default 5, at most the daemon's search.max_limit, 100).",
            ),
            arg("offset", "integer", "Results to skip, for paging."),
            arg(
                "fileTypes",
                "strings",
                "Only files with these extensions, without the dot: [\"ts\", \"tsx\"].",
            ),
            arg(
                "languages",
                "strings",
                "Only these languages: [\"rust\", \"python\", \"typescript\", ...].",
            ),
            arg(
                "modules",
                "strings",
                "Only these modules (from the daemon's module rules).",
            ),
            arg(
                "componentTypes",
                "strings",
                "Only these component types: [\"service\", \"resolver\", \"test\", ...].",
            ),
            arg(
                "repository",
                "string",
                "Only this repository of the workspace.",
            ),
            arg(
                "pathGlob",
                "string",
                "Only paths matching this glob: \"src/**/*.ts\".",
            ),
            Arg {
                name: "mode",
                ty: "string",
                description: "hybrid (default), vector (meaning only) or lexical (words only).",
                one_of: &["hybrid", "vector", "lexical"],
            },
            arg(
                "minSimilarity",
                "number",
                "Drop results whose cosine similarity is below this (-1 to 1).",
            ),
            WORKSPACE,
        ],
        required: &["query"],
        output: &[
            ("success", "boolean"),
            ("results", "array"),
            ("totalFound", "integer"),
            ("workspace", "string"),
        ],
        read_only: true,
        fixed: &[],
        renamed: &[],
    },
    ToolSpec {
        name: "codesearch_context",
        title: "Code context for a task",
        description: "Given a task in prose (a ticket's title and body), return one block of \
            the code it most likely needs, headed RELEVANT CODEBASE CONTEXT: whole definitions, \
            most relevant first, grouped by file under path:start-end headers, within a token \
            budget. Use it once at the start of a task; then use codesearch_search and \
            codesearch_file_context for details.",
        kind: Kind::Context,
        args: &[
            arg(
                "task",
                "string",
                "The task in prose: its title first, then a blank line and its description \
                 (the title is what the code is matched to by meaning).",
            ),
            arg(
                "budgetTokens",
                "integer",
                "Largest block in tokens (default 4000; 100 to the daemon's \
                 context.max_budget_tokens).",
            ),
            arg(
                "repository",
                "string",
                "Only this repository of the workspace.",
            ),
            arg(
                "fileTypes",
                "strings",
                "Only files with these extensions, without the dot.",
            ),
            arg("languages", "strings", "Only these languages."),
            arg("pathGlob", "string", "Only paths matching this glob."),
            WORKSPACE,
        ],
        required: &["task"],
        output: &[
            ("success", "boolean"),
            ("block", "string"),
            ("tokens", "integer"),
            ("budgetTokens", "integer"),
            ("files", "array"),
        ],
        read_only: true,
        fixed: &[],
        renamed: &[],
    },
    ToolSpec {
        name: "codesearch_file_context",
        title: "Read lines of a file",
        description: "Read lines of an indexed file, with lines around them: the whole \
            function a search result points into, or what surrounds a line. The path is \
            relative to its repository's root, as search results give it (filePath). \
            Returns the lines, the range returned, the file's line count, and stale: true when \
            the file changed since it was indexed.",
        kind: Kind::File,
        args: &[
            arg(
                "path",
                "string",
                "The file's path relative to its repository root (a search result's filePath).",
            ),
            arg(
                "repository",
                "string",
                "The file's repository; needed only when several repositories hold the path.",
            ),
            arg("startLine", "integer", "First line, 1-based (default 1)."),
            arg(
                "endLine",
                "integer",
                "Last line, inclusive (default: the end of the file, at most 2000 lines).",
            ),
            arg(
                "context",
                "integer",
                "Lines to add before and after the range (0 to 200, default 0).",
            ),
            WORKSPACE,
        ],
        required: &["path"],
        output: &[
            ("success", "boolean"),
            ("path", "string"),
            ("repository", "string"),
            ("startLine", "integer"),
            ("endLine", "integer"),
            ("totalLines", "integer"),
            ("content", "string"),
            ("stale", "boolean"),
        ],
        read_only: true,
        fixed: &[],
        renamed: &[],
    },
    ToolSpec {
        name: "codesearch_index_status",
        title: "Index status",
        description: "What the index holds: the workspace's repositories (or one), each with \
            its state (initializing, indexing, ready, failed and why), files, chunks, lines, \
            languages, vectors still pending and files that could not be indexed. Check it \
            when a search finds nothing you expected.",
        kind: Kind::Repo,
        args: &[
            arg("repository", "string", "Only this repository."),
            WORKSPACE,
        ],
        required: &[],
        output: &[
            ("success", "boolean"),
            ("workspace", "string"),
            ("repository", "object"),
            ("repositories", "array"),
        ],
        read_only: true,
        fixed: &[("action", "status")],
        renamed: &[("repository", "name")],
    },
    ToolSpec {
        name: "codesearch_repo_request",
        title: "Add or remove a repository",
        description: "Ask the daemon to index a repository, stop indexing one, or list them. \
            add takes a directory (absolute, under the daemon's allowed roots) as path, or a \
            git URL as url, and returns at once: indexing goes on in the background (follow \
            it with action status). remove deletes what a request added.",
        kind: Kind::Repo,
        args: &[
            Arg {
                name: "action",
                ty: "string",
                description: "add, remove, list or status.",
                one_of: &["add", "remove", "list", "status"],
            },
            arg(
                "name",
                "string",
                "Repository name (add: default the directory's or URL's last part; remove and \
                 status: required).",
            ),
            arg(
                "path",
                "string",
                "add: an absolute directory on the daemon's machine.",
            ),
            arg(
                "url",
                "string",
                "add: a git URL (https://, ssh://, git@host:path).",
            ),
            WORKSPACE,
        ],
        required: &["action"],
        output: &[
            ("success", "boolean"),
            ("workspace", "string"),
            ("repository", "object"),
            ("repositories", "array"),
        ],
        read_only: false,
        fixed: &[],
        renamed: &[],
    },
    ToolSpec {
        name: "codesearch_symbols",
        title: "Find definitions by name",
        description: "Where a function, method, class, struct, trait, interface, type, constant or \
            module-level variable is defined (kind, qualified name, file, lines, signature), then \
            the call sites that name it. query is a name (push), a qualified name (Stack::push, \
            UserService.find, auth.routes.login) or, with match prefix, the start of names.",
        kind: Kind::Symbols,
        args: &[
            arg("query", "string", "A name, qualified or not."),
            Arg {
                name: "match",
                ty: "string",
                description: "exact (default) or prefix (names starting with query, any case).",
                one_of: &["exact", "prefix"],
            },
            arg(
                "kinds",
                "strings",
                "Only these kinds (function, method, class, ...).",
            ),
            arg(
                "language",
                "string",
                "Only this language (rust, python, typescript, ...).",
            ),
            arg("repository", "string", "Only this repository."),
            arg("limit", "integer", "Most definitions (default 50)."),
            arg("offset", "integer", "Definitions to skip, for paging."),
            WORKSPACE,
        ],
        required: &["query"],
        output: &[
            ("success", "boolean"),
            ("definitions", "array"),
            ("references", "array"),
            ("hasMore", "boolean"),
        ],
        read_only: true,
        fixed: &[],
        renamed: &[],
    },
    ToolSpec {
        name: "codesearch_trace_callers",
        title: "Who calls this",
        description: "The call sites that call a definition, each with the function it is in \
            and how the call was resolved (import, same_file, qualified, same_module, \
            name_only) with a confidence: calls on a receiver of unknown type are linked by \
            name only and say so. A name several definitions have is an error listing them: \
            ask again with a qualified name, path or line. No callers is an empty list.",
        kind: Kind::Callers,
        args: SYMBOL_ARGS,
        required: &["symbol"],
        output: CALLS_OUTPUT,
        read_only: true,
        fixed: &[],
        renamed: &[],
    },
    ToolSpec {
        name: "codesearch_trace_callees",
        title: "What this calls",
        description: "The calls a definition makes, each with the definition it resolves to \
            and how (external when it is outside the indexed code: a library, the standard \
            library, a builtin).",
        kind: Kind::Callees,
        args: SYMBOL_ARGS,
        required: &["symbol"],
        output: CALLS_OUTPUT,
        read_only: true,
        fixed: &[],
        renamed: &[],
    },
    ToolSpec {
        name: "codesearch_trace_graph",
        title: "Call graph around a definition",
        description: "Nodes (definitions, with the depth at which they were reached) and \
            edges (caller to callee, with the call's line, resolution and confidence) around \
            a definition, callers, callees or both, within a depth and a node limit. Cycles \
            (recursion) are walked once.",
        kind: Kind::Graph,
        args: &[
            SYMBOL,
            SYMBOL_PATH,
            SYMBOL_LINE,
            Arg {
                name: "direction",
                ty: "string",
                description: "callers, callees or both (default).",
                one_of: &["callers", "callees", "both"],
            },
            arg("depth", "integer", "Levels to walk (default 2, at most 6)."),
            arg(
                "maxNodes",
                "integer",
                "Most nodes (default 50, at most 500).",
            ),
            arg(
                "minConfidence",
                "number",
                "Leave out edges less sure than this, 0 to 1 (default 0.35).",
            ),
            arg(
                "repository",
                "string",
                "The repository that defines the symbol.",
            ),
            WORKSPACE,
        ],
        required: &["symbol"],
        output: &[
            ("success", "boolean"),
            ("root", "string"),
            ("nodes", "array"),
            ("edges", "array"),
            ("truncated", "boolean"),
        ],
        read_only: true,
        fixed: &[],
        renamed: &[],
    },
    ToolSpec {
        name: "codesearch_impact",
        title: "What breaks if this changes",
        description: "The transitive callers of a definition up to a depth, grouped by file, \
            tests marked and listed last: the code to check, and the tests to run, after \
            changing it.",
        kind: Kind::Impact,
        args: &[
            SYMBOL,
            SYMBOL_PATH,
            SYMBOL_LINE,
            arg(
                "depth",
                "integer",
                "Levels of callers (default 3, at most 6).",
            ),
            arg(
                "minConfidence",
                "number",
                "Leave out calls less sure than this, 0 to 1 (default 0.35).",
            ),
            arg(
                "repository",
                "string",
                "The repository that defines the symbol.",
            ),
            WORKSPACE,
        ],
        required: &["symbol"],
        output: &[
            ("success", "boolean"),
            ("symbol", "object"),
            ("files", "array"),
            ("callers", "integer"),
        ],
        read_only: true,
        fixed: &[],
        renamed: &[],
    },
    ToolSpec {
        name: "codesearch_find_related",
        title: "Files related by imports",
        description: "The files a file imports (resolved within its repository; path null for \
            packages and the standard library) and the files that import it.",
        kind: Kind::Related,
        args: &[
            arg(
                "path",
                "string",
                "The file's path relative to its repository root (a search result's filePath).",
            ),
            Arg {
                name: "direction",
                ty: "string",
                description: "imports, importedBy or both (default).",
                one_of: &["imports", "importedBy", "both"],
            },
            arg(
                "repository",
                "string",
                "The file's repository; needed only when several hold the path.",
            ),
            arg("limit", "integer", "Most files each way (default 50)."),
            WORKSPACE,
        ],
        required: &["path"],
        output: &[
            ("success", "boolean"),
            ("path", "string"),
            ("imports", "array"),
            ("importedBy", "array"),
        ],
        read_only: true,
        fixed: &[],
        renamed: &[],
    },
];

const SYMBOL: Arg = arg(
    "symbol",
    "string",
    "The definition: a name (push) or a qualified name (Stack::push, UserService.find, \
     auth.routes.login).",
);
const SYMBOL_PATH: Arg = arg(
    "path",
    "string",
    "The file that defines it, when several definitions have the name.",
);
const SYMBOL_LINE: Arg = arg(
    "line",
    "integer",
    "A line inside the definition, when one file has several.",
);

const SYMBOL_ARGS: &[Arg] = &[
    SYMBOL,
    SYMBOL_PATH,
    SYMBOL_LINE,
    arg(
        "limit",
        "integer",
        "Most calls listed (default 50, at most 1000).",
    ),
    arg(
        "repository",
        "string",
        "The repository that defines the symbol.",
    ),
    WORKSPACE,
];

const CALLS_OUTPUT: &[(&str, &str)] = &[
    ("success", "boolean"),
    ("symbol", "object"),
    ("calls", "array"),
    ("truncated", "boolean"),
];

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

impl ToolSpec {
    /// The tool as `tools/list` shows it.
    pub fn to_tool(&self) -> Tool {
        let mut properties = serde_json::Map::new();
        for a in self.args {
            let mut schema = match a.ty {
                "strings" => json!({ "type": "array", "items": { "type": "string" } }),
                ty => json!({ "type": ty }),
            };
            schema["description"] = json!(a.description);
            if !a.one_of.is_empty() {
                schema["enum"] = json!(a.one_of);
            }
            properties.insert(a.name.to_owned(), schema);
        }
        let input = json!({
            "type": "object",
            "properties": properties,
            "required": self.required,
            "additionalProperties": false,
        });
        let output_properties: serde_json::Map<String, Value> = self
            .output
            .iter()
            .map(|(name, ty)| ((*name).to_owned(), json!({ "type": ty })))
            .collect();
        let output = json!({
            "type": "object",
            "properties": output_properties,
            "required": ["success"],
        });
        let annotations = ToolAnnotations::with_title(self.title)
            .read_only(self.read_only)
            .destructive(!self.read_only)
            .idempotent(self.read_only)
            .open_world(false);
        Tool::new(self.name, self.description, object(input))
            .with_title(self.title)
            .with_raw_output_schema(Arc::new(object(output)))
            .with_annotations(annotations)
    }

    /// The wire request for `args`, or what is wrong with them. `pinned` is the workspace the
    /// adapter serves, when it serves one only.
    pub fn request(
        &self,
        args: Option<JsonObject>,
        pinned: Option<&str>,
    ) -> Result<(Option<String>, Value), String> {
        let mut args = args.unwrap_or_default();
        for key in args.keys() {
            if !self.args.iter().any(|a| a.name == key) {
                let known: Vec<&str> = self.args.iter().map(|a| a.name).collect();
                return Err(format!(
                    "unknown argument `{key}`; {} takes {}",
                    self.name,
                    known.join(", ")
                ));
            }
        }
        for name in self.required {
            if args.get(*name).is_none_or(Value::is_null) {
                return Err(format!("missing argument `{name}`"));
            }
        }
        args.retain(|_, v| !v.is_null());
        for a in self.args {
            if let Some(v) = args.get(a.name) {
                check(a, v)?;
            }
        }
        let workspace = match (pinned, args.get("workspace").and_then(Value::as_str)) {
            (Some(p), Some(w)) if p != w => {
                return Err(format!(
                    "this MCP server serves workspace `{p}` only; leave out `workspace` or set \
                     it to `{p}`"
                ));
            }
            (Some(p), _) => Some(p.to_owned()),
            (None, w) => w.map(str::to_owned),
        };
        if let Some(w) = &workspace {
            args.insert("workspace".into(), json!(w));
        }
        for (from, to) in self.renamed {
            if let Some(v) = args.remove(*from) {
                args.insert((*to).to_owned(), v);
            }
        }
        for (key, value) in self.fixed {
            args.insert((*key).to_owned(), json!(value));
        }
        Ok((workspace, Value::Object(args)))
    }
}

/// Whether `v` has the argument's type (and is one of its values).
fn check(a: &Arg, v: &Value) -> Result<(), String> {
    let ok = match a.ty {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "strings" => v
            .as_array()
            .is_some_and(|items| items.iter().all(Value::is_string)),
        _ => true,
    };
    if !ok {
        let ty = match a.ty {
            "strings" => "an array of strings",
            "integer" => "an integer",
            "number" => "a number",
            _ => "a string",
        };
        return Err(format!("`{}` must be {ty}, got {v}", a.name));
    }
    if let Some(s) = v.as_str()
        && !a.one_of.is_empty()
        && !a.one_of.contains(&s)
    {
        return Err(format!(
            "`{}` must be one of {}, got {s:?}",
            a.name,
            a.one_of.join(", ")
        ));
    }
    Ok(())
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> Option<JsonObject> {
        Some(object(v))
    }

    #[test]
    fn arguments_are_checked_against_the_schema() {
        let search = find("codesearch_search").expect("tool");
        let (ws, req) = search
            .request(args(json!({ "query": "x", "limit": 3 })), None)
            .expect("valid");
        assert_eq!(ws, None);
        assert_eq!(req, json!({ "query": "x", "limit": 3 }));
        let err = |v| search.request(args(v), None).expect_err("invalid");
        assert!(err(json!({})).contains("missing argument `query`"));
        assert!(err(json!({ "query": "x", "limt": 3 })).contains("unknown argument `limt`"));
        assert!(err(json!({ "query": "x", "limit": "3" })).contains("`limit` must be an integer"));
        assert!(err(json!({ "query": "x", "mode": "fuzzy" })).contains("one of hybrid"));
        assert!(err(json!({ "query": "x", "fileTypes": "ts" })).contains("array of strings"));
    }

    #[test]
    fn a_pinned_workspace_is_the_only_one() {
        let search = find("codesearch_search").expect("tool");
        let (ws, req) = search
            .request(args(json!({ "query": "x" })), Some("acme"))
            .expect("valid");
        assert_eq!(ws.as_deref(), Some("acme"));
        assert_eq!(req["workspace"], "acme");
        assert!(
            search
                .request(
                    args(json!({ "query": "x", "workspace": "other" })),
                    Some("acme")
                )
                .is_err()
        );
    }

    #[test]
    fn status_is_a_repository_request() {
        let status = find("codesearch_index_status").expect("tool");
        let (_, req) = status
            .request(args(json!({ "repository": "billing" })), None)
            .expect("valid");
        assert_eq!(req, json!({ "action": "status", "name": "billing" }));
    }

    #[test]
    fn every_tool_lists_with_schemas() {
        for spec in TOOLS {
            let tool = spec.to_tool();
            assert_eq!(tool.input_schema["type"], "object");
            assert!(tool.output_schema.is_some());
            for r in spec.required {
                assert!(spec.args.iter().any(|a| a.name == *r), "{}", spec.name);
            }
        }
    }
}
