//! Imports: what each import statement binds, and the files it may resolve to.
//!
//! Candidates are computed from the importing file's path and the specifier alone, so a file's
//! imports are stored with its chunks and need no other file; which candidate exists is decided
//! when a question is asked. What resolves, per language:
//! - TypeScript/JavaScript (and the scripts of Vue, Svelte and Astro components): relative
//!   specifiers (`./a`, `../b/c.js`, `./Button.vue`), with the usual extensions and `index`
//!   files; bare ones (`@acme/ui`, Vue's `@/x`) through the aliases of the nearest
//!   `tsconfig.json` ([`super::tsconfig`]) and the packages of the repository's workspaces
//!   ([`super::workspaces`]), and `@/`, `~/` and `$lib/` by the frameworks' conventions when no
//!   config says. Packages from outside the repository do not.
//! - Python: relative imports exactly; absolute ones to any file whose path ends with the
//!   module's (`a/b.py`, `a/b/__init__.py`), submodules (`from a import b`) first.
//! - Rust: `mod x;`, and `use` paths starting with `crate`, `self` or `super` (the longest
//!   module path that exists wins). Other crates and `#[path]` attributes do not.
//! - Go: import paths under the module of the nearest `go.mod` (read when a question is asked).
//! - Java: `import a.b.C` to any file ending with `a/b/C.java` or `a/b/C.kt` (static imports to
//!   their class's file). Package wildcards do not; the file's own package resolves as its
//!   directory.
//! - C#: `using` names namespaces, not files: recorded, not resolved.
//! - C/C++: `#include "x.h"` beside the file, then any file ending with `x.h`; `<a/x.h>` the
//!   latter only. A header binds everything (`*`); its definitions' files are found when a
//!   question is asked.
//! - Ruby: `require_relative` exactly; `require "a/b"` from `lib/`, the root, or any file
//!   ending with `a/b.rb`.

use tree_sitter::Node;

use super::Import;
use super::tsconfig::BARE;
use crate::chunk::CodeLanguage;

/// The prefix of an import candidate that is a Kotlin package's directory (`package:okio/internal`
/// of `import okio.internal.commonReadByte`): the files of any directory whose path ends with it
/// that define the imported name at their top level (Kotlin files are not named for their
/// functions, and one package is often several directories: `commonMain/kotlin/okio/internal`,
/// `jvmMain/kotlin/okio/internal`).
pub const PACKAGE: &str = "package:";

/// The prefix of an import candidate that is a Swift module (`swift:ArgumentParser` of `import
/// ArgumentParser`): the Swift files of the Swift package target of that name, under
/// `Sources/ArgumentParser/` (or `Tests/…`) at any depth of the repository, else of a
/// directory of that name (an Xcode project's target). A module from outside the repository
/// (`Foundation`) has none.
pub const SWIFT_MODULE: &str = "swift:";

/// The keys a file at `rel_path` answers to in [`Import::candidates`]: `/` + its path, and
/// every suffix of its path at a `/` (`c.py`, `b/c.py`, `a/b/c.py`).
pub fn path_keys(rel_path: &str) -> Vec<String> {
    let mut keys = vec![format!("/{rel_path}")];
    let mut rest = rel_path;
    loop {
        keys.push(rest.to_owned());
        match rest.find('/') {
            Some(i) => rest = &rest[i + 1..],
            None => break,
        }
    }
    keys
}

/// The candidate key of a Go package: the import path of the module at `module` plus the
/// package's directory relative to the module's root.
pub fn go_import_key(module: &str, dir: &str) -> String {
    if dir.is_empty() {
        format!("go:{module}")
    } else {
        format!("go:{module}/{dir}")
    }
}

/// The imports one import node (as captured by the language's query) brings in.
pub(super) fn imports_of(
    lang: CodeLanguage,
    rel_path: &str,
    text: &str,
    node: Node<'_>,
    arg_kind: &str,
    arg: Node<'_>,
) -> Vec<Import> {
    let line = node.start_position().row as u32 + 1;
    let mut out = Vec::new();
    let mut add = |specifier: String, name: String, candidates: Vec<String>| {
        out.push(Import {
            specifier,
            name,
            line,
            candidates,
        })
    };
    match lang {
        CodeLanguage::Rust => match arg_kind {
            "import.mod" => {
                let name = text[arg.byte_range()].to_owned();
                let dir = rust_module_dir(rel_path);
                let candidates = vec![
                    exact(&join(&dir, &format!("{name}.rs"))),
                    exact(&join(&dir, &format!("{name}/mod.rs"))),
                ];
                add(format!("mod {name}"), name, candidates);
            }
            _ => {
                let mut uses = Vec::new();
                flatten_use(arg, text, &[], &mut uses);
                for (path, name) in uses {
                    let candidates = rust_candidates(rel_path, &path);
                    add(path.join("::"), name, candidates);
                }
            }
        },
        CodeLanguage::Python => python_imports(rel_path, text, node, &mut add),
        CodeLanguage::Go => {
            let path = unquote(&text[arg.byte_range()]);
            let name = node
                .child_by_field_name("name")
                .map(|n| text[n.byte_range()].to_owned())
                .unwrap_or_else(|| go_package_name(&path).to_owned());
            let candidates = vec![format!("go:{path}")];
            add(path, name, candidates);
        }
        CodeLanguage::TypeScript | CodeLanguage::Tsx | CodeLanguage::JavaScript => {
            let spec = unquote(&text[arg.byte_range()]);
            let candidates = ecma_candidates(rel_path, &spec);
            let names = ecma_bound_names(node, text);
            if names.is_empty() {
                add(spec, String::new(), candidates);
            } else {
                for name in names {
                    add(spec.clone(), name, candidates.clone());
                }
            }
        }
        CodeLanguage::Java => java_imports(text, node, &mut add),
        CodeLanguage::CSharp => {
            // `using Acme.Util;` names a namespace, which is no file: recorded, never resolved.
            let spec = text[node.byte_range()]
                .trim_start_matches("global")
                .trim()
                .trim_start_matches("using")
                .trim_end_matches(';')
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            add(spec, String::new(), Vec::new());
        }
        CodeLanguage::C | CodeLanguage::Cpp => {
            let raw = &text[arg.byte_range()];
            let system = raw.starts_with('<');
            let spec = raw
                .trim_matches(|c| matches!(c, '"' | '<' | '>'))
                .trim()
                .to_owned();
            let candidates = include_candidates(rel_path, &spec, system);
            // A header brings everything it declares into the including file.
            add(spec, "*".to_owned(), candidates);
        }
        CodeLanguage::Ruby => {
            let mut cursor = node.walk();
            let relative = node
                .children_by_field_name("method", &mut cursor)
                .any(|m| &text[m.byte_range()] == "require_relative");
            let spec = unquote(&text[arg.byte_range()]);
            let candidates = ruby_candidates(rel_path, &spec, relative);
            add(spec, "*".to_owned(), candidates);
        }
        CodeLanguage::GraphQl => {}
    }
    out
}

// --- Java ----------------------------------------------------------------------------------

/// `import a.b.C;` binds `C` (from `a/b/C.java`); `import static a.b.C.m;` binds `m` (from
/// `a/b/C.java`); `import static a.b.C.*;` binds every member of `a/b/C.java`. A package
/// wildcard (`import a.b.*;`) names a directory and is recorded unresolved; the classes of the
/// file's own package resolve as the same directory.
fn java_imports(text: &str, node: Node<'_>, add: &mut impl FnMut(String, String, Vec<String>)) {
    let mut cursor = node.walk();
    let mut path = None;
    let (mut is_static, mut wildcard) = (false, false);
    for c in node.children(&mut cursor) {
        match c.kind() {
            "static" => is_static = true,
            "asterisk" => wildcard = true,
            "scoped_identifier" | "identifier" => path = Some(&text[c.byte_range()]),
            _ => {}
        }
    }
    let Some(path) = path else { return };
    let segments: Vec<&str> = path.split('.').map(str::trim).collect();
    let spec = if wildcard {
        format!("{path}.*")
    } else {
        path.to_owned()
    };
    // The class file: the whole path for a type import, the path less the member for a static
    // one; a nested class (`a.b.Outer.Inner`) lives in its outer class's file.
    let class_at = if is_static && !wildcard {
        segments.len().saturating_sub(1)
    } else {
        segments.len()
    };
    let candidates = |upto: usize| -> Vec<String> {
        (1..=upto)
            .rev()
            .take(2)
            .filter(|&n| n >= 2)
            // A class of the same program may be written in Kotlin.
            .flat_map(|n| {
                let path = segments[..n].join("/");
                [format!("{path}.java"), format!("{path}.kt")]
            })
            .collect()
    };
    match (is_static, wildcard) {
        (false, true) => add(spec, "*".to_owned(), Vec::new()),
        (true, true) => add(spec, "*".to_owned(), candidates(segments.len())),
        _ => {
            let name = segments.last().copied().unwrap_or_default().to_owned();
            add(spec, name, candidates(class_at));
        }
    }
}

// --- C and C++ -----------------------------------------------------------------------------

/// `#include "a/b.h"`: beside the including file first, then any file whose path ends with
/// `a/b.h` (an include directory). `#include <a/b.h>` only the latter, and only with a
/// directory in it: `<stdio.h>` is never taken for a project's own `stdio.h`.
fn include_candidates(rel_path: &str, spec: &str, system: bool) -> Vec<String> {
    let mut out = Vec::new();
    if !system && let Some(p) = resolve(dir_of(rel_path), spec) {
        out.push(exact(&p));
    }
    let plain = !spec.is_empty() && !spec.split('/').any(|s| s == ".." || s == ".");
    if plain && (!system || spec.contains('/')) {
        out.push(spec.to_owned());
    }
    out
}

// --- Ruby ----------------------------------------------------------------------------------

/// `require_relative "x"` from the file's directory; `require "a/b"` from `lib/` or the root,
/// then any file ending with `a/b.rb`. A single name (`require "json"`) is looked for in
/// `lib/` and the root only: any `…/json.rb` would take a gem for the project's file.
fn ruby_candidates(rel_path: &str, spec: &str, relative: bool) -> Vec<String> {
    let file = if spec.ends_with(".rb") {
        spec.to_owned()
    } else {
        format!("{spec}.rb")
    };
    if relative {
        return resolve(dir_of(rel_path), &file)
            .map(|p| vec![exact(&p)])
            .unwrap_or_default();
    }
    if file.split('/').any(|s| s == ".." || s == ".") {
        return Vec::new();
    }
    let mut out = vec![exact(&format!("lib/{file}")), exact(&file)];
    if file.contains('/') {
        out.push(file);
    }
    out
}

fn unquote(s: &str) -> String {
    s.trim_matches(|c| matches!(c, '"' | '\'' | '`')).to_owned()
}

/// `/` + a path from the repository root: a key that matches that file only.
pub(super) fn exact(path: &str) -> String {
    format!("/{path}")
}

pub(super) fn dir_of(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

pub(super) fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_owned()
    } else {
        format!("{dir}/{rest}")
    }
}

/// `rel` (with `.` and `..` segments) from `dir`; `None` when it climbs out of the root.
pub(super) fn resolve(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

// --- TypeScript / JavaScript ---------------------------------------------------------------

const ECMA_EXTENSIONS: [&str; 7] = ["ts", "tsx", "d.ts", "js", "jsx", "mjs", "cjs"];

/// The files a relative specifier may name, in the order a bundler tries them. A bare one
/// (a package, a project's own alias) is first `bare:<specifier>`, which the nearest
/// `tsconfig.json`'s aliases and the workspace's packages turn into files when a question is
/// asked ([`super::tsconfig`], [`super::workspaces`]); then `@/…` and `~/…` as the `src`
/// directory (the alias Vue's and Vite's project templates set up) and as the root (Nuxt's),
/// and SvelteKit's `$lib/…` as `src/lib`, for projects whose config does not say (or is
/// generated, as SvelteKit's is).
fn ecma_candidates(rel_path: &str, spec: &str) -> Vec<String> {
    let relative = spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == "..";
    let mut out = Vec::new();
    if !relative && is_bare(spec) {
        out.push(format!("{BARE}{spec}"));
    }
    let bases: Vec<String> = if relative {
        resolve(dir_of(rel_path), spec).into_iter().collect()
    } else if let Some(rest) = spec.strip_prefix("@/").or_else(|| spec.strip_prefix("~/")) {
        [format!("src/{rest}"), rest.to_owned()]
            .iter()
            .filter_map(|p| resolve("", p))
            .collect()
    } else if let Some(rest) = spec.strip_prefix("$lib/") {
        resolve("", &format!("src/lib/{rest}"))
            .into_iter()
            .collect()
    } else {
        Vec::new()
    };
    for base in bases {
        ecma_files(&base, &mut out);
    }
    out.dedup();
    out
}

/// A specifier that a `tsconfig.json` alias or a workspace package may name: not a URL, not
/// Node's `node:` built-ins, not absolute, and nothing that climbs (`@x/../../etc`).
fn is_bare(spec: &str) -> bool {
    !spec.is_empty()
        && !spec.contains(':')
        && !spec.starts_with('/')
        && !spec.split('/').any(|s| s == "..")
}

/// The files `base` may name: itself when it has an extension, then with each extension, then
/// as a directory's index (Vue's `.vue` last: webpack's Vue setups resolve it too).
pub(super) fn ecma_files(base: &str, out: &mut Vec<String>) {
    let file = base.rsplit('/').next().unwrap_or_default();
    if let Some((stem, ext)) = file.rsplit_once('.')
        && matches!(
            ext,
            "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "json" | "vue" | "svelte" | "astro"
        )
    {
        out.push(exact(base));
        // TypeScript written for ES modules imports `./a.js` for `./a.ts`.
        let stem = join(dir_of(base), stem);
        for e in ["ts", "tsx", "d.ts"] {
            out.push(exact(&format!("{stem}.{e}")));
        }
    }
    for e in ECMA_EXTENSIONS.iter().chain(&["vue"]) {
        out.push(exact(&format!("{base}.{e}")));
    }
    for e in ["ts", "tsx", "js", "jsx", "vue"] {
        out.push(exact(&join(base, &format!("index.{e}"))));
    }
}

/// The local names an import, re-export or `require` binds.
fn ecma_bound_names(node: Node<'_>, text: &str) -> Vec<String> {
    let t = |n: Node<'_>| text[n.byte_range()].to_owned();
    let mut names = Vec::new();
    match node.kind() {
        "import_statement" => {
            let mut cursor = node.walk();
            for clause in node
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "import_clause")
            {
                let mut c2 = clause.walk();
                for part in clause.named_children(&mut c2) {
                    match part.kind() {
                        "identifier" => names.push(t(part)),
                        "namespace_import" => {
                            let mut c3 = part.walk();
                            names.extend(
                                part.named_children(&mut c3)
                                    .filter(|n| n.kind() == "identifier")
                                    .map(t),
                            );
                        }
                        "named_imports" => {
                            let mut c3 = part.walk();
                            for spec in part.named_children(&mut c3) {
                                if let Some(n) = spec
                                    .child_by_field_name("alias")
                                    .or_else(|| spec.child_by_field_name("name"))
                                {
                                    names.push(t(n));
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        // `const x = require('./a')`, `const { a, b: c } = require('./a')`.
        "call_expression" => {
            if let Some(decl) = node.parent().filter(|p| p.kind() == "variable_declarator")
                && let Some(pattern) = decl.child_by_field_name("name")
            {
                match pattern.kind() {
                    "identifier" => names.push(t(pattern)),
                    "object_pattern" => {
                        let mut c = pattern.walk();
                        for p in pattern.named_children(&mut c) {
                            match p.kind() {
                                "shorthand_property_identifier_pattern" => names.push(t(p)),
                                "pair_pattern" => {
                                    if let Some(v) = p.child_by_field_name("value") {
                                        names.push(t(v));
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    names
}

// --- Python --------------------------------------------------------------------------------

fn python_imports(
    rel_path: &str,
    text: &str,
    node: Node<'_>,
    add: &mut impl FnMut(String, String, Vec<String>),
) {
    let t = |n: Node<'_>| text[n.byte_range()].to_owned();
    // (module or name node, alias)
    let bindings = |node: Node<'_>| {
        let mut cursor = node.walk();
        node.children_by_field_name("name", &mut cursor)
            .filter_map(|n| match n.kind() {
                "aliased_import" => Some((
                    t(n.child_by_field_name("name")?),
                    n.child_by_field_name("alias").map(t),
                )),
                _ => Some((t(n), None)),
            })
            .collect::<Vec<_>>()
    };
    match node.kind() {
        "import_statement" => {
            for (module, alias) in bindings(node) {
                let segments: Vec<&str> = module.split('.').collect();
                let name = alias.unwrap_or_else(|| segments[0].to_owned());
                add(module.clone(), name, python_candidates(None, &segments));
            }
        }
        "import_from_statement" => {
            let Some(module) = node.child_by_field_name("module_name") else {
                return;
            };
            let spec = t(module);
            let dots = spec.chars().take_while(|&c| c == '.').count();
            let base = if dots > 0 {
                let mut dir = dir_of(rel_path).to_owned();
                for _ in 1..dots {
                    dir = dir_of(&dir).to_owned();
                }
                Some(dir)
            } else {
                None
            };
            let module_path: Vec<&str> =
                spec[dots..].split('.').filter(|s| !s.is_empty()).collect();
            let mut cursor = node.walk();
            let wildcard = node
                .named_children(&mut cursor)
                .any(|c| c.kind() == "wildcard_import");
            if wildcard {
                add(
                    spec.clone(),
                    "*".to_owned(),
                    python_candidates(base.as_deref(), &module_path),
                );
            }
            for (name, alias) in bindings(node) {
                // `from a import b`: `b` may be a submodule (a/b.py) or a name in a.
                let mut sub = module_path.clone();
                sub.push(&name);
                let mut candidates = python_candidates(base.as_deref(), &sub);
                candidates.extend(python_candidates(base.as_deref(), &module_path));
                add(spec.clone(), alias.unwrap_or(name.clone()), candidates);
            }
        }
        _ => {}
    }
}

/// `a.b` from `base` (relative imports) or from anywhere (suffix keys).
fn python_candidates(base: Option<&str>, segments: &[&str]) -> Vec<String> {
    let path = segments.join("/");
    match base {
        Some(dir) => {
            let module = join(dir, &path);
            if path.is_empty() {
                vec![exact(&join(dir, "__init__.py"))]
            } else {
                vec![
                    exact(&format!("{module}.py")),
                    exact(&join(&module, "__init__.py")),
                ]
            }
        }
        None if path.is_empty() => Vec::new(),
        // A top-level module (`import types`) is looked for at the root and in `src/` only:
        // any `…/types.py` would take the standard library's modules for the project's.
        None if segments.len() == 1 => ["", "src/"]
            .iter()
            .flat_map(|root| {
                [
                    exact(&format!("{root}{path}.py")),
                    exact(&format!("{root}{path}/__init__.py")),
                ]
            })
            .collect(),
        None => vec![format!("{path}.py"), format!("{path}/__init__.py")],
    }
}

// --- Rust ----------------------------------------------------------------------------------

/// The directory holding a Rust file's child modules: `src/a/b.rs` → `src/a/b`,
/// `src/a/mod.rs` and `src/lib.rs` → their directory.
fn rust_module_dir(rel_path: &str) -> String {
    let file = rel_path.rsplit('/').next().unwrap_or(rel_path);
    if matches!(file, "mod.rs" | "lib.rs" | "main.rs") {
        dir_of(rel_path).to_owned()
    } else {
        rel_path.trim_end_matches(".rs").to_owned()
    }
}

/// The crate root's directory: the innermost `src` above the file (`crates/x/src`); a file
/// outside any `src` (an integration test) is its own crate.
fn rust_crate_dir(rel_path: &str) -> String {
    let dir = dir_of(rel_path);
    let segments: Vec<&str> = dir.split('/').collect();
    match segments.iter().rposition(|s| *s == "src") {
        Some(i) => segments[..=i].join("/"),
        None => dir.to_owned(),
    }
}

/// Candidates for a `use` path: the longest module path that is a file first, then the module
/// the path starts from (an item defined in it).
pub(crate) fn rust_candidates(rel_path: &str, path: &[String]) -> Vec<String> {
    let Some(first) = path.first() else {
        return Vec::new();
    };
    let (mut dir, mut rest) = match first.as_str() {
        "crate" => (rust_crate_dir(rel_path), &path[1..]),
        "self" => (rust_module_dir(rel_path), &path[1..]),
        "super" => (rust_module_dir(rel_path), path),
        _ => return Vec::new(),
    };
    while rest.first().is_some_and(|s| s == "super") {
        dir = dir_of(&dir).to_owned();
        rest = &rest[1..];
    }
    let rest: Vec<&str> = rest
        .iter()
        .map(String::as_str)
        .filter(|s| *s != "*")
        .collect();
    let mut out = Vec::new();
    for k in (1..=rest.len()).rev() {
        let module = join(&dir, &rest[..k].join("/"));
        out.push(exact(&format!("{module}.rs")));
        out.push(exact(&join(&module, "mod.rs")));
    }
    // The module the path starts from: an item defined in it.
    let crate_dir = rust_crate_dir(rel_path);
    if dir == crate_dir {
        out.push(exact(&join(&dir, "lib.rs")));
        out.push(exact(&join(&dir, "main.rs")));
    } else if !dir.is_empty() {
        out.push(exact(&format!("{dir}.rs")));
        out.push(exact(&join(&dir, "mod.rs")));
    }
    if first == "self" {
        // `self::x` in a file is an item of that file too.
        out.push(exact(rel_path));
    }
    out
}

/// The files a module path no `use` binds may be (`testing::compile()` in a file whose `use
/// super::*` brings in the crate root's `testing`): `module` under the file's own module, then
/// under each module above it up to the crate's root, nearest first.
pub(crate) fn rust_module_files(rel_path: &str, module: &[&str]) -> Vec<String> {
    let crate_dir = rust_crate_dir(rel_path);
    let mut dir = rust_module_dir(rel_path);
    let mut out = Vec::new();
    loop {
        let m = join(&dir, &module.join("/"));
        out.push(format!("{m}.rs"));
        out.push(join(&m, "mod.rs"));
        if dir == crate_dir || !dir.starts_with(&crate_dir) || dir.is_empty() {
            break;
        }
        dir = dir_of(&dir).to_owned();
    }
    out
}

/// Rust 2018 paths may start with a module declared in the file (`mod guard; use
/// guard::DropGuard;`): such uses resolve like `self::guard::DropGuard`.
pub(super) fn resolve_local_modules(rel_path: &str, imports: &mut [Import]) {
    let modules: Vec<String> = imports
        .iter()
        .filter_map(|i| i.specifier.strip_prefix("mod ").map(str::to_owned))
        .collect();
    for import in imports.iter_mut() {
        let path: Vec<String> = import.specifier.split("::").map(str::to_owned).collect();
        if import.candidates.is_empty() && path.len() > 1 && modules.iter().any(|m| *m == path[0]) {
            let mut local = vec!["self".to_owned()];
            local.extend(path);
            import.candidates = rust_candidates(rel_path, &local);
        }
    }
}

/// Flattens a `use` tree into (path, bound name) pairs.
fn flatten_use(
    node: Node<'_>,
    text: &str,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, String)>,
) {
    let segments = |n: Node<'_>| -> Vec<String> {
        text[n.byte_range()]
            .split("::")
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let with = |more: Vec<String>| -> Vec<String> { prefix.iter().cloned().chain(more).collect() };
    match node.kind() {
        "use_as_clause" => {
            let (Some(path), Some(alias)) = (
                node.child_by_field_name("path"),
                node.child_by_field_name("alias"),
            ) else {
                return;
            };
            out.push((with(segments(path)), text[alias.byte_range()].to_owned()));
        }
        "use_wildcard" => {
            let mut path = with(segments(node));
            path.retain(|s| s != "*");
            path.push("*".to_owned());
            out.push((path, "*".to_owned()));
        }
        "scoped_use_list" => {
            let base = node
                .child_by_field_name("path")
                .map(|p| with(segments(p)))
                .unwrap_or_else(|| prefix.to_vec());
            if let Some(list) = node.child_by_field_name("list") {
                flatten_use(list, text, &base, out);
            }
        }
        "use_list" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                flatten_use(child, text, prefix, out);
            }
        }
        "identifier" | "scoped_identifier" | "crate" | "self" | "super" => {
            let segs = segments(node);
            if segs.as_slice() == ["self"] && !prefix.is_empty() {
                // `use a::b::{self}` binds `b`.
                let name = prefix.last().cloned().unwrap_or_default();
                out.push((prefix.to_vec(), name));
            } else {
                let path = with(segs);
                let name = path.last().cloned().unwrap_or_default();
                out.push((path, name));
            }
        }
        _ => {}
    }
}

/// The name a Go import path binds when it is not renamed: its last element, but the one
/// before a major version (`github.com/go-chi/chi/v5` is `chi`) and without gopkg.in's version
/// (`gopkg.in/yaml.v3` is `yaml`).
fn go_package_name(path: &str) -> &str {
    let mut parts = path.rsplit('/');
    let last = parts.next().unwrap_or_default();
    let versioned = |s: &str| {
        s.strip_prefix('v')
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    if versioned(last)
        && let Some(before) = parts.next()
    {
        return before;
    }
    match last.rsplit_once('.') {
        Some((name, v)) if path.starts_with("gopkg.in/") && versioned(v) => name,
        _ => last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_imports_bind_the_package_name_not_its_version() {
        assert_eq!(go_package_name("github.com/go-chi/chi/v5"), "chi");
        assert_eq!(go_package_name("gopkg.in/yaml.v3"), "yaml");
        assert_eq!(go_package_name("net/http"), "http");
        assert_eq!(go_package_name("example.com/v2api"), "v2api");
        assert_eq!(go_package_name("fmt"), "fmt");
    }

    #[test]
    fn path_keys_are_the_path_and_its_suffixes() {
        assert_eq!(
            path_keys("a/b/c.py"),
            vec!["/a/b/c.py", "a/b/c.py", "b/c.py", "c.py"]
        );
        assert_eq!(path_keys("x.rs"), vec!["/x.rs", "x.rs"]);
    }

    #[test]
    fn relative_paths_never_climb_out_of_the_root() {
        assert_eq!(resolve("src/a", "../b/c").as_deref(), Some("src/b/c"));
        assert_eq!(resolve("src", "../../etc/passwd"), None);
        assert!(ecma_candidates("index.ts", "../../etc/passwd").is_empty());
        // A bare specifier: the `tsconfig.json` aliases decide, when a question is asked.
        assert_eq!(ecma_candidates("src/a.ts", "react"), ["bare:react"]);
        assert_eq!(
            ecma_candidates("src/a.ts", "@vue/shared"),
            ["bare:@vue/shared"]
        );
        assert!(ecma_candidates("src/a.ts", "node:fs").is_empty());
        assert!(ecma_candidates("src/a.ts", "@/../../etc/passwd").is_empty());
        // `@/` and `~/`: the aliases, then the `src` directory, then the root; `.vue` after
        // the scripts.
        let alias = ecma_candidates("src/views/list.vue", "@/components/Pagination");
        assert_eq!(
            alias[..2],
            [
                "bare:@/components/Pagination",
                "/src/components/Pagination.ts"
            ]
        );
        let at = |key: &str| alias.iter().position(|c| c == key).expect(key);
        assert!(
            at("/src/components/Pagination/index.js") < at("/src/components/Pagination/index.vue")
        );
        assert!(at("/src/components/Pagination/index.vue") < at("/components/Pagination.ts"));
        at("/components/Pagination/index.vue");
        assert!(ecma_candidates("pages/a.vue", "~/utils/x").contains(&"/utils/x.ts".to_owned()));
        assert_eq!(
            ecma_candidates("src/routes/+page.svelte", "$lib/ArticleList/index.svelte")[1],
            "/src/lib/ArticleList/index.svelte"
        );
        assert!(ecma_candidates("src/a.ts", "$lib/../../../x").is_empty());
    }

    #[test]
    fn rust_use_paths_resolve_from_crate_self_and_super() {
        let p = |s: &str| s.split("::").map(str::to_owned).collect::<Vec<_>>();
        let c = rust_candidates("crates/x/src/a/b.rs", &p("crate::store::Scope"));
        assert_eq!(
            &c[..4],
            [
                "/crates/x/src/store/Scope.rs",
                "/crates/x/src/store/Scope/mod.rs",
                "/crates/x/src/store.rs",
                "/crates/x/src/store/mod.rs"
            ]
        );
        assert!(c.contains(&"/crates/x/src/lib.rs".to_owned()));
        let s = rust_candidates("src/a/b.rs", &p("super::c::D"));
        assert_eq!(s[2..4], ["/src/a/c.rs", "/src/a/c/mod.rs"]);
        assert!(s.contains(&"/src/a.rs".to_owned()));
        assert!(rust_candidates("src/lib.rs", &p("std::fmt")).is_empty());
    }
}
