//! Ruby's calls that no query pattern can see: a method called by its bare name (`save`,
//! `options[:x]`, `name.upcase`) is written exactly like a local variable. Ruby's own parser
//! tells them apart by what is bound earlier in the scope, and so does this walk, as
//! tree-sitter-ruby's `locals.scm` does: a name is a local once a parameter, an assignment's
//! target, a `rescue => e`, a `for` variable or a pattern has bound it; `def`, `class` and
//! `module` start afresh, blocks and lambdas see what encloses them and keep their own.
//! `super`, too, is a node no pattern names a call: the walk records it as a call of the
//! enclosing method's name, qualified `super`.

use std::collections::HashSet;

use tree_sitter::{Node, Tree};

use super::extract::RawCall;

/// What an identifier is where it stands.
#[derive(PartialEq)]
enum Role {
    /// It binds a local (`x = 1`, `|x|`, `def m(x)`).
    Binds,
    /// It names a method or is a call's method (`def save`, `a.save`, `alias new old`).
    Names,
    /// It is read as a value: a local if one is bound, else a call.
    Reads,
}

fn role(parent: Node<'_>, field: Option<&str>) -> Role {
    match (parent.kind(), field) {
        (
            "method_parameters"
            | "block_parameters"
            | "lambda_parameters"
            | "block_parameter"
            | "splat_parameter"
            | "hash_splat_parameter"
            | "destructured_parameter"
            | "left_assignment_list"
            | "rest_assignment"
            | "destructured_left_assignment"
            | "exception_variable"
            | "array_pattern"
            | "find_pattern",
            _,
        )
        | ("optional_parameter" | "keyword_parameter" | "as_pattern", Some("name"))
        | ("assignment" | "operator_assignment", Some("left"))
        | ("for" | "in_clause" | "match_pattern" | "test_pattern", Some("pattern"))
        | ("keyword_pattern", Some("value")) => Role::Binds,
        ("method" | "singleton_method", Some("name" | "object"))
        | ("call", Some("method"))
        | (
            "alias" | "undef" | "setter" | "variable_reference_pattern" | "alternative_pattern",
            _,
        ) => Role::Names,
        _ => Role::Reads,
    }
}

/// The locals of one scope, as the walk has met them.
struct Scope<'t> {
    /// Depth of the node that opened it.
    depth: usize,
    /// `def`, `class`, `module`: nothing outside is visible.
    hard: bool,
    locals: HashSet<&'t str>,
    /// The method a `def` scope defines: what `super` in it calls.
    method: Option<&'t str>,
}

/// Every bare name in `tree` that reads no local, a call with neither receiver nor arguments,
/// and every `super`, a call of the enclosing method's name qualified `super` (the resolver
/// looks for it in the class's base classes); keyed by the node's id.
pub(super) fn bare_calls(tree: &Tree, text: &str, limit: usize) -> Vec<(usize, RawCall)> {
    let mut out = Vec::new();
    let mut scopes = vec![Scope {
        depth: 0,
        hard: true,
        locals: HashSet::new(),
        method: None,
    }];
    let mut cursor = tree.walk();
    // The walk's ancestors: `Node::parent` would walk down from the root for every name.
    let mut parents: Vec<Node<'_>> = Vec::new();
    loop {
        let node = cursor.node();
        let depth = parents.len();
        match node.kind() {
            kind @ ("method" | "singleton_method" | "class" | "module" | "singleton_class") => {
                let method = matches!(kind, "method" | "singleton_method")
                    .then(|| node.child_by_field_name("name"))
                    .flatten()
                    .map(|n| &text[n.byte_range()]);
                scopes.push(Scope {
                    depth,
                    hard: true,
                    locals: HashSet::new(),
                    method,
                })
            }
            "block" | "do_block" | "lambda" => scopes.push(Scope {
                depth,
                hard: false,
                locals: HashSet::new(),
                method: None,
            }),
            "super" => {
                // Blocks inside the method still call its `super`.
                let method = scopes.iter().rev().find(|s| s.hard).and_then(|s| s.method);
                if let Some(name) = method
                    && out.len() < limit
                {
                    out.push(call_at(node, name, Some("super")));
                }
            }
            "identifier" => {
                let name = &text[node.byte_range()];
                let role = parents
                    .last()
                    .map_or(Role::Reads, |p| role(*p, cursor.field_name()));
                match role {
                    Role::Binds => {
                        if let Some(scope) = scopes.last_mut() {
                            scope.locals.insert(name);
                        }
                    }
                    Role::Names => {}
                    Role::Reads => {
                        // `__FILE__` and `__LINE__` parse as names; they are keywords.
                        let keyword = matches!(name, "__FILE__" | "__LINE__" | "__ENCODING__");
                        if !keyword && !visible(&scopes, name) && out.len() < limit {
                            out.push(call_at(node, name, None));
                        }
                    }
                }
            }
            _ => {}
        }
        if cursor.goto_first_child() {
            parents.push(node);
            continue;
        }
        // Leave nodes, and the scopes they opened, until one has a next sibling.
        loop {
            let depth = parents.len();
            while scopes.len() > 1 && scopes.last().is_some_and(|s| s.depth == depth) {
                scopes.pop();
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
            parents.pop();
        }
    }
}

/// A call of `name` written at `node`, keyed by the node's id.
fn call_at(node: Node<'_>, name: &str, qualifier: Option<&str>) -> (usize, RawCall) {
    let call = RawCall {
        start: node.start_byte(),
        end: node.end_byte(),
        line: node.start_position().row as u32 + 1,
        name: name.to_owned(),
        qualifier: qualifier.map(str::to_owned),
        args: None,
        argument: None,
    };
    (node.id(), call)
}

/// Whether `name` is a local where the walk stands: bound in the innermost scopes up to the
/// nearest `def`, `class` or `module`.
fn visible(scopes: &[Scope<'_>], name: &str) -> bool {
    for scope in scopes.iter().rev() {
        if scope.locals.contains(name) {
            return true;
        }
        if scope.hard {
            return false;
        }
    }
    false
}

/// Ruby's `Stack.new(...)` constructs a `Stack`: it becomes a call of `Stack`, like `new
/// Stack()` elsewhere (`Acme::Stack.new` a call of `Stack` qualified by `Acme`).
pub(super) fn constructor(call: &mut RawCall) {
    if call.name != "new" {
        return;
    }
    let Some(q) = call.qualifier.as_deref() else {
        return;
    };
    let (scope, class) = match q.rsplit_once("::") {
        Some((scope, class)) => (Some(scope.to_owned()), class),
        None => (None, q),
    };
    if class.starts_with(|c: char| c.is_ascii_uppercase()) {
        call.name = class.to_owned();
        call.qualifier = scope;
    }
}
