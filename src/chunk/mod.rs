//! Bytes to chunks.
//!
//! In: a file's relative path and text. Out: [`Chunk`]s in file order, each with its 1-based
//! line range, language, and symbol name where it has one. Code in TypeScript, TSX,
//! JavaScript, Python, Rust, Go, Java, C#, C, C++ and Ruby, and the scripts of Vue, Svelte and
//! Astro components, is cut by tree-sitter at definitions (function, method, class, interface,
//! type, impl, ...) with the doc comments and attributes above them; GraphQL by type, query,
//! mutation and fragment (tree-sitter too); SQL by statement; Markdown, reStructuredText,
//! AsciiDoc and Org by heading section; code in other languages (Kotlin, PHP, Swift, ...) where
//! its indentation says a definition starts ([`outline`]); everything else by size with overlap.
//!
//! Two rules shape every chunk, whatever the language:
//! - **Split, never truncate.** A definition larger than `max_chars` is cut into pieces on line
//!   boundaries with `overlap_chars` repeated between pieces; a class or impl block that is too
//!   large is opened up and its members chunked one by one, with the class name as context.
//! - **Merge the small.** Neighbouring definitions (and the code between them) smaller than
//!   `min_chars` are merged, within the same parent, up to `max_chars`: a one-line getter is
//!   a poor thing to embed alone.
//!
//! Chunking is pure and synchronous; parsing is bounded by `parse_timeout`, after which the
//! file falls back to size-based chunks. Bump [`CHUNKER_VERSION`] whenever the output for a given
//! input can change: stored files are re-chunked when it differs.

mod asciidoc;
mod code;
pub(crate) mod component;
mod markdown;
mod org;
pub(crate) mod outline;
mod rst;
mod sections;
mod split;
mod sql;

use std::time::Duration;

pub use code::{CodeLanguage, parse};
use tree_sitter::Tree;

/// Version of the chunking rules and of what is stored with each chunk and file (lexical
/// text, since version 6 the file's definitions, calls and imports, since version 7 text with
/// its credentials redacted, since version 8 file postings of every word, not the first 20,000,
/// since version 9 the names of every definition a merged chunk holds, since version 10 Java,
/// C#, C, C++ and Ruby cut at definitions and extracted, since version 11 a comment on a
/// definition's closing line kept with it and C++'s declared types and export macros, since
/// version 12 calls of JavaScript's and TypeScript's `#private` methods, since version 13 Go's
/// declared types of receivers, parameters and locals, since version 14 Ruby's calls written as
/// a bare name, since version 15 reStructuredText and AsciiDoc by section, since version 16 Org by
/// heading, since version 17 a Rust item's whole `///` doc comment kept with it, since version
/// 18 files read without a UTF-8 byte-order mark and UTF-16 files read as text, since version 19
/// constants and module-level variables as definitions in Python, JavaScript, TypeScript, Go,
/// Java, C# and Ruby, since version 20 files in Latin-1 or Windows-1252 read as such, not
/// skipped or with U+FFFD for each accented letter, since version 21 JavaScript's and
/// TypeScript's `obj.name = function`, `Foo.prototype.name = function` and
/// `module.exports = class …` cut and named as definitions, since version 22 the innermost of
/// chained assignments and the members of an object a module exports, and a name a chunk
/// defines twice (a getter and its setter, overloads) listed once, since version 23 an object
/// of functions bound to a name, `const api = { getUser() {…} }`, cut by its members, since
/// version 24 the scripts of Vue and Svelte components cut at definitions and extracted, and the
/// calls their templates make, since version 25 an indented definition's size counted with its
/// indentation, since version 26 JavaScript's and TypeScript's module-level `let` and `var`
/// bindings as variables, Astro components, and MDX by heading as Markdown, since version 27 a
/// component as a definition of its own, the components its template's tags use as calls, and
/// `@/`, `~/` and `$lib/` imports resolved, since version 28 bare import specifiers kept for
/// `tsconfig.json`'s aliases and workspace packages, MDX pages' imports and calls extracted,
/// and no tag read where a template's expression compares or names a generic type, `n<Max`,
/// `Array<Item>`, since version 29 code in languages without a grammar cut where its
/// indentation says a definition starts, and named after it, since version 30 their definitions
/// and calls extracted from their lines, for code intelligence, since version 31 Markdown
/// headings read without their badges, images, tags and link targets, since version 32 Dart's
/// functions, methods and getters named by their declarations, `Type name(`, since version 33
/// Kotlin's extension functions named by their receiver's type (`fun <T> List<T>.second()` is
/// `List.second`), and imports of a class's members and of a package's functions, Dart's
/// named constructors (`factory User.fromJson(…)`) as definitions, Swift's module imports and
/// extensions, Elixir's pipes into a name and function plugs as calls, and calls on
/// expressions in the languages read by their outline, since version 34 their members named by
/// the classes they are in (`RateLimiter.refill`, `Plug.Conn.halt`) and the code between
/// members by its class, since version 35 Kotlin's calls in a scope function's lambda
/// (`Buffer().apply { writeUtf8(s) }`, `sink.also { it.close() }`) made on its receiver, since
/// version 36 those in a call's trailing lambda too, Kotlin's calls that pass only a lambda
/// (`writeZip { … }`), and the outline languages' heads read over several lines, since version
/// 37 a receiver that is a chain of calls written out (`Router::new().route()`, not `(…)`) and
/// a variable bound to one (Rust's `let res = client.get(url).await`, JavaScript's and
/// TypeScript's `const qb = repo.createQueryBuilder()`, Go's `r := chi.NewRouter()`, Python's
/// `client = Client(url)`), and TypeScript's declared types of parameters, locals and fields,
/// since version 38 Rust types' members (fields, traits implemented, deref targets, aliases)
/// Go's `new(T)` as a receiver of type `T`, Python's annotated parameters and variables, its
/// attributes and its `super()`, Java's and C#'s `var` bound to `new` or a call, since version
/// 39 Rust's receivers in a macro's arguments read back to the start of their chain
/// (`self.name` of `write!(f, "{}", self.name.lexeme())`), its enum variants' fields, and the
/// names its patterns bind typed by them (`Self::And { lhs, rhs } => lhs.tree()`), and what
/// awaiting a type gives (its `IntoFuture` or `Future` output), since version 40 Rust's
/// variables bound to another name or a field (`let config = &context.config`) and to what a
/// `Some(x)` or `Ok(x)` unwraps, and `Option`'s inner type as a field's or variable's, since
/// version 41 receivers written over several lines (`self\n    .recipes\n    .values()`)
/// read as on one, since version 42 Rust's indexed values (`xs[i]`, one of `xs`'s elements),
/// struct literals and fields of values that are no path as receivers (`recipes[0].name`,
/// `Foo { .. }.show()`), and paths without their turbofish (`Table::<T>::default()`), since
/// version 43 what a Rust `if` or `match` gives, by its first branch that is a chain or a
/// field (`let color = if c { config.color.command(x) } else { config.color }`), since version
/// 44 the trait a Rust method's `impl Trait for Type` implements, since version 45 indexes
/// and struct literals in a Rust macro's tokens as receivers (`invocations[0].recipe`,
/// `Usage { .. }.color_display()`), since version 46 a path's type before its turbofish there
/// (`Query::<T>::from_request()`), since version 47 the type a Rust call's first argument is
/// written as and the type arguments of the trait an `impl` implements (`From<&str>`); part of every
/// file's skip key, so a change re-processes files (vectors are reused where a
/// chunk's text is unchanged).
pub const CHUNKER_VERSION: i32 = 47;

/// One piece of a file, ready to embed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The source text of the chunk, exactly as in the file (surrounding blank lines trimmed).
    pub content: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// The definition's name, qualified by its parent (`UserService.findById`, `Stack::push`),
    /// the heading path for Markdown, reStructuredText, AsciiDoc and Org, the object name for SQL.
    pub symbol: Option<String>,
    /// What the chunk holds: `function`, `method`, `class`, `section`, `statement`, `text`, ...
    pub kind: &'static str,
    /// The qualified names of the code definitions (and SQL objects created) whose start is in
    /// this chunk: `symbol`'s, those of the small definitions merged into it, and the members
    /// of a class or `impl` block kept whole. `impl` blocks themselves define nothing.
    pub defines: Vec<String>,
}

/// Limits for chunking, from `[index]` in the configuration.
#[derive(Debug, Clone, Copy)]
pub struct ChunkOptions {
    pub max_chars: usize,
    pub overlap_chars: usize,
    pub min_chars: usize,
    pub parse_timeout: Duration,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        Self {
            max_chars: 1500,
            overlap_chars: 100,
            min_chars: 200,
            parse_timeout: Duration::from_secs(2),
        }
    }
}

/// How a file is chunked, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Code(CodeLanguage),
    /// A Vue, Svelte or Astro component: its `<script>` blocks (and Astro's frontmatter) are
    /// code in this language (TypeScript, TSX or JavaScript, as their `lang` says; Astro's
    /// frontmatter is TypeScript), the rest is markup.
    Component(CodeLanguage),
    Sql,
    Markdown,
    /// reStructuredText (`.rst`), by section like Markdown.
    ReStructuredText,
    /// AsciiDoc (`.adoc`), by section like Markdown.
    AsciiDoc,
    /// Org (`.org`), by heading like Markdown.
    Org,
    /// Anything else: size-based chunks.
    Text,
}

/// Whether a file is cut by its outline ([`outline`]): source code of a language the chunker
/// has no grammar for (Kotlin, PHP, Swift, Elixir, ...).
pub fn reads_outline(rel_path: &str) -> bool {
    matches!(Language::from_path(rel_path), Language::Text)
        && outline::applies_to(&crate::scan::file_type_of(rel_path))
}

impl Language {
    pub fn from_path(rel_path: &str) -> Self {
        let ext = crate::scan::file_type_of(rel_path);
        match ext.as_str() {
            "ts" | "mts" | "cts" => Language::Code(CodeLanguage::TypeScript),
            "tsx" => Language::Code(CodeLanguage::Tsx),
            "js" | "jsx" | "mjs" | "cjs" => Language::Code(CodeLanguage::JavaScript),
            // A notebook's text is its cells' ([`crate::scan::notebook`]).
            "py" | "pyi" | "ipynb" => Language::Code(CodeLanguage::Python),
            "rs" => Language::Code(CodeLanguage::Rust),
            "go" => Language::Code(CodeLanguage::Go),
            "graphql" | "gql" => Language::Code(CodeLanguage::GraphQl),
            "java" => Language::Code(CodeLanguage::Java),
            "cs" => Language::Code(CodeLanguage::CSharp),
            "c" => Language::Code(CodeLanguage::C),
            // A `.h` header is C unless its text says C++ ([`Language::detect`]).
            "h" => Language::Code(CodeLanguage::C),
            "cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ipp" | "tpp" => {
                Language::Code(CodeLanguage::Cpp)
            }
            "rb" | "rake" | "gemspec" => Language::Code(CodeLanguage::Ruby),
            "sql" => Language::Sql,
            // MDX is Markdown with JSX and imports between its sections.
            "md" | "markdown" | "mdx" => Language::Markdown,
            "rst" | "rest" => Language::ReStructuredText,
            "adoc" | "asciidoc" => Language::AsciiDoc,
            "org" => Language::Org,
            // JavaScript until the text says otherwise ([`Language::detect`]).
            "vue" | "svelte" | "astro" => Language::Component(CodeLanguage::JavaScript),
            _ => Language::Text,
        }
    }

    /// The language of the file at `rel_path` holding `text`: as [`Language::from_path`], except
    /// that a `.h` header written in C++ (a class, a namespace, a template) is C++, and a
    /// component's scripts are in the language their `lang` attribute names.
    pub fn detect(rel_path: &str, text: &str) -> Self {
        match Self::from_path(rel_path) {
            Language::Code(CodeLanguage::C)
                if crate::scan::file_type_of(rel_path) == "h" && looks_like_cpp(text) =>
            {
                Language::Code(CodeLanguage::Cpp)
            }
            Language::Component(_) => Language::Component(component::script_language(text)),
            // A notebook whose kernel speaks something other than Python is cut by size.
            Language::Code(CodeLanguage::Python)
                if crate::scan::file_type_of(rel_path) == "ipynb"
                    && crate::scan::notebook::language(text).is_some_and(|l| l != "python") =>
            {
                Language::Text
            }
            lang => lang,
        }
    }

    /// The grammar the file's code is parsed with: `None` for prose, SQL and plain text.
    pub fn code(self) -> Option<CodeLanguage> {
        match self {
            Language::Code(lang) | Language::Component(lang) => Some(lang),
            _ => None,
        }
    }

    /// The language name stored with each chunk.
    pub fn name(self, rel_path: &str) -> String {
        match self {
            Language::Code(c) => c.name().to_owned(),
            Language::Sql => "sql".to_owned(),
            Language::Markdown => "markdown".to_owned(),
            // Prose other than Markdown, and components (`vue`, `svelte`, `astro`), are named by their
            // extension, as plain text is.
            Language::Component(_)
            | Language::ReStructuredText
            | Language::AsciiDoc
            | Language::Org
            | Language::Text => {
                let ext = crate::scan::file_type_of(rel_path);
                if ext.is_empty() {
                    "text".to_owned()
                } else {
                    ext
                }
            }
        }
    }
}

/// Whether a header's text has a line only C++ would start with.
fn looks_like_cpp(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        [
            "class ",
            "namespace ",
            "template<",
            "template <",
            "public:",
            "private:",
            "protected:",
        ]
        .iter()
        .any(|p| l.starts_with(p))
            || l.contains("std::")
    })
}

/// A byte range of the file with what we know about it, before merging and splitting.
#[derive(Debug, Clone)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
    pub symbol: Option<String>,
    pub kind: &'static str,
    /// The qualified names of the definitions that start in this span (several once small
    /// definitions are merged).
    pub defines: Vec<String>,
    /// Spans merge only with spans of the same parent.
    pub parent: usize,
    /// Pieces of a split definition are not merged with anything else.
    pub mergeable: bool,
}

/// A byte range that other spans live in (a class body): code between its members is glue
/// with the container's name.
#[derive(Debug, Clone)]
pub(crate) struct Container {
    pub start: usize,
    pub end: usize,
    pub id: usize,
    pub symbol: Option<String>,
    /// Whether the container is a definition (a class), not an `impl` block.
    pub defines: bool,
}

/// What a language's pass finds: definitions (or sections, statements) and containers. The
/// gaps between spans become glue chunks.
#[derive(Debug, Clone, Default)]
pub(crate) struct Layout {
    pub spans: Vec<Span>,
    pub containers: Vec<Container>,
}

impl Layout {
    /// No structure: the whole file is one span of plain text, split by size later.
    pub fn whole(text: &str) -> Self {
        Layout {
            spans: vec![Span {
                start: 0,
                end: text.len(),
                symbol: None,
                kind: "text",
                defines: Vec::new(),
                parent: 0,
                mergeable: true,
            }],
            containers: Vec::new(),
        }
    }
}

/// Chunks one file. Never fails: a file that cannot be parsed is chunked by size.
pub fn chunk_file(rel_path: &str, text: &str, opts: &ChunkOptions) -> Vec<Chunk> {
    let language = Language::detect(rel_path, text);
    let tree = parse_file(language, text, opts.parse_timeout);
    chunk_parsed(rel_path, language, text, tree.as_ref(), opts)
}

/// Parses the code of a file of `language` ([`Language::detect`]): the whole text, or a
/// component's scripts with the rest blanked out (the tree's positions are the file's). `None`
/// for a file that is not code or holds nothing, and when parsing fails or runs out of
/// `timeout`.
pub fn parse_file(language: Language, text: &str, timeout: Duration) -> Option<Tree> {
    if text.trim().is_empty() {
        return None;
    }
    match language {
        Language::Code(lang) => code::parse(lang, text, timeout),
        Language::Component(lang) => code::parse(lang, &component::mask(text), timeout),
        _ => None,
    }
}

/// Chunks one file of `language` ([`Language::detect`]) whose code was parsed already
/// (`tree`, from [`parse_file`]); `None` for a code file whose parse failed or timed out chunks it
/// by size.
pub fn chunk_parsed(
    rel_path: &str,
    language: Language,
    text: &str,
    tree: Option<&Tree>,
    opts: &ChunkOptions,
) -> Vec<Chunk> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    let ext = crate::scan::file_type_of(rel_path);
    let layout = match language {
        Language::Code(lang) | Language::Component(lang) => match tree {
            Some(tree) => {
                let mut layout = code::layout(lang, tree, text, opts);
                if let Language::Component(_) = language {
                    component::add_markup(text, &mut layout);
                }
                layout
            }
            None => {
                tracing::debug!(
                    path = rel_path,
                    "parse failed or timed out; chunking by size"
                );
                Layout::whole(text)
            }
        },
        Language::Sql => sql::layout(text),
        Language::Markdown => markdown::layout(text),
        Language::ReStructuredText => rst::layout(text),
        Language::AsciiDoc => asciidoc::layout(text),
        Language::Org => org::layout(text),
        Language::Text if outline::applies_to(&ext) => outline::layout(text, opts.max_chars, &ext),
        Language::Text => Layout::whole(text),
    };
    let layout = if ext == "ipynb" {
        notebook_cells(text, layout)
    } else {
        layout
    };
    let spans = split::fill_gaps(text, layout);
    let spans = split::split_large(text, spans, opts);
    let spans = split::merge_small(text, spans, opts);
    split::to_chunks(text, spans)
}

/// Blank lines between two cells of a notebook, at most, for them to share chunks: the JSON
/// between cells without outputs takes six or seven lines (`"cell_type"`, `"metadata"`,
/// `"outputs": []`, ...), so a heading's cell joins the code below it, while a cell's printed
/// table or plot keeps it apart from the next.
const NOTEBOOK_CELL_GAP: usize = 10;

/// A notebook's cells ([`crate::scan::notebook`]) as containers of what its layout found, so
/// that no chunk spans a cell's outputs, which lie between cells as blank lines: cells closer
/// than [`NOTEBOOK_CELL_GAP`] lines share a container. A cell runs from its `# %%` line to its
/// last line that is not blank (the first from the top of the file). A notebook cut by size
/// (its kernel speaks no language with a grammar here) is cut cell by cell.
fn notebook_cells(text: &str, mut layout: Layout) -> Layout {
    // Byte ranges, and the line each ends on.
    let mut cells: Vec<(usize, usize, usize)> = Vec::new();
    let mut pos = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_end();
        if trimmed.starts_with("# %%") {
            match cells.last_mut() {
                Some(cell) if n - cell.2 <= NOTEBOOK_CELL_GAP + 1 => {
                    cell.1 = pos + trimmed.len();
                    cell.2 = n;
                }
                _ => cells.push((pos, pos + trimmed.len(), n)),
            }
        } else if !trimmed.is_empty()
            && let Some(cell) = cells.last_mut()
        {
            cell.1 = pos + trimmed.len();
            cell.2 = n;
        }
        pos += line.len();
    }
    // The first line names the notebook's language: it opens the first cell's chunk.
    if let Some(first) = cells.first_mut() {
        first.0 = 0;
    }
    let whole = layout.spans.len() == 1 && layout.spans[0].kind == "text";
    if whole {
        layout.spans = cells
            .iter()
            .enumerate()
            .map(|(i, &(start, end, _))| Span {
                start,
                end,
                symbol: None,
                kind: "text",
                defines: Vec::new(),
                parent: i + 1,
                mergeable: true,
            })
            .collect();
        return layout;
    }
    let first_id = layout.containers.iter().map(|c| c.id).max().unwrap_or(0) + 1;
    let mut containers = Vec::with_capacity(cells.len() + layout.containers.len());
    for (i, &(start, end, _)) in cells.iter().enumerate() {
        let id = first_id + i;
        for span in &mut layout.spans {
            if span.parent == 0 && start <= span.start && span.end <= end {
                span.parent = id;
            }
        }
        containers.push(Container {
            start,
            end,
            id,
            symbol: None,
            defines: false,
        });
    }
    // A class whose comments start with its cell's `# %%` starts where the cell does: listed
    // after the cells, it is the innermost of the two ([`split::fill_gaps`]).
    containers.append(&mut layout.containers);
    layout.containers = containers;
    layout
}

#[cfg(test)]
mod tests;
