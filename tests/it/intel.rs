//! Code intelligence over NATS: symbols, callers, callees, graphs, impact and related files on
//! a small project in Rust, Python, TypeScript and Go, whose every call is known, and smaller
//! ones in Java, C, Ruby and C#, and in PHP, Kotlin and Elixir read from their lines.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::nats_search::Daemon;

const FILES: &[(&str, &str)] = &[
    // Rust: a module tree, a method called through `Self`, a recursive pair.
    (
        "src/lib.rs",
        "mod stack;\nmod parse;\n\npub fn run() {\n    let mut s = stack::Stack::new();\n    s.push(1);\n    parse::even(4);\n}\n",
    ),
    (
        "src/stack.rs",
        "pub struct Stack { items: Vec<u32> }\n\nimpl Stack {\n    pub fn new() -> Self {\n        Stack { items: Vec::new() }\n    }\n\n    pub fn push(&mut self, x: u32) {\n        self.items.push(x);\n        Self::check(x);\n    }\n\n    fn check(x: u32) {\n        assert!(x < 100);\n    }\n}\n",
    ),
    (
        "src/parse.rs",
        "pub fn even(n: u32) -> bool {\n    if n == 0 { true } else { odd(n - 1) }\n}\n\npub fn odd(n: u32) -> bool {\n    if n == 0 { false } else { even(n - 1) }\n}\n",
    ),
    // Python: a package with relative and absolute imports, and a name two modules define.
    ("app/__init__.py", ""),
    (
        "app/models.py",
        "def find_user(uid):\n    return load(uid)\n\n\ndef load(uid):\n    return {'id': uid}\n",
    ),
    (
        "app/views.py",
        "from .models import find_user\nfrom app import audit\n\n\ndef show(uid):\n    user = find_user(uid)\n    audit.load(uid)\n    return user\n",
    ),
    ("app/audit.py", "def load(uid):\n    return uid\n"),
    (
        "tests/test_views.py",
        "from app.views import show\n\n\ndef test_show():\n    assert show(1)\n",
    ),
    // A helper of the tests: a test by its path (`index.component_rules`), not by its name.
    (
        "tests/conftest.py",
        "from app.views import show\n\n\ndef shown_user():\n    return show(2)\n",
    ),
    // TypeScript: a class method called through `this`, an imported function.
    (
        "web/api.ts",
        "import { format } from './util';\n\nexport class Api {\n  get(id: string) {\n    return this.fetch(format(id));\n  }\n  fetch(url: string) {\n    return url;\n  }\n}\n",
    ),
    (
        "web/util.ts",
        "export function format(id: string): string {\n  return `/items/${id}`;\n}\n",
    ),
    // Go: a package imported by its module path.
    ("go.mod", "module example.com/shop\n\ngo 1.22\n"),
    (
        "cmd/main.go",
        "package main\n\nimport \"example.com/shop/pkg/cart\"\n\nfunc main() {\n\tcart.Total(nil)\n}\n",
    ),
    (
        "pkg/cart/cart.go",
        "package cart\n\nfunc Total(items []int) int {\n\treturn sum(items)\n}\n",
    ),
    (
        "pkg/cart/sum.go",
        "package cart\n\nfunc sum(items []int) int {\n\tt := 0\n\tfor _, i := range items {\n\t\tt += i\n\t}\n\treturn t\n}\n",
    ),
];

fn callers(reply: &Value) -> Vec<(String, i64, String)> {
    let mut out: Vec<(String, i64, String)> = reply["calls"]
        .as_array()
        .unwrap_or_else(|| panic!("calls in {reply}"))
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap_or_default().to_owned(),
                c["line"].as_i64().unwrap_or_default(),
                c["resolution"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

/// [`callers`] without their resolution: (path, line), sorted.
fn caller_lines(reply: &Value) -> Vec<(String, i64)> {
    callers(reply)
        .into_iter()
        .map(|(path, line, _)| (path, line))
        .collect()
}

/// A `callees` reply's calls, each as written and with one field of what it reaches
/// (`qualified`, `path`).
fn callee_fields<'a>(reply: &'a Value, field: &str) -> Vec<(&'a str, &'a str)> {
    reply["calls"]
        .as_array()
        .unwrap_or_else(|| panic!("calls in {reply}"))
        .iter()
        .map(|c| {
            (
                c["call"].as_str().unwrap_or_default(),
                c["symbol"][field].as_str().unwrap_or_default(),
            )
        })
        .collect()
}

/// Asks for the callers of each symbol and checks their call sites, (path, line) sorted.
async fn assert_callers(d: &Daemon, cases: &[(&str, &[(&str, i64)])]) {
    for (symbol, want) in cases {
        let r = d
            .ask("agog.codebase.callers", json!({ "symbol": symbol }))
            .await;
        let want: Vec<(String, i64)> = want.iter().map(|&(p, l)| (p.to_owned(), l)).collect();
        assert_eq!(caller_lines(&r), want, "{symbol}: {r}");
    }
}

/// The paths of a `related` reply's imports, in its order.
fn imported_paths(reply: &Value) -> Vec<&str> {
    related_paths(reply, "imports")
}

/// The paths of the files that import a `related` reply's file, in its order.
fn importer_paths(reply: &Value) -> Vec<&str> {
    related_paths(reply, "importedBy")
}

fn related_paths<'a>(reply: &'a Value, field: &str) -> Vec<&'a str> {
    reply[field]
        .as_array()
        .unwrap_or_else(|| panic!("{field} in {reply}"))
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect()
}

#[tokio::test]
async fn callers_callees_and_imports_match_the_source() {
    let d = Daemon::start(FILES).await;

    // Rust: a method through its type and through `Self`; a crate function through its module.
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "Stack::check" }))
        .await;
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(
        callers(&r),
        [("src/stack.rs".into(), 10, "same_file".into())]
    );
    assert_eq!(r["calls"][0]["symbol"]["qualified"], "Stack::push");
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "Stack::new" }))
        .await;
    assert_eq!(callers(&r), [("src/lib.rs".into(), 5, "qualified".into())]);
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "even" }))
        .await;
    assert_eq!(
        callers(&r),
        [
            ("src/lib.rs".into(), 7, "import".into()),
            ("src/parse.rs".into(), 6, "same_file".into()),
        ]
    );

    // Python: the imported definition, not the other module's `load`.
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "find_user" }))
        .await;
    assert_eq!(callers(&r), [("app/views.py".into(), 6, "import".into())]);
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "audit.load" }))
        .await;
    assert_eq!(callers(&r), [("app/views.py".into(), 7, "import".into())]);
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "models.load" }))
        .await;
    assert_eq!(
        callers(&r),
        [("app/models.py".into(), 2, "same_file".into())]
    );

    // TypeScript: `this.fetch` and an imported function.
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "Api.fetch" }))
        .await;
    assert_eq!(callers(&r), [("web/api.ts".into(), 5, "same_file".into())]);
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "format" }))
        .await;
    assert_eq!(callers(&r), [("web/api.ts".into(), 5, "import".into())]);

    // Go: a package function through the module path, a same-package function.
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "Total" }))
        .await;
    assert_eq!(callers(&r), [("cmd/main.go".into(), 6, "import".into())]);
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "sum" }))
        .await;
    assert_eq!(
        callers(&r),
        [("pkg/cart/cart.go".into(), 4, "same_module".into())]
    );

    // Callees: resolved where the index has the definition, external where it does not.
    let r = d
        .ask("agog.codebase.callees", json!({ "symbol": "show" }))
        .await;
    let callees: Vec<(String, Value)> = r["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .map(|c| {
            (
                c["call"].as_str().unwrap_or_default().to_owned(),
                c["symbol"]["path"].clone(),
            )
        })
        .collect();
    assert_eq!(
        callees,
        [
            ("find_user".to_owned(), json!("app/models.py")),
            ("audit.load".to_owned(), json!("app/audit.py")),
        ]
    );

    // The import graph, both ways.
    let r = d
        .ask("agog.codebase.related", json!({ "path": "app/views.py" }))
        .await;
    assert_eq!(r["success"], true, "{r}");
    let paths = |v: &Value| -> Vec<String> {
        let mut p: Vec<String> = v
            .as_array()
            .expect("array")
            .iter()
            .filter_map(|f| f["path"].as_str().map(str::to_owned))
            .collect();
        p.sort();
        p.dedup();
        p
    };
    assert_eq!(paths(&r["imports"]), ["app/audit.py", "app/models.py"]);
    assert_eq!(
        paths(&r["importedBy"]),
        ["tests/conftest.py", "tests/test_views.py"]
    );
    let r = d
        .ask(
            "agog.codebase.related",
            json!({ "path": "pkg/cart/cart.go" }),
        )
        .await;
    assert_eq!(paths(&r["importedBy"]), ["cmd/main.go"]);
    let r = d
        .ask("agog.codebase.related", json!({ "path": "src/stack.rs" }))
        .await;
    assert_eq!(paths(&r["importedBy"]), ["src/lib.rs"]);

    // Impact: transitive callers by file, the tests marked (the helper by its path).
    let r = d
        .ask("agog.codebase.impact", json!({ "symbol": "find_user" }))
        .await;
    let files: Vec<(String, bool)> = r["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap_or_default().to_owned(),
                f["test"] == true,
            )
        })
        .collect();
    assert_eq!(
        files,
        [
            ("app/views.py".to_owned(), false),
            ("tests/conftest.py".to_owned(), true),
            ("tests/test_views.py".to_owned(), true)
        ]
    );
    d.stop().await;
}

#[tokio::test]
async fn unknown_and_ambiguous_names_are_errors_and_graphs_terminate() {
    let d = Daemon::start(FILES).await;
    // Two modules define `load`: the candidates, not a guess.
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "load" }))
        .await;
    assert_eq!(r["success"], false);
    assert_eq!(r["error"]["code"], "ambiguous", "{r}");
    let mut candidates: Vec<&str> = r["error"]["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .filter_map(|c| c["path"].as_str())
        .collect();
    candidates.sort();
    assert_eq!(candidates, ["app/audit.py", "app/models.py"]);
    // The same name pinned by its path answers.
    let r = d
        .ask(
            "agog.codebase.callers",
            json!({ "symbol": "load", "path": "app/audit.py" }),
        )
        .await;
    assert_eq!(r["success"], true, "{r}");

    // Unknown is not "no callers".
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "no_such_fn" }))
        .await;
    assert_eq!(r["error"]["code"], "not_found", "{r}");
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "run" }))
        .await;
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["calls"], json!([]));

    // Mutual recursion: the walk ends, each node once, within the limits.
    let r = d
        .ask(
            "agog.codebase.graph",
            json!({ "symbol": "even", "depth": 6, "direction": "both" }),
        )
        .await;
    assert_eq!(r["success"], true, "{r}");
    let mut nodes: Vec<&str> = r["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["qualified"].as_str())
        .collect();
    nodes.sort();
    assert_eq!(nodes, ["even", "odd", "run"]);
    let r = d
        .ask(
            "agog.codebase.graph",
            json!({ "symbol": "even", "maxNodes": 2 }),
        )
        .await;
    assert_eq!(r["nodes"].as_array().map(Vec::len), Some(2));
    assert_eq!(r["truncated"], true);

    // Paths out of the repository are refused.
    for path in ["../../etc/passwd", "/etc/passwd"] {
        let r = d
            .ask("agog.codebase.related", json!({ "path": path }))
            .await;
        assert_eq!(r["error"]["code"], "permission_denied", "{path}: {r}");
    }
    let r = d
        .ask("agog.codebase.related", json!({ "path": "nope.rs" }))
        .await;
    assert_eq!(r["error"]["code"], "not_found");

    // Symbols: definitions first, then call sites; prefix matching.
    let r = d
        .ask("agog.codebase.symbols", json!({ "query": "Stack::push" }))
        .await;
    assert_eq!(r["definitions"][0]["path"], "src/stack.rs");
    assert_eq!(
        r["definitions"][0]["signature"],
        "pub fn push(&mut self, x: u32)"
    );
    // Call sites of the name as written (`callers` resolves them).
    assert!(
        r["references"]
            .as_array()
            .expect("references")
            .iter()
            .any(|c| c["path"] == "src/lib.rs" && c["line"] == 6),
        "{r}"
    );
    let r = d
        .ask(
            "agog.codebase.symbols",
            json!({ "query": "FIND", "match": "prefix" }),
        )
        .await;
    assert_eq!(r["definitions"][0]["qualified"], "find_user", "{r}");
    // The language takes the names a search's `languages` filter does: `Py` is python.
    for (language, found) in [("Py", true), ("python", true), ("rust", false)] {
        let r = d
            .ask(
                "agog.codebase.symbols",
                json!({ "query": "find_user", "language": language }),
            )
            .await;
        let defs = r["definitions"].as_array().expect("definitions").len();
        assert_eq!(defs > 0, found, "{language}: {r}");
    }
    d.stop().await;
}

#[tokio::test]
async fn an_edit_changes_the_callers_it_should() {
    let d = Daemon::start(FILES).await;
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "format" }))
        .await;
    assert_eq!(callers(&r).len(), 1);
    // The call goes away, and a new caller appears in another file.
    std::fs::write(
        d.repo.path().join("web/api.ts"),
        "export class Api {\n  get(id: string) {\n    return this.fetch(id);\n  }\n  fetch(url: string) {\n    return url;\n  }\n}\n",
    )
    .expect("write");
    std::fs::write(
        d.repo.path().join("web/page.ts"),
        "import { format } from './util';\n\nexport function page(id: string) {\n  return format(id);\n}\n",
    )
    .expect("write");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = d
            .ask("agog.codebase.callers", json!({ "symbol": "format" }))
            .await;
        if callers(&r) == [("web/page.ts".to_owned(), 4, "import".to_owned())] {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "callers never followed the edit: {r}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    d.stop().await;
}

#[tokio::test]
async fn rust_paths_from_the_crate_and_the_parent_resolve_to_their_files() {
    let d = Daemon::start(&[
        ("src/lib.rs", "mod source;\nmod util;\n\npub fn helper() {}\n"),
        (
            "src/source.rs",
            "pub fn clean(p: &str) -> String {\n    crate::util::trim(p)\n}\n\npub fn again() {\n    super::helper();\n}\n\npub fn twice() {\n    again!();\n    assert!(again_ok(1));\n}\n",
        ),
        ("src/util.rs", "pub fn trim(p: &str) -> String {\n    p.trim().to_owned()\n}\n"),
        (
            "src/macros.rs",
            "macro_rules! again {\n    () => {};\n}\n\npub fn again_ok(n: u32) -> bool {\n    n > 0\n}\n",
        ),
    ])
    .await;
    // `again!()` calls the macro, not the function of the same name; a call inside a macro's
    // arguments is a call.
    let r = d
        .ask(
            "agog.codebase.callers",
            json!({ "symbol": "again", "path": "src/macros.rs" }),
        )
        .await;
    assert_eq!(
        callers(&r),
        [("src/source.rs".into(), 10, "same_module".into())]
    );
    let r = d
        .ask(
            "agog.codebase.callers",
            json!({ "symbol": "again", "path": "src/source.rs" }),
        )
        .await;
    assert_eq!(callers(&r), []);
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "again_ok" }))
        .await;
    assert_eq!(
        callers(&r),
        [("src/source.rs".into(), 11, "same_module".into())]
    );
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "trim" }))
        .await;
    assert_eq!(callers(&r), [("src/source.rs".into(), 2, "import".into())]);
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "helper" }))
        .await;
    assert_eq!(callers(&r), [("src/source.rs".into(), 6, "import".into())]);
    d.stop().await;
}

/// A Cargo workspace's crates call each other by their names, as `crate::` inside each; a path
/// into a dependency leaves the index whatever the workspace defines by the same name.
#[tokio::test]
async fn rust_paths_from_the_workspaces_other_crates_resolve_into_them() {
    let d = Daemon::start(&[
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"web\", \"web-core\", \"app\"]\n",
        ),
        (
            "web/Cargo.toml",
            "[package]\nname = \"web\"\n\n[dependencies]\nweb-core = { path = \"../web-core\" }\n",
        ),
        ("web/src/lib.rs", "pub mod routing;\n\npub fn serve() {}\n"),
        (
            "web/src/routing.rs",
            "pub fn get() {}\n\npub fn channel() {}\n",
        ),
        ("web-core/Cargo.toml", "[package]\nname = \"web-core\"\n"),
        ("web-core/src/lib.rs", "pub mod body;\n"),
        ("web-core/src/body.rs", "pub fn empty() {}\n"),
        (
            "app/Cargo.toml",
            "[package]\nname = \"app\"\n\n[dependencies]\nweb = { path = \"../web\" }\n\
             web-core = { path = \"../web-core\" }\ntokio = \"1\"\n",
        ),
        (
            "app/src/main.rs",
            "use web::routing::get;\nuse web_core::body;\n\nfn main() {\n    web::serve();\n    \
             get();\n    body::empty();\n    tokio::sync::mpsc::channel();\n}\n",
        ),
    ])
    .await;
    assert_callers(
        &d,
        &[
            ("serve", &[("app/src/main.rs", 5)]),
            ("get", &[("app/src/main.rs", 6)]),
            ("empty", &[("app/src/main.rs", 7)]),
            ("channel", &[]),
        ],
    )
    .await;
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "empty" }))
        .await;
    assert_eq!(
        callers(&r),
        [("app/src/main.rs".into(), 7, "import".into())]
    );
    d.stop().await;
}

/// A call on what a chain of calls returns reaches the class the last call's signature names
/// (`Self`, `this`, a `Result` unwrapped), not every method of its name; so does a call on a
/// variable a chain was bound to (`let res = client.get().await`).
#[tokio::test]
async fn calls_on_a_chain_reach_the_class_its_last_call_returns() {
    let d = Daemon::start(&[
        (
            "src/lib.rs",
            "pub struct Router;\n\
             pub struct Other;\n\
             pub struct Output;\n\
             pub struct Client;\n\
             pub struct Response;\n\
             \n\
             impl Router {\n\
                 pub fn new() -> Self {\n\
                     Router\n\
                 }\n\
                 pub fn route(self, _p: &str) -> Self {\n\
                     self\n\
                 }\n\
                 pub fn finish(self) -> Result<Output, String> {\n\
                     Ok(Output)\n\
                 }\n\
             }\n\
             \n\
             impl Other {\n\
                 pub fn route(self, _p: &str) -> Self {\n\
                     self\n\
                 }\n\
                 pub fn text(&self) {}\n\
                 pub fn send(&self) {}\n\
             }\n\
             \n\
             impl Output {\n\
                 pub fn send(&self) {}\n\
             }\n\
             \n\
             impl Client {\n\
                 pub async fn get(&self) -> Response {\n\
                     Response\n\
                 }\n\
             }\n\
             \n\
             impl Response {\n\
                 pub fn text(&self) {}\n\
             }\n\
             \n\
             pub async fn app(client: &Client) {\n\
                 Router::new()\n\
                     .route(\"/a\")\n\
                     .route(\"/b\")\n\
                     .finish()\n\
                     .unwrap()\n\
                     .send();\n\
                 let res = client.get().await;\n\
                 res.text();\n\
             }\n",
        ),
        (
            "src/query.ts",
            "export class Query {\n\
               where(c: string): this {\n\
                 return this;\n\
               }\n\
               run(): Result {\n\
                 return new Result();\n\
               }\n\
             }\n\
             \n\
             export class Other {\n\
               where(c: string): Other {\n\
                 return this;\n\
               }\n\
               rows(): number {\n\
                 return 1;\n\
               }\n\
             }\n\
             \n\
             export class Result {\n\
               rows(): number {\n\
                 return 0;\n\
               }\n\
             }\n\
             \n\
             export function load(): number {\n\
               return new Query().where(\"a\").where(\"b\").run().rows();\n\
             }\n",
        ),
        // A declared parameter's type; overloads whose signatures span lines agree.
        (
            "src/use.ts",
            "import { Query, Result } from \"./query\";\n\
             \n\
             export function count(q: Query): number {\n\
               return q.where(\"c\").run().rows();\n\
             }\n\
             \n\
             export function open(\n\
               name: string,\n\
             ): Result\n\
             export function open(name: string, n?: number): Result {\n\
               return new Result();\n\
             }\n\
             \n\
             export function first(): number {\n\
               return open(\"a\").rows();\n\
             }\n",
        ),
    ])
    .await;
    assert_callers(
        &d,
        &[
            ("Router::route", &[("src/lib.rs", 42), ("src/lib.rs", 42)]),
            ("Other::route", &[]),
            ("Output::send", &[("src/lib.rs", 42)]),
            ("Other::send", &[]),
            ("Response::text", &[("src/lib.rs", 49)]),
            ("Other::text", &[]),
            (
                "Query.where",
                &[
                    ("src/query.ts", 26),
                    ("src/query.ts", 26),
                    ("src/use.ts", 4),
                ],
            ),
            ("Other.where", &[]),
            (
                "Result.rows",
                &[("src/query.ts", 26), ("src/use.ts", 4), ("src/use.ts", 15)],
            ),
            ("Other.rows", &[]),
        ],
    )
    .await;
    d.stop().await;
}

/// Rust: a call on a field is on the field's declared type (`self.config.color.paint()`),
/// a call on a type reaches what it derefs to, the provided methods of the traits it
/// implements, and what an alias names; of two structs of one name, the nearer one's fields;
/// a field of a dependency's type leaves the index.
#[tokio::test]
async fn rust_calls_reach_fields_types_deref_targets_traits_and_aliased_types() {
    let d = Daemon::start(&[
        (
            "src/token.rs",
            "pub struct Token {\n\
                 pub line: usize,\n\
             }\n\
             \n\
             impl Token {\n\
                 pub fn lexeme(&self) -> &str {\n\
                     \"\"\n\
                 }\n\
             }\n\
             \n\
             pub struct Other;\n\
             \n\
             impl Other {\n\
                 pub fn lexeme(&self) -> &str {\n\
                     \"\"\n\
                 }\n\
                 pub fn get(&self) {}\n\
                 pub fn paint(&self) {}\n\
                 pub fn show(&self) {}\n\
             }\n",
        ),
        (
            "src/name.rs",
            "use std::ops::Deref;\n\
             \n\
             use crate::token::Token;\n\
             \n\
             pub struct Name {\n\
                 token: Token,\n\
             }\n\
             \n\
             impl Deref for Name {\n\
                 type Target = Token;\n\
                 fn deref(&self) -> &Token {\n\
                     &self.token\n\
                 }\n\
             }\n",
        ),
        (
            "src/lib.rs",
            "pub mod app;\n\
             pub mod name;\n\
             pub mod token;\n\
             \n\
             use crate::name::Name;\n\
             \n\
             pub trait Show {\n\
                 fn show(&self) -> String {\n\
                     String::new()\n\
                 }\n\
             }\n\
             \n\
             pub struct Set(Vec<u8>);\n\
             \n\
             impl Set {\n\
                 pub fn get(&self) {}\n\
             }\n\
             \n\
             pub struct Color;\n\
             \n\
             impl Color {\n\
                 pub fn paint(&self) {}\n\
             }\n\
             \n\
             pub struct Config {\n\
                 pub color: Color,\n\
             }\n\
             \n\
             pub struct Recipe {\n\
                 pub attributes: Set,\n\
                 pub name: Name,\n\
                 config: Config,\n\
             }\n\
             \n\
             impl Show for Recipe {}\n\
             \n\
             pub type Alias = Recipe;\n\
             \n\
             impl Recipe {\n\
                 pub fn run(&self) {\n\
                     self.attributes.get();\n\
                     self.name.lexeme();\n\
                     self.config.color.paint();\n\
                 }\n\
             }\n",
        ),
        (
            "src/app.rs",
            "use crate::name::Name;\n\
             use crate::{Alias, Recipe, Show};\n\
             \n\
             pub fn use_it(recipe: &Recipe, alias: &Alias, name: Name) {\n\
                 recipe.attributes.get();\n\
                 name.lexeme();\n\
                 recipe.show();\n\
                 alias.show();\n\
             }\n\
             \n\
             pub struct PathBuf;\n\
             \n\
             impl PathBuf {\n\
                 pub fn exists(&self) {}\n\
             }\n\
             \n\
             pub struct Paths {\n\
                 path: std::path::PathBuf,\n\
             }\n\
             \n\
             impl Paths {\n\
                 pub fn check(&self) {\n\
                     self.path.exists();\n\
                 }\n\
             }\n\
             \n\
             pub trait Loud: Show {}\n\
             \n\
             pub fn shout(x: &dyn Loud) {\n\
                 x.show();\n\
             }\n",
        ),
        // Another `Recipe`, whose `attributes` is no `Set`: farther from `src/app.rs`.
        (
            "tests/other.rs",
            "struct Recipe {\n\
                 attributes: Other,\n\
             }\n\
             \n\
             struct Other;\n",
        ),
    ])
    .await;
    assert_callers(
        &d,
        &[
            ("Set::get", &[("src/app.rs", 5), ("src/lib.rs", 41)]),
            ("Other::get", &[]),
            ("Token::lexeme", &[("src/app.rs", 6), ("src/lib.rs", 42)]),
            ("Other::lexeme", &[]),
            ("Color::paint", &[("src/lib.rs", 43)]),
            ("Other::paint", &[]),
            // The last through `Loud`'s supertrait.
            (
                "Show::show",
                &[("src/app.rs", 7), ("src/app.rs", 8), ("src/app.rs", 30)],
            ),
            ("Other::show", &[]),
            // `std::path::PathBuf`'s, not the repository's.
            ("PathBuf::exists", &[]),
        ],
    )
    .await;
    d.stop().await;
}

/// Rust: a type's inherent method and its trait impl's method of the same name are both
/// `DirEntry::path`; a call on the type, by method or path syntax (`self.path()` inside the
/// trait impl too), reaches the inherent one, and a call through the trait reaches the trait's.
/// A type imported under another name (`use crate::error::Error as ClapError`) is that type:
/// `ClapError::no_equals()` and a `ClapError` value's methods are `Error`'s.
#[tokio::test]
async fn rust_calls_through_a_renamed_import_reach_the_type_it_names() {
    let d = Daemon::start(&[
        ("Cargo.toml", "[package]\nname = \"cli\"\n"),
        ("src/lib.rs", "pub mod error;\npub mod parser;\n"),
        (
            "src/error.rs",
            r#"pub struct Error {
    kind: u8,
}

impl Error {
    pub fn no_equals() -> Self {
        Error { kind: 1 }
    }

    pub fn exit(&self) {}
}
"#,
        ),
        (
            "src/parser.rs",
            r#"use crate::error::Error as ClapError;
use std::io::Error as IoError;

pub fn parse() -> ClapError {
    let e: ClapError = ClapError::no_equals();
    e.exit();
    IoError::no_equals();
    e
}
"#,
        ),
    ])
    .await;
    // A dependency's type imported under another name is not the repository's namesake:
    // `IoError::no_equals()` (line 7) is nobody's here.
    for (symbol, line) in [("Error::no_equals", 5), ("Error::exit", 6)] {
        let r = d
            .ask("agog.codebase.callers", json!({ "symbol": symbol }))
            .await;
        assert_eq!(caller_lines(&r), [("src/parser.rs".into(), line)], "{r}");
        let confident = r["calls"]
            .as_array()
            .is_some_and(|c| c.iter().all(|c| c["confidence"].as_f64() >= Some(0.8)));
        assert!(confident, "{r}");
    }
}

/// A type's several `From<T>` impls are all `Value::from`: a call whose first argument is a
/// literal or a constructor (`"a"`, `format!(…)`, `true`) reaches the impl of that type; one
/// whose argument says nothing is spread over them all, as before.
#[tokio::test]
async fn rust_calls_of_from_reach_the_impl_their_argument_is_written_for() {
    let d = Daemon::start(&[
        ("Cargo.toml", "[package]\nname = \"val\"\n"),
        ("src/lib.rs", "pub mod value;\npub mod eval;\n"),
        (
            "src/value.rs",
            r#"pub struct Value {
    elements: Vec<String>,
}

impl From<bool> for Value {
    fn from(condition: bool) -> Self {
        Value::from(if condition { "true" } else { "" })
    }
}

impl From<&'static str> for Value {
    fn from(element: &'static str) -> Self {
        Value::from(element.to_string())
    }
}

impl From<String> for Value {
    fn from(element: String) -> Self {
        Self { elements: vec![element] }
    }
}
"#,
        ),
        (
            "src/eval.rs",
            r#"use crate::value::Value;

pub fn eval(name: &str, flag: bool) -> Vec<Value> {
    vec![
        Value::from(""),
        Value::from(format!("`{name}`")),
        Value::from(true),
        Value::from(flag),
    ]
}
"#,
        ),
    ])
    .await;
    let at = |line: i64| json!({ "symbol": "Value::from", "path": "src/value.rs", "line": line });
    // Whether the call at `path:line` reaches the definition asked about at 0.8 or more.
    let confident = |r: &Value, path: &str, line: i64| {
        r["calls"].as_array().is_some_and(|c| {
            c.iter()
                .filter(|c| c["path"] == path && c["line"] == line)
                .all(|c| c["confidence"].as_f64() >= Some(0.8))
        })
    };
    // What says nothing of its type (`Value::from(flag)`, the `if` in `value.rs`) reaches
    // every impl's, as before.
    let unknown = [
        ("src/eval.rs".to_owned(), 8),
        ("src/value.rs".to_owned(), 7),
    ];
    let with = |known: &[(&str, i64)]| {
        let mut all: Vec<(String, i64)> = known.iter().map(|&(p, l)| (p.to_owned(), l)).collect();
        all.extend(unknown.iter().cloned());
        all.sort();
        all
    };
    // `From<bool>`'s: `Value::from(true)`.
    let r = d.ask("agog.codebase.callers", at(6)).await;
    assert_eq!(caller_lines(&r), with(&[("src/eval.rs", 7)]), "{r}");
    assert!(confident(&r, "src/eval.rs", 7), "{r}");
    assert!(!confident(&r, "src/eval.rs", 8), "{r}");
    // `From<&str>`'s: `Value::from("")`.
    let r = d.ask("agog.codebase.callers", at(12)).await;
    assert_eq!(caller_lines(&r), with(&[("src/eval.rs", 5)]), "{r}");
    assert!(confident(&r, "src/eval.rs", 5), "{r}");
    assert_eq!(r["symbol"]["implements"], "From<&str>", "{r}");
    // `From<String>`'s: `format!(…)` and `element.to_string()`.
    let r = d.ask("agog.codebase.callers", at(18)).await;
    assert_eq!(
        caller_lines(&r),
        with(&[("src/eval.rs", 6), ("src/value.rs", 13)]),
        "{r}"
    );
    assert!(confident(&r, "src/eval.rs", 6), "{r}");
    assert!(confident(&r, "src/value.rs", 13), "{r}");
}

#[tokio::test]
async fn rust_calls_on_a_type_reach_its_inherent_method_before_a_trait_impls() {
    let d = Daemon::start(&[
        ("Cargo.toml", "[package]\nname = \"walk\"\n"),
        ("src/lib.rs", "pub mod dir_entry;\npub mod output;\n"),
        (
            "src/dir_entry.rs",
            r#"use std::path::{Path, PathBuf};

pub trait Colorable {
    fn path(&self) -> PathBuf;
}

pub struct DirEntry {
    inner: PathBuf,
}

impl DirEntry {
    pub fn path(&self) -> &Path {
        &self.inner
    }
}

impl Colorable for DirEntry {
    fn path(&self) -> PathBuf {
        let path = self.path();
        path.to_owned()
    }
}
"#,
        ),
        (
            "src/output.rs",
            r#"use crate::dir_entry::{Colorable, DirEntry};

pub fn print(entry: &DirEntry) {
    entry.path();
    DirEntry::path(entry);
    Colorable::path(entry);
}
"#,
        ),
    ])
    .await;
    let at =
        |line: i64| json!({ "symbol": "DirEntry::path", "path": "src/dir_entry.rs", "line": line });
    let r = d.ask("agog.codebase.callers", at(12)).await;
    assert_eq!(
        caller_lines(&r),
        [
            ("src/dir_entry.rs".into(), 19),
            ("src/output.rs".into(), 4),
            ("src/output.rs".into(), 5),
        ],
        "{r}"
    );
    let confident = r["calls"]
        .as_array()
        .is_some_and(|c| c.iter().all(|c| c["confidence"].as_f64() >= Some(0.8)));
    assert!(confident, "{r}");
    // Named without a place, it is the inherent one, as the path `DirEntry::path` is in Rust.
    let named = d
        .ask(
            "agog.codebase.callers",
            json!({ "symbol": "DirEntry::path" }),
        )
        .await;
    assert_eq!(named["symbol"]["startLine"], 12, "{named}");
    assert_eq!(caller_lines(&named), caller_lines(&r));
    let r = d.ask("agog.codebase.callers", at(18)).await;
    assert_eq!(r["symbol"]["implements"], "Colorable", "{r}");
    assert_eq!(caller_lines(&r), [], "{r}");
    assert_callers(&d, &[("Colorable::path", &[("src/output.rs", 6)])]).await;

    // Which is which, in a symbols answer.
    let r = d
        .ask(
            "agog.codebase.symbols",
            json!({ "query": "DirEntry::path" }),
        )
        .await;
    let implements: Vec<(i64, &str)> = r["definitions"]
        .as_array()
        .unwrap_or_else(|| panic!("definitions in {r}"))
        .iter()
        .map(|s| {
            (
                s["startLine"].as_i64().unwrap_or_default(),
                s["implements"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(implements, [(12, "-"), (18, "Colorable")], "{r}");
    d.stop().await;
}

/// Rust: a receiver in a macro's arguments is read back to the start of its chain
/// (`self.name` in `write!`), a name a pattern binds is the field it matches (`Self::And {
/// lhs, .. }`, `Expression::Text(inner)`, a variant a glob brings in), a module no `use` names
/// (`testing::compile()` under `use super::*`) is found by its file, a dependency's namesake
/// of a crate's type is the dependency's, awaiting a builder gives its `IntoFuture` output, and
/// a primitive reaches the crate's traits for it.
#[tokio::test]
async fn rust_calls_reach_pattern_bindings_macro_receivers_and_glob_modules() {
    let d = Daemon::start(&[
        (
            "Cargo.toml",
            "[package]\nname = \"dsl\"\n\n[dependencies]\nnu-ansi-term = \"0.50\"\nbytes = \"1\"\n",
        ),
        (
            "src/lib.rs",
            "pub mod ast;\npub mod client;\npub mod color;\npub mod extract;\npub mod kind;\npub mod ordinal;\npub mod parser;\npub mod style;\npub mod token;\n\
             mod testing;\n",
        ),
        (
            "src/style.rs",
            "pub struct Style;\n\nimpl Style {\n    pub fn new() -> Self {\n        Style\n    }\n}\n",
        ),
        // A variant a glob brings in, matched by its name alone.
        (
            "src/kind.rs",
            r#"use crate::token::Token;

pub enum Kind {
    Redefinition { first: Token },
}

impl Kind {
    pub fn show(&self) {
        use Kind::*;
        match self {
            Redefinition { first } => {
                first.lexeme();
            }
        }
    }
}
"#,
        ),
        // A dependency's type the crate implements its trait for.
        (
            "src/extract.rs",
            "use bytes::Bytes;\n\npub trait FromRequest {\n    fn from_request() -> Self;\n}\n\n\
             impl FromRequest for Bytes {\n    fn from_request() -> Self {\n        Bytes::new()\n    \
             }\n}\n\npub fn read() {\n    Bytes::from_request();\n    \
             bytes::Bytes::from_request();\n}\n",
        ),
        // The dependency's `Style`, whatever the crate names alike.
        (
            "src/color.rs",
            "use nu_ansi_term::Style;\n\npub fn paint() {\n    Style::new();\n}\n\n\
             pub fn plain() {\n    nu_ansi_term::Style::new();\n}\n",
        ),
        (
            "src/token.rs",
            r#"pub struct Token;

impl Token {
    pub fn lexeme(&self) -> &str {
        ""
    }
}

pub struct Other;

impl Other {
    pub fn lexeme(&self) -> &str {
        ""
    }
    pub fn tree(&self) {}
    pub fn text(&self) {}
    pub fn saturating_sub(&self, n: usize) {}
}
"#,
        ),
        // A primitive the crate's trait extends.
        (
            "src/ordinal.rs",
            r#"pub trait Ordinal {
    fn ordinal(self) -> Self;
}

impl Ordinal for usize {
    fn ordinal(self) -> Self {
        self + 1
    }
}

pub struct Line {
    pub number: usize,
}

pub fn show(line: &Line, n: usize) {
    line.number.ordinal();
    n.ordinal();
    n.saturating_sub(1);
}
"#,
        ),
        // Awaiting a builder gives its `IntoFuture` output; the chain is written without the
        // `.await`.
        (
            "src/client.rs",
            r#"use std::future::{Future, IntoFuture};
use std::pin::Pin;

pub struct TestClient;

pub struct RequestBuilder;

pub struct TestResponse;

impl TestClient {
    pub fn get(&self, url: &str) -> RequestBuilder {
        RequestBuilder
    }
}

impl IntoFuture for RequestBuilder {
    type Output = TestResponse;
    type IntoFuture = Pin<Box<dyn Future<Output = TestResponse>>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async { TestResponse })
    }
}

impl TestResponse {
    pub fn text(&self) -> String {
        String::new()
    }
}

pub async fn check(client: TestClient) {
    let res = client.get("/").await;
    res.text();
    client.get("/").await.text();
}
"#,
        ),
        (
            "src/ast.rs",
            r#"use crate::token::Token;

pub enum Expression {
    And { lhs: Box<Expression>, rhs: Box<Expression> },
    Text(Token),
    Empty,
}

impl Expression {
    pub fn tree(&self) -> String {
        match self {
            Self::And { lhs, rhs: right } => {
                lhs.tree();
                right.tree()
            }
            Self::Text(token) => format!("{}", token.lexeme()),
            Self::Empty => String::new(),
        }
    }
}

pub struct Alias {
    pub name: Token,
}

impl std::fmt::Display for Alias {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}", self.name.lexeme())
    }
}

pub fn check(e: &Expression) {
    if let Expression::Text(inner) = e {
        inner.lexeme();
    }
}
"#,
        ),
        (
            "src/testing.rs",
            "pub fn compile(s: &str) -> usize {\n    s.len()\n}\n",
        ),
        (
            "src/parser.rs",
            r#"use super::*;

pub fn parse() -> usize {
    testing::compile("x")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile() {
        assert_eq!(parse(), 1);
    }
}
"#,
        ),
    ])
    .await;
    assert_callers(
        &d,
        &[
            (
                "Expression::tree",
                &[("src/ast.rs", 13), ("src/ast.rs", 14)],
            ),
            ("Other::tree", &[]),
            (
                "Token::lexeme",
                &[
                    ("src/ast.rs", 16),
                    ("src/ast.rs", 28),
                    ("src/ast.rs", 34),
                    ("src/kind.rs", 12),
                ],
            ),
            ("Other::lexeme", &[]),
            // Not the test function named like it.
            ("testing::compile", &[("src/parser.rs", 4)]),
            ("parser::tests::compile", &[]),
            ("Style::new", &[]),
            // The crate's impl for the dependency's type, by its name or its path.
            (
                "Bytes::from_request",
                &[("src/extract.rs", 14), ("src/extract.rs", 15)],
            ),
            (
                "TestResponse::text",
                &[("src/client.rs", 33), ("src/client.rs", 34)],
            ),
            ("Other::text", &[]),
            (
                "usize::ordinal",
                &[("src/ordinal.rs", 16), ("src/ordinal.rs", 17)],
            ),
            // The standard library's.
            ("Other::saturating_sub", &[]),
        ],
    )
    .await;
    d.stop().await;
}

/// Rust: a name a `for` loop or an iterator's closure binds is one of the elements of what it
/// iterates (a field's `Vec`, a map's values, a slice, what a method returns, an `Option`), and
/// so is what `if let Some(x)` unwraps and what `last()` gives; `let justfile =
/// &context.justfile` is the field's type. A decoy type with the same method names gets none
/// of these calls.
#[tokio::test]
async fn rust_calls_reach_the_elements_loops_and_closures_iterate() {
    let d = Daemon::start(&[
        ("Cargo.toml", "[package]\nname = \"elements\"\n"),
        (
            "src/lib.rs",
            "pub mod justfile;\npub mod recipe;\npub mod token;\n",
        ),
        (
            "src/token.rs",
            r#"pub struct Token;

impl Token {
    pub fn lexeme(&self) -> &str {
        ""
    }
}

pub struct Other;

impl Other {
    pub fn lexeme(&self) -> &str {
        ""
    }
    pub fn is_required(&self) -> bool {
        false
    }
    pub fn is_public(&self) -> bool {
        false
    }
    pub fn show(&self) {}
    pub fn list(&self) {}
    pub fn color_display(&self) {}
}
"#,
        ),
        (
            "src/recipe.rs",
            r#"use crate::token::Token;

pub struct Parameter {
    pub name: Token,
}

impl Parameter {
    pub fn is_required(&self) -> bool {
        true
    }
}

pub struct Recipe {
    pub name: Token,
    pub parameters: Vec<Parameter>,
    pub doc: Option<Token>,
}

impl Recipe {
    pub fn is_public(&self) -> bool {
        true
    }

    pub fn required(&self) -> usize {
        self.parameters.iter().filter(|p| p.is_required()).count()
    }

    pub fn show(&self) {
        for parameter in &self.parameters {
            parameter.name.lexeme();
        }
        if let Some(doc) = &self.doc {
            doc.lexeme();
        }
        self.doc.as_ref().map(|d| d.lexeme());
    }
}
"#,
        ),
        (
            "src/justfile.rs",
            r#"use std::collections::BTreeMap;

use crate::recipe::Recipe;
use crate::token::Token;

pub struct Justfile {
    pub recipes: BTreeMap<String, Recipe>,
    pub tokens: Vec<Token>,
}

pub struct Context {
    pub justfile: Justfile,
}

impl Justfile {
    pub fn public_recipes(&self) -> Vec<&Recipe> {
        self.recipes.values().filter(|r| r.is_public()).collect()
    }

    pub fn list(&self) {
        for recipe in self.public_recipes() {
            recipe.name.lexeme();
        }
        for (_name, recipe) in &self.recipes {
            recipe.show();
        }
        if let Some(last) = self.tokens.last() {
            last.lexeme();
        }
    }
}

pub fn run(context: &Context, recipes: &[Recipe]) {
    let justfile = &context.justfile;
    justfile.list();
    for (_i, recipe) in recipes.iter().enumerate() {
        recipe.show();
    }
}

pub type RunResult<'a, T = ()> = Result<T, &'a str>;

pub struct Usage<'a> {
    pub recipe: &'a Recipe,
}

impl Usage<'_> {
    pub fn color_display(&self) {}
}

impl Justfile {
    pub fn invocations(&self) -> RunResult<'static, Vec<Recipe>> {
        Ok(Vec::new())
    }
}

pub fn check(justfile: &Justfile) {
    let invocations = justfile.invocations().unwrap();
    assert!(invocations[0].name.lexeme().is_empty());
    format!("{:?}", Usage { recipe: &invocations[0] }.color_display());
}
"#,
        ),
    ])
    .await;
    assert_callers(
        &d,
        &[
            ("Parameter::is_required", &[("src/recipe.rs", 25)]),
            ("Recipe::is_public", &[("src/justfile.rs", 17)]),
            (
                "Token::lexeme",
                &[
                    ("src/justfile.rs", 22),
                    ("src/justfile.rs", 28),
                    ("src/justfile.rs", 59),
                    ("src/recipe.rs", 30),
                    ("src/recipe.rs", 33),
                    ("src/recipe.rs", 35),
                ],
            ),
            (
                "Recipe::show",
                &[("src/justfile.rs", 25), ("src/justfile.rs", 37)],
            ),
            ("Justfile::list", &[("src/justfile.rs", 35)]),
            ("Usage::color_display", &[("src/justfile.rs", 60)]),
            ("Other::color_display", &[]),
            ("Other::is_required", &[]),
            ("Other::is_public", &[]),
            ("Other::lexeme", &[]),
            ("Other::show", &[]),
            ("Other::list", &[]),
        ],
    )
    .await;
    d.stop().await;
}

/// Go: a method several types define is read, for its callers, only from calls that may be
/// on its type: a call on what a capitalised function returns (`NewRouter().Match()`) is one,
/// and so is one on `new(Router)`.
#[tokio::test]
async fn go_calls_on_what_a_function_returns_reach_a_method_several_types_define() {
    // Eleven types with a `Match`: a call by the name alone would be under 0.05 for each.
    let others: String = (0..9)
        .map(|i| format!("type M{i} struct{{}}\n\nfunc (m M{i}) Match(p string) bool {{\n\treturn true\n}}\n\n"))
        .collect();
    let files = [
        ("go.mod", "module example.com/m\n\ngo 1.19\n".to_owned()),
        (
            "router.go",
            "package m\n\
             \n\
             type Router struct{}\n\
             \n\
             type Route struct{}\n\
             \n\
             func NewRouter() *Router {\n\
             \treturn &Router{}\n\
             }\n\
             \n\
             func (r *Router) Match(p string) bool {\n\
             \treturn p == \"\"\n\
             }\n\
             \n\
             func (r *Route) Match(p string) bool {\n\
             \treturn p != \"\"\n\
             }\n"
            .to_owned(),
        ),
        ("others.go", format!("package m\n\n{others}")),
        (
            "use.go",
            "package m\n\
             \n\
             func use() {\n\
             \tNewRouter().Match(\"a\")\n\
             \tnew(Route).Match(\"b\")\n\
             }\n"
            .to_owned(),
        ),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let d = Daemon::start(&files).await;
    assert_callers(
        &d,
        &[
            ("Router.Match", &[("use.go", 4)]),
            ("Route.Match", &[("use.go", 5)]),
        ],
    )
    .await;
    d.stop().await;
}

/// Python: `super().close()` reaches the base class's method, never the class's own; an
/// annotated parameter types the calls on it, and on the attribute it is assigned to.
#[tokio::test]
async fn python_super_reaches_the_bases_and_annotations_type_parameters() {
    let d = Daemon::start(&[
        (
            "base.py",
            "class Base:\n    def __init__(self, x):\n        self.x = x\n\n    def close(self):\n        pass\n",
        ),
        (
            "app.py",
            "from base import Base\n\n\n\
             class Request:\n    def read(self):\n        return b\"\"\n\n\n\
             class Other:\n    def read(self):\n        return b\"\"\n\n    def close(self):\n        pass\n\n\n\
             class App(Base):\n    def __init__(self, x):\n        super().__init__(x)\n\n\
             \x20   def close(self):\n        super().close()\n\n\
             \x20   def handle(self, request: Request):\n        request.read()\n\n\
             \x20   def keep(self, request: Request):\n        self.request = request\n\n\
             \x20   def again(self):\n        self.request.read()\n",
        ),
        // What a function annotated to return an optional returns.
        (
            "ctx.py",
            "from app import Request\n\n\ndef current() -> Request | None:\n    return None\n\n\n\
             def use():\n    current().read()\n",
        ),
    ])
    .await;
    assert_callers(
        &d,
        &[
            ("Base.__init__", &[("app.py", 19)]),
            ("Base.close", &[("app.py", 22)]),
            ("App.close", &[]),
            ("Other.close", &[]),
            (
                "Request.read",
                &[("app.py", 25), ("app.py", 31), ("ctx.py", 9)],
            ),
            ("Other.read", &[]),
        ],
    )
    .await;
    d.stop().await;
}

/// A notebook's code cells are Python's: what they define and call, on the notebook's lines.
#[tokio::test]
async fn a_notebooks_calls_reach_the_modules_it_imports() {
    let notebook = serde_json::to_string_pretty(&json!({
        "cells": [
            { "cell_type": "markdown", "metadata": {}, "source": ["# Prices\n", "Smoothed."] },
            { "cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
              "source": [
                "from utils import moving_average\n",
                "\n",
                "def smooth(prices):\n",
                "    return moving_average(prices, 3)"
              ] }
        ],
        "metadata": { "kernelspec": { "language": "python", "name": "python3" } },
        "nbformat": 4,
        "nbformat_minor": 5
    }))
    .expect("json");
    let d = Daemon::start(&[
        (
            "utils.py",
            "def moving_average(values, window):\n    return values[:window]\n",
        ),
        ("analysis.ipynb", notebook.as_str()),
    ])
    .await;
    let line = |text: &str| {
        notebook
            .lines()
            .position(|l| l.contains(text))
            .map(|i| i as i64 + 1)
    };
    let r = d
        .ask(
            "agog.codebase.callers",
            json!({ "symbol": "moving_average" }),
        )
        .await;
    assert_eq!(
        callers(&r),
        [(
            "analysis.ipynb".into(),
            line("return moving_average").expect("the call"),
            "import".into()
        )],
        "{r}"
    );
    let r = d
        .ask("agog.codebase.symbols", json!({ "query": "smooth" }))
        .await;
    let found = &r["definitions"][0];
    assert_eq!(found["path"], "analysis.ipynb", "{r}");
    assert_eq!(found["startLine"].as_i64(), line("def smooth"), "{r}");
    d.stop().await;
}

#[tokio::test]
async fn a_qualified_name_is_found_among_more_definitions_of_its_name_than_a_lookup_reads() {
    // 510 types with a `new`, then `Zeta::new`, last in the order lookups read definitions in.
    let mut files: Vec<(String, String)> = (0..510)
        .map(|i| {
            (
                format!("src/a{i:03}.rs"),
                format!("pub struct A{i};\n\nimpl A{i} {{\n    pub fn new() -> Self {{\n        A{i}\n    }}\n}}\n"),
            )
        })
        .collect();
    files.push((
        "src/zz.rs".into(),
        "pub struct Zeta;\n\nimpl Zeta {\n    pub fn new() -> Self {\n        Zeta\n    }\n\n    pub fn again() -> Self {\n        Self::new()\n    }\n}\n"
            .into(),
    ));
    // Calls of other types' `new` are no callers, and calls on `Zeta` (written as `Self`
    // inside its `impl`) are, whichever the repository's calls of `new` read.
    files.push((
        "src/user.rs".into(),
        "pub fn make() {\n    let _z = Zeta::new();\n    let _a = A001::new();\n    let _v = Vec::new();\n    let _q = crate::zz::Zeta::new();\n}\n".into(),
    ));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let d = Daemon::start(&files).await;
    let r = d
        .ask("agog.codebase.symbols", json!({ "query": "Zeta::new" }))
        .await;
    let found: Vec<&str> = r["definitions"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .filter_map(|d| d["path"].as_str())
        .collect();
    assert_eq!(found, ["src/zz.rs"], "{r}");
    let r = d
        .ask("agog.codebase.callers", json!({ "symbol": "Zeta::new" }))
        .await;
    assert_eq!(
        callers(&r),
        [
            ("src/user.rs".into(), 2, "qualified".into()),
            ("src/user.rs".into(), 5, "qualified".into()),
            ("src/zz.rs".into(), 9, "same_file".into()),
        ],
        "{r}"
    );
    d.stop().await;
}

/// A Rust impl for a primitive (`impl From<ExitCode> for i32`) is its own repository's: a call
/// on the primitive in another repository of the workspace (`i32::from(u8::MAX)`) is the
/// standard library's, not that impl's.
#[tokio::test]
async fn a_primitives_impl_is_not_reached_from_another_repository() {
    let fd: &[(&str, &str)] = &[
        ("Cargo.toml", "[package]\nname = \"fd\"\n"),
        (
            "src/lib.rs",
            "pub enum ExitCode { Ok, Error }\n\nimpl From<ExitCode> for i32 {\n    fn from(code: ExitCode) -> Self {\n        0\n    }\n}\n\npub fn code() -> i32 {\n    i32::from(ExitCode::Ok)\n}\n",
        ),
    ];
    let just: &[(&str, &str)] = &[
        ("Cargo.toml", "[package]\nname = \"just\"\n"),
        (
            "src/lib.rs",
            "pub fn fits(n: i32) -> bool {\n    n <= i32::from(u8::MAX)\n}\n",
        ),
    ];
    let d = Daemon::start_repos(&[fd, just], |_| {}).await;
    let r = d
        .ask(
            "agog.codebase.callers",
            json!({ "symbol": "i32::from", "path": "src/lib.rs", "line": 4 }),
        )
        .await;
    let calls: Vec<(&str, i64)> = r["calls"]
        .as_array()
        .unwrap_or_else(|| panic!("calls in {r}"))
        .iter()
        .map(|c| {
            (
                c["symbol"]["qualified"].as_str().unwrap_or(""),
                c["line"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(calls, [("code", 10)], "{r}");
    d.stop().await;
}

#[tokio::test]
async fn calls_from_other_repositories_tied_only_by_a_crowded_name_are_said_unread() {
    // `tidy` is defined in the first repository and called there; a third repository calls a
    // `tidy` it does not define, which only the name ties to any of them.
    let home: &[(&str, &str)] = &[
        ("src/lib.rs", "mod user;\n\npub fn tidy() {}\n"),
        (
            "src/user.rs",
            "pub fn run() {\n    crate::tidy();\n    super::tidy();\n}\n",
        ),
    ];
    let caller: &[(&str, &str)] = &[("app/main.rs", "fn main() {\n    tidy();\n}\n")];
    let others = |n: usize| -> Vec<(String, String)> {
        (0..n)
            .map(|i| (format!("lib/m{i}/mod.rs"), "pub fn tidy() {}\n".to_owned()))
            .collect()
    };
    for (defined_elsewhere, far_listed) in [(3, true), (12, false)] {
        let more = others(defined_elsewhere);
        let more: Vec<(&str, &str)> = more.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let d = Daemon::start_repos(&[home, &more, caller], |_| {}).await;
        let r = d
            .ask(
                "agog.codebase.callers",
                json!({ "symbol": "tidy", "path": "src/lib.rs" }),
            )
            .await;
        let found = callers(&r);
        // The home repository's own call is always there.
        assert!(found.iter().any(|c| c.0 == "src/user.rs"), "{r}");
        let far = found.iter().find(|c| c.0 == "app/main.rs");
        if far_listed {
            // One of 4 definitions: confidence 0.125, listed by the name alone.
            assert_eq!(far.map(|c| c.2.as_str()), Some("name_only"), "{r}");
            assert!(r.get("nameOnlyUnread").is_none(), "{r}");
        } else {
            // One of 13: under the floor, not read, and the answer says so.
            assert!(far.is_none(), "{r}");
            assert_eq!(r["nameOnlyUnread"], json!(true), "{r}");
        }
        d.stop().await;
    }
    // The same 13 definitions in one repository: every call is read, nothing to say.
    let more = others(12);
    let mut one: Vec<(&str, &str)> = more.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    one.extend_from_slice(home);
    let d = Daemon::start(&one).await;
    let r = d
        .ask(
            "agog.codebase.callers",
            json!({ "symbol": "tidy", "path": "src/lib.rs" }),
        )
        .await;
    assert!(callers(&r).iter().any(|c| c.0 == "src/user.rs"), "{r}");
    assert!(r.get("nameOnlyUnread").is_none(), "{r}");
    d.stop().await;
}

#[tokio::test]
async fn typescript_barrels_private_methods_and_object_members_resolve_as_the_checker_does() {
    let d = Daemon::start(&[
        // A barrel: `set` is imported from `internal.ts`, which re-exports `utils/common.ts`.
        (
            "src/internal.ts",
            "export * from './utils/common';\nexport * from './core/proxy';\n",
        ),
        (
            "src/utils/common.ts",
            "export let set = (thing: any, key: string, value: any) => {\n  thing[key] = value;\n};\n",
        ),
        // An object's members: reached through that object, not through any `x.set()`.
        (
            "src/core/proxy.ts",
            "export const objectTraps = {\n  set(state: any, key: string, value: any) {\n    state.assigned!.set(key, true);\n    return true;\n  },\n};\n",
        ),
        (
            "src/core/current.ts",
            "import { set, objectTraps } from '../internal';\n\nexport function current(copy: any) {\n  set(copy, 'a', 1);\n  objectTraps.set(copy, 'b', 2);\n  const result: any = {};\n  result.once = () => 1;\n  copy.body?.once();\n}\n",
        ),
        // A `#private` method, called through `this`.
        (
            "src/ky.ts",
            "export class Ky {\n  #retry() {\n    return 1;\n  }\n  fetch() {\n    return this.#retry();\n  }\n}\n",
        ),
        // CommonJS: the members of `module.exports = { … }` are the module's functions.
        (
            "lib/search-params.js",
            "module.exports = {\n  parse: (s) => s.split('&'),\n};\n",
        ),
        (
            "lib/request.js",
            "const sp = require('./search-params.js');\n\nfunction query(s) {\n  return sp.parse(s);\n}\n",
        ),
    ])
    .await;
    let ask = |symbol: Value| {
        let d = &d;
        async move { callers(&d.ask("agog.codebase.callers", symbol).await) }
    };
    assert_eq!(
        ask(json!({"symbol": "set", "path": "src/utils/common.ts"})).await,
        [("src/core/current.ts".into(), 4, "import".into())]
    );
    // Its own object's call, not the Map's `state.assigned!.set()`.
    assert_eq!(
        ask(json!({"symbol": "objectTraps.set"})).await,
        [("src/core/current.ts".into(), 5, "qualified".into())]
    );
    assert_eq!(ask(json!({"symbol": "result.once"})).await, []);
    assert_eq!(
        ask(json!({"symbol": "Ky.#retry"})).await,
        [("src/ky.ts".into(), 6, "same_file".into())]
    );
    assert_eq!(
        ask(json!({"symbol": "parse", "path": "lib/search-params.js"})).await,
        [("lib/request.js".into(), 4, "import".into())]
    );
    d.stop().await;
}

#[tokio::test]
async fn a_components_callers_are_the_templates_whose_tags_use_it() {
    let d = Daemon::start(&[
        (
            "src/components/UserCard.vue",
            "<template>\n  <div @click=\"open\">{{ user.name }}</div>\n</template>\n\n<script setup>\ndefineProps(['user'])\nfunction open() {}\n</script>\n",
        ),
        (
            "src/components/UserList.vue",
            "<template>\n  <UserCard v-for=\"u in users\" :user=\"u\" />\n  <user-card :user=\"me\" /> <search />\n  <!-- <UserCard :user=\"old\" /> -->\n</template>\n\n<script setup>\nimport UserCard from './UserCard.vue'\nimport Search from './HeaderSearch'\n</script>\n",
        ),
        (
            "src/App.vue",
            "<template>\n  <UserList />\n</template>\n\n<script setup>\nimport UserList from './components/UserList.vue'\n</script>\n",
        ),
        (
            "src/components/HeaderSearch/index.vue",
            "<template>\n  <input />\n</template>\n",
        ),
        (
            "src/lib/Badge.svelte",
            "<script>\n  let { label } = $props();\n</script>\n\n<span>{label}</span>\n",
        ),
        (
            "src/routes/+page.svelte",
            "<script>\n  import Badge from '../lib/Badge.svelte';\n</script>\n\n<Badge label=\"new\" />\n",
        ),
    ])
    .await;
    let ask = |symbol: Value| {
        let d = &d;
        async move { callers(&d.ask("agog.codebase.callers", symbol).await) }
    };
    // Both spellings of the tag, through the import; not the one in a comment.
    assert_eq!(
        ask(json!({"symbol": "UserCard"})).await,
        [
            ("src/components/UserList.vue".into(), 2, "import".into()),
            ("src/components/UserList.vue".into(), 3, "import".into()),
        ]
    );
    // The template's calls are its component's: a change to `UserCard` reaches `UserList`, and
    // through it `App`, which uses `UserList`.
    let r = d
        .ask("agog.codebase.impact", json!({ "symbol": "UserCard" }))
        .await;
    let mut files: Vec<&str> = r["files"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    files.sort();
    assert_eq!(files, ["src/App.vue", "src/components/UserList.vue"], "{r}");
    // `<search>` is the component its import names: `HeaderSearch`, through `./HeaderSearch`.
    assert_eq!(
        ask(json!({"symbol": "HeaderSearch"})).await,
        [("src/components/UserList.vue".into(), 3, "import".into())]
    );
    assert_eq!(
        ask(json!({"symbol": "Badge"})).await,
        [("src/routes/+page.svelte".into(), 5, "import".into())]
    );
    let r = d
        .ask("agog.codebase.symbols", json!({ "query": "Badge" }))
        .await;
    assert_eq!(r["definitions"][0]["kind"], "component", "{r}");
    assert_eq!(r["definitions"][0]["path"], "src/lib/Badge.svelte");
    assert_eq!(r["definitions"][0]["signature"], "<Badge>");
    // A route (`+page.svelte`) is no component a tag names.
    let r = d
        .ask("agog.codebase.symbols", json!({ "query": "Page" }))
        .await;
    assert_eq!(r["definitions"], json!([]), "{r}");
    d.stop().await;
}

#[tokio::test]
async fn imports_through_tsconfig_paths_resolve_as_the_compiler_does() {
    let d = Daemon::start(&[
        // An Nx-style monorepo: the aliases live in a base config the app's config extends.
        (
            "tsconfig.base.json",
            "{\n  // one alias per library\n  \"compilerOptions\": {\n    \"baseUrl\": \".\",\n    \"paths\": {\n      \"@acme/data\": [\"libs/data/src/index.ts\"],\n      \"@acme/ui/*\": [\"libs/ui/src/lib/*\"],\n    },\n  },\n}\n",
        ),
        (
            "apps/web/tsconfig.json",
            "{ \"extends\": \"../../tsconfig.base.json\" }\n",
        ),
        (
            "libs/data/src/index.ts",
            "export function loadUser(id: string) {\n  return { id };\n}\n",
        ),
        (
            "libs/ui/src/lib/button.ts",
            "export function renderButton(label: string) {\n  return label;\n}\n",
        ),
        (
            "apps/web/src/main.ts",
            "import { loadUser } from '@acme/data';\nimport { renderButton } from '@acme/ui/button';\nimport { join } from 'path';\n\nexport function start() {\n  renderButton(loadUser('1').id);\n  join('a', 'b');\n}\n",
        ),
        // Outside the app's config the same specifier names a package: no file here.
        (
            "tools/seed.js",
            "const { loadUser } = require('@acme/data');\n\nfunction seed() {\n  loadUser('2');\n}\n",
        ),
    ])
    .await;
    let ask = |symbol: Value| {
        let d = &d;
        async move { callers(&d.ask("agog.codebase.callers", symbol).await) }
    };
    assert_eq!(
        ask(json!({"symbol": "loadUser"})).await,
        [("apps/web/src/main.ts".into(), 6, "import".into())]
    );
    assert_eq!(
        ask(json!({"symbol": "renderButton"})).await,
        [("apps/web/src/main.ts".into(), 6, "import".into())]
    );
    let r = d
        .ask(
            "agog.codebase.related",
            json!({ "path": "apps/web/src/main.ts" }),
        )
        .await;
    let imports: Vec<(&str, Option<&str>)> = r["imports"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .map(|i| {
            (
                i["specifier"].as_str().unwrap_or_default(),
                i["path"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        imports,
        [
            ("@acme/data", Some("libs/data/src/index.ts")),
            ("@acme/ui/button", Some("libs/ui/src/lib/button.ts")),
            ("path", None),
        ],
        "{r}"
    );
    // The other way: the files that import a library through its alias.
    let r = d
        .ask(
            "agog.codebase.related",
            json!({ "path": "libs/ui/src/lib/button.ts" }),
        )
        .await;
    let by = importer_paths(&r);
    assert_eq!(by, ["apps/web/src/main.ts"], "{r}");
    d.stop().await;
}

#[tokio::test]
async fn a_workspace_package_resolves_to_its_sources_not_its_build() {
    let d = Daemon::start(&[
        (
            "package.json",
            "{ \"private\": true, \"workspaces\": [\"packages/*\"] }\n",
        ),
        (
            "packages/common/package.json",
            "{ \"name\": \"@acme/common\", \"main\": \"lib/index.js\" }\n",
        ),
        ("packages/common/src/index.ts", "export * from './user';\n"),
        (
            "packages/common/src/user.ts",
            "export function formatUser(name: string) {\n  return name.trim();\n}\n",
        ),
        (
            "packages/common/src/text.ts",
            "export function slug(s: string) {\n  return s.toLowerCase();\n}\n",
        ),
        (
            "packages/server/src/app.ts",
            "import { formatUser } from '@acme/common';\nimport { slug } from '@acme/common/lib/text';\n\nexport function handle(name: string) {\n  return slug(formatUser(name));\n}\n",
        ),
        // An MDX page: its ESM imports, its expressions and tags call.
        ("docs/Note.astro", "<aside><slot /></aside>\n"),
        (
            "docs/intro.mdx",
            "import { slug } from '@acme/common/lib/text';\nimport Note from './Note.astro';\n\n# Intro\n\n<Note>{slug('A')}</Note>\n\n```mdx\n<Note>{slug('B')}</Note>\n```\n",
        ),
    ])
    .await;
    let ask = |symbol: Value| {
        let d = &d;
        async move { callers(&d.ask("agog.codebase.callers", symbol).await) }
    };
    // Through the package's entry (`lib/index.js` built from `src/index.ts`) and its barrel.
    let formats = ask(json!({"symbol": "formatUser"})).await;
    assert_eq!(formats.len(), 1, "{formats:?}");
    assert_eq!(formats[0].0, "packages/server/src/app.ts");
    // A subpath of the build (`lib/text`) is the source's `src/text.ts`; the page's fenced code
    // calls nothing.
    assert_eq!(
        ask(json!({"symbol": "slug"})).await,
        [
            ("docs/intro.mdx".into(), 6, "import".into()),
            ("packages/server/src/app.ts".into(), 5, "import".into())
        ]
    );
    assert_eq!(
        ask(json!({"symbol": "Note"})).await,
        [("docs/intro.mdx".into(), 6, "import".into())]
    );
    let r = d
        .ask(
            "agog.codebase.related",
            json!({ "path": "packages/common/src/text.ts" }),
        )
        .await;
    let by = importer_paths(&r);
    assert_eq!(by, ["docs/intro.mdx", "packages/server/src/app.ts"], "{r}");
    d.stop().await;
}

#[tokio::test]
async fn java_c_ruby_and_csharp_callers_resolve_through_packages_includes_and_requires() {
    let d = Daemon::start(&[
        // Java: a static call through the class, and a class of the same package.
        (
            "src/main/java/com/acme/util/Strings.java",
            "package com.acme.util;\n\npublic class Strings {\n    public static String trim(String s) { return s.strip(); }\n}\n",
        ),
        (
            "src/main/java/com/acme/app/Main.java",
            "package com.acme.app;\n\nimport com.acme.util.Strings;\n\npublic class Main {\n    public static void main(String[] args) {\n        Strings.trim(args[0]);\n        new Stack();\n    }\n}\n",
        ),
        (
            "src/main/java/com/acme/app/Stack.java",
            "package com.acme.app;\n\npublic class Stack {\n    public Stack() {}\n}\n",
        ),
        // C: the header's implementation file, not another file's static function.
        ("lib/ring.h", "#ifndef RING_H\n#define RING_H\nint ring_push(int b);\n#endif\n"),
        ("lib/ring.c", "#include \"ring.h\"\n\nint ring_push(int b) { return b; }\n"),
        ("app/main.c", "#include \"../lib/ring.h\"\n\nint main(void) {\n    return ring_push(1);\n}\n"),
        ("tools/fake.c", "static int ring_push(int b) { return 0; }\n\nint fake(void) { return ring_push(2); }\n"),
        // Ruby: `Money.new` through `require_relative`.
        (
            "lib/shop/money.rb",
            "module Shop\n  class Money\n    def initialize(cents)\n      @cents = cents\n    end\n  end\nend\n",
        ),
        (
            "lib/shop/order.rb",
            "require_relative \"money\"\n\nmodule Shop\n  class Order\n    def add(price)\n      Money.new(price)\n    end\n  end\nend\n",
        ),
        // C#: a private method in its class.
        (
            "src/Store/Inventory.cs",
            "namespace Store\n{\n    public class Inventory\n    {\n        public void Receive(int q) { Log(q); }\n        private void Log(int q) { }\n    }\n}\n",
        ),
    ])
    .await;
    let ask = |symbol: Value| {
        let d = &d;
        async move { d.ask("agog.codebase.callers", symbol).await }
    };

    let r = ask(json!({ "symbol": "Strings.trim" })).await;
    assert_eq!(
        callers(&r),
        [(
            "src/main/java/com/acme/app/Main.java".into(),
            7,
            "qualified".into()
        )]
    );
    // `Stack` is the class (its constructor is named like it), called by `new Stack()`.
    let r = ask(json!({ "symbol": "Stack" })).await;
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(
        callers(&r),
        [(
            "src/main/java/com/acme/app/Main.java".into(),
            8,
            "same_module".into()
        )]
    );

    // Two C functions are named `ring_push`: the include decides which one `main` calls.
    let r = ask(json!({ "symbol": "ring_push" })).await;
    assert_eq!(r["error"]["code"], "ambiguous", "{r}");
    let r = ask(json!({ "symbol": "ring_push", "path": "lib/ring.c" })).await;
    assert_eq!(callers(&r), [("app/main.c".into(), 4, "import".into())]);
    let r = ask(json!({ "symbol": "ring_push", "path": "tools/fake.c" })).await;
    assert_eq!(
        callers(&r),
        [("tools/fake.c".into(), 3, "same_file".into())]
    );
    let r = d
        .ask("agog.codebase.related", json!({ "path": "app/main.c" }))
        .await;
    assert_eq!(r["success"], true, "{r}");
    assert!(r.to_string().contains("lib/ring.h"), "{r}");

    let r = ask(json!({ "symbol": "Shop::Money" })).await;
    assert_eq!(
        callers(&r),
        [("lib/shop/order.rb".into(), 6, "import".into())]
    );

    let r = ask(json!({ "symbol": "Inventory.Log" })).await;
    assert_eq!(
        callers(&r),
        [("src/Store/Inventory.cs".into(), 5, "same_file".into())]
    );
    d.stop().await;
}

#[tokio::test]
async fn each_name_gets_its_own_share_of_a_definitions_read() {
    use std::sync::Arc;

    use codesearch::embed::{Embedder, HashEmbedder};
    use codesearch::pipeline::Indexer;
    use codesearch::store::Store;
    use tokio_util::sync::CancellationToken;

    // Three `alpha`s and three `beta`s. Read two per name, the resolver gets two of each; one
    // limit over both names in name order gave it `alpha`'s and no `beta` at all.
    let files: Vec<(String, String)> = (0..3)
        .map(|i| {
            (
                format!("src/m{i}.rs"),
                "pub fn alpha() {}\n\npub fn beta() {}\n".to_owned(),
            )
        })
        .collect();
    let db = crate::support::test_db().await;
    let cfg = crate::support::config(&db, "nats://unused");
    let store = Store::connect(&cfg.database).await.expect("connect");
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(384));
    let repo = crate::support::repo(&files);
    Indexer::new(store.clone(), embedder, cfg.index.clone())
        .expect("indexer")
        .index_root(repo.path(), None, &CancellationToken::new())
        .await
        .expect("index");
    let scope = store.scope("default").await.expect("scope");
    let read = store
        .definitions_named(&scope, &["alpha".into(), "beta".into()], 2)
        .await
        .expect("definitions");
    let count = |name: &str| read.iter().filter(|d| d.name == name).count();
    assert_eq!((count("alpha"), count("beta")), (2, 2), "{read:?}");
}

#[tokio::test]
async fn overloads_extension_methods_inheritance_and_ruby_bare_calls_resolve_as_compilers_do() {
    let d = Daemon::start(&[
        // C#: three overloads told apart by their arguments, and an extension method called
        // on a value of a type the index does not hold.
        (
            "src/Json/Writer.cs",
            "namespace Json\n{\n    public class Writer\n    {\n        public void Write(int v) { }\n        \
             public void Write(string s, bool quote) { }\n        \
             public void Write(string s, bool quote, int depth = 0, params object[] rest) { }\n        \
             public void Flush() { Write(1); Write(\"a\", true, 2); }\n    }\n}\n",
        ),
        (
            "src/Json/StringUtils.cs",
            "namespace Json\n{\n    public static class StringUtils\n    {\n        \
             public static string FormatWith(this string format, object arg) { return format; }\n    \
             }\n}\n",
        ),
        (
            "src/Json/Reader.cs",
            "namespace Json\n{\n    public class Reader\n    {\n        \
             public string Describe(Writer w) { w.Write(\"x\", false); return \"{0}\".FormatWith(w); }\n    \
             }\n}\n",
        ),
        // C#: a method inherited from the base class, called without `this.`.
        (
            "src/Json/TextWriter.cs",
            "namespace Json\n{\n    public class TextWriter : Writer\n    {\n        \
             public void End() { Flush(); }\n    }\n}\n",
        ),
        // Ruby: `super` reaches the base class's method of the same name.
        (
            "lib/sub_task.rb",
            "class SubTask < Task # :nodoc:\n  def prepare\n    super\n  end\nend\n",
        ),
        // Ruby: a method called by its bare name, and a local of the same name.
        (
            "lib/task.rb",
            "class Task\n  def invoke\n    prepare\n    run_actions\n  end\n\n  def prepare\n  end\n\n  \
             def run_actions\n    prepare = 1\n    prepare\n  end\nend\n",
        ),
    ])
    .await;
    let ask = |symbol: Value| {
        let d = &d;
        async move { d.ask("agog.codebase.callers", symbol).await }
    };
    let write =
        |line: i64| json!({ "symbol": "Writer.Write", "path": "src/Json/Writer.cs", "line": line });
    let confident = |r: &Value| -> bool {
        r["calls"]
            .as_array()
            .is_some_and(|c| c.iter().all(|c| c["confidence"].as_f64() >= Some(0.8)))
    };

    let r = ask(write(5)).await;
    assert_eq!(
        callers(&r),
        [("src/Json/Writer.cs".into(), 8, "same_file".into())]
    );
    let r = ask(write(6)).await;
    assert_eq!(
        callers(&r),
        [("src/Json/Reader.cs".into(), 5, "qualified".into())]
    );
    assert!(confident(&r), "{r}");
    let r = ask(write(7)).await;
    assert_eq!(
        callers(&r),
        [("src/Json/Writer.cs".into(), 8, "same_file".into())]
    );
    assert!(confident(&r), "{r}");

    let r = ask(json!({ "symbol": "FormatWith" })).await;
    assert_eq!(
        callers(&r),
        [("src/Json/Reader.cs".into(), 5, "name_only".into())]
    );
    assert!(confident(&r), "{r}");

    let r = ask(json!({ "symbol": "Writer.Flush" })).await;
    assert_eq!(
        callers(&r),
        [("src/Json/TextWriter.cs".into(), 5, "qualified".into())]
    );

    // The bare `prepare` on line 12 reads the local bound on line 11; `super` in
    // `SubTask#prepare` calls it.
    let r = ask(json!({ "symbol": "Task::prepare" })).await;
    assert_eq!(
        callers(&r),
        [
            ("lib/sub_task.rb".into(), 3, "qualified".into()),
            ("lib/task.rb".into(), 3, "same_file".into())
        ]
    );
    d.stop().await;
}

#[tokio::test]
async fn dart_packages_resolve_through_their_library_files_exports() {
    let d = Daemon::start(&[
        // A repository of packages: an app that imports a package of its own.
        (
            "packages/counter/lib/counter.dart",
            "library counter;\n\nexport 'src/counter_cubit.dart';\n",
        ),
        (
            "packages/counter/lib/src/counter_cubit.dart",
            "class CounterCubit {\n  CounterCubit();\n\n  factory CounterCubit.fromJson(Map<String, dynamic> json) =>\n      CounterCubit();\n\n  int increment(int n) {\n    return n + 1;\n  }\n}\n\nint startValue() {\n  return 0;\n}\n",
        ),
        (
            "examples/app/lib/main.dart",
            "import 'package:counter/counter.dart';\nimport 'package:flutter/material.dart';\nimport 'util.dart' as util;\n\nvoid main() {\n  final cubit = CounterCubit();\n  cubit.increment(startValue());\n  util.startValue();\n  CounterCubit.fromJson(const {}).increment(1);\n}\n",
        ),
        // The same name as the package's, in the app.
        (
            "examples/app/lib/util.dart",
            "int startValue() {\n  return 1;\n}\n",
        ),
    ])
    .await;
    let (cubit, app) = (
        "packages/counter/lib/src/counter_cubit.dart",
        "examples/app/lib/main.dart",
    );
    for (symbol, path, want) in [
        ("startValue", cubit, &[(app, 7)][..]),
        ("startValue", "examples/app/lib/util.dart", &[(app, 8)]),
        // Also on a call's result, by its name alone (0.30).
        ("CounterCubit.increment", cubit, &[(app, 7), (app, 9)]),
        // And by the named constructor's body.
        ("CounterCubit", cubit, &[(app, 6), (cubit, 5)]),
        // A named constructor, called as a static method is.
        ("CounterCubit.fromJson", cubit, &[(app, 9)]),
    ] {
        let r = d
            .ask(
                "agog.codebase.callers",
                json!({ "symbol": symbol, "path": path }),
            )
            .await;
        let want: Vec<(String, i64)> = want
            .iter()
            .map(|&(path, line)| (path.to_owned(), line))
            .collect();
        assert_eq!(caller_lines(&r), want, "{symbol} of {path}: {r}");
    }
    let r = d
        .ask(
            "agog.codebase.related",
            json!({ "path": "examples/app/lib/main.dart" }),
        )
        .await;
    let mut imports = imported_paths(&r);
    imports.sort_unstable();
    // Flutter is a package from outside the repository.
    assert_eq!(
        imports,
        [
            "examples/app/lib/util.dart",
            "packages/counter/lib/counter.dart"
        ],
        "{r}"
    );
    d.stop().await;
}

#[tokio::test]
async fn php_kotlin_and_elixir_calls_and_imports_resolve_from_their_lines_and_java_reaches_kotlin()
{
    let d = Daemon::start(&[
        (
            "src/Client.php",
            "<?php\nnamespace App;\n\nuse App\\Http\\Transport;\n\nclass Client\n{\n    public function send($request)\n    {\n        return $this->prepare($request);\n    }\n\n    private function prepare($request)\n    {\n        return Transport::deliver($request);\n    }\n}\n",
        ),
        (
            "src/Http/Transport.php",
            "<?php\nnamespace App\\Http;\n\nclass Transport\n{\n    public static function deliver($request)\n    {\n        return $request;\n    }\n}\n",
        ),
        (
            "src/main/kotlin/shop/Api.kt",
            "package shop\n\nimport shop.model.Item\n\nclass Api {\n  fun load(): Item = Item.parse(\"x\")\n}\n",
        ),
        (
            "src/main/kotlin/shop/model/Item.kt",
            "package shop.model\n\nclass Item {\n  fun price(): Int = 1\n\n  companion object {\n    fun parse(s: String): Item = Item()\n  }\n}\n",
        ),
        // Java calling Kotlin: one program.
        (
            "src/main/java/shop/Checkout.java",
            "package shop;\n\nimport shop.model.Item;\n\nclass Checkout {\n  int pay(Item item) {\n    return item.price();\n  }\n}\n",
        ),
        (
            "lib/shop/cart.ex",
            "defmodule Shop.Cart do\n  alias Shop.Price\n\n  def total(items), do: Price.sum(items)\nend\n",
        ),
        (
            "lib/shop/price.ex",
            "defmodule Shop.Price do\n  @doc \"\"\"\n      Shop.Price.sum([1, 2])\n  \"\"\"\n  @spec sum([integer]) :: integer\n  def sum(items) do\n    Enum.sum(items)\n  end\nend\n",
        ),
    ])
    .await;
    for (symbol, want) in [
        ("Client.prepare", ("src/Client.php", 10)),
        ("Transport.deliver", ("src/Client.php", 15)),
        ("Item.parse", ("src/main/kotlin/shop/Api.kt", 6)),
        ("Item.price", ("src/main/java/shop/Checkout.java", 7)),
        // Not the example in its `@doc`, nor its `@spec`.
        ("Shop.Price.sum", ("lib/shop/cart.ex", 4)),
    ] {
        let r = d
            .ask("agog.codebase.callers", json!({ "symbol": symbol }))
            .await;
        assert_eq!(
            caller_lines(&r),
            [(want.0.to_owned(), want.1)],
            "{symbol}: {r}"
        );
    }
    for (path, imported) in [
        ("src/Client.php", "src/Http/Transport.php"),
        (
            "src/main/kotlin/shop/Api.kt",
            "src/main/kotlin/shop/model/Item.kt",
        ),
        (
            "src/main/java/shop/Checkout.java",
            "src/main/kotlin/shop/model/Item.kt",
        ),
        ("lib/shop/cart.ex", "lib/shop/price.ex"),
    ] {
        let r = d
            .ask("agog.codebase.related", json!({ "path": path }))
            .await;
        assert_eq!(imported_paths(&r), [imported], "{path}: {r}");
    }
    d.stop().await;
}

#[tokio::test]
async fn kotlin_extension_functions_are_called_on_their_receivers_and_imported_by_name() {
    let d = Daemon::start(&[
        (
            "src/commonMain/kotlin/okio/internal/Buffer.kt",
            "package okio.internal\n\nimport okio.Buffer\n\ninternal inline fun Buffer.commonReadByte(): Byte {\n  return this.read()\n}\n\ninternal fun RealSource.commonReadByte(): Byte = 0\n",
        ),
        (
            "src/jvmMain/kotlin/okio/Buffer.kt",
            "package okio\n\nimport okio.internal.commonReadByte\n\nclass Buffer {\n  fun read(): Byte = 1\n  fun readByte(): Byte = commonReadByte()\n}\n",
        ),
        (
            "src/commonMain/kotlin/okio/Path.kt",
            "package okio\n\nclass Path {\n  companion object {\n    fun <T> String.toPath(): Path = Path()\n  }\n}\n",
        ),
        (
            "src/commonMain/kotlin/okio/Counter.kt",
            "package okio\n\nprivate fun Counter.toLong(): Long = 0\n",
        ),
        (
            "src/commonTest/kotlin/okio/PathTest.kt",
            "package okio\n\nimport okio.Path.Companion.toPath\n\nclass PathTest {\n  fun parses(name: String, b: Buffer) {\n    val a = \"/a\".toPath()\n    val c = name.toPath()\n    val n = b.read().toLong()\n  }\n}\n",
        ),
    ])
    .await;
    assert_callers(
        &d,
        &[
            // Through `import okio.internal.commonReadByte`, from another directory of the package;
            // the one for the class the call is made in (`this`), not `RealSource`'s.
            (
                "Buffer.commonReadByte",
                &[("src/jvmMain/kotlin/okio/Buffer.kt", 7)],
            ),
            ("RealSource.commonReadByte", &[]),
            // A companion's extension with type parameters, on a literal and on a value.
            (
                "String.toPath",
                &[
                    ("src/commonTest/kotlin/okio/PathTest.kt", 7),
                    ("src/commonTest/kotlin/okio/PathTest.kt", 8),
                ],
            ),
            // Private to its file: `toLong()` elsewhere is another's.
            ("Counter.toLong", &[]),
        ],
    )
    .await;
    // `this` in an extension function is its receiver.
    let r = d
        .ask(
            "agog.codebase.callees",
            json!({ "symbol": "Buffer.commonReadByte" }),
        )
        .await;
    assert_eq!(
        callee_fields(&r, "qualified"),
        [("Buffer.read", "Buffer.read")],
        "{r}"
    );
    for (path, imported) in [
        (
            "src/jvmMain/kotlin/okio/Buffer.kt",
            "src/commonMain/kotlin/okio/internal/Buffer.kt",
        ),
        (
            "src/commonTest/kotlin/okio/PathTest.kt",
            "src/commonMain/kotlin/okio/Path.kt",
        ),
    ] {
        let r = d
            .ask("agog.codebase.related", json!({ "path": path }))
            .await;
        assert_eq!(imported_paths(&r), [imported], "{path}: {r}");
    }
    d.stop().await;
}

#[tokio::test]
async fn calls_in_a_kotlin_scope_functions_lambda_reach_its_receiver_or_stay_bare() {
    let d = Daemon::start(&[
        (
            "src/main/kotlin/okio/Buffer.kt",
            "package okio\n\nopen class Sink {\n  fun flush() = Unit\n}\n\nclass Buffer : Sink() {\n  fun writeUtf8(s: String): Buffer = this\n}\n\ninterface Source {\n  fun readUtf8(): String\n}\n\nclass FileSystem {\n  fun <T> read(path: String, readerAction: Source.() -> T): T = TODO()\n}\n",
        ),
        (
            "src/main/kotlin/okio/Writer.kt",
            "package okio\n\nclass Writer {\n  fun write() {\n    Buffer().apply {\n      writeUtf8(\"a\")\n      flush()\n      helper()\n    }\n  }\n\n  fun helper() = Unit\n\n  fun writeUtf8(s: String) = Unit\n\n  fun copy(fs: FileSystem) {\n    fs.read(\"a\") {\n      readUtf8()\n    }\n  }\n}\n\nprivate fun String.readUtf8(): String = this\n",
        ),
    ])
    .await;
    assert_callers(
        &d,
        &[
            // The Buffer's own method, not the enclosing class's of the same name.
            ("Buffer.writeUtf8", &[("src/main/kotlin/okio/Writer.kt", 6)]),
            ("Writer.writeUtf8", &[]),
            // One the Buffer inherits.
            ("Sink.flush", &[("src/main/kotlin/okio/Writer.kt", 7)]),
            // A name the Buffer lacks is the bare call it looks like: the class's own.
            ("Writer.helper", &[("src/main/kotlin/okio/Writer.kt", 8)]),
            // In a call's trailing lambda, on the receiver the called function declares for it,
            // not on the file's extension of another type.
            ("Source.readUtf8", &[("src/main/kotlin/okio/Writer.kt", 18)]),
            ("String.readUtf8", &[]),
        ],
    )
    .await;
    d.stop().await;
}

#[tokio::test]
async fn swift_modules_are_their_package_targets() {
    let d = Daemon::start(&[
        (
            "Sources/Kit/Models/Item.swift",
            "public struct Item {\n  public init() {}\n}\n\nextension Item {\n  public func price() -> Int { 1 }\n}\n",
        ),
        (
            "Sources/Kit/Helpers.swift",
            "func makeItem() -> Item {\n  return Item()\n}\n",
        ),
        (
            "Tests/KitTests/ItemTests.swift",
            "import XCTest\n@testable import Kit\n\nfinal class ItemTests: XCTestCase {\n  func testPrice() {\n    let item = makeItem()\n    XCTAssertEqual(item.price(), 1)\n  }\n}\n",
        ),
    ])
    .await;
    for (symbol, want) in [
        // The struct from another directory of its module; its extension is no type to call.
        ("Item", ("Sources/Kit/Helpers.swift", 2, "same_module")),
        // Through `@testable import Kit`.
        ("makeItem", ("Tests/KitTests/ItemTests.swift", 6, "import")),
    ] {
        let r = d
            .ask("agog.codebase.callers", json!({ "symbol": symbol }))
            .await;
        assert_eq!(
            callers(&r),
            [(want.0.to_owned(), want.1, want.2.to_owned())],
            "{symbol}: {r}"
        );
    }
    let r = d
        .ask(
            "agog.codebase.related",
            json!({ "path": "Tests/KitTests/ItemTests.swift" }),
        )
        .await;
    let mut imports = imported_paths(&r);
    imports.sort_unstable();
    // XCTest is from outside the repository.
    assert_eq!(
        imports,
        ["Sources/Kit/Helpers.swift", "Sources/Kit/Models/Item.swift"],
        "{r}"
    );
    let r = d
        .ask(
            "agog.codebase.related",
            json!({ "path": "Sources/Kit/Helpers.swift" }),
        )
        .await;
    let importers = importer_paths(&r);
    assert_eq!(importers, ["Tests/KitTests/ItemTests.swift"], "{r}");
    d.stop().await;
}

#[tokio::test]
async fn a_kotlin_class_reaches_the_bases_its_own_file_names_and_its_members_elsewhere() {
    let d = Daemon::start(&[
        (
            "okio/src/commonMain/kotlin/okio/Sink.kt",
            "package okio\n\ninterface Sink {\n  fun write(s: String)\n}\n\nexpect class HashingSink : Sink\n",
        ),
        (
            "okio/src/jvmMain/kotlin/okio/ForwardingSink.kt",
            "package okio\n\nabstract class ForwardingSink : Sink {\n  override fun write(s: String) = Unit\n}\n",
        ),
        (
            "okio/src/jvmMain/kotlin/okio/HashingSink.kt",
            "package okio\n\nactual class HashingSink : ForwardingSink, Sink {\n  fun update(s: String) {\n    super.write(s)\n  }\n}\n",
        ),
        (
            "okio/src/commonMain/kotlin/okio/internal/Hashing.kt",
            "package okio.internal\n\nimport okio.HashingSink\n\ninternal fun HashingSink.commonHash() {\n  update(\"x\")\n}\n",
        ),
        (
            "okio/src/commonMain/kotlin/okio/Lock.kt",
            "package okio\n\nexpect class Lock {\n  fun withLock()\n}\n",
        ),
        (
            "okio/src/commonMain/kotlin/okio/Guard.kt",
            "package okio\n\nfun guarded(lock: Lock) {\n  lock.withLock()\n}\n",
        ),
        (
            "okio/src/jvmMain/kotlin/okio/Lock.kt",
            "package okio\n\nactual class Lock {\n  actual fun withLock() = Unit\n}\n",
        ),
    ])
    .await;
    // Of an `expect` class's copies, the one in the call's own source set.
    let r = d
        .ask("agog.codebase.callees", json!({ "symbol": "guarded" }))
        .await;
    assert_eq!(
        callee_fields(&r, "path"),
        [("Lock.withLock", "okio/src/commonMain/kotlin/okio/Lock.kt")],
        "{r}"
    );
    assert_callers(
        &d,
        &[
            // The JVM class derives from `ForwardingSink` first; the common one only from `Sink`.
            (
                "ForwardingSink.write",
                &[("okio/src/jvmMain/kotlin/okio/HashingSink.kt", 5)],
            ),
            ("Sink.write", &[]),
            // An extension function's bare call reaches its receiver's method in another file.
            (
                "HashingSink.update",
                &[("okio/src/commonMain/kotlin/okio/internal/Hashing.kt", 6)],
            ),
        ],
    )
    .await;
    d.stop().await;
}

#[tokio::test]
async fn a_swift_type_reaches_the_methods_of_the_protocols_it_conforms_to() {
    let d = Daemon::start(&[
        (
            "Sources/Kit/Parsable.swift",
            "public protocol Parsable {}\n\nextension Parsable {\n  public static func parse(_ args: [String]) -> Self { fatalError() }\n}\n\npublic protocol Command: Parsable {}\n\nextension Command {\n  public static func main() {\n    _ = parse([])\n  }\n}\n",
        ),
        (
            "Tests/KitTests/RepeatTests.swift",
            "@testable import Kit\n\nstruct Repeat: Command {}\n\nfunc testRepeat() {\n  _ = Repeat.parse([\"--count\", \"2\"])\n}\n",
        ),
    ])
    .await;
    // On a type conforming to a protocol that refines the one whose extension defines it.
    let r = d
        .ask(
            "agog.codebase.callers",
            json!({ "symbol": "Parsable.parse" }),
        )
        .await;
    assert_eq!(
        caller_lines(&r),
        [
            ("Sources/Kit/Parsable.swift".to_owned(), 11),
            ("Tests/KitTests/RepeatTests.swift".to_owned(), 6),
        ],
        "{r}"
    );
    d.stop().await;
}

#[tokio::test]
async fn a_java_or_kotlin_test_calls_its_package_in_another_source_set() {
    let d = Daemon::start(&[
        (
            "src/main/kotlin/shop/Prices.kt",
            "package shop\n\nfun total(items: List<Int>): Int = items.sum()\n",
        ),
        // The same name in another package.
        (
            "src/main/kotlin/other/Sums.kt",
            "package other\n\nfun total(n: Int): Int = n\n",
        ),
        (
            "src/test/kotlin/shop/PricesTest.kt",
            "package shop\n\nclass PricesTest {\n  fun adds() = total(listOf(1, 2))\n}\n",
        ),
    ])
    .await;
    let r = d
        .ask(
            "agog.codebase.callers",
            json!({ "symbol": "total", "path": "src/main/kotlin/shop/Prices.kt" }),
        )
        .await;
    assert_eq!(
        callers(&r)
            .into_iter()
            .filter(|(path, ..)| path.ends_with("PricesTest.kt"))
            .collect::<Vec<_>>(),
        [(
            "src/test/kotlin/shop/PricesTest.kt".to_owned(),
            4,
            "same_module".to_owned()
        )],
        "{r}"
    );
    let r = d
        .ask(
            "agog.codebase.callers",
            json!({ "symbol": "total", "path": "src/main/kotlin/other/Sums.kt" }),
        )
        .await;
    assert!(
        !callers(&r)
            .iter()
            .any(|(path, ..)| path.ends_with("PricesTest.kt")),
        "not the other package's: {r}"
    );
    d.stop().await;
}
