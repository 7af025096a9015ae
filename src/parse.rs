//! One tree-sitter parse per file, handed to chunking and to extraction (and for a Vue, Svelte
//! or Astro component, a second one of its template's expressions, for the calls they make; an
//! MDX page's ESM and expressions are parsed for extraction alone).

use crate::chunk::{self, Chunk, ChunkOptions, CodeLanguage, Language};
use crate::intel::{self, Definition, Extraction, Import, Reference};

/// A file's chunks and what its code defines, calls and imports.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The file's language, by its name and for a `.h` header its text.
    pub language: Language,
    pub chunks: Vec<Chunk>,
    /// Empty for files that are not code, and for code whose parse failed or timed out.
    pub intel: Extraction,
}

/// Parses the file once (when it is code) and chunks and extracts from the same tree.
pub fn analyze(rel_path: &str, text: &str, opts: &ChunkOptions) -> Analysis {
    let language = Language::detect(rel_path, text);
    let tree = chunk::parse_file(language, text, opts.parse_timeout);
    let chunks = chunk::chunk_parsed(rel_path, language, text, tree.as_ref(), opts);
    let mut intel = match (language.code(), &tree) {
        (Some(lang), Some(tree)) => intel::extract(lang, tree, text, rel_path),
        (None, _) if language == Language::Text => {
            let file_type = crate::scan::file_type_of(rel_path);
            if chunk::outline::applies_to(&file_type) {
                intel::outline::extract(&file_type, text, rel_path)
            } else {
                Extraction::default()
            }
        }
        _ => Extraction::default(),
    };
    if language == Language::Markdown && crate::scan::file_type_of(rel_path) == "mdx" {
        intel = mdx_intel(rel_path, text, opts);
    }
    if let (Language::Component(lang), Some(_)) = (language, &tree) {
        // The template's calls are the component's: `impact` goes on to the templates that use
        // it. At the file's top level when it is no component a tag names (a route).
        let component = component_definition(rel_path, text);
        let enclosing = component.as_ref().map(|_| intel.definitions.len() as u32);
        let calls = template_calls(lang, rel_path, text, enclosing, &mut intel.imports, opts);
        intel.references.extend(calls);
        intel.definitions.extend(component);
    }
    Analysis {
        language,
        chunks,
        intel,
    }
}

/// What an MDX page imports, exports and calls: its ESM parsed as TSX, and the components its
/// JSX tags use and the calls its `{…}` expressions make, from its top level (fenced and inline
/// code are text). Its chunks are Markdown's.
fn mdx_intel(rel_path: &str, text: &str, opts: &ChunkOptions) -> Extraction {
    let markup = chunk::component::mdx_markup(text);
    let esm = chunk::component::mdx_esm(&markup);
    let mut intel = if esm.trim().is_empty() {
        Extraction::default()
    } else {
        chunk::parse(CodeLanguage::Tsx, &esm, opts.parse_timeout)
            .map(|tree| intel::extract(CodeLanguage::Tsx, &tree, &esm, rel_path))
            .unwrap_or_default()
    };
    let calls = template_calls(
        CodeLanguage::Tsx,
        rel_path,
        &markup,
        None,
        &mut intel.imports,
        opts,
    );
    intel.references.extend(calls);
    intel
}

/// The calls a component's template makes (`@click="select(user)"`, `{{ format(date) }}`,
/// Svelte's and Astro's `{total()}`), the handlers it names (`@click="select"`) and the
/// components it uses ([`component_calls`]), as calls from `enclosing` (the component's own
/// definition, or the file's top level): its expressions are parsed as the scripts are, one
/// statement each.
fn template_calls(
    lang: CodeLanguage,
    rel_path: &str,
    text: &str,
    enclosing: Option<u32>,
    imports: &mut Vec<Import>,
    opts: &ChunkOptions,
) -> Vec<Reference> {
    let ext = crate::scan::file_type_of(rel_path);
    let braces = matches!(ext.as_str(), "svelte" | "astro" | "mdx");
    let template = chunk::component::template(text, braces);
    // Astro's and MDX's expressions are JSX's: `{items.map((i) => <li>{i}</li>)}`.
    let lang = if matches!(ext.as_str(), "astro" | "mdx") {
        CodeLanguage::Tsx
    } else {
        lang
    };
    let components = component_calls(text, template.components, template.lowercase, imports);
    let mut calls: Vec<Reference> = template
        .handlers
        .into_iter()
        .chain(components)
        .map(|(name, qualifier, line)| Reference {
            name,
            qualifier,
            line,
            enclosing,
            args: None,
            argument: None,
        })
        .collect();
    if template.masked.trim().is_empty() {
        return calls;
    }
    if let Some(tree) = chunk::parse(lang, &template.masked, opts.parse_timeout) {
        let x = intel::extract(lang, &tree, &template.masked, rel_path);
        // An arrow function in a handler (`@click="() => open(id)"`) is no definition of the
        // file: its calls are the template's.
        calls.extend(
            x.references
                .into_iter()
                .map(|r| Reference { enclosing, ..r }),
        );
    }
    calls.sort_by_key(|r| r.line);
    calls
}

/// The components a template's tags use, as calls of the components' own names (see
/// [`component_name`]): `<UserCard>`, and `<pagination>` when the script imports `Pagination`
/// (`<table>` is HTML's). A tag named by a local default import (`import Search from
/// '@/components/HeaderSearch'`) calls the component that import names, `HeaderSearch`, and
/// the import binds that name too, so that the call resolves through it.
fn component_calls(
    text: &str,
    capitalised: Vec<(String, Option<String>, u32)>,
    lowercase: Vec<(String, Option<String>, u32)>,
    imports: &mut Vec<Import>,
) -> Vec<(String, Option<String>, u32)> {
    let lowercase: Vec<_> = lowercase
        .into_iter()
        .filter(|(name, _, _)| imports.iter().any(|i| i.name == *name))
        .collect();
    // The local imports of a default export, each checked once.
    let defaults = default_imports(text);
    let mut calls = Vec::new();
    for (name, qualifier, line) in capitalised.into_iter().chain(lowercase) {
        let local = imports
            .iter()
            .find(|i| qualifier.is_none() && i.name == name && defaults.contains(&name.as_str()));
        let named = local.and_then(|i| Some((i.clone(), component_name(&i.specifier)?)));
        match named {
            Some((import, component)) if component != name => {
                if !imports.iter().any(|i| i.name == component) {
                    imports.push(Import {
                        name: component.clone(),
                        ..import
                    });
                }
                calls.push((component, None, line));
            }
            _ => calls.push((name, qualifier, line)),
        }
    }
    calls
}

/// The names the scripts bind to a module's default export (`import Search from …`,
/// `import Search, { x } from …`), which is what a component file exports; `import { Tab }
/// from './Tabs'` binds a named one.
fn default_imports(text: &str) -> Vec<&str> {
    static DEFAULT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\bimport\s+([A-Za-z_$][\w$]*)\s*(?:,|from\b)").expect("a valid pattern")
    });
    DEFAULT
        .captures_iter(text)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str())
        .collect()
}

/// How a component's tags name the component a path (a file, or an import's specifier) holds:
/// `UserCard.vue`, and `user-card.vue` too, is `UserCard`, and `Pagination/index.vue` (imported
/// as `@/components/Pagination`) is `Pagination`. A file whose name does not start with a
/// letter (SvelteKit's `+page.svelte`, Astro's `[slug].astro`) is a route, used by no tag: none.
pub(crate) fn component_name(path: &str) -> Option<String> {
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or(path);
    let mut stem = file.split('.').next().unwrap_or(file);
    if stem == "index"
        && let Some(dir) = parts.next()
    {
        stem = dir;
    }
    if !stem.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let name = chunk::component::pascal_case(stem);
    name.chars()
        .all(|c| c.is_ascii_alphanumeric())
        .then_some(name)
}

/// The component a file is, as a definition of kind `component` spanning the file, named as
/// its tags name it ([`component_name`]).
fn component_definition(rel_path: &str, text: &str) -> Option<Definition> {
    let name = component_name(rel_path)?;
    Some(Definition {
        signature: format!("<{name}>"),
        qualified: name.clone(),
        name,
        kind: "component",
        start_line: 1,
        end_line: text.lines().count().max(1) as u32,
        parent: None,
        implements: None,
    })
}
