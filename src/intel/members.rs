//! What a Rust type holds and reaches beyond its own methods, which its definition's head
//! does not say and its methods may be written far from: the declared types of its fields
//! (`self.attributes.get()` is `AttributeSet::get`), the traits it implements (a trait's
//! provided method called on it), the type it dereferences to (`name.lexeme()` on a `Name`
//! that derefs to a `Token`) and the type an alias names (`type UnresolvedRecipe<'src> =
//! Recipe<'src, …>`). Stored as [`Member`]s with the file; the resolver reads them by type
//! name ([`super::graph`]).

use std::collections::HashSet;

use tree_sitter::{Node, Tree};

use super::extract::{declared_type, impl_type_name, rust_element, rust_pointee, rust_unwrapped};
use super::{Member, MemberKind};
use crate::chunk::CodeLanguage;

/// Most members kept from one file (a generated file of a thousand structs).
const MAX_MEMBERS: usize = 20_000;

/// The members `tree` (a Rust file) declares, in the order written.
pub(super) fn rust_members(tree: &Tree, text: &str) -> Vec<Member> {
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if out.len() >= MAX_MEMBERS {
            break;
        }
        match node.kind() {
            "struct_item" | "union_item" | "enum_item" => type_fields(node, text, &mut out),
            "impl_item" => implemented(node, text, &mut out),
            // An alias at module level; `type Target = …` in an `impl` is read with it.
            "type_item" if node.parent().is_none_or(|p| !in_impl_or_trait(p)) => {
                alias(node, text, &mut out)
            }
            _ => {}
        }
        // Types are declared in modules and blocks, not in expressions: only statements'
        // containers are entered.
        if matches!(
            node.kind(),
            "source_file" | "mod_item" | "declaration_list" | "function_item" | "block"
        ) {
            let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
    }
    out.truncate(MAX_MEMBERS);
    out
}

/// A struct's named fields (`name: Name<'src>`) and a tuple struct's (`self.0`), each with the
/// class its declared type calls methods on; a field of one of the struct's own type
/// parameters (`inner: B`) names no class. An enum's variants' fields are owned by the variant
/// as a path names it (`Expression::And`): what a pattern binds (`Self::And { lhs, rhs }`,
/// `Fragment::Text(token)`) is of their types.
fn type_fields(node: Node<'_>, text: &str, out: &mut Vec<Member>) {
    let (Some(name), Some(body)) = (
        node.child_by_field_name("name"),
        node.child_by_field_name("body"),
    ) else {
        return;
    };
    let owner = &text[name.byte_range()];
    let generics = type_parameters(node, text);
    if node.kind() != "enum_item" {
        fields(owner, owner, body, &generics, text, out);
        return;
    }
    let mut cursor = body.walk();
    for variant in body.named_children(&mut cursor) {
        if let (Some(v), Some(fields_of)) = (
            variant.child_by_field_name("name"),
            variant.child_by_field_name("body"),
        ) {
            let variant_owner = format!("{owner}::{}", &text[v.byte_range()]);
            fields(&variant_owner, owner, fields_of, &generics, text, out);
        }
    }
}

/// The fields of a struct's or variant's `body`, named or numbered.
fn fields(
    owner: &str,
    self_type: &str,
    body: Node<'_>,
    generics: &HashSet<&str>,
    text: &str,
    out: &mut Vec<Member>,
) {
    let mut push = |field: String, ty: Node<'_>| {
        let written = &text[ty.byte_range()];
        // `lhs: Box<Self>` in `enum Expression` is an `Expression`.
        let class = if rust_unwrapped(written) == "Self" {
            Some(self_type.to_owned())
        } else {
            declared_type(CodeLanguage::Rust, written)
        };
        // What iterating over it gives (`parameters: Vec<Parameter<'src>>`).
        if let Some(element) = rust_element(written)
            .map(|e| if e == "Self" { self_type.to_owned() } else { e })
            .filter(|e| !generics.contains(e.as_str()))
        {
            out.push(Member {
                owner: owner.to_owned(),
                kind: MemberKind::Item,
                name: field.clone(),
                ty: element,
            });
        }
        if let Some(class) = class
            && !generics.contains(class.as_str())
        {
            out.push(Member {
                owner: owner.to_owned(),
                kind: MemberKind::Field,
                name: field,
                ty: with_path(written, class),
            });
        }
    };
    let mut cursor = body.walk();
    match body.kind() {
        "field_declaration_list" => {
            for field in body.named_children(&mut cursor) {
                if let (Some(n), Some(t)) = (
                    field.child_by_field_name("name"),
                    field.child_by_field_name("type"),
                ) {
                    push(text[n.byte_range()].to_owned(), t);
                }
            }
        }
        "ordered_field_declaration_list" => {
            let types: Vec<Node<'_>> = body.children_by_field_name("type", &mut cursor).collect();
            for (i, t) in types.into_iter().enumerate() {
                push(i.to_string(), t);
            }
        }
        _ => {}
    }
}

/// A field's class with the path it is written with (`cookie::CookieJar`, whose methods are
/// another crate's, not those of the repository's own `CookieJar`): the resolver tells a path
/// into a dependency from one into the repository.
fn with_path(written: &str, class: String) -> String {
    let base = rust_pointee(written).unwrap_or(written);
    let base = base.split('<').next().unwrap_or(base).trim();
    match base.rsplit_once("::") {
        Some((path, last)) if last == class && !path.is_empty() => format!("{path}::{class}"),
        _ => class,
    }
}

/// `impl Trait for Type`: `Type` reaches the trait's provided methods; `impl Deref for Type {
/// type Target = T; }` reaches `T`'s methods and fields too. A blanket `impl<T> Trait for T`
/// names no type.
fn implemented(node: Node<'_>, text: &str, out: &mut Vec<Member>) {
    let (Some(ty), Some(t)) = (
        node.child_by_field_name("type"),
        node.child_by_field_name("trait"),
    ) else {
        return;
    };
    let owner = impl_type_name(ty, text);
    let trait_name = impl_type_name(t, text);
    let generics = type_parameters(node, text);
    if generics.contains(owner.as_str())
        || !owner.chars().all(|c| c.is_alphanumeric() || c == '_')
        || owner.is_empty()
    {
        return;
    }
    // The class an associated type of the `impl` names (`type Target = Token;`).
    let associated = |name: &str| {
        let mut cursor = node.walk();
        node.child_by_field_name("body")
            .into_iter()
            .flat_map(|b| b.named_children(&mut cursor).collect::<Vec<_>>())
            .filter(|item| item.kind() == "type_item")
            .find(|item| {
                item.child_by_field_name("name")
                    .is_some_and(|n| &text[n.byte_range()] == name)
            })
            .and_then(|item| item.child_by_field_name("type"))
            .and_then(|t| declared_type(CodeLanguage::Rust, &text[t.byte_range()]))
            .filter(|t| *t != owner && !generics.contains(t.as_str()))
    };
    if matches!(trait_name.as_str(), "Deref" | "DerefMut") {
        if let Some(target) = associated("Target") {
            out.push(Member {
                owner,
                kind: MemberKind::Deref,
                name: String::new(),
                ty: target,
            });
        }
        return;
    }
    // `client.get(url).await` is what awaiting a `RequestBuilder` gives.
    if matches!(trait_name.as_str(), "IntoFuture" | "Future")
        && let Some(output) = associated("Output")
    {
        out.push(Member {
            owner: owner.clone(),
            kind: MemberKind::Awaits,
            name: String::new(),
            ty: output,
        });
    }
    // `for token in references` gives what `impl Iterator for References` says.
    if matches!(trait_name.as_str(), "Iterator" | "IntoIterator")
        && let Some(item) = associated("Item")
    {
        out.push(Member {
            owner: owner.clone(),
            kind: MemberKind::Item,
            name: String::new(),
            ty: item,
        });
    }
    out.push(Member {
        owner,
        kind: MemberKind::Trait,
        name: String::new(),
        ty: trait_name,
    });
}

/// `type UnresolvedRecipe<'src> = Recipe<'src, UnresolvedDependency<'src>>;`: a call on the
/// alias is a call on the type it names.
fn alias(node: Node<'_>, text: &str, out: &mut Vec<Member>) {
    let (Some(name), Some(ty)) = (
        node.child_by_field_name("name"),
        node.child_by_field_name("type"),
    ) else {
        return;
    };
    let owner = &text[name.byte_range()];
    if let Some(target) = declared_type(CodeLanguage::Rust, &text[ty.byte_range()])
        && target != owner
    {
        out.push(Member {
            owner: owner.to_owned(),
            kind: MemberKind::Alias,
            name: String::new(),
            ty: target,
        });
    }
}

fn in_impl_or_trait(list: Node<'_>) -> bool {
    list.kind() == "declaration_list"
        && list
            .parent()
            .is_some_and(|p| matches!(p.kind(), "impl_item" | "trait_item"))
}

/// The names of a generic item's type parameters (`T` and `B` of `struct Body<T, B: Buf>`).
fn type_parameters<'t>(node: Node<'_>, text: &'t str) -> HashSet<&'t str> {
    let mut names = HashSet::new();
    let Some(params) = node.child_by_field_name("type_parameters") else {
        return names;
    };
    let mut stack = vec![params];
    let mut cursor = params.walk();
    while let Some(n) = stack.pop() {
        match n.kind() {
            "type_identifier" => {
                names.insert(&text[n.byte_range()]);
            }
            // Only the parameter's own name, not its bounds (`B: Buf`) or default.
            "constrained_type_parameter" | "optional_type_parameter" | "type_parameter" => {
                if let Some(left) = n
                    .child_by_field_name("left")
                    .or_else(|| n.child_by_field_name("name"))
                {
                    stack.push(left);
                } else if let Some(first) = n.named_child(0) {
                    stack.push(first);
                }
            }
            _ => stack.extend(n.named_children(&mut cursor).collect::<Vec<_>>()),
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(source: &str) -> Vec<(String, &'static str, String, String)> {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_rust::LANGUAGE.into())
            .expect("the Rust grammar loads");
        let tree = parser.parse(source, None).expect("parsed");
        rust_members(&tree, source)
            .into_iter()
            .map(|m| (m.owner, m.kind.as_str(), m.name, m.ty))
            .collect()
    }

    fn row(
        owner: &str,
        kind: &'static str,
        name: &str,
        ty: &str,
    ) -> (String, &'static str, String, String) {
        (owner.into(), kind, name.into(), ty.into())
    }

    #[test]
    fn what_fields_and_iterators_hold_is_read() {
        let source = r#"
struct Justfile<'src, T> {
    recipes: Table<'src, Rc<Recipe<'src>>>,
    aliases: BTreeMap<&'src str, Alias<'src>>,
    tokens: Vec<Token<'src>>,
    doc: Option<Token<'src>>,
    children: Vec<Box<Self>>,
    values: Vec<T>,
    pairs: Vec<(Key, Value)>,
}
impl<'a> Iterator for References<'a> {
    type Item = &'a Token<'a>;
}
"#;
        let items: Vec<_> = members(source)
            .into_iter()
            .filter(|m| m.1 == "item")
            .collect();
        assert_eq!(
            items,
            [
                row("Justfile", "item", "recipes", "Recipe"),
                row("Justfile", "item", "aliases", "Alias"),
                row("Justfile", "item", "tokens", "Token"),
                row("Justfile", "item", "doc", "Token"),
                row("Justfile", "item", "children", "Justfile"),
                row("References", "item", "", "Token"),
            ]
        );
    }

    #[test]
    fn fields_traits_derefs_and_aliases_are_read() {
        let source = r#"
pub(crate) struct Recipe<'src, D = Dependency<'src>> {
  pub(crate) attributes: AttributeSet<'src>,
  pub(crate) dependencies: Vec<D>,
  name: Name<'src>,
  count: usize,
  body: D,
  shared: Arc<Mutex<State>>,
  parent: &'src Recipe<'src>,
}
struct Wrapper(pub Inner, u8, cookie::CookieJar, &'a crate::token::Token);
impl<'src> Deref for Name<'src> {
  type Target = Token<'src>;
  fn deref(&self) -> &Self::Target { &self.token }
}
impl ColorDisplay for Value { }
impl IntoFuture for RequestBuilder { type Output = TestResponse; type IntoFuture = Pin<Box<dyn Future<Output = TestResponse>>>; }
impl<T: Display> ColorDisplay for T { }
impl<D> fmt::Display for Recipe<'_, D> { }
impl Recipe<'_> { type Nope = u8; }
pub(crate) type UnresolvedRecipe<'src> = Recipe<'src, UnresolvedDependency<'src>>;
mod inner { struct Deep { token: Token } }
fn f() { let x = 1; }
"#;
        assert_eq!(
            members(source),
            vec![
                row("Recipe", "field", "attributes", "AttributeSet"),
                row("Recipe", "field", "dependencies", "Vec"),
                row("Recipe", "field", "name", "Name"),
                // A primitive, which a crate's trait may extend (`impl Ordinal for usize`).
                row("Recipe", "field", "count", "usize"),
                row("Recipe", "field", "shared", "Mutex"),
                row("Recipe", "field", "parent", "Recipe"),
                row("Wrapper", "field", "0", "Inner"),
                row("Wrapper", "field", "1", "u8"),
                row("Wrapper", "field", "2", "cookie::CookieJar"),
                row("Wrapper", "field", "3", "crate::token::Token"),
                row("Name", "deref", "", "Token"),
                row("Value", "trait", "", "ColorDisplay"),
                row("RequestBuilder", "await", "", "TestResponse"),
                row("RequestBuilder", "trait", "", "IntoFuture"),
                row("Recipe", "trait", "", "Display"),
                row("UnresolvedRecipe", "alias", "", "Recipe"),
                row("Deep", "field", "token", "Token"),
            ]
        );
    }

    #[test]
    fn enum_variants_fields_are_owned_by_the_variants_path() {
        let source = r#"
pub(crate) enum Expression<'src, T> {
  And { lhs: Box<Expression<'src>>, rhs: Box<Self> },
  Not { operand: Box<Self>, kind: Self::Kind, me: MySelf },
  Backtick { count: usize, token: Token<'src> },
  Call(Thunk<'src>, T),
  Empty,
}
"#;
        assert_eq!(
            members(source),
            vec![
                row("Expression::And", "field", "lhs", "Expression"),
                row("Expression::And", "field", "rhs", "Expression"),
                row("Expression::Not", "field", "operand", "Expression"),
                row("Expression::Not", "field", "me", "MySelf"),
                row("Expression::Backtick", "field", "count", "usize"),
                row("Expression::Backtick", "field", "token", "Token"),
                row("Expression::Call", "field", "0", "Thunk"),
            ]
        );
    }
}
