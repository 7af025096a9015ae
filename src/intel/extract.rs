//! Running a language's query over a parsed file and turning its captures into definitions,
//! call sites and imports.

use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::OnceLock;

use tree_sitter::{Node, Query, QueryCursor, StreamingIterator, Tree};

use super::elements::{ELEMENT, after_adapters};
use super::{
    Definition, Extraction, MAX_DEFINITIONS, MAX_REFERENCES, Reference, SIGNATURE_CHARS, arity,
    imports,
};
use crate::chunk::CodeLanguage;

const ECMA: &str = include_str!("queries/ecma.scm");
const C: &str = include_str!("queries/c.scm");

/// The query text for `lang`; `None` for a language without extraction (GraphQL).
pub fn query_source(lang: CodeLanguage) -> Option<String> {
    Some(match lang {
        CodeLanguage::Rust => include_str!("queries/rust.scm").to_owned(),
        CodeLanguage::Python => include_str!("queries/python.scm").to_owned(),
        CodeLanguage::Go => include_str!("queries/go.scm").to_owned(),
        CodeLanguage::JavaScript => format!("{ECMA}\n{}", include_str!("queries/javascript.scm")),
        CodeLanguage::TypeScript | CodeLanguage::Tsx => {
            format!("{ECMA}\n{}", include_str!("queries/typescript.scm"))
        }
        CodeLanguage::Java => include_str!("queries/java.scm").to_owned(),
        CodeLanguage::CSharp => include_str!("queries/csharp.scm").to_owned(),
        CodeLanguage::C => C.to_owned(),
        CodeLanguage::Cpp => format!("{C}\n{}", include_str!("queries/cpp.scm")),
        CodeLanguage::Ruby => include_str!("queries/ruby.scm").to_owned(),
        CodeLanguage::GraphQl => return None,
    })
}

/// Each language's compiled query, compiled once.
fn query(lang: CodeLanguage) -> Option<&'static Query> {
    static QUERIES: [OnceLock<Option<Query>>; CodeLanguage::ALL.len()] =
        [const { OnceLock::new() }; CodeLanguage::ALL.len()];
    let slot = CodeLanguage::ALL.iter().position(|l| *l == lang)?;
    QUERIES[slot]
        .get_or_init(|| {
            let source = query_source(lang)?;
            match Query::new(&lang.grammar(), &source) {
                Ok(q) => Some(q),
                Err(e) => {
                    // A bug in a query file (the unit tests compile every one).
                    tracing::error!(language = lang.name(), error = %e, "extraction query does not compile");
                    None
                }
            }
        })
        .as_ref()
}

/// A definition (or an `impl` block) before nesting is known.
struct RawDef {
    start: usize,
    end: usize,
    start_line: u32,
    end_line: u32,
    kind: &'static str,
    name: String,
    /// Go's receiver type, or the object a JavaScript function is assigned to.
    owner: Option<String>,
    signature: String,
    /// `impl` blocks and C++ namespaces qualify their members but define nothing.
    emitted: bool,
    /// The trait a Rust `impl Trait for Type` block implements.
    implements: Option<String>,
    pattern: usize,
}

/// The qualifier of a call on a receiver that is an expression, not a name: `(…).parse` for
/// `load().parse()`.
pub const UNNAMED_RECEIVER: &str = "(…)";

/// The qualifier's prefix of a call without a receiver inside a Kotlin lambda whose `this` is
/// of a known class (`this@Buffer` for `writeUtf8(s)` in `Buffer().apply { … }`): a call on
/// that class where it has the method, else a bare call (Kotlin's `this@label` names a
/// lambda's or an outer class's receiver).
pub const IMPLICIT_RECEIVER: &str = "this@";

/// A variable, parameter or field whose type is declared (Java, C#, C++): calls on it are
/// calls on its type.
struct Binding {
    name: String,
    /// The type's name, without generics or package: `List` for `java.util.List<String>`.
    /// Empty for a name nothing types (a Rust closure's `|err|`), which hides one outside it.
    ty: String,
    /// The class of its elements, what iterating over it gives, where its declared type says
    /// (Rust's `recipes: &[Recipe]`, [`rust_element`]): `recipes.[]` is a `Recipe`.
    item: Option<String>,
    /// Where the name is in scope (bytes).
    start: usize,
    end: usize,
    /// A TypeScript class's field: reached as `this.name` only (a bare `name` is a local).
    /// A Python attribute too, as `self.name`.
    member: bool,
    /// Where its value is read (`ty` may name a variable there): the start of its scope, or of
    /// the assignment to a Python attribute, whose scope is its whole class.
    origin: usize,
}

/// Rust's primitive types, which a crate's traits may extend (`impl Ordinal for usize`): calls
/// on them are read as on a class.
pub(super) const RUST_PRIMITIVES: &[&str] = &[
    "bool", "char", "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "str", "u8", "u16",
    "u32", "u64", "u128", "usize",
];

/// The class name a declared type is called through; `None` for primitives (but Rust's,
/// [`RUST_PRIMITIVES`]), arrays and `var`.
/// C++'s query captures only named types, whatever their case (`string_view`); a type of the
/// standard library keeps its `std::`, so the call is known to leave the index.
pub(super) fn declared_type(lang: CodeLanguage, written: &str) -> Option<String> {
    if lang == CodeLanguage::Go {
        return go_type(written);
    }
    let written = match lang {
        CodeLanguage::Rust => rust_pointee(written)?,
        CodeLanguage::Python => python_annotated(written)?,
        _ => written,
    };
    let base = written.split('<').next().unwrap_or(written).trim();
    let base = base.trim_end_matches('?');
    let last = base.rsplit(['.', ':']).next().unwrap_or(base);
    let cpp = lang == CodeLanguage::Cpp;
    if lang == CodeLanguage::Rust && RUST_PRIMITIVES.contains(&base) {
        return Some(base.to_owned());
    }
    let class_like = (cpp || last.starts_with(|c: char| c.is_ascii_uppercase()))
        && !last.is_empty()
        && last.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !written.contains('[');
    if cpp && base.starts_with("std::") {
        return class_like.then(|| format!("std::{last}"));
    }
    class_like.then(|| last.to_owned())
}

/// The class a Python annotation names: `Request`, `"Request"` (a forward reference),
/// `Optional[Request]`, `Request | None` and `httpx.Request` name one; `list[Request]` names
/// `list`, a builtin, and a union of classes (`A | B`) none.
pub(super) fn python_annotated(written: &str) -> Option<&str> {
    let mut t = written.trim().trim_matches(['"', '\'']).trim();
    for optional in ["Optional[", "typing.Optional[", "t.Optional["] {
        if let Some(inner) = t.strip_prefix(optional).and_then(|i| i.strip_suffix(']')) {
            t = inner.trim();
        }
    }
    let mut classes = t
        .split('|')
        .map(str::trim)
        .filter(|c| !c.is_empty() && *c != "None");
    let class = classes.next()?;
    if classes.next().is_some() {
        return None;
    }
    Some(class.split('[').next().unwrap_or(class).trim())
}

/// The named type a Go variable calls methods on, with its package if it names one: `*Mux`,
/// `*http.Request` and `List[T]` are `Mux`, `http.Request` and `List` (the resolver finds the
/// package through the file's imports). Unexported types are lowercase (`node`), so case says
/// nothing; builtin types, slices, maps, channels and functions have no methods in the index.
pub(super) fn go_type(written: &str) -> Option<String> {
    const BUILTIN: &[&str] = &[
        "any",
        "bool",
        "byte",
        "comparable",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
    ];
    let t = written.trim().trim_start_matches('*').trim_start();
    let t = t.split('[').next().unwrap_or(t);
    let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_');
    let named = match t.split_once('.') {
        Some((package, ty)) => word(package) && word(ty),
        None => word(t) && !BUILTIN.contains(&t),
    };
    named.then(|| t.to_owned())
}

/// The tokens of the macro arguments calls were found in, each group's collected once:
/// tree-sitter's `prev_sibling` and `parent` walk the children from the first, so reading
/// chains back with them is quadratic in a group's tokens (a `vec![…]` of thousands of calls,
/// a chain of thousands of links took minutes).
#[derive(Default)]
struct TokenGroups<'t> {
    children: HashMap<usize, Vec<Node<'t>>>,
}

impl<'t> TokenGroups<'t> {
    /// The tokens of `group` and the index of `node`, one of them.
    fn of(&mut self, group: Node<'t>, node: Node<'t>) -> Option<(&[Node<'t>], usize)> {
        let tokens = self.children.entry(group.id()).or_insert_with(|| {
            let mut cursor = group.walk();
            group.children(&mut cursor).collect()
        });
        let i = position(tokens, node)?;
        Some((tokens, i))
    }
}

/// In a macro's tokens, the type before the turbofish that `tokens[last]` (its last argument)
/// is in: `Query` of `Query::<T>::from_request`, and the trait of `<T as Trait>::f`. Read
/// back a few tokens at most.
fn before_turbofish(tokens: &[Node<'_>], last: usize) -> Option<usize> {
    // The `>`s that close after it (`Vec<u8>>`, read as one `>>`) are the `<`s to pass going
    // back.
    let closes = |t: &Node<'_>| match t.kind() {
        ">" => 1,
        ">>" => 2,
        _ => 0,
    };
    let mut depth: usize = tokens[last + 1..]
        .iter()
        .take(8)
        .map(closes)
        .take_while(|&n| n > 0)
        .sum();
    if depth == 0 {
        return None;
    }
    for open in (last.saturating_sub(16)..=last).rev() {
        match tokens[open].kind() {
            ">" | ">>" => depth += closes(&tokens[open]),
            "<" if depth > 1 => depth -= 1,
            "<" => {
                let ty = open.checked_sub(2)?;
                return (tokens[open - 1].kind() == "::" && tokens[ty].kind() == "identifier")
                    .then_some(ty);
            }
            _ => {}
        }
    }
    None
}

/// Whether a token of a macro's arguments can be a segment of a path: `config`, `i32`,
/// `self`, `crate`.
fn is_path_token(kind: &str) -> bool {
    matches!(
        kind,
        "identifier" | "primitive_type" | "self" | "super" | "crate"
    )
}

/// Where `node` is in `tokens` (in the order written).
fn position(tokens: &[Node<'_>], node: Node<'_>) -> Option<usize> {
    let from = tokens.partition_point(|t| t.start_byte() < node.start_byte());
    (from..tokens.len()).find(|&i| tokens[i].id() == node.id())
}

/// Where the expression of a call in a macro's tokens (`tokens[call]`, a name, not a call
/// node) starts, for its line: the start of its chain, as a call node would start:
/// `Filter::after(x)\n    .unwrap()\n    .applies_to(t)` starts at `Filter`. Read back no
/// further than a chain kept is ([`token_chain`]).
fn chain_start<'t>(tokens: &[Node<'t>], call: usize) -> Node<'t> {
    let mut start = call;
    while start > 0
        && call - start < 8 * CHAIN_DEPTH
        && (is_path_token(tokens[start - 1].kind())
            || matches!(tokens[start - 1].kind(), "token_tree" | "." | "::" | "?"))
    {
        start -= 1;
    }
    tokens[start]
}

/// The type a Rust parameter or local calls methods on: `&mut Stack`, `Box<Stack>`,
/// `&Arc<Stack>` and `&'a dyn Store` are `Stack`, `Stack`, `Stack` and `Store`; `Self` is left
/// to the `impl` around it.
pub(super) fn rust_pointee(written: &str) -> Option<&str> {
    let t = rust_unwrapped(written);
    (t != "Self" && !t.starts_with("Self::")).then_some(t)
}

/// A Rust type as written without the references, lifetimes, `mut`, `dyn`, `impl` and the
/// `Box`, `Arc`, `Rc` and `Option` around it: `Self` of `Option<Box<Self>>` ([`rust_pointee`]).
/// A call chain reads an `Option` through (`.unwrap()`, `?`, `if let Some(x) =`), and so are
/// variables and fields read.
pub(super) fn rust_unwrapped(written: &str) -> &str {
    rust_without(written, &["Box<", "Arc<", "Rc<", "Option<"])
}

/// A Rust type as written without the references, lifetimes, `mut`, `dyn`, `impl` and the
/// `wrappers` around it.
fn rust_without<'t>(written: &'t str, wrappers: &[&str]) -> &'t str {
    let mut t = written.trim();
    loop {
        let before = t;
        t = t.trim_start_matches('&').trim_start();
        if let Some(rest) = t.strip_prefix('\'') {
            t = rest.split_once(' ').map_or("", |(_, r)| r).trim_start();
        }
        for prefix in ["mut ", "dyn ", "impl "] {
            t = t.strip_prefix(prefix).unwrap_or(t).trim_start();
        }
        for wrapper in wrappers {
            if let Some(inner) = t.strip_prefix(wrapper) {
                t = inner.strip_suffix('>').unwrap_or(inner).trim();
            }
        }
        if t == before {
            break;
        }
    }
    t
}

/// The class a Rust collection's elements are, what iterating over it (or over an `Option`,
/// its one value) gives: `Vec<Recipe>`, `&[Recipe]`, `[Recipe; 4]`, `Option<Recipe>`,
/// `BTreeMap<String, Recipe>` (its values), `Table<'src, Rc<Recipe>>` (a generic of one type
/// argument) and `Table::<Recipe>` are all `Recipe`s. `None` when no class is named; a
/// `Result`'s error and a generic of several type arguments but a map's say nothing.
pub(super) fn rust_element(written: &str) -> Option<String> {
    const MAPS: &[&str] = &["HashMap", "BTreeMap", "IndexMap"];
    // An `Option` is kept: its value is its one element.
    let t = rust_without(written, &["Box<", "Arc<", "Rc<"]);
    // `impl Iterator<Item = Token> + 'src`: without its further bounds.
    let t = split_outside_brackets(t, '+').first().copied().unwrap_or(t);
    // `Self` is left to the caller, which knows the type it is.
    let class = |element: &str| match rust_unwrapped(element) {
        "Self" => Some("Self".to_owned()),
        _ => declared_type(CodeLanguage::Rust, element),
    };
    // A slice or an array: `[Recipe]`, `[Recipe; 4]`.
    if let Some(inner) = t.strip_prefix('[').and_then(|i| i.strip_suffix(']')) {
        return class(inner.split(';').next().unwrap_or(inner));
    }
    let (outer, args) = t.split_once('<')?;
    let outer = outer.trim_end_matches("::").trim();
    let outer = outer.rsplit("::").next().unwrap_or(outer);
    let args: Vec<&str> = split_outside_brackets(args.strip_suffix('>')?, ',')
        .into_iter()
        .filter(|a| !a.starts_with('\''))
        .collect();
    // Generics of one type argument that hold no elements to iterate over.
    const NOT_COLLECTIONS: &[&str] = &[
        "Mutex",
        "RwLock",
        "RefCell",
        "Cell",
        "PhantomData",
        "Cow",
        "Pin",
        "Weak",
        "NonNull",
        "ManuallyDrop",
        "MaybeUninit",
        "OnceCell",
        "OnceLock",
        "LazyLock",
        "Lazy",
    ];
    let element = match (outer, args.as_slice()) {
        ("Result", _) => return None,
        (wrapper, _) if NOT_COLLECTIONS.contains(&wrapper) => return None,
        // `impl Iterator<Item = &Recipe>`.
        (_, [item])
            if item
                .strip_prefix("Item")
                .is_some_and(|i| i.trim_start().starts_with('=')) =>
        {
            item.split_once('=')?.1
        }
        (_, [one]) => one,
        (map, [_, value]) if MAPS.contains(&map) => value,
        _ => return None,
    };
    class(element)
}

/// A type as written split at each `separator` outside brackets (a generic's arguments at
/// their commas, bounds at their `+`), trimmed, without empty parts.
pub(super) fn split_outside_brackets(args: &str, separator: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in args.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth = depth.saturating_sub(1),
            c if c == separator && depth == 0 => {
                out.push(args[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(args[start..].trim());
    out.retain(|a| !a.is_empty());
    out
}

/// The nearest node of `kind` around `node`.
pub(super) fn enclosing_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut up = node.parent();
    while let Some(n) = up {
        if n.kind() == kind {
            return Some(n);
        }
        up = n.parent();
    }
    None
}

/// The class body a TypeScript parameter property (`constructor(private repo: Repo)`, with an
/// accessibility modifier or `readonly`) is a field of.
fn parameter_property_class(param: Node<'_>) -> Option<Node<'_>> {
    if !matches!(param.kind(), "required_parameter" | "optional_parameter") {
        return None;
    }
    let mut cursor = param.walk();
    let property = param
        .children(&mut cursor)
        .any(|c| matches!(c.kind(), "accessibility_modifier" | "readonly"));
    if !property {
        return None;
    }
    enclosing_kind(param, "class_body")
}

/// Where a declaration's name can be used: a parameter in its whole method (or lambda), a
/// field in its whole class body, a local from its declaration to the end of its block.
fn binding_scope(decl: Node<'_>) -> (usize, usize) {
    if decl.kind() == "assignment" {
        // Ruby's `x = Foo.new` types `x` to the end of its method, `@x = Foo.new` its class.
        let ivar = decl
            .child_by_field_name("left")
            .is_some_and(|l| l.kind() == "instance_variable");
        // Python's `client = Client(url)` types `client` after it, to the end of its function
        // (or module).
        let python = decl
            .parent()
            .is_some_and(|p| p.kind() == "expression_statement");
        let mut up = decl.parent();
        while let Some(n) = up {
            match n.kind() {
                "function_definition" | "module" if python => {
                    return (decl.end_byte(), n.end_byte());
                }
                "class" | "module" if ivar => return (n.start_byte(), n.end_byte()),
                "method" | "singleton_method" if !ivar => {
                    return (decl.start_byte(), n.end_byte());
                }
                "program" => return (decl.start_byte(), n.end_byte()),
                _ => {}
            }
            up = n.parent();
        }
    }
    if decl.kind().contains("parameter") {
        let mut up = decl.parent();
        while let Some(n) = up {
            if n.kind().ends_with("_declaration")
                || matches!(
                    n.kind(),
                    "function_definition"
                        | "function_item"
                        | "closure_expression"
                        | "func_literal"
                        | "method_definition"
                        | "arrow_function"
                        | "function_expression"
                        | "function"
                )
                || n.kind().starts_with("lambda")
                || n.kind() == "local_function_statement"
            {
                return (n.start_byte(), n.end_byte());
            }
            up = n.parent();
        }
    }
    if decl.kind() == "enhanced_for_statement" {
        return (decl.start_byte(), decl.end_byte());
    }
    if decl.kind() == "var_spec" {
        // Go's `var x T` sits in a `var` statement (or group): its block, or its file.
        let mut up = decl.parent();
        while let Some(n) = up {
            if matches!(n.kind(), "block" | "source_file") {
                return (decl.start_byte(), n.end_byte());
            }
            up = n.parent();
        }
    }
    if matches!(decl.kind(), "let_declaration" | "short_var_declaration") {
        // Rust's `let x = x.next();`, Go's `x := x.Next()` in an inner block: the `x` in the
        // value is the one before.
        let parent = decl.parent().unwrap_or(decl);
        return (decl.end_byte(), parent.end_byte());
    }
    let parent = decl.parent().unwrap_or(decl);
    let field = matches!(
        decl.kind(),
        "field_declaration" | "property_declaration" | "public_field_definition"
    ) || (decl.kind() == "variable_declaration"
        && decl
            .parent()
            .is_some_and(|p| p.kind() == "field_declaration"));
    if field {
        // The class body the field is declared in.
        let mut up = decl.parent();
        while let Some(n) = up {
            if matches!(
                n.kind(),
                "class_body" | "declaration_list" | "enum_body" | "field_declaration_list"
            ) {
                return (n.start_byte(), n.end_byte());
            }
            up = n.parent();
        }
    }
    (decl.start_byte(), parent.end_byte())
}

/// Rewrites `reader.peek()` as `JsonReader.peek()` when `reader` is declared a `JsonReader`
/// around the call (the innermost declaration wins); `this.reader.peek()` too. With `fields`
/// (Rust), a variable's field too: `recipe.attributes.get()` is `Recipe.attributes.get()`,
/// which the resolver reads through `Recipe`'s fields ([`super::members`]).
fn typed_receivers(calls: &mut [RawCall], bindings: &[Binding], fields: bool) {
    let mut by_name: HashMap<&str, Vec<&Binding>> = HashMap::new();
    for b in bindings {
        by_name.entry(b.name.as_str()).or_default().push(b);
    }
    // The innermost binding of `var` in scope at `at` that starts before it: on `this.`, a
    // field or (Java, C#) a variable; on Python's `self.`, an attribute only.
    let binding_of = |var: &str, at: usize, on_this: bool, members_only: bool| {
        by_name
            .get(var)?
            .iter()
            .filter(|b| b.start < at && at < b.end && (on_this || !b.member))
            .filter(|b| b.member || !members_only)
            .max_by_key(|b| b.start)
            .copied()
    };
    for call in calls.iter_mut() {
        // A variable bound to a chain (`let res = client.get().await`) is followed to what the
        // chain starts from (`client`, a `TestClient`), a few variables deep; `let rx =
        // rx.clone()` to the `rx` before it.
        let mut at = call.start;
        for _ in 0..CHAIN_DEPTH {
            let Some(q) = call.qualifier.as_deref() else {
                break;
            };
            // A chain from a variable (`client.get()`) is a chain from its type.
            let (q, rest) = chain_root(q)
                .or_else(|| fields.then(|| field_root(q))?)
                .unwrap_or((q, ""));
            // `function::get()` is a path's (a module's, a type's), whatever a variable is
            // named alike.
            if rest.starts_with("::") {
                break;
            }
            let (var, on_this, members_only) = match q.strip_prefix("this.") {
                Some(field) => (field, true, false),
                None => match q.strip_prefix("self.") {
                    Some(attribute) => (attribute, true, true),
                    None => (q, false, false),
                },
            };
            if var.is_empty() || var.contains(['.', ':']) || var == UNNAMED_RECEIVER {
                break;
            }
            let Some(binding) = binding_of(var, at, on_this, members_only) else {
                break;
            };
            // `recipe.name()` where `recipe` is one of `recipes: &[Recipe]` (`recipes.[]`,
            // `recipes.iter().[]`).
            if let Some(item) = &binding.item
                && let Some(after) = after_adapters(rest)
                    .strip_prefix('.')
                    .and_then(|r| r.strip_prefix(ELEMENT))
            {
                call.qualifier = Some(format!("{item}{after}"));
                break;
            }
            if binding.ty.is_empty() {
                break;
            }
            call.qualifier = Some(format!("{}{rest}", binding.ty));
            at = binding.origin;
        }
    }
}

/// A receiver chain's first name and the calls after it ([`receiver_chain`]): `client` and
/// `.get()` of `client.get()`, `Router` and `::new().route()` of `Router::new().route()`;
/// `None` for a receiver that is no chain, and for a chain from a call (`load().parse()`).
pub(super) fn chain_root(qualifier: &str) -> Option<(&str, &str)> {
    if !qualifier.ends_with("()") {
        return None;
    }
    let cut = qualifier.find(['.', ':', '('])?;
    if qualifier.as_bytes()[cut] == b'(' {
        return None;
    }
    // A field is a name too: `this.repo` of `this.repo.find()`, not of `this.find()`.
    if matches!(&qualifier[..cut], "this" | "self")
        && let Some(next) = qualifier[cut + 1..].find(['.', ':', '('])
        && qualifier.as_bytes()[cut + 1 + next] != b'('
    {
        return Some(qualifier.split_at(cut + 1 + next));
    }
    Some(qualifier.split_at(cut))
}

/// A field path's variable and its fields: `recipe` and `.attributes` of `recipe.attributes`;
/// and of an element's (`recipes.[]`, `module.recipes().[]`, [`super::patterns`]).
fn field_root(qualifier: &str) -> Option<(&str, &str)> {
    let cut = qualifier.find('.')?;
    let (root, rest) = qualifier.split_at(cut);
    (!root.is_empty() && !rest.contains(':') && (!rest.contains('(') || rest.contains(ELEMENT)))
        .then_some((root, rest))
}

pub(super) struct RawCall {
    pub(super) start: usize,
    /// Calls that start together (`load().parse()`) are ordered outer first.
    pub(super) end: usize,
    pub(super) line: u32,
    pub(super) name: String,
    pub(super) qualifier: Option<String>,
    /// How many arguments it passes, where that tells overloads apart ([`super::arity`]).
    pub(super) args: Option<u16>,
    /// The type its first argument is written as ([`super::arity::written_argument`]).
    pub(super) argument: Option<String>,
}

/// What `tree` (parsed from `text`, the file at `rel_path`) defines, calls and imports.
pub fn extract(lang: CodeLanguage, tree: &Tree, text: &str, rel_path: &str) -> Extraction {
    let Some(query) = query(lang) else {
        return Extraction::default();
    };
    let names = query.capture_names();
    let mut defs: HashMap<usize, RawDef> = HashMap::new();
    let mut calls: HashMap<usize, RawCall> = HashMap::new();
    let mut import_nodes: Vec<(usize, Node<'_>, &str, Node<'_>)> = Vec::new();
    let mut bindings: Vec<Binding> = Vec::new();
    let mut truncated = false;

    let mut token_groups = TokenGroups::default();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), text.as_bytes());
    while let Some(m) = matches.next() {
        let (mut main, mut name, mut qualifier, mut owner, mut arg) =
            (None, None, None, None, None);
        let mut group = None;
        let (mut var_name, mut var_type, mut var_self) = (None, None, false);
        let mut var_value = None;
        for c in m.captures {
            match names[c.index as usize] {
                "name" => name = Some(c.node),
                "var.name" => var_name = Some(c.node),
                "var.type" => var_type = Some(c.node),
                "var.self" => var_self = true,
                "var.value" => var_value = Some(c.node),
                "qualifier" => qualifier = Some(c.node),
                "tokens" => group = Some(c.node),
                "receiver" => owner = Some(c.node),
                a @ ("import.use" | "import.mod" | "import.path") => arg = Some((a, c.node)),
                n if n.starts_with("def.")
                    || n.starts_with("scope.")
                    || matches!(n, "call" | "import" | "var") =>
                {
                    main = Some((n, c.node))
                }
                _ => {}
            }
        }
        let Some((capture, node)) = main else {
            continue;
        };
        match capture {
            "var" => {
                // What iterating over a Rust collection gives (`recipes: &[Recipe]`).
                let item = var_type
                    .filter(|t| lang == CodeLanguage::Rust && !t.kind().ends_with("expression"))
                    .and_then(|t| rust_element(&text[t.byte_range()]));
                // A value that is a call chain (`let res = client.get(url).await`) types
                // the variable by what the chain returns ([`receiver_chain`]).
                if let (Some(n), Some(t)) = (var_name, var_type)
                    && let Some(ty) = var_value
                        .and_then(|v| receiver_chain(v, text, lang))
                        .or_else(|| declared_type(lang, &text[t.byte_range()]))
                        .or_else(|| {
                            (t.kind().ends_with("expression") || t.kind() == "call")
                                .then(|| receiver_chain(t, text, lang))?
                        })
                        // Rust's `let mut current = self;`, `let module = root;`: what the
                        // other name is (a type's constant, `let x = MAX;`, is not followed).
                        .or_else(|| {
                            let named = &text[t.byte_range()];
                            (lang == CodeLanguage::Rust
                                && (t.kind() == "self"
                                    || (t.kind() == "identifier"
                                        && named
                                            .starts_with(|c: char| c.is_lowercase() || c == '_'))))
                            .then(|| named.to_owned())
                        })
                        // `self.transport = transport`: what the variable is, where it is read.
                        .or_else(|| {
                            (var_self && t.kind() == "identifier")
                                .then(|| text[t.byte_range()].to_owned())
                        })
                        // A slice (`&[Recipe]`) is no class, but has elements.
                        .or_else(|| item.is_some().then(String::new))
                {
                    let name = text[n.byte_range()].to_owned();
                    // Python's `self.client = Client(url)` is the class's attribute, reached as
                    // `self.client` in its every method.
                    if var_self {
                        if let Some(class) = enclosing_kind(node, "class_definition") {
                            bindings.push(Binding {
                                name,
                                ty,
                                item: None,
                                start: class.start_byte(),
                                end: class.end_byte(),
                                member: true,
                                origin: node.start_byte(),
                            });
                        }
                        continue;
                    }
                    // TypeScript's `constructor(private repo: Repository<User>)` declares a
                    // field too, reached as `this.repo` in the whole class.
                    if let Some(body) = parameter_property_class(node) {
                        bindings.push(Binding {
                            name: name.clone(),
                            ty: ty.clone(),
                            item: None,
                            start: body.start_byte(),
                            end: body.end_byte(),
                            member: true,
                            origin: body.start_byte(),
                        });
                    }
                    let (start, end) = binding_scope(node);
                    bindings.push(Binding {
                        name,
                        ty,
                        item,
                        start,
                        end,
                        member: node.kind() == "public_field_definition",
                        origin: start,
                    });
                }
            }
            "import" => {
                // Python's statements are taken apart in code, without an argument capture.
                let (a, arg) = arg.unwrap_or(("import", node));
                import_nodes.push((node.id(), node, a, arg));
            }
            "call" => {
                let Some(name) = name else { continue };
                if calls.len() >= MAX_REFERENCES {
                    truncated = true;
                    continue;
                }
                // In a macro's tokens: the tokens, and where the call's name is in them.
                let tokens = group.and_then(|g| token_groups.of(g, node));
                let start = tokens.map_or(node, |(tokens, i)| chain_start(tokens, i));
                let call = {
                    let mut call = RawCall {
                        start: node.start_byte(),
                        end: node.end_byte(),
                        line: start.start_position().row as u32 + 1,
                        // A macro is named as it is called, `write!`: it reaches macros only.
                        name: if node.kind() == "macro_invocation" {
                            format!("{}!", &text[name.byte_range()])
                        } else {
                            text[name.byte_range()].to_owned()
                        },
                        // A receiver that is no plain path (`load().parse()`) is still a
                        // receiver: the call reaches methods, not functions.
                        qualifier: qualifier.map(|q| {
                            // A receiver in a macro's tokens is read back to its start.
                            if let Some((tokens, i)) = tokens {
                                // Before the name, past any `.await`; a path's type
                                // before its turbofish (`Query::<T>::from_request`).
                                let q = position(&tokens[..i], q)
                                    .map(|q| before_turbofish(tokens, q).unwrap_or(q));
                                let chain = q.and_then(|q| token_chain(tokens, q, text));
                                let receiver = q.is_some_and(|q| tokens[q + 1].kind() == ".");
                                return match chain {
                                    Some(c) if receiver => rust_variant_type(&c).unwrap_or(c),
                                    Some(c) => c,
                                    None => UNNAMED_RECEIVER.to_owned(),
                                };
                            }
                            if lang == CodeLanguage::Rust
                                && q.kind() == "scoped_identifier"
                                && q.parent().is_some_and(|p| p.kind() == "field_expression")
                                && let Some(ty) = rust_variant_type(&text[q.byte_range()])
                            {
                                return ty;
                            }
                            let written = &text[q.byte_range()];
                            // C++'s `this->reader_` is the field, as Java's `this.reader`.
                            match written.strip_prefix("this->") {
                                Some(field) => plain_path(&format!("this.{field}")),
                                None => plain_path(&without_null_operators(&joined(
                                    &without_turbofish(written),
                                ))),
                            }
                            .or_else(|| receiver_chain(q, text, lang))
                            .unwrap_or_else(|| UNNAMED_RECEIVER.to_owned())
                        }),
                        args: if arity::counted(lang) {
                            arity::call_args(node)
                        } else {
                            None
                        },
                        argument: match tokens {
                            _ if lang != CodeLanguage::Rust => None,
                            Some((tokens, i)) => arity::written_token_argument(tokens, i, text),
                            None => arity::written_argument(node, text),
                        },
                    };
                    if lang == CodeLanguage::Ruby {
                        super::ruby::constructor(&mut call);
                    }
                    call
                };
                // Patterns that match one call (a name in a macro's tokens, bare and after a
                // `.`): the one that read a receiver wins.
                match calls.entry(node.id()) {
                    Entry::Vacant(e) => {
                        e.insert(call);
                    }
                    Entry::Occupied(mut e) => {
                        if e.get().qualifier.is_none() && call.qualifier.is_some() {
                            e.insert(call);
                        }
                    }
                }
            }
            def => {
                let Some(name) = name else { continue };
                let ecma = matches!(
                    lang,
                    CodeLanguage::JavaScript | CodeLanguage::TypeScript | CodeLanguage::Tsx
                );
                if matches!(def, "def.const" | "def.variable")
                    && ecma
                    && bound_to_require(node, text)
                {
                    continue;
                }
                if defs.len() >= MAX_DEFINITIONS {
                    truncated = true;
                    continue;
                }
                let scope_only = def.starts_with("scope.");
                let impl_block = def == "scope.impl";
                let raw = RawDef {
                    start: node.start_byte(),
                    end: node.end_byte(),
                    start_line: node.start_position().row as u32 + 1,
                    end_line: node.end_position().row as u32 + 1,
                    kind: kind_of(def),
                    name: if impl_block {
                        impl_type_name(name, text)
                    } else {
                        text[name.byte_range()].to_owned()
                    },
                    owner: owner
                        .or(qualifier)
                        .and_then(|o| plain_path(&text[o.byte_range()]))
                        .map(|o| owner_name(&o))
                        .filter(|o| !o.is_empty()),
                    signature: signature(lang, node, text),
                    emitted: !scope_only,
                    implements: node
                        .child_by_field_name("trait")
                        .filter(|_| impl_block)
                        .map(|t| implemented_trait(t, text)),
                    pattern: m.pattern_index,
                };
                // A node several patterns match (a Go struct is also a type) takes the first.
                match defs.get(&node.id()) {
                    Some(d) if d.pattern <= raw.pattern => {}
                    _ => {
                        defs.insert(node.id(), raw);
                    }
                }
            }
        }
    }
    if truncated {
        tracing::info!(
            path = rel_path,
            "extraction kept the first {MAX_DEFINITIONS} definitions and {MAX_REFERENCES} calls"
        );
    }

    let mut defs: Vec<RawDef> = defs.into_values().collect();
    defs.sort_by_key(|d| (d.start, std::cmp::Reverse(d.end), d.pattern));
    let (definitions, slots) = nest(lang, &defs);

    if lang == CodeLanguage::Ruby {
        let room = MAX_REFERENCES.saturating_sub(calls.len());
        calls.extend(super::ruby::bare_calls(tree, text, room));
    }
    let mut calls: Vec<RawCall> = calls.into_values().collect();
    calls.sort_by_key(|c| (c.start, std::cmp::Reverse(c.end)));
    if lang == CodeLanguage::Rust {
        // `Self::And { lhs, rhs } => lhs.tree()`: a name a pattern binds is a field.
        let patterns = super::patterns::rust_pattern_bindings(tree, text);
        bindings.extend(patterns.into_iter().map(|b| Binding {
            name: b.name,
            ty: b.ty.unwrap_or_default(),
            item: None,
            start: b.start,
            end: b.end,
            member: false,
            origin: b.start,
        }));
    }
    if !bindings.is_empty() {
        typed_receivers(&mut calls, &bindings, lang == CodeLanguage::Rust);
    }
    let references = enclose(&defs, &slots, &definitions, calls, lang);

    import_nodes.sort_by_key(|(id, node, ..)| (node.start_byte(), *id));
    import_nodes.dedup_by_key(|(id, ..)| *id);
    let mut imports: Vec<_> = import_nodes
        .into_iter()
        .flat_map(|(_, node, arg_kind, arg)| {
            imports::imports_of(lang, rel_path, text, node, arg_kind, arg)
        })
        .collect();
    if lang == CodeLanguage::Rust {
        imports::resolve_local_modules(rel_path, &mut imports);
    }
    let members = if lang == CodeLanguage::Rust {
        super::members::rust_members(tree, text)
    } else {
        Vec::new()
    };
    Extraction {
        definitions,
        references,
        imports,
        members,
    }
}

/// Qualified names and parents from nesting. `defs` is sorted by start, outer first; the
/// result's `slots[i]` is the index in the output of `defs[i]` (`None` for `impl` blocks).
fn nest(lang: CodeLanguage, defs: &[RawDef]) -> (Vec<Definition>, Vec<Option<u32>>) {
    let sep = lang.separator();
    let mut out: Vec<Definition> = Vec::with_capacity(defs.len());
    let mut slots: Vec<Option<u32>> = Vec::with_capacity(defs.len());
    // Qualified names of `defs`, to qualify members.
    let mut qualified: Vec<String> = Vec::with_capacity(defs.len());
    let mut stack: Vec<usize> = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        while stack.last().is_some_and(|&t| defs[t].end <= d.start) {
            stack.pop();
        }
        // A C `typedef struct foo {...} foo_t;` holds `struct foo` but does not qualify it.
        let qualifier = stack.iter().rev().find(|&&p| {
            !(matches!(lang, CodeLanguage::C | CodeLanguage::Cpp) && defs[p].kind == "type")
        });
        let q = match (&d.owner, qualifier) {
            // C++'s `int Stack::size()` inside `namespace acme`.
            (Some(owner), Some(&p)) if defs[p].kind == "namespace" => {
                format!("{}{sep}{owner}{sep}{}", qualified[p], d.name)
            }
            (Some(owner), _) => format!("{owner}{sep}{}", d.name),
            (None, Some(&p)) => format!("{}{sep}{}", qualified[p], d.name),
            (None, None) => d.name.clone(),
        };
        qualified.push(q.clone());
        let container = stack.last().map(|&p| defs[p].kind);
        let kind = match (d.kind, container) {
            ("function", Some("class" | "impl" | "trait" | "interface" | "struct" | "enum")) => {
                "method"
            }
            (k, _) => k,
        };
        // A C++ method named like its class (`Stack::Stack`) is a constructor, as Java's and
        // C#'s are by their grammar.
        let owner = d
            .owner
            .as_deref()
            .or_else(|| stack.last().map(|&p| defs[p].name.as_str()));
        let kind = match kind {
            "method" | "function"
                if owner.is_some_and(|o| o.rsplit(':').next() == Some(&d.name)) =>
            {
                "constructor"
            }
            k => k,
        };
        let parent = stack.iter().rev().find_map(|&p| slots[p]);
        if d.emitted {
            slots.push(Some(out.len() as u32));
            out.push(Definition {
                name: d.name.clone(),
                qualified: q,
                kind,
                signature: d.signature.clone(),
                start_line: d.start_line,
                end_line: d.end_line,
                parent,
                // What an `impl Trait for Type` holds, not what a function in it nests.
                implements: stack.last().and_then(|&p| defs[p].implements.clone()),
            });
        } else {
            slots.push(None);
        }
        stack.push(i);
    }
    (out, slots)
}

/// Gives each call its innermost enclosing definition, and replaces a `self`, `Self`, `this`
/// or `cls` qualifier with the enclosing class or `impl` type's qualified name.
fn enclose(
    defs: &[RawDef],
    slots: &[Option<u32>],
    definitions: &[Definition],
    calls: Vec<RawCall>,
    lang: CodeLanguage,
) -> Vec<Reference> {
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0;
    let mut out = Vec::with_capacity(calls.len());
    for call in calls {
        while next < defs.len() && defs[next].start <= call.start {
            while stack
                .last()
                .is_some_and(|&t| defs[t].end <= defs[next].start)
            {
                stack.pop();
            }
            stack.push(next);
            next += 1;
        }
        while stack.last().is_some_and(|&t| defs[t].end <= call.start) {
            stack.pop();
        }
        let enclosing = stack.iter().rev().find_map(|&i| slots[i]);
        let class = || {
            stack.iter().rev().find_map(|&i| {
                if matches!(
                    defs[i].kind,
                    "class" | "impl" | "trait" | "interface" | "struct" | "enum"
                ) {
                    Some(match slots[i] {
                        Some(s) => definitions[s as usize].qualified.clone(),
                        None => defs[i].name.clone(),
                    })
                } else {
                    // A method defined outside its type: C++'s `Stack::push`.
                    defs[i].owner.clone()
                }
            })
        };
        let qualifier = match call.qualifier.as_deref() {
            Some("self" | "Self" | "this" | "cls") => class().or(call.qualifier),
            // Python's `super().__init__()` is Java's `super.close()`: on the bases.
            Some("super()") if lang == CodeLanguage::Python => Some("super".to_owned()),
            // A Rust field of `self`, or a chain from one: `self.attributes.get()` is on the
            // `attributes` of the `impl`'s type, which the resolver reads through its fields.
            Some(q) if lang == CodeLanguage::Rust && q.starts_with("self.") => {
                class().map(|c| c + &q[4..]).or(call.qualifier)
            }
            // A chain from it: `self.builder().build()`.
            Some(q) => match chain_root(q) {
                Some(("self" | "Self" | "this" | "cls", rest)) => {
                    class().map(|c| c + rest).or(call.qualifier)
                }
                _ => call.qualifier,
            },
            None => None,
        };
        out.push(Reference {
            name: call.name,
            qualifier,
            line: call.line,
            enclosing,
            args: call.args,
            argument: call.argument,
        });
    }
    out
}

/// Whether a JavaScript binding's value is an import: `require('x')`, `require('x').y`,
/// `await import('x')`.
fn bound_to_require(declarator: Node<'_>, text: &str) -> bool {
    let mut value = declarator.child_by_field_name("value");
    while let Some(v) = value {
        value = match v.kind() {
            "await_expression" | "parenthesized_expression" => v.named_child(0),
            "member_expression" => v.child_by_field_name("object"),
            "call_expression" => {
                return v
                    .child_by_field_name("function")
                    .is_some_and(|f| f.kind() == "import" || &text[f.byte_range()] == "require");
            }
            _ => return false,
        };
    }
    false
}

fn kind_of(capture: &str) -> &'static str {
    match capture.trim_start_matches("def.") {
        "function" => "function",
        "method" => "method",
        "class" => "class",
        "struct" => "struct",
        "enum" => "enum",
        "type" => "type",
        "trait" => "trait",
        "interface" => "interface",
        "module" => "module",
        "namespace" => "namespace",
        "macro" => "macro",
        "const" => "const",
        "variable" => "variable",
        "constructor" => "constructor",
        "property" => "property",
        "scope.impl" => "impl",
        "scope.namespace" => "namespace",
        _ => "definition",
    }
}

/// A receiver or path as written, when it is a plain path (`self`, `os.path`, `Stack`,
/// `crate::store`); `None` for an expression (`foo().bar`, `items[0]`).
fn plain_path(s: &str) -> Option<String> {
    // Ruby's instance and class variables: `@app`, `@@count`.
    let bare = s.trim_start_matches('@');
    let plain = !bare.is_empty()
        && s.len() - bare.len() <= 2
        && s.len() <= 120
        && bare
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | ':'));
    plain.then(|| s.to_owned())
}

/// How many links (calls; in Rust also indexes, fields of values that are no path, `if`s and
/// `match`es) deep a receiver is written out ([`receiver_chain`]): the bound of its recursion,
/// so a file nested thousands deep is read without overflowing the stack.
const CHAIN_DEPTH: usize = 8;
/// How long a receiver written out may be.
const CHAIN_CHARS: usize = 300;

/// A receiver that is a call, written as the calls it chains without their arguments, for the
/// resolver to follow through what each returns: `Router::new().route("/", h)` is
/// `Router::new().route()`, `client.get(url).await?` is `client.get()`, `new Builder(x).add(y)`
/// is `Builder.add()` (a constructor is its class); in Rust also an index (`xs[i]` is
/// `xs.[]`), a struct literal, an `if` or a `match` ([`branch_values`]). `None` when a link is
/// something else (a closure, a literal) or the chain is longer than [`CHAIN_DEPTH`] calls.
pub(super) fn receiver_chain(node: Node<'_>, text: &str, lang: CodeLanguage) -> Option<String> {
    chain_link(node, text, CHAIN_DEPTH, lang).filter(|c| c.len() <= CHAIN_CHARS)
}

fn chain_link(node: Node<'_>, text: &str, depth: usize, lang: CodeLanguage) -> Option<String> {
    // What only awaits, unwraps with `?` or `!`, groups or borrows is its operand.
    let mut node = node;
    loop {
        node = match node.kind() {
            "try_expression"
            | "await_expression"
            | "non_null_expression"
            | "parenthesized_expression" => node.named_child(0)?,
            // Rust's `&mut x`: the `mut` is a child too.
            "reference_expression" => node.child_by_field_name("value")?,
            _ => break,
        };
    }
    let word = |n: Node<'_>| -> Option<String> {
        let w = &text[n.byte_range()];
        (!w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_')).then(|| w.to_owned())
    };
    match node.kind() {
        "call_expression" | "call" | "invocation_expression" | "method_invocation" => {
            let depth = depth.checked_sub(1)?;
            let (receiver, name) = if node.kind() == "method_invocation" {
                (
                    node.child_by_field_name("object"),
                    node.child_by_field_name("name")?,
                )
            } else {
                let mut function = node.child_by_field_name("function")?;
                if function.kind() == "generic_function" {
                    function = function.child_by_field_name("function")?;
                }
                let field = |receiver: &str, name: &str| -> Option<(Option<Node<'_>>, Node<'_>)> {
                    Some((
                        function.child_by_field_name(receiver),
                        function.child_by_field_name(name)?,
                    ))
                };
                match function.kind() {
                    // Go's `new(Route)` is a `*Route`.
                    "identifier" if &text[function.byte_range()] == "new" => {
                        let ty = node.child_by_field_name("arguments")?.named_child(0)?;
                        return matches!(ty.kind(), "type_identifier" | "qualified_type")
                            .then(|| plain_path(&text[ty.byte_range()]))?;
                    }
                    "identifier" => (None, function),
                    // Rust's `Router::new()`: the path as written.
                    "scoped_identifier" => {
                        return plain_path(&without_turbofish(&text[function.byte_range()]))
                            .map(|p| p + "()");
                    }
                    "field_expression" => field("value", "field")?,
                    "member_expression" => field("object", "property")?,
                    "selector_expression" => field("operand", "field")?,
                    "attribute" => field("object", "attribute")?,
                    "member_access_expression" => field("expression", "name")?,
                    _ => return None,
                }
            };
            let name = word(name)?;
            match receiver {
                None => Some(format!("{name}()")),
                Some(r) => Some(format!("{}.{name}()", chain_link(r, text, depth, lang)?)),
            }
        }
        // `new Builder(x)` (TypeScript, Java, C#): the class.
        "new_expression" | "object_creation_expression" => {
            let class = node
                .child_by_field_name("constructor")
                .or_else(|| node.child_by_field_name("type"))?;
            let written = &text[class.byte_range()];
            let base = written.split('<').next().unwrap_or(written);
            word(class).or_else(|| plain_path(base.rsplit('.').next().unwrap_or(base)))
        }
        // Rust's `if c { a } else { b }` and `match v { P => a, .. }` give what their branches
        // do: the first branch whose value is a chain or a field, not a name its pattern may
        // have bound (`Some(x) => x`) nor what wraps one (`Some((name, arg))`).
        "if_expression" | "match_expression" if lang == CodeLanguage::Rust => {
            let depth = depth.checked_sub(1)?;
            branch_values(node)
                .into_iter()
                .filter_map(|v| chain_link(v, text, depth, lang))
                .find(|c| {
                    (c == "self" || c.contains(['.', ':', '(']))
                        && !matches!(c.as_str(), "Some()" | "Ok()" | "Err()")
                })
        }
        // Rust's `xs[i]` is one of the elements of `xs`, and `Foo { .. }` a `Foo`.
        "index_expression" if lang == CodeLanguage::Rust => Some(format!(
            "{}.{ELEMENT}",
            chain_link(node.named_child(0)?, text, depth.checked_sub(1)?, lang)?
        )),
        "struct_expression" => {
            let written = &text[node.child_by_field_name("name")?.byte_range()];
            plain_path(written.split('<').next()?.trim_end_matches("::"))
        }
        _ => {
            let path = plain_path(&without_null_operators(&joined(&text[node.byte_range()])));
            // A Rust field of what is no path (`recipes[0].name`, `Foo::new().bar`): the
            // field of what that gives.
            if path.is_none() && lang == CodeLanguage::Rust && node.kind() == "field_expression" {
                let value = node.child_by_field_name("value")?;
                let field = word(node.child_by_field_name("field")?)?;
                let depth = depth.checked_sub(1)?;
                return Some(format!("{}.{field}", chain_link(value, text, depth, lang)?));
            }
            path
        }
    }
}

/// The values a Rust `if` (its blocks' last expressions, through `else if`) or `match` (its
/// arms') gives, in order.
fn branch_values<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    fn tail(block: Node<'_>) -> Option<Node<'_>> {
        let last = block.named_child(block.named_child_count().checked_sub(1)?)?;
        (last.kind().ends_with("expression") || last.kind() == "identifier").then_some(last)
    }
    let mut values = Vec::new();
    let mut node = node;
    loop {
        match node.kind() {
            "if_expression" => {
                values.extend(node.child_by_field_name("consequence").and_then(tail));
                // `else { .. }` or `else if ..`.
                match node
                    .child_by_field_name("alternative")
                    .and_then(|e| e.named_child(0))
                {
                    Some(next) if next.kind() == "if_expression" => node = next,
                    Some(block) => {
                        values.extend(tail(block));
                        break;
                    }
                    None => break,
                }
            }
            "match_expression" => {
                if let Some(body) = node.child_by_field_name("body") {
                    let mut cursor = body.walk();
                    for arm in body.named_children(&mut cursor) {
                        let value = arm.child_by_field_name("value");
                        values.extend(value.and_then(|v| match v.kind() {
                            "block" => tail(v),
                            _ => Some(v),
                        }));
                    }
                }
                break;
            }
            _ => break,
        }
    }
    values
}

/// A Rust path without its turbofishes: `Table::<'src, Recipe>::default` is `Table::default`.
fn without_turbofish(path: &str) -> Cow<'_, str> {
    if !path.contains("::<") {
        return Cow::Borrowed(path);
    }
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(at) = rest.find("::<") {
        out.push_str(&rest[..at]);
        let mut depth = 0;
        let close = rest[at + 2..].char_indices().find_map(|(i, c)| {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(at + 2 + i + 1)
        });
        let Some(close) = close else {
            // Unbalanced: left as written, which is no path.
            return Cow::Borrowed(path);
        };
        rest = &rest[close..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// A receiver written over several lines, as formatters break long chains (`self\n
/// .recipes\n .values()`): without the whitespace before or after its `.`, `::` and `?`, as
/// if written on one line. Whitespace elsewhere (`a b`) stays, so it is still no path.
fn joined(written: &str) -> Cow<'_, str> {
    if !written.contains(char::is_whitespace) {
        return Cow::Borrowed(written);
    }
    let joins = |c: char| matches!(c, '.' | ':' | '?');
    let mut out = String::with_capacity(written.len());
    let mut rest = written;
    while let Some(at) = rest.find(char::is_whitespace) {
        let (before, after) = rest.split_at(at);
        out.push_str(before);
        let next = after.trim_start();
        let dropped = out.ends_with(joins) || next.starts_with(joins);
        if !dropped {
            out.push(' ');
        }
        rest = next;
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// A Rust receiver that is an enum's variant or a type's constant (`Keyword::X.lexeme()`,
/// `Self::EMPTY.len()`): the type, `Keyword`, `Self`; `None` for any other path.
fn rust_variant_type(receiver: &str) -> Option<String> {
    let (ty, value) = receiver.rsplit_once("::")?;
    let last_type = ty.rsplit("::").next().unwrap_or(ty);
    let capital = |s: &str| s.starts_with(|c: char| c.is_uppercase());
    let ident = |s: &str| s.chars().all(|c| c.is_alphanumeric() || c == '_');
    (capital(value) && capital(last_type) && ident(value) && ident(last_type))
        .then(|| ty.to_owned())
}

/// A receiver in a macro's tokens, which the grammar leaves unparsed (`write!(f, "{}",
/// self.name.lexeme())`): the tokens from `last`, the one before the call's `.` or `::`, read
/// back to where the chain starts and written as [`receiver_chain`] writes one: `self.name`,
/// `Path::new()`, `config.color.paint()`; an index is one of the elements (`invocations[0]
/// .recipe` is `invocations.[].recipe`) and a struct literal its type (`Usage { .. }` is
/// `Usage`). `None` when a link is no name or call (`(a + b).len()`), or the chain is too
/// long.
fn token_chain(tokens: &[Node<'_>], last: usize, text: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    let mut links = 0;
    let mut t = last;
    let before = |i: usize| i.checked_sub(1);
    loop {
        // Read back no further than a chain kept can reach.
        if links > CHAIN_DEPTH || parts.len() > 4 * CHAIN_DEPTH + 8 {
            return None;
        }
        let term = tokens[t];
        let group =
            |open: char| term.kind() == "token_tree" && text[term.byte_range()].starts_with(open);
        if group('(') {
            // A call: a name and its parenthesised arguments.
            links += 1;
            t = before(t).filter(|&n| tokens[n].kind() == "identifier")?;
            parts.extend(["()", &text[tokens[t].byte_range()]]);
        } else if group('[') {
            // An index, on what comes before it with no separator.
            links += 1;
            parts.extend([ELEMENT, "."]);
            t = before(t)?;
            continue;
        } else if group('{') {
            // A struct literal, whose name is a type's.
            t = before(t).filter(|&n| {
                tokens[n].kind() == "identifier"
                    && text[tokens[n].byte_range()].starts_with(char::is_uppercase)
            })?;
            parts.push(&text[tokens[t].byte_range()]);
        } else if is_path_token(term.kind()) {
            parts.push(&text[term.byte_range()]);
        } else {
            return None;
        }
        // The chain goes on past a `.` or `::`, and past the `?` that only fails early.
        let Some(sep) = before(t).filter(|&s| matches!(tokens[s].kind(), "." | "::")) else {
            break;
        };
        parts.push(&text[tokens[sep].byte_range()]);
        t = before(sep)?;
        while tokens[t].kind() == "?" {
            t = before(t)?;
        }
    }
    let chain: String = parts.into_iter().rev().collect();
    (links <= CHAIN_DEPTH && chain.len() <= CHAIN_CHARS).then_some(chain)
}

/// A receiver without the operators that only say it may be null or fails early: TypeScript's
/// and C#'s `state.map!.set()`, `user?.name.trim()`, Rust's `file?.read()` reach what
/// `state.map`, `user.name` and `file` would.
fn without_null_operators(receiver: &str) -> Cow<'_, str> {
    if !receiver.contains(['!', '?']) {
        return Cow::Borrowed(receiver);
    }
    let cleaned = receiver.replace("?.", ".").replace("!.", ".");
    Cow::Owned(cleaned.trim_end_matches(['!', '?']).to_owned())
}

/// The owner a definition is qualified by: `Foo.prototype` is `Foo`, `module.exports` and
/// `exports` qualify nothing worth keeping (`exports.run` is `run`).
pub(crate) fn owner_name(owner: &str) -> String {
    let owner = owner.trim_end_matches(".prototype");
    match owner {
        "module.exports" | "exports" => String::new(),
        o => o.to_owned(),
    }
}

/// The type an `impl` block is for, without generics or references: `impl<T> Stack<T>` and
/// `impl Display for &Stack` are both `Stack`.
pub(super) fn impl_type_name(node: Node<'_>, text: &str) -> String {
    let mut node = node;
    loop {
        match node.kind() {
            "generic_type" | "reference_type" => match node.child_by_field_name("type") {
                Some(t) => node = t,
                None => break,
            },
            "scoped_type_identifier" => match node.child_by_field_name("name") {
                Some(t) => node = t,
                None => break,
            },
            _ => break,
        }
    }
    text[node.byte_range()].to_owned()
}

/// The trait an `impl` block implements, by its name and its type arguments as written but
/// for lifetimes: `From<&str>` of `impl<'a> std::convert::From<&'a str> for Value`, `Display`.
fn implemented_trait(node: Node<'_>, text: &str) -> String {
    let name = impl_type_name(node, text);
    let Some(args) = node
        .child_by_field_name("type_arguments")
        .filter(|_| node.kind() == "generic_type")
    else {
        return name;
    };
    format!("{name}{}", without_lifetimes(&text[args.byte_range()]))
}

/// A type as written without its lifetimes, on one line: `<&'static str>` is `<&str>`,
/// `<Cow<'a, str>>` is `<Cow<str>>`, `<Token<'src>>` is `<Token>`.
fn without_lifetimes(written: &str) -> String {
    let mut out = String::with_capacity(written.len());
    let mut chars = written.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            while chars
                .next_if(|c| c.is_alphanumeric() || *c == '_')
                .is_some()
            {}
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            if chars.next_if_eq(&',').is_some() {
                while chars.next_if(|c| c.is_whitespace()).is_some() {}
            }
        } else if c.is_whitespace() {
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            if !out.ends_with(['<', '&', '(', '[']) {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    out.replace(" >", ">").replace(" ,", ",").replace("<>", "")
}

/// A declaration without a body (an overload's signature, an interface's or a trait's
/// method) up to the end of the line its parameter list closes on, so that a return type
/// written after parameters over several lines is kept: its first line when that line opens
/// no parameter list (a macro, a type), or the list does not close within a few lines.
fn through_parameters(declaration: &str) -> &str {
    const LINES: usize = 12;
    let first = declaration.lines().next().unwrap_or_default();
    let Some(close) = first
        .find('(')
        .and_then(|open| super::returns::closing_parenthesis(declaration, open))
        .filter(|&close| declaration[..close].matches('\n').count() <= LINES)
    else {
        return first;
    };
    let line_end = declaration[close..]
        .find('\n')
        .map_or(declaration.len(), |n| close + n);
    &declaration[..line_end]
}

/// A definition's head: its text up to its body, on one line (Ruby's first line: what comes
/// before a Ruby body may be comments).
fn signature(lang: CodeLanguage, node: Node<'_>, text: &str) -> String {
    let body = node
        .child_by_field_name("body")
        .or_else(|| {
            node.child_by_field_name("value")
                .and_then(|v| v.child_by_field_name("body"))
        })
        .filter(|b| b.start_byte() > node.start_byte() && lang != CodeLanguage::Ruby);
    let head = match body {
        Some(b) => &text[node.start_byte()..b.start_byte()],
        None if lang == CodeLanguage::Ruby => {
            text[node.byte_range()].lines().next().unwrap_or_default()
        }
        None => through_parameters(&text[node.byte_range()]),
    };
    let mut one_line = head.split_whitespace().collect::<Vec<_>>().join(" ");
    let one_line_len = one_line.chars().count();
    if one_line_len > SIGNATURE_CHARS {
        one_line = one_line.chars().take(SIGNATURE_CHARS - 1).collect();
        one_line.push('…');
    }
    one_line
        .trim_end_matches(|c: char| c == '{' || c == ':' || c.is_whitespace())
        .to_owned()
}
