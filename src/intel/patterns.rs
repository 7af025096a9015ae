//! The names Rust's patterns bind to the fields of what they match: `Self::And { lhs, rhs } =>`
//! binds `lhs` to the `lhs` field of `Expression::And`, `if let Fragment::Text(token) = f` binds
//! `token` to the first field of `Fragment::Text`. Each is written as the field path the
//! resolver follows through the types' members ([`super::members`]): `Expression::And.lhs`.
//! A name bound where nothing says its type (`Some(err)`, a closure's `|err|`, `for err in`) is
//! bound untyped: it hides a typed name of an outer scope.

use tree_sitter::{Node, Tree};

use super::elements::ELEMENT;
use super::extract::{enclosing_kind, impl_type_name, receiver_chain};
use crate::chunk::CodeLanguage;

/// Most bindings read from one file.
const MAX_BINDINGS: usize = 20_000;

/// A name a pattern binds, and where it is in scope (bytes).
pub(super) struct PatternBinding {
    pub(super) name: String,
    /// The field path it is: `Expression::And.lhs`, `Recipe.name`; `None` when unknown.
    pub(super) ty: Option<String>,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// The fields the struct and tuple-struct patterns in `tree` (a Rust file) bind, and the
/// untyped names of closures' parameters and `for` loops.
pub(super) fn rust_pattern_bindings(tree: &Tree, text: &str) -> Vec<PatternBinding> {
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if out.len() >= MAX_BINDINGS {
            break;
        }
        match node.kind() {
            "struct_pattern" | "tuple_struct_pattern" => bind(node, text, &mut out),
            "closure_parameters" => closure_parameters(node, text, &mut out),
            "for_expression" => {
                if let (Some(p), Some(value), Some(body)) = (
                    node.child_by_field_name("pattern"),
                    node.child_by_field_name("value"),
                    node.child_by_field_name("body"),
                ) {
                    elements(p, iterated(value, text), body, text, &mut out);
                }
            }
            _ => {}
        }
        stack.extend(node.named_children(&mut cursor).collect::<Vec<_>>());
    }
    out.truncate(MAX_BINDINGS);
    out
}

/// The bindings of one struct or tuple-struct pattern, whose own fields are names (those of a
/// pattern nested in it are its own).
fn bind(pattern: Node<'_>, text: &str, out: &mut Vec<PatternBinding>) {
    let Some(ty) = pattern.child_by_field_name("type") else {
        return;
    };
    let owner = owner(ty, text);
    // `Some(token)` and `Ok(token)` of what a value gives, which is written as its receiver: a
    // chain's `Option` and `Result` are read through, and so is a field's `Option`.
    let unwrapped = match &text[ty.byte_range()] {
        "Some" | "Ok" => unwrapped_value(pattern, text),
        _ => None,
    };
    let Some((start, end)) = scope(pattern) else {
        return;
    };
    let mut push = |name: &str, field: &str| {
        // A constant (`Kind::A(MAX)`) is matched, not bound.
        if name.starts_with(|c: char| c.is_lowercase() || c == '_') && name != "_" {
            out.push(PatternBinding {
                name: name.to_owned(),
                ty: match (&owner, &unwrapped) {
                    (Some(o), _) => Some(format!("{o}.{field}")),
                    (None, Some(value)) if field == "0" => Some(value.clone()),
                    _ => None,
                },
                start,
                end,
            });
        }
    };
    let mut cursor = pattern.walk();
    if pattern.kind() == "struct_pattern" {
        for f in pattern.named_children(&mut cursor) {
            let Some(name) = f.child_by_field_name("name") else {
                continue;
            };
            let field = &text[name.byte_range()];
            match f.child_by_field_name("pattern") {
                // `name: alias`
                Some(p) => {
                    if let Some(bound) = bound_name(p, text) {
                        push(bound, field);
                    }
                }
                // `name`, `ref name`, `mut name`
                None => push(field, field),
            }
        }
        return;
    }
    // A tuple struct's fields by position, up to a `..` after which positions are unknown.
    let mut index = 0;
    let mut hidden = Vec::new();
    for child in pattern.children(&mut cursor) {
        if child.id() == ty.id() || matches!(child.kind(), "(" | ")" | ",") {
            continue;
        }
        if child.kind() == "remaining_field_pattern" {
            break;
        }
        match bound_name(child, text) {
            Some(bound) => push(bound, &index.to_string()),
            // `Some((name, arg))`: the tuple's names are bound, of types unknown here; as
            // untyped bindings they hide the outer names they shadow.
            None => hidden.extend(tuple_names(child, text)),
        }
        index += 1;
    }
    out.extend(hidden.into_iter().map(|name| PatternBinding {
        name: name.to_owned(),
        ty: None,
        start,
        end,
    }));
}

/// The names a tuple or slice pattern binds, nested ones too (`(a, (b, ref c))`), but not
/// those of a struct or tuple-struct pattern inside, which are bound with its fields.
fn tuple_names<'t>(p: Node<'_>, text: &'t str) -> Vec<&'t str> {
    let mut names = Vec::new();
    let mut stack = vec![p];
    while let Some(p) = stack.pop() {
        match p.kind() {
            "tuple_pattern" | "slice_pattern" | "ref_pattern" | "mut_pattern" => {
                let mut cursor = p.walk();
                stack.extend(p.named_children(&mut cursor));
            }
            "identifier" => {
                let name = &text[p.byte_range()];
                if name.starts_with(|c: char| c.is_lowercase() || c == '_') && name != "_" {
                    names.push(name);
                }
            }
            _ => {}
        }
    }
    names
}

/// What a loop or an iterator's closure is given, each element written as a receiver with
/// `.[]` after what holds it ([`iterated`]), which the resolver reads through the types'
/// members and the signatures.
#[derive(Clone)]
enum Iterated {
    /// `for x in &self.items`: `self.items.[]`; `None` when the value is no path or chain.
    Elements(Option<String>),
    /// `for (i, x) in items.iter().enumerate()`, `for (a, b) in xs.iter().zip(&ys)`: each
    /// half's, where known.
    Pairs(Option<String>, Option<String>),
}

/// What iterating over `value` gives ([`Iterated`]).
fn iterated(value: Node<'_>, text: &str) -> Iterated {
    let element =
        |n: Node<'_>| receiver_chain(n, text, CodeLanguage::Rust).map(|r| format!("{r}.{ELEMENT}"));
    let call = value
        .child_by_field_name("function")
        .filter(|f| value.kind() == "call_expression" && f.kind() == "field_expression");
    if let Some(function) = call
        && let (Some(receiver), Some(method)) = (
            function.child_by_field_name("value"),
            function.child_by_field_name("field"),
        )
    {
        match &text[method.byte_range()] {
            "enumerate" => return Iterated::Pairs(None, element(receiver)),
            "zip" => {
                let other = value
                    .child_by_field_name("arguments")
                    .and_then(|a| a.named_child(0))
                    .and_then(element);
                return Iterated::Pairs(element(receiver), other);
            }
            _ => {}
        }
    }
    Iterated::Elements(element(value))
}

/// The methods whose closure is given their receiver's elements (an iterator's, a
/// collection's, an `Option`'s value), and which of its parameters are: `(0, 1)` the first,
/// `(1, 2)` the second (`fold`'s), `(0, 2)` both (`sort_by`'s).
fn element_parameters(method: &str) -> Option<(usize, usize)> {
    Some(match method {
        "filter"
        | "map"
        | "for_each"
        | "any"
        | "all"
        | "find"
        | "position"
        | "rposition"
        | "filter_map"
        | "flat_map"
        | "find_map"
        | "take_while"
        | "skip_while"
        | "map_while"
        | "inspect"
        | "max_by_key"
        | "min_by_key"
        | "partition"
        | "try_for_each"
        | "retain"
        | "retain_mut"
        | "sort_by_key"
        | "sort_unstable_by_key"
        | "sort_by_cached_key"
        | "dedup_by_key"
        | "and_then"
        | "is_some_and"
        | "is_none_or"
        | "map_or"
        | "map_or_else"
        | "take_if" => (0, 1),
        "fold" | "try_fold" => (1, 2),
        "sort_by" | "sort_unstable_by" | "max_by" | "min_by" | "dedup_by" => (0, 2),
        _ => return None,
    })
}

/// A closure's parameters without a declared type: an iterator's elements when it is given
/// them (`items.iter().filter(|item| item.is_enabled())`, [`element_parameters`]), else
/// untyped in its body (`|err|`, `|(name, n)|`). A declared one (`|err: Error|`) is read as
/// any parameter.
fn closure_parameters(params: Node<'_>, text: &str, out: &mut Vec<PatternBinding>) {
    let Some(closure) = params.parent() else {
        return;
    };
    // `receiver.method(…, |x| …)`
    let given = closure
        .parent()
        .filter(|a| a.kind() == "arguments")
        .and_then(|a| a.parent())
        .and_then(|call| call.child_by_field_name("function"))
        .filter(|f| f.kind() == "field_expression")
        .and_then(|f| {
            let positions =
                element_parameters(&text[f.child_by_field_name("field")?.byte_range()])?;
            Some((iterated(f.child_by_field_name("value")?, text), positions))
        });
    let mut cursor = params.walk();
    for (position, p) in params.named_children(&mut cursor).enumerate() {
        let typed = p.kind() == "parameter" && p.child_by_field_name("type").is_some();
        let pattern = match p.kind() {
            "parameter" => p.child_by_field_name("pattern"),
            _ => Some(p),
        };
        if let Some(pattern) = pattern.filter(|_| !typed) {
            match &given {
                Some((iterated, (from, to))) if (*from..*to).contains(&position) => {
                    elements(pattern, iterated.clone(), closure, text, out);
                }
                _ => untyped(pattern, closure, text, out),
            }
        }
    }
}

/// The names `pattern` binds to what is iterated ([`Iterated`]), in `scope`: the element a
/// name or a reference to one is, the halves of a pair a tuple of two is (of a map's entries,
/// the value); any other name untyped.
fn elements(
    pattern: Node<'_>,
    iterated: Iterated,
    scope: Node<'_>,
    text: &str,
    out: &mut Vec<PatternBinding>,
) {
    let p = dereferenced(pattern);
    let bind = |p: Node<'_>, ty: Option<String>, out: &mut Vec<PatternBinding>| {
        let p = dereferenced(p);
        match (bound_name(p, text), ty) {
            (Some(name), Some(ty)) if name.starts_with(|c: char| c.is_lowercase() || c == '_') => {
                out.push(PatternBinding {
                    name: name.to_owned(),
                    ty: Some(ty),
                    start: scope.start_byte(),
                    end: scope.end_byte(),
                });
            }
            _ => untyped(p, scope, text, out),
        }
    };
    let halves = || {
        let mut cursor = p.walk();
        let halves: Vec<Node<'_>> = p.named_children(&mut cursor).collect();
        <[Node<'_>; 2]>::try_from(halves).ok()
    };
    match (iterated, p.kind()) {
        (Iterated::Elements(element), "tuple_pattern") => match halves() {
            Some([key, value]) => {
                untyped(key, scope, text, out);
                bind(value, element, out);
            }
            None => untyped(p, scope, text, out),
        },
        (Iterated::Elements(element), _) => bind(p, element, out),
        (Iterated::Pairs(first, second), "tuple_pattern") => match halves() {
            Some([a, b]) => {
                bind(a, first, out);
                bind(b, second, out);
            }
            None => untyped(p, scope, text, out),
        },
        (Iterated::Pairs(..), _) => untyped(p, scope, text, out),
    }
}

/// The names `pattern` binds that nothing types, untyped in `scope`: `x`, `(i, x)`, `&x`, `mut
/// x` (a struct or tuple-struct pattern in it types its own, [`bind`]).
fn untyped(pattern: Node<'_>, scope: Node<'_>, text: &str, out: &mut Vec<PatternBinding>) {
    // Patterns nest a few levels; the stack keeps a pathological nesting off the call stack.
    let mut stack = vec![pattern];
    let mut cursor = pattern.walk();
    while let Some(p) = stack.pop() {
        match p.kind() {
            "tuple_pattern" | "reference_pattern" | "slice_pattern" => {
                stack.extend(p.named_children(&mut cursor));
            }
            _ => {
                if let Some(name) = bound_name(p, text)
                    && name.starts_with(|c: char| c.is_lowercase() || c == '_')
                {
                    out.push(PatternBinding {
                        name: name.to_owned(),
                        ty: None,
                        start: scope.start_byte(),
                        end: scope.end_byte(),
                    });
                }
            }
        }
    }
}

/// What a reference pattern (`&x`, `&(a, b)`) matches through.
fn dereferenced(pattern: Node<'_>) -> Node<'_> {
    let mut p = pattern;
    while p.kind() == "reference_pattern" {
        match p.named_child(p.named_child_count().saturating_sub(1)) {
            Some(inner) => p = inner,
            None => break,
        }
    }
    p
}

/// The name a field's pattern binds when it is a name: `x`, `ref x`, `mut x`, `ref mut x`.
fn bound_name<'t>(p: Node<'_>, text: &'t str) -> Option<&'t str> {
    let mut p = p;
    loop {
        match p.kind() {
            "identifier" => return Some(&text[p.byte_range()]),
            "ref_pattern" | "mut_pattern" => {
                p = p.named_child(p.named_child_count().checked_sub(1)?)?;
            }
            _ => return None,
        }
    }
}

/// The type whose fields a pattern's path names: an enum's variant as `Enum::Variant` (`Self`
/// read as the `impl`'s type), a struct by its name; `None` for `Option`'s and `Result`'s
/// variants and for a path that is no type.
fn owner(ty: Node<'_>, text: &str) -> Option<String> {
    let written = &text[ty.byte_range()];
    let written = written.split('<').next().unwrap_or(written);
    let segments: Vec<&str> = written.split("::").map(str::trim).collect();
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !segments.iter().all(|s| ident(s)) {
        return None;
    }
    let last = *segments.last()?;
    if matches!(last, "Some" | "None" | "Ok" | "Err") {
        return None;
    }
    match segments.len() {
        1 => last
            .starts_with(char::is_uppercase)
            .then(|| last.to_owned()),
        n => {
            let enclosing = segments[n - 2];
            if enclosing == "Self" {
                let impl_type = enclosing_kind(ty, "impl_item")?.child_by_field_name("type")?;
                Some(format!("{}::{last}", impl_type_name(impl_type, text)))
            } else if enclosing.starts_with(char::is_uppercase) {
                Some(format!("{enclosing}::{last}"))
            } else {
                // A struct through its module (`ast::Recipe { .. }`).
                last.starts_with(char::is_uppercase)
                    .then(|| last.to_owned())
            }
        }
    }
}

/// The value a `Some(x)` or `Ok(x)` that is a `let`'s, an `if let`'s or a `match` arm's whole
/// pattern unwraps, as a receiver ([`receiver_chain`]): `self.context()` of `if let Some(token)
/// = self.context()`, `self.default` of `match &self.default`; `None` for one nested in another
/// pattern and for a value that is no path or chain.
fn unwrapped_value(pattern: Node<'_>, text: &str) -> Option<String> {
    let mut site = pattern.parent()?;
    if site.kind() == "match_pattern" {
        site = site.parent()?;
    }
    let value = match site.kind() {
        "let_condition" | "let_declaration" => site.child_by_field_name("value")?,
        "match_arm" => site.parent()?.parent()?.child_by_field_name("value")?,
        _ => return None,
    };
    // `match self { Ok(value) => … }` is in an `impl` for `Result` itself, of generic values.
    receiver_chain(value, text, CodeLanguage::Rust).filter(|v| v != "self")
}

/// Where the names a pattern binds are in scope (bytes): a `match` arm; an `if let`'s or
/// `while let`'s block; the rest of a `let`'s block; a function's or closure's body; a `for`
/// loop's body. `None` for a pattern elsewhere.
fn scope(pattern: Node<'_>) -> Option<(usize, usize)> {
    let mut site = pattern.parent()?;
    while site.kind().ends_with("_pattern") || site.kind() == "field_pattern" {
        site = site.parent()?;
    }
    let range = |n: Node<'_>| (n.start_byte(), n.end_byte());
    match site.kind() {
        "match_arm" => Some(range(site)),
        "let_condition" => {
            let mut up = site.parent();
            while let Some(n) = up {
                match n.kind() {
                    "if_expression" => {
                        let body = n.child_by_field_name("consequence")?;
                        return Some((site.end_byte(), body.end_byte()));
                    }
                    "while_expression" => {
                        let body = n.child_by_field_name("body")?;
                        return Some((site.end_byte(), body.end_byte()));
                    }
                    "let_chain" => up = n.parent(),
                    _ => return None,
                }
            }
            None
        }
        "let_declaration" => Some((site.end_byte(), site.parent()?.end_byte())),
        "parameter" => {
            let function = site.parent()?.parent()?;
            Some(range(function))
        }
        "closure_parameters" => site.parent().map(range),
        "for_expression" => site.child_by_field_name("body").map(range),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rust_parser() -> tree_sitter::Parser {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_rust::LANGUAGE.into())
            .expect("the Rust grammar loads");
        parser
    }

    fn bindings(source: &str) -> Vec<(String, String, String)> {
        let mut parser = rust_parser();
        let tree = parser.parse(source, None).expect("parsed");
        let mut out: Vec<(String, String, String)> = rust_pattern_bindings(&tree, source)
            .into_iter()
            .map(|b| {
                let scope = source[b.start..b.end].trim().to_owned();
                let scope = scope.lines().next().unwrap_or_default().to_owned();
                (b.name, b.ty.unwrap_or_else(|| "?".to_owned()), scope)
            })
            .collect();
        out.sort();
        out
    }

    fn row(name: &str, ty: &str, scope: &str) -> (String, String, String) {
        (name.into(), ty.into(), scope.into())
    }

    #[test]
    fn struct_and_tuple_struct_patterns_bind_their_fields() {
        let source = r#"
impl<'src> Node<'src> for Expression<'src> {
  fn tree(&self) -> Tree<'src> {
    match self {
      Self::And { lhs, rhs: right } => lhs.tree(),
      Self::Call(thunk, _, ref mut last, ..) => thunk.tree(),
      Some(x) | Ok(x) => x,
      Kind::Max(MAX) => 0,
    }
  }
}
fn f(Recipe { name, .. }: &Recipe, ast::Item { body }: ast::Item) {
  if let Some(Fragment::Text { token }) = line.fragments.first() {
    token.lexeme();
  }
  while let Attribute::Doc(doc) = next() { doc.len(); }
  let Alias { target, .. } = alias;
  for Pair(key, value) in pairs { key.len(); }
  items.iter().map(|Entry { key }| key.len());
  source.and_then(|err| err.source()).map(|s: &str| s.len());
  for item in items { item.len(); }
  for (i, &(a, mut b)) in pairs { a.len(); }
  map.iter().map(|(name, n)| name.len());
}
"#;
        assert_eq!(
            bindings(source),
            vec![
                row("a", "?", "{ a.len(); }"),
                row("b", "?", "{ a.len(); }"),
                row(
                    "body",
                    "Item.body",
                    "fn f(Recipe { name, .. }: &Recipe, ast::Item { body }: ast::Item) {"
                ),
                row("doc", "Attribute::Doc.0", "{ doc.len(); }"),
                row("err", "source.[]", "|err| err.source()"),
                row("i", "?", "{ a.len(); }"),
                row("item", "items.[]", "{ item.len(); }"),
                row("key", "Entry.key", "|Entry { key }| key.len()"),
                row("key", "Pair.0", "{ key.len(); }"),
                row(
                    "last",
                    "Expression::Call.2",
                    "Self::Call(thunk, _, ref mut last, ..) => thunk.tree(),"
                ),
                row(
                    "lhs",
                    "Expression::And.lhs",
                    "Self::And { lhs, rhs: right } => lhs.tree(),"
                ),
                row("n", "map.iter().[]", "|(name, n)| name.len()"),
                row("name", "?", "|(name, n)| name.len()"),
                row(
                    "name",
                    "Recipe.name",
                    "fn f(Recipe { name, .. }: &Recipe, ast::Item { body }: ast::Item) {"
                ),
                row(
                    "right",
                    "Expression::And.rhs",
                    "Self::And { lhs, rhs: right } => lhs.tree(),"
                ),
                row(
                    "target",
                    "Alias.target",
                    "for Pair(key, value) in pairs { key.len(); }"
                ),
                row(
                    "thunk",
                    "Expression::Call.0",
                    "Self::Call(thunk, _, ref mut last, ..) => thunk.tree(),"
                ),
                row("token", "Fragment::Text.token", "{"),
                row("value", "Pair.1", "{ key.len(); }"),
                row("x", "?", "Some(x) | Ok(x) => x,"),
                row("x", "?", "Some(x) | Ok(x) => x,"),
            ]
        );
    }

    #[test]
    fn code_cut_anywhere_binds_without_failing() {
        let source = r#"impl E { fn f(&self) { match self { Self::A { ref mut x, y: (a, &b) } => x.g(),
  Self::B(ref c, mut d, ..) => for (i, mut j) in k { |m, (n, o)| n.p(); } } } }"#;
        let mut parser = rust_parser();
        for end in (0..=source.len()).filter(|&e| source.is_char_boundary(e)) {
            let cut = &source[..end];
            let tree = parser.parse(cut, None).expect("parsed");
            for b in rust_pattern_bindings(&tree, cut) {
                assert!(b.start <= b.end && b.end <= cut.len(), "{cut}");
            }
        }
    }

    #[test]
    fn deeply_nested_patterns_bind_on_the_heap() {
        let depth = 20_000;
        let source = format!(
            "fn f() {{ for {}x{} in y {{ x.len(); }} }}",
            "(".repeat(depth),
            ",)".repeat(depth)
        );
        let mut parser = rust_parser();
        let tree = parser.parse(&source, None).expect("parsed");
        let names: Vec<String> = rust_pattern_bindings(&tree, &source)
            .into_iter()
            .map(|b| b.name)
            .collect();
        assert_eq!(names, ["x"]);
    }
}
