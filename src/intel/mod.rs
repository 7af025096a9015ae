//! Code intelligence: what a file defines, what it calls, and what it imports.
//!
//! In: a file's tree-sitter tree (the one its chunks were cut from: a file is parsed once) and
//! its text. Out: an [`Extraction`], stored with the file's chunks in the same transaction.
//! What is found comes from one query file per language (`queries/*.scm`, the grammars' own
//! `tags.scm` extended); what the captures mean is decided here, the same way for every
//! language.
//!
//! Nothing here resolves a call to a definition: that needs the other files, and is done when
//! a question is asked ([`crate::store`]'s symbol statements and [`graph`]), so an edit to one
//! file re-resolves every edge into it without touching the files that call it. Each resolved
//! edge says how it was resolved, because name-based resolution is approximate.

mod arity;
mod cargo;
mod elements;
mod extract;
pub mod graph;
mod imports;
mod inherit;
mod members;
pub mod outline;
mod patterns;
pub mod render;
mod returns;
mod ruby;
mod tsconfig;
mod workspaces;

pub use arity::{Fit, fit};
pub(crate) use extract::owner_name;
pub use extract::{extract, query_source};
pub use imports::{go_import_key, path_keys};

/// A named definition: a function, method, class, struct, trait, interface, type, module...
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// The name as written: `push`.
    pub name: String,
    /// Qualified by its enclosing definitions in the file: `Stack::push`, `UserService.find`.
    pub qualified: String,
    pub kind: &'static str,
    /// The definition's head, up to its body, on one line (at most [`SIGNATURE_CHARS`]).
    pub signature: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// Index in [`Extraction::definitions`] of the innermost definition around this one.
    pub parent: Option<u32>,
    /// The trait a Rust `impl Trait for Type` block that holds it implements (`Display` for
    /// its `fmt`); `None` for an inherent method and everything else.
    pub implements: Option<String>,
}

/// A call site (or a constructor call): the callee as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The called name: `push` in `stack.push(x)`, `Stack::new` gives `new`.
    pub name: String,
    /// The receiver or path before the name when it is a plain path (`stack`, `Stack`,
    /// `self`, `os.path`); `None` for a bare call or a complex receiver expression.
    pub qualifier: Option<String>,
    pub line: u32,
    /// Index in [`Extraction::definitions`] of the innermost definition the call is in;
    /// `None` at the top level of the file.
    pub enclosing: Option<u32>,
    /// How many arguments the call passes, in the languages with overloads (Java, C#, C,
    /// C++); `None` elsewhere and where a spread argument leaves it open.
    pub args: Option<u16>,
    /// The type the first argument is written as, where a literal or a constructor says it
    /// (Rust: `"a"` is `&str`, `format!(…)` `String`, `true` `bool`, `vec![…]` `Vec`, `1`
    /// `integer`), which picks among a type's `From<T>` impls; `None` elsewhere.
    pub argument: Option<String>,
}

/// One name an import brings into the file, and the files it may come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The import as written, normalised to one line: `./util`, `crate::store::Scope`,
    /// `os.path`, `github.com/x/y`.
    pub specifier: String,
    /// The name it binds in this file (`*` for a wildcard, empty when it binds none).
    pub name: String,
    pub line: u32,
    /// Where it may resolve, most specific first; the first that exists wins. See
    /// [`path_keys`] for the spelling: `/src/a.rs` is that path from the repository root,
    /// `foo/bar.py` any file whose path ends with it, `go:<import path>` a Go package.
    /// Empty for what resolves outside the repository (a package, the standard library).
    pub candidates: Vec<String>,
}

/// What one file defines, calls and imports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction {
    pub definitions: Vec<Definition>,
    pub references: Vec<Reference>,
    pub imports: Vec<Import>,
    /// What its types hold and reach beyond their own methods (Rust only, [`members`]).
    pub members: Vec<Member>,
}

/// A type's field, or a type whose methods it reaches: stored with the file, read by the
/// type's name when a call on it or on its field is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The type's name as written, without generics: `Recipe`.
    pub owner: String,
    pub kind: MemberKind,
    /// The field's name (`attributes`, `0` of a tuple struct); empty for the other kinds.
    pub name: String,
    /// The class the field's declared type, the trait, the deref target or the aliased type
    /// is called through: `AttributeSet` of `AttributeSet<'src>`; a field's keeps the path it
    /// is written with (`cookie::CookieJar`).
    pub ty: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberKind {
    /// A field of declared type `ty`.
    Field,
    /// The type implements the trait `ty` (`impl ColorDisplay for Value`).
    Trait,
    /// The type dereferences to `ty` (`impl Deref for Name { type Target = Token; }`).
    Deref,
    /// The type is an alias of `ty`.
    Alias,
    /// Awaiting the type gives a `ty` (`impl IntoFuture for RequestBuilder { type Output =
    /// TestResponse; }`, or `impl Future`).
    Awaits,
    /// Iterating over the field `name` (or, with no name, over the type itself) gives `ty`s:
    /// `parameters: Vec<Parameter>`, `impl Iterator for References { type Item = Token; }`;
    /// an `Option` field's value counts as its one element.
    Item,
}

impl MemberKind {
    /// As stored (`code_members.kind`).
    pub fn as_str(self) -> &'static str {
        match self {
            MemberKind::Field => "field",
            MemberKind::Trait => "trait",
            MemberKind::Deref => "deref",
            MemberKind::Alias => "alias",
            MemberKind::Awaits => "await",
            MemberKind::Item => "item",
        }
    }
}

/// Longest signature kept.
pub const SIGNATURE_CHARS: usize = 240;

/// Limits against pathological files (a generated table of 100,000 calls): what is beyond
/// them is dropped, and the file says so in the log.
pub const MAX_DEFINITIONS: usize = 20_000;
pub const MAX_REFERENCES: usize = 100_000;

#[cfg(test)]
mod tests;
