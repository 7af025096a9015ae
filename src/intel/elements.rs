//! The elements of a Rust collection, iterator or `Option` as receivers are written: a name a
//! `for` loop or an iterator's closure binds is one of what it iterates
//! ([`super::patterns`]), written `.[]` after what holds it (`Recipe.parameters.[]`,
//! `Justfile.recipes().[]`); the resolver reads it through the fields' and types' `item`
//! members ([`super::members`]) and the element types of what calls return
//! ([`super::returns`]). The calls that keep a receiver's elements (`iter()`, `filter()`) and
//! those that give one of them (`get()`, `last()`) are named here for both.

/// The segment of a Rust receiver that is one of the elements of what is before it
/// (`Recipe.parameters.[]`, [`super::patterns`]): what iterating over it gives.
pub(super) const ELEMENT: &str = "[]";

/// Calls whose elements are those of their receiver: `x.iter().rev().peekable()` gives what
/// `x` holds.
pub(super) const ELEMENT_ADAPTERS: &[&str] = &[
    "iter",
    "iter_mut",
    "into_iter",
    "values",
    "values_mut",
    "into_values",
    "drain",
    "rev",
    "skip",
    "take",
    "step_by",
    "cloned",
    "copied",
    "peekable",
    "by_ref",
    "fuse",
    "filter",
    "skip_while",
    "take_while",
    "inspect",
    "chain",
    "collect",
    "to_vec",
    "as_slice",
    "clone",
    "as_ref",
    "as_mut",
    "borrow",
    "borrow_mut",
    // A `Result` is read through, as a chain's `?` is not written.
    "unwrap",
    "expect",
    "unwrap_or_default",
    "map_err",
    "ok",
    "ok_or",
    "ok_or_else",
];

/// Calls that give one of their receiver's elements (or an `Option` of one):
/// `self.tokens.last()`, `stack.pop()`, `map.get(k)`.
pub(super) const ELEMENT_ACCESS: &[&str] = &[
    "get",
    "get_mut",
    "first",
    "first_mut",
    "last",
    "last_mut",
    "pop",
    "pop_front",
    "pop_back",
    "front",
    "back",
    "peek",
    "next",
    "next_back",
    "nth",
    "find",
    "min",
    "max",
    "min_by_key",
    "max_by_key",
    "min_by",
    "max_by",
    "remove",
    "swap_remove",
];

/// A Rust receiver read past a chain of calls: the chain, and the fields and elements read
/// after it: `Justfile.recipes()` and `.[].name` of `Justfile.recipes().[].name`,
/// `Compiler::compile()` and `.justfile.warnings` of `Compiler::compile().justfile.warnings`;
/// `None` when no names follow the last call.
pub(super) fn after_chain(qualifier: &str) -> Option<(&str, &str)> {
    let (chain, rest) = qualifier.split_at(qualifier.rfind("()")? + 2);
    let ident = |s: &str| {
        !s.is_empty() && s != "await" && s.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    rest.strip_prefix('.')?
        .split('.')
        .all(|f| ident(f) || f == ELEMENT)
        .then_some((chain, rest))
}

/// The fields read after the element `rest` (an [`after_chain`]'s) begins with: `.name` of
/// `.[].name`; `None` when it does not begin with an element.
pub(super) fn after_element(rest: &str) -> Option<&str> {
    rest.strip_prefix('.')?.strip_prefix(ELEMENT)
}

/// What holds a Rust receiver's elements without the calls that keep them
/// ([`ELEMENT_ADAPTERS`]): `Recipe.body` of `Recipe.body.iter().peekable()`.
pub(super) fn element_holder(holder: &str) -> &str {
    let mut h = holder;
    while let Some(call) = h.strip_suffix("()")
        && let Some(cut) = call.rfind(['.', ':', '('])
        && call.as_bytes()[cut] == b'.'
        && ELEMENT_ADAPTERS.contains(&&call[cut + 1..])
    {
        h = &call[..cut];
    }
    h
}

/// What follows a receiver's first name, without the calls after it that keep its elements:
/// `.[].body` of `.values().[].body` (`functions.values().[].body`), for a variable whose
/// declared type names its elements.
pub(super) fn after_adapters(rest: &str) -> &str {
    let mut r = rest;
    while let Some(call) = r.strip_prefix('.')
        && let Some((name, after)) = call.split_once("()")
        && ELEMENT_ADAPTERS.contains(&name)
    {
        r = after;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_read_through_the_calls_that_keep_them() {
        assert_eq!(
            element_holder("Recipe.body.iter().peekable()"),
            "Recipe.body"
        );
        assert_eq!(element_holder("x.iter().map()"), "x.iter().map()");
        assert_eq!(
            element_holder("Lexer::test_lex().unwrap()"),
            "Lexer::test_lex()"
        );
        assert_eq!(element_holder("Table::new()"), "Table::new()");
        assert_eq!(after_adapters(".values().[].body"), ".[].body");
        assert_eq!(after_adapters(".iter().rev().[]"), ".[]");
        assert_eq!(after_adapters(".keys().[]"), ".keys().[]");
        assert_eq!(
            after_chain("Justfile.recipes().[].name"),
            Some(("Justfile.recipes()", ".[].name"))
        );
        assert_eq!(
            after_chain("Compiler::compile().justfile.warnings.[]"),
            Some(("Compiler::compile()", ".justfile.warnings.[]"))
        );
        assert_eq!(after_element(".[].name"), Some(".name"));
        assert_eq!(after_element(".justfile"), None);
        // A chain is read by its last call; a field path has none.
        assert_eq!(after_chain("Justfile.recipes()"), None);
        assert_eq!(after_chain("Recipe.parameters.[]"), None);
        assert_eq!(after_chain("x.f().[].g().h"), Some(("x.f().[].g()", ".h")));
        assert_eq!(after_chain("client.get().await"), None);
    }
}
