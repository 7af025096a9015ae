//! Definitions found with tree-sitter.
//!
//! Each language says which nodes are definitions, what their name is, and which of them are
//! containers (class, interface, impl, trait, module) whose members become chunks of their own
//! when the container is too large to be one chunk. Comments, attributes and decorators directly
//! above a definition (no blank line between) belong to it.

use std::borrow::Cow;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use regex::Regex;
use tree_sitter::{Node, ParseOptions, Parser, Tree};

use super::{ChunkOptions, Container, Layout, Span};

/// The languages chunked by tree-sitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeLanguage {
    TypeScript,
    Tsx,
    JavaScript,
    Python,
    Rust,
    Go,
    GraphQl,
    Java,
    CSharp,
    C,
    Cpp,
    Ruby,
}

impl CodeLanguage {
    pub const ALL: [CodeLanguage; 12] = [
        CodeLanguage::TypeScript,
        CodeLanguage::Tsx,
        CodeLanguage::JavaScript,
        CodeLanguage::Python,
        CodeLanguage::Rust,
        CodeLanguage::Go,
        CodeLanguage::GraphQl,
        CodeLanguage::Java,
        CodeLanguage::CSharp,
        CodeLanguage::C,
        CodeLanguage::Cpp,
        CodeLanguage::Ruby,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CodeLanguage::TypeScript => "typescript",
            CodeLanguage::Tsx => "tsx",
            CodeLanguage::JavaScript => "javascript",
            CodeLanguage::Python => "python",
            CodeLanguage::Rust => "rust",
            CodeLanguage::Go => "go",
            CodeLanguage::GraphQl => "graphql",
            CodeLanguage::Java => "java",
            CodeLanguage::CSharp => "csharp",
            CodeLanguage::C => "c",
            CodeLanguage::Cpp => "cpp",
            CodeLanguage::Ruby => "ruby",
        }
    }

    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            CodeLanguage::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            CodeLanguage::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            CodeLanguage::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            CodeLanguage::Python => tree_sitter_python::LANGUAGE.into(),
            CodeLanguage::Rust => tree_sitter_rust::LANGUAGE.into(),
            CodeLanguage::Go => tree_sitter_go::LANGUAGE.into(),
            CodeLanguage::GraphQl => tree_sitter_graphql::LANGUAGE.into(),
            CodeLanguage::Java => tree_sitter_java::LANGUAGE.into(),
            CodeLanguage::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
            CodeLanguage::C => tree_sitter_c::LANGUAGE.into(),
            CodeLanguage::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            CodeLanguage::Ruby => tree_sitter_ruby::LANGUAGE.into(),
        }
    }

    /// How a member's name is joined to its parent's: `Stack::push`, `UserService.find`.
    pub fn separator(self) -> &'static str {
        match self {
            CodeLanguage::Rust | CodeLanguage::Cpp | CodeLanguage::Ruby => "::",
            _ => ".",
        }
    }
}

/// A node recognised as a definition.
struct Def<'t> {
    kind: &'static str,
    name: Option<String>,
    /// The node whose named children are the members, for containers.
    body: Option<Node<'t>>,
    /// Only qualifies its members, defines nothing by its name: an `impl` block implements a
    /// type defined elsewhere, a C++ namespace is opened in many files.
    scope_only: bool,
}

impl Def<'_> {
    /// Whether the definition defines its own name.
    fn defines(&self) -> bool {
        self.name.is_some() && !self.scope_only
    }
}

/// Parses `text` as `lang`; `None` when parsing fails or runs out of `timeout`.
pub fn parse(lang: CodeLanguage, text: &str, timeout: Duration) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    match lang {
        CodeLanguage::C | CodeLanguage::Cpp => {
            parse_with_deadline(&mut parser, &mask_export_macros(text), timeout)
        }
        _ => parse_with_deadline(&mut parser, text, timeout),
    }
}

/// `class LEVELDB_EXPORT Status {`: an export macro between `class` (or `struct`, `union`) and
/// the name makes the grammar read the class as a function named `Status`. The macro is
/// blanked with spaces for the parser only, so every byte offset of the tree still points
/// into the original text.
fn mask_export_macros(text: &str) -> Cow<'_, str> {
    static EXPORT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"\b(?:class|struct|union)\s+((?:[A-Z][A-Z0-9_]*[A-Z0-9]\s+)+)[A-Za-z_]\w*\s*(?:[{:]|final\b)",
        )
        .expect("a valid pattern")
    });
    let mut masked: Option<String> = None;
    for m in EXPORT.captures_iter(text).filter_map(|c| c.get(1)) {
        let out = masked.get_or_insert_with(|| text.to_owned());
        // ASCII letters, digits, `_` and white space, one byte each: the letters become spaces,
        // line breaks stay (the tree's rows are lines of the original).
        let blank: String = m
            .as_str()
            .chars()
            .map(|c| if c.is_whitespace() { c } else { ' ' })
            .collect();
        out.replace_range(m.range(), &blank);
    }
    masked.map_or(Cow::Borrowed(text), Cow::Owned)
}

/// Lays out the definitions of `tree`, parsed from `text`.
pub(crate) fn layout(lang: CodeLanguage, tree: &Tree, text: &str, opts: &ChunkOptions) -> Layout {
    let mut walk = Walk {
        lang,
        text,
        max_chars: opts.max_chars,
        layout: Layout::default(),
        next_id: 1,
    };
    let mut root = tree.root_node();
    if lang == CodeLanguage::GraphQl {
        let mut cursor = root.walk();
        if let Some(doc) = root
            .named_children(&mut cursor)
            .find(|n| n.kind() == "document")
        {
            root = doc;
        }
    }
    walk.members(root, None, 0, false);
    walk.layout
}

fn parse_with_deadline(
    parser: &mut Parser,
    text: &str,
    timeout: Duration,
) -> Option<tree_sitter::Tree> {
    let deadline = Instant::now() + timeout;
    let bytes = text.as_bytes();
    let mut cancel = |_: &tree_sitter::ParseState| Instant::now() > deadline;
    let options = ParseOptions::new().progress_callback(&mut cancel);
    parser.parse_with_options(
        &mut |i, _| bytes.get(i..).unwrap_or_default(),
        None,
        Some(options),
    )
}

struct Walk<'a> {
    lang: CodeLanguage,
    text: &'a str,
    max_chars: usize,
    layout: Layout,
    next_id: usize,
}

impl<'a> Walk<'a> {
    /// Lays out the named children of `parent`, members of the container `parent_id`; `in_type`
    /// when the container is a type (its functions are methods), not a module or namespace.
    fn members(
        &mut self,
        parent: Node<'_>,
        context: Option<&str>,
        parent_id: usize,
        in_type: bool,
    ) {
        let mut cursor = parent.walk();
        // Start of a run of comments/attributes that may belong to the next definition.
        let mut leading: Option<usize> = None;
        let mut prev_end = parent.start_byte();
        // The definition laid out last, while nothing but trivia followed it.
        let mut last: Option<Laid> = None;
        for child in parent.named_children(&mut cursor) {
            let gap = &self.text[prev_end..child.start_byte()];
            let gap_has_blank_line = gap.matches('\n').count() >= 2;
            if is_comment(child) && !gap.contains('\n') && last.is_some() {
                // A comment on the line a definition ends (`}  // namespace geo`) is that
                // definition's, not a chunk of its own nor the start of the next one.
                match last {
                    Some(Laid::Span(i)) => self.layout.spans[i].end = child.end_byte(),
                    Some(Laid::Container(i)) => self.layout.containers[i].end = child.end_byte(),
                    None => {}
                }
                prev_end = child.end_byte();
                // What follows is on a later line: some grammars' line comments (Rust's `///`)
                // end with their newline, so the gap before the next one has none.
                last = None;
                continue;
            }
            if is_leading_trivia(self.lang, child) {
                if leading.is_none() || gap_has_blank_line {
                    leading = Some(child.start_byte());
                }
                prev_end = child.end_byte();
                // A comment on a line of its own starts the next definition's leading run;
                // the lines after it are not on the line the last definition ends.
                last = None;
                continue;
            }
            if let Some(inner) = transparent(self.lang, child) {
                // Definitions inside a preprocessor conditional, an `extern "C"` block or a C#
                // namespace are laid out as if they were written here.
                self.members(inner, context, parent_id, in_type);
                leading = None;
                last = None;
                prev_end = child.end_byte();
                continue;
            }
            let Some(def) = definition(self.lang, child, self.text, in_type) else {
                leading = None;
                last = None;
                prev_end = child.end_byte();
                continue;
            };
            let start = match leading.take() {
                Some(s) if !gap_has_blank_line => s,
                _ => child.start_byte(),
            };
            prev_end = child.end_byte();
            let symbol = self.qualify(context, &def.name);
            let end = child.end_byte();
            let defines = def.defines();
            let too_large = self.text[start..end].chars().count() > self.max_chars;
            match def.body {
                Some(body) if too_large && body.named_child_count() > 0 => {
                    let id = self.next_id;
                    self.next_id += 1;
                    last = Some(Laid::Container(self.layout.containers.len()));
                    self.layout.containers.push(Container {
                        start,
                        end,
                        id,
                        symbol: symbol.clone(),
                        defines,
                    });
                    let in_type = !matches!(def.kind, "module" | "namespace");
                    self.members(body, symbol.as_deref(), id, in_type);
                }
                _ => {
                    last = Some(Laid::Span(self.layout.spans.len()));
                    self.layout.spans.push(Span {
                        start,
                        end,
                        // The definition, and its members when it is kept whole (a small class
                        // or `impl` block).
                        defines: symbol
                            .iter()
                            .filter(|_| defines)
                            .cloned()
                            .chain(
                                def.body
                                    .map(|b| self.member_names(b, symbol.as_deref()))
                                    .unwrap_or_default(),
                            )
                            .collect(),
                        symbol,
                        kind: def.kind,
                        parent: parent_id,
                        mergeable: true,
                    });
                }
            }
        }
    }
}

/// Where a definition was laid out: an index into the layout's spans or containers.
#[derive(Clone, Copy)]
enum Laid {
    Span(usize),
    Container(usize),
}

impl Walk<'_> {
    /// A definition's name qualified by its container's: `Stack::push`, `UserService.find`.
    fn qualify(&self, context: Option<&str>, name: &Option<String>) -> Option<String> {
        match (context, name) {
            (Some(ctx), Some(name)) => Some(format!("{ctx}{}{name}", self.lang.separator())),
            (None, Some(name)) => Some(name.clone()),
            (Some(ctx), None) => Some(ctx.to_owned()),
            (None, None) => None,
        }
    }

    /// The qualified names of the named definitions inside `body`, at any depth (`impl`
    /// blocks excluded, their members included).
    fn member_names(&self, body: Node<'_>, context: Option<&str>) -> Vec<String> {
        let mut names = Vec::new();
        let mut cursor = body.walk();
        for child in body.named_children(&mut cursor) {
            if let Some(inner) = transparent(self.lang, child) {
                names.extend(self.member_names(inner, context));
                continue;
            }
            let Some(def) = definition(self.lang, child, self.text, true) else {
                continue;
            };
            if def.name.is_none() {
                // An object of functions under a key (`methods: {…}`) qualifies nothing.
                if let (true, Some(b)) = (def.scope_only, def.body) {
                    names.extend(self.member_names(b, context));
                }
                continue;
            }
            let symbol = self.qualify(context, &def.name);
            if def.defines() {
                names.extend(symbol.clone());
            }
            if let Some(b) = def.body {
                names.extend(self.member_names(b, symbol.as_deref()));
            }
        }
        names
    }
}

fn is_comment(node: Node<'_>) -> bool {
    matches!(node.kind(), "comment" | "line_comment" | "block_comment")
}

fn is_leading_trivia(lang: CodeLanguage, node: Node<'_>) -> bool {
    match node.kind() {
        _ if is_comment(node) => true,
        "attribute_item" => lang == CodeLanguage::Rust,
        "decorator" => true,
        _ => false,
    }
}

fn field_text<'t>(node: Node<'_>, field: &str, text: &'t str) -> Option<&'t str> {
    node.child_by_field_name(field)
        .map(|n| &text[n.byte_range()])
}

fn name_of(node: Node<'_>, text: &str) -> Option<String> {
    field_text(node, "name", text).map(str::to_owned)
}

/// Recognises a definition node of `lang`.
fn definition<'t>(
    lang: CodeLanguage,
    node: Node<'t>,
    text: &str,
    in_container: bool,
) -> Option<Def<'t>> {
    let function_kind = if in_container { "method" } else { "function" };
    let def = |kind, name, body| {
        Some(Def {
            kind,
            name,
            body,
            scope_only: false,
        })
    };
    let scope = |kind, name, body| {
        Some(Def {
            kind,
            name,
            body,
            scope_only: true,
        })
    };
    // The common shapes: a named definition, and a named container whose members are in its
    // `body` field.
    let named = |kind| def(kind, name_of(node, text), None);
    let container = |kind| def(kind, name_of(node, text), node.child_by_field_name("body"));
    match lang {
        CodeLanguage::TypeScript | CodeLanguage::Tsx | CodeLanguage::JavaScript => {
            match node.kind() {
                "function_declaration"
                | "generator_function_declaration"
                | "function_signature" => named(function_kind),
                "class_declaration" | "abstract_class_declaration" | "class" => container("class"),
                "interface_declaration" => container("interface"),
                "type_alias_declaration" => named("type"),
                "enum_declaration" => named("enum"),
                "internal_module" | "module" => container("namespace"),
                "method_definition" | "method_signature" | "abstract_method_signature" => {
                    named("method")
                }
                "public_field_definition" | "field_definition" => {
                    let value = node.child_by_field_name("value")?;
                    is_function_value(value.kind()).then_some(())?;
                    let name = field_text(node, "name", text)
                        .or_else(|| field_text(node, "property", text))
                        .map(str::to_owned);
                    def("method", name, None)
                }
                "lexical_declaration" | "variable_declaration" => {
                    let mut cursor = node.walk();
                    let declarators: Vec<_> = node
                        .named_children(&mut cursor)
                        .filter(|c| c.kind() == "variable_declarator")
                        .collect();
                    let value = |d: &Node<'t>| d.child_by_field_name("value");
                    if let Some(d) = declarators
                        .iter()
                        .find(|d| value(d).is_some_and(|v| is_function_value(v.kind())))
                    {
                        return def(function_kind, name_of(*d, text), None);
                    }
                    // `const proto = module.exports = {…}`
                    if let Some(d) = declarators.iter().find_map(|d| assigned(value(d)?, text)) {
                        return Some(d);
                    }
                    // `const api = { getUser(id) {…}, … }`: an object of functions, whose
                    // members its name qualifies (`api.getUser`), as code intelligence has them.
                    let (d, object) = declarators.iter().find_map(|d| {
                        let v = value(d)?;
                        (v.kind() == "object" && holds_functions(v)).then_some((*d, v))
                    })?;
                    def("const", name_of(d, text), Some(object))
                }
                "export_statement" => match node.child_by_field_name("declaration") {
                    Some(inner) => definition(lang, inner, text, in_container),
                    // `export default { data() {…}, methods: {…} }` (a Vue component's options,
                    // a store module), also through `defineComponent({…})`: the object a module
                    // exports, cut by its members, named as code intelligence names them (the
                    // object qualifies nothing).
                    None => scope(
                        "module",
                        None,
                        Some(exported_object(node.child_by_field_name("value")?)?),
                    ),
                },
                // `app.use = function use(fn) {…}`, `module.exports = class …`: see `assigned`.
                "expression_statement" => assigned(node.named_child(0)?, text),
                "pair" => {
                    let key = node.child_by_field_name("key")?;
                    (key.kind() == "property_identifier").then_some(())?;
                    let value = node.child_by_field_name("value")?;
                    // `methods: { select(user) {…} }` in an object of functions: its members,
                    // qualified as the object they are in is (code intelligence qualifies
                    // methods by the name an object is bound to, not by a key).
                    if value.kind() == "object" && holds_functions(value) {
                        return scope("object", None, Some(value));
                    }
                    is_function_value(value.kind()).then_some(())?;
                    def(function_kind, Some(text[key.byte_range()].to_owned()), None)
                }
                _ => None,
            }
        }
        CodeLanguage::Python => match node.kind() {
            "function_definition" => named(function_kind),
            "class_definition" => container("class"),
            "decorated_definition" => definition(
                lang,
                node.child_by_field_name("definition")?,
                text,
                in_container,
            ),
            _ => None,
        },
        CodeLanguage::Rust => match node.kind() {
            "function_item" | "function_signature_item" => named(function_kind),
            "struct_item" => named("struct"),
            "enum_item" => named("enum"),
            "union_item" => named("union"),
            "type_item" => named("type"),
            "const_item" | "static_item" => named("const"),
            "macro_definition" => named("macro"),
            "trait_item" => container("trait"),
            "mod_item" => {
                let body = node.child_by_field_name("body")?;
                def("module", name_of(node, text), Some(body))
            }
            "impl_item" => {
                let ty = field_text(node, "type", text).map(strip_generics);
                let name = match (field_text(node, "trait", text), ty) {
                    (Some(tr), Some(ty)) => Some(format!("{ty} ({} impl)", strip_generics(tr))),
                    (None, ty) => ty,
                    (Some(tr), None) => Some(tr.to_owned()),
                };
                scope("impl", name, node.child_by_field_name("body"))
            }
            _ => None,
        },
        CodeLanguage::Go => match node.kind() {
            "function_declaration" => named("function"),
            "method_declaration" => {
                let receiver = node
                    .child_by_field_name("receiver")
                    .and_then(|r| go_receiver_type(r, text));
                let name = match (receiver, name_of(node, text)) {
                    (Some(r), Some(n)) => Some(format!("{r}.{n}")),
                    (_, n) => n,
                };
                def("method", name, None)
            }
            "type_declaration" => {
                let mut cursor = node.walk();
                let spec = node
                    .named_children(&mut cursor)
                    .find(|c| c.kind() == "type_spec" || c.kind() == "type_alias")?;
                let kind = match spec.child_by_field_name("type").map(|t| t.kind()) {
                    Some("struct_type") => "struct",
                    Some("interface_type") => "interface",
                    _ => "type",
                };
                def(kind, name_of(spec, text), None)
            }
            _ => None,
        },
        CodeLanguage::GraphQl => graphql_definition(node, text),
        CodeLanguage::Java => match node.kind() {
            "class_declaration" | "record_declaration" => container("class"),
            "interface_declaration" | "annotation_type_declaration" => container("interface"),
            "enum_declaration" => container("enum"),
            "method_declaration" => named("method"),
            "constructor_declaration" | "compact_constructor_declaration" => named("constructor"),
            _ => None,
        },
        CodeLanguage::CSharp => match node.kind() {
            "class_declaration" | "record_declaration" => container("class"),
            "struct_declaration" | "record_struct_declaration" => container("struct"),
            "interface_declaration" => container("interface"),
            "enum_declaration" => named("enum"),
            "method_declaration" | "operator_declaration" | "conversion_operator_declaration" => {
                named("method")
            }
            "constructor_declaration" | "destructor_declaration" => named("constructor"),
            "property_declaration" | "indexer_declaration" | "event_declaration" => {
                named("property")
            }
            "delegate_declaration" => named("type"),
            _ => None,
        },
        CodeLanguage::C | CodeLanguage::Cpp => match node.kind() {
            "function_definition" => def(function_kind, c_declarator_name(node, text), None),
            "class_specifier" | "struct_specifier" | "union_specifier" => {
                let body = node.child_by_field_name("body")?;
                let kind = if node.kind() == "class_specifier" {
                    "class"
                } else {
                    "struct"
                };
                def(kind, name_of(node, text), Some(body))
            }
            "enum_specifier" => {
                node.child_by_field_name("body")?;
                named("enum")
            }
            "type_definition" | "alias_declaration" => {
                let name = field_text(node, "declarator", text)
                    .or_else(|| field_text(node, "name", text))
                    .map(str::to_owned);
                def("type", name, None)
            }
            "preproc_function_def" => named("macro"),
            "namespace_definition" => scope(
                "namespace",
                Some(name_of(node, text)?),
                node.child_by_field_name("body"),
            ),
            "concept_definition" => named("type"),
            // `template <...>` and `extern "C"` before one definition belong to it.
            "template_declaration" | "linkage_specification" => {
                let mut cursor = node.walk();
                node.named_children(&mut cursor)
                    .find_map(|c| definition(lang, c, text, in_container))
            }
            _ => None,
        },
        CodeLanguage::Ruby => match node.kind() {
            "method" => named(function_kind),
            "singleton_method" => named("method"),
            "class" => container("class"),
            "singleton_class" => def(
                "class",
                field_text(node, "value", text).map(str::to_owned),
                node.child_by_field_name("body"),
            ),
            "module" => container("module"),
            _ => None,
        },
    }
}

/// A node that holds definitions without being one: a preprocessor conditional, an
/// `extern "C" { ... }` block, an anonymous C++ namespace, a C# namespace (C# code is named by
/// its types, not by the namespaces a type is declared in), the members part of a Java enum.
/// Returns the node whose named children are the definitions.
fn transparent<'t>(lang: CodeLanguage, node: Node<'t>) -> Option<Node<'t>> {
    match (lang, node.kind()) {
        (
            CodeLanguage::C | CodeLanguage::Cpp,
            "preproc_ifdef" | "preproc_if" | "preproc_else" | "preproc_elif" | "preproc_elifdef",
        ) => Some(node),
        (CodeLanguage::C | CodeLanguage::Cpp, "linkage_specification") => node
            .child_by_field_name("body")
            .filter(|b| b.kind() == "declaration_list"),
        (CodeLanguage::Cpp, "namespace_definition")
            if node.child_by_field_name("name").is_none() =>
        {
            node.child_by_field_name("body")
        }
        (CodeLanguage::CSharp, "namespace_declaration") => node.child_by_field_name("body"),
        (CodeLanguage::Java, "enum_body_declarations") => Some(node),
        _ => None,
    }
}

/// The name a C or C++ function definition declares: `make_thing` in `int *make_thing(int)`,
/// `Stack::size` in `int Stack::size() const`.
fn c_declarator_name(node: Node<'_>, text: &str) -> Option<String> {
    let mut d = node.child_by_field_name("declarator")?;
    loop {
        match d.kind() {
            "function_declarator"
            | "pointer_declarator"
            | "reference_declarator"
            | "parenthesized_declarator"
            | "attributed_declarator" => {
                d = d
                    .child_by_field_name("declarator")
                    .or_else(|| d.named_child(0))?;
            }
            _ => return Some(text[d.byte_range()].to_owned()),
        }
    }
}

/// A JavaScript or TypeScript definition made by assignment, named as code intelligence names
/// it: CommonJS and prototype methods (`app.use = function use(fn) {…}` is `app.use`,
/// `Router.prototype.handle = …` is `Router.handle`, `exports.parse = …` is `parse`), the
/// innermost of chained ones (`req.get = req.header = function header(name)` is `req.header`),
/// a class by its own name (`module.exports = class Application {…}`), and the object a module
/// exports, whose members are its functions (`module.exports = { get header() {…}, … }`).
fn assigned<'t>(assignment: Node<'t>, text: &str) -> Option<Def<'t>> {
    (assignment.kind() == "assignment_expression").then_some(())?;
    let mut target = assignment.child_by_field_name("left")?;
    let mut value = assignment.child_by_field_name("right")?;
    while value.kind() == "assignment_expression" {
        target = value.child_by_field_name("left")?;
        value = value.child_by_field_name("right")?;
    }
    (target.kind() == "member_expression").then_some(())?;
    let property = field_text(target, "property", text)?;
    let object = field_text(target, "object", text)?;
    let owner = crate::intel::owner_name(object);
    let exported = owner.is_empty() || (object, property) == ("module", "exports");
    let name = match (object, property) {
        // `module.exports = function createApp() {…}` goes by its own name.
        ("module", "exports") => {
            name_of(value, text).unwrap_or_else(|| "module.exports".to_owned())
        }
        _ if owner.is_empty() => property.to_owned(),
        _ => format!("{owner}.{property}"),
    };
    let (kind, name, body, scope_only) = match value.kind() {
        "class" => (
            "class",
            name_of(value, text).or(Some(name)),
            value.child_by_field_name("body"),
            false,
        ),
        "object" if exported => ("module", None, Some(value), true),
        k if is_function_value(k) && exported => ("function", Some(name), None, false),
        k if is_function_value(k) => ("method", Some(name), None, false),
        _ => return None,
    };
    Some(Def {
        kind,
        name,
        body,
        scope_only,
    })
}

/// Whether an object literal has a method or a property whose value is a function, or an
/// object that has (`methods: { select() {…} }`).
fn holds_functions(object: Node<'_>) -> bool {
    let mut cursor = object.walk();
    object
        .named_children(&mut cursor)
        .any(|member| match member.kind() {
            "method_definition" => true,
            "pair" => member.child_by_field_name("value").is_some_and(|v| {
                is_function_value(v.kind()) || (v.kind() == "object" && holds_functions(v))
            }),
            _ => false,
        })
}

/// The object of functions a module exports by default: `{…}`, `defineComponent({…})`,
/// `{…} satisfies Options`.
fn exported_object(value: Node<'_>) -> Option<Node<'_>> {
    let object = match value.kind() {
        "call_expression" => value.child_by_field_name("arguments")?.named_child(0)?,
        "as_expression" | "satisfies_expression" => value.named_child(0)?,
        _ => value,
    };
    (object.kind() == "object" && holds_functions(object)).then_some(object)
}

fn is_function_value(kind: &str) -> bool {
    matches!(
        kind,
        "arrow_function" | "function_expression" | "function" | "generator_function" | "class"
    )
}

/// `Vec<T>` -> `Vec`, `&'a mut Foo` stays readable enough: only generics are dropped.
fn strip_generics(s: &str) -> String {
    s.split('<').next().unwrap_or(s).trim().to_owned()
}

fn go_receiver_type(receiver: Node<'_>, text: &str) -> Option<String> {
    let mut cursor = receiver.walk();
    let param = receiver
        .named_children(&mut cursor)
        .find(|c| c.kind() == "parameter_declaration")?;
    let ty = field_text(param, "type", text)?;
    Some(strip_generics(ty.trim_start_matches('*')))
}

/// GraphQL: a top-level `definition` wraps an operation, fragment, type or extension.
fn graphql_definition<'t>(node: Node<'t>, text: &str) -> Option<Def<'t>> {
    if node.kind() != "definition" {
        return None;
    }
    // Walk down the wrappers to the concrete definition.
    let mut inner = node;
    while matches!(
        inner.kind(),
        "definition"
            | "executable_definition"
            | "type_system_definition"
            | "type_definition"
            | "type_system_extension"
            | "type_extension"
    ) {
        inner = inner.named_child(0)?;
    }
    let mut cursor = inner.walk();
    let name = inner
        .named_children(&mut cursor)
        .find(|c| c.kind() == "name" || c.kind() == "fragment_name")
        .map(|n| text[n.byte_range()].to_owned());
    let kind = match inner.kind() {
        "operation_definition" => {
            let mut cursor = inner.walk();
            let op = inner
                .named_children(&mut cursor)
                .find(|c| c.kind() == "operation_type")
                .map(|n| &text[n.byte_range()]);
            match op {
                Some("mutation") => "mutation",
                Some("subscription") => "subscription",
                _ => "query",
            }
        }
        "fragment_definition" => "fragment",
        "schema_definition" | "schema_extension" => "schema",
        "directive_definition" => "directive",
        "interface_type_definition" | "interface_type_extension" => "interface",
        "enum_type_definition" | "enum_type_extension" => "enum",
        "input_object_type_definition" | "input_object_type_extension" => "input",
        "union_type_definition" | "union_type_extension" => "union",
        "scalar_type_definition" | "scalar_type_extension" => "scalar",
        _ => "type",
    };
    Some(Def {
        kind,
        name,
        body: None,
        scope_only: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grammar_loads() {
        for lang in CodeLanguage::ALL {
            let mut parser = Parser::new();
            parser
                .set_language(&lang.grammar())
                .unwrap_or_else(|e| panic!("{}: {e}", lang.name()));
            let tree = parser.parse("x", None).expect("parses");
            assert!(tree.root_node().end_byte() <= 1);
        }
    }
}
