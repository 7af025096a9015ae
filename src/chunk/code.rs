//! Definitions found with tree-sitter.
//!
//! Each language says which nodes are definitions, what their name is, and which of them are
//! containers (class, interface, impl, trait, module) whose members become chunks of their own
//! when the container is too large to be one chunk. Comments, attributes and decorators directly
//! above a definition (no blank line between) belong to it.

use std::time::{Duration, Instant};

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
}

impl CodeLanguage {
    pub const ALL: [CodeLanguage; 7] = [
        CodeLanguage::TypeScript,
        CodeLanguage::Tsx,
        CodeLanguage::JavaScript,
        CodeLanguage::Python,
        CodeLanguage::Rust,
        CodeLanguage::Go,
        CodeLanguage::GraphQl,
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
        }
    }

    /// How a member's name is joined to its parent's: `Stack::push`, `UserService.find`.
    fn separator(self) -> &'static str {
        match self {
            CodeLanguage::Rust => "::",
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
}

/// Parses `text` as `lang`; `None` when parsing fails or runs out of `timeout`.
pub fn parse(lang: CodeLanguage, text: &str, timeout: Duration) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    parse_with_deadline(&mut parser, text, timeout)
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
    walk.members(root, None, 0);
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
    /// Lays out the named children of `parent`, members of the container `parent_id`.
    fn members(&mut self, parent: Node<'_>, context: Option<&str>, parent_id: usize) {
        let mut cursor = parent.walk();
        // Start of a run of comments/attributes that may belong to the next definition.
        let mut leading: Option<usize> = None;
        let mut prev_end = parent.start_byte();
        for child in parent.named_children(&mut cursor) {
            let gap_has_blank_line = self.text[prev_end..child.start_byte()]
                .matches('\n')
                .count()
                >= 2;
            if is_leading_trivia(self.lang, child) {
                if leading.is_none() || gap_has_blank_line {
                    leading = Some(child.start_byte());
                }
                prev_end = child.end_byte();
                continue;
            }
            let Some(def) = definition(self.lang, child, self.text, context.is_some()) else {
                // A block-level node that may hold definitions (a GraphQL document, Go's
                // source_file children are definitions already).
                leading = None;
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
            // An `impl` block implements a type defined elsewhere: it defines nothing by name.
            let defines = def.name.is_some() && def.kind != "impl";
            let too_large = self.text[start..end].chars().count() > self.max_chars;
            match def.body {
                Some(body) if too_large && body.named_child_count() > 0 => {
                    let id = self.next_id;
                    self.next_id += 1;
                    self.layout.containers.push(Container {
                        start,
                        end,
                        id,
                        symbol: symbol.clone(),
                        defines,
                    });
                    self.members(body, symbol.as_deref(), id);
                }
                _ => self.layout.spans.push(Span {
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
                }),
            }
        }
    }
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
            let Some(def) = definition(self.lang, child, self.text, true) else {
                continue;
            };
            if def.name.is_none() {
                continue;
            }
            let symbol = self.qualify(context, &def.name);
            if def.kind != "impl" {
                names.extend(symbol.clone());
            }
            if let Some(b) = def.body {
                names.extend(self.member_names(b, symbol.as_deref()));
            }
        }
        names
    }
}

fn is_leading_trivia(lang: CodeLanguage, node: Node<'_>) -> bool {
    match node.kind() {
        "comment" | "line_comment" | "block_comment" => true,
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
    let def = |kind, name, body| Some(Def { kind, name, body });
    match lang {
        CodeLanguage::TypeScript | CodeLanguage::Tsx | CodeLanguage::JavaScript => {
            match node.kind() {
                "function_declaration"
                | "generator_function_declaration"
                | "function_signature" => def(function_kind, name_of(node, text), None),
                "class_declaration" | "abstract_class_declaration" | "class" => def(
                    "class",
                    name_of(node, text),
                    node.child_by_field_name("body"),
                ),
                "interface_declaration" => def(
                    "interface",
                    name_of(node, text),
                    node.child_by_field_name("body"),
                ),
                "type_alias_declaration" => def("type", name_of(node, text), None),
                "enum_declaration" => def("enum", name_of(node, text), None),
                "internal_module" | "module" => def(
                    "namespace",
                    name_of(node, text),
                    node.child_by_field_name("body"),
                ),
                "method_definition" | "method_signature" | "abstract_method_signature" => {
                    def("method", name_of(node, text), None)
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
                    let declarator = node
                        .named_children(&mut cursor)
                        .filter(|c| c.kind() == "variable_declarator")
                        .find(|d| {
                            d.child_by_field_name("value")
                                .is_some_and(|v| is_function_value(v.kind()))
                        })?;
                    def(function_kind, name_of(declarator, text), None)
                }
                "export_statement" => {
                    let inner = node.child_by_field_name("declaration")?;
                    let d = definition(lang, inner, text, in_container)?;
                    Some(d)
                }
                _ => None,
            }
        }
        CodeLanguage::Python => match node.kind() {
            "function_definition" => def(function_kind, name_of(node, text), None),
            "class_definition" => def(
                "class",
                name_of(node, text),
                node.child_by_field_name("body"),
            ),
            "decorated_definition" => definition(
                lang,
                node.child_by_field_name("definition")?,
                text,
                in_container,
            ),
            _ => None,
        },
        CodeLanguage::Rust => match node.kind() {
            "function_item" | "function_signature_item" => {
                def(function_kind, name_of(node, text), None)
            }
            "struct_item" => def("struct", name_of(node, text), None),
            "enum_item" => def("enum", name_of(node, text), None),
            "union_item" => def("union", name_of(node, text), None),
            "type_item" => def("type", name_of(node, text), None),
            "const_item" | "static_item" => def("const", name_of(node, text), None),
            "macro_definition" => def("macro", name_of(node, text), None),
            "trait_item" => def(
                "trait",
                name_of(node, text),
                node.child_by_field_name("body"),
            ),
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
                def("impl", name, node.child_by_field_name("body"))
            }
            _ => None,
        },
        CodeLanguage::Go => match node.kind() {
            "function_declaration" => def("function", name_of(node, text), None),
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
    }
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
