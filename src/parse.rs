//! One tree-sitter parse per file, handed to chunking and to extraction (and for a Vue or
//! Svelte component, a second one of its template's expressions, for the calls they make).

use crate::chunk::{self, Chunk, ChunkOptions, CodeLanguage, Language};
use crate::intel::{self, Extraction, Reference};

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
        _ => Extraction::default(),
    };
    if let (Language::Component(lang), Some(_)) = (language, &tree) {
        intel
            .references
            .extend(template_calls(lang, rel_path, text, opts));
    }
    Analysis {
        language,
        chunks,
        intel,
    }
}

/// The calls a component's template makes (`@click="select(user)"`, `{{ format(date) }}`,
/// Svelte's and Astro's `{total()}`), and the handlers it names (`@click="select"`), as calls from the top
/// level of the file: its expressions are parsed as the scripts are, one statement each.
fn template_calls(
    lang: CodeLanguage,
    rel_path: &str,
    text: &str,
    opts: &ChunkOptions,
) -> Vec<Reference> {
    let ext = crate::scan::file_type_of(rel_path);
    let template = chunk::component::template(text, matches!(ext.as_str(), "svelte" | "astro"));
    // Astro's expressions are JSX's: `{items.map((i) => <li>{i}</li>)}`.
    let lang = if ext == "astro" {
        CodeLanguage::Tsx
    } else {
        lang
    };
    let mut calls: Vec<Reference> = template
        .handlers
        .into_iter()
        .map(|(name, qualifier, line)| Reference {
            name,
            qualifier,
            line,
            enclosing: None,
            args: None,
        })
        .collect();
    if template.masked.trim().is_empty() {
        return calls;
    }
    if let Some(tree) = chunk::parse(lang, &template.masked, opts.parse_timeout) {
        let x = intel::extract(lang, &tree, &template.masked, rel_path);
        // An arrow function in a handler (`@click="() => open(id)"`) is no definition of the
        // file: its calls are the template's.
        calls.extend(x.references.into_iter().map(|r| Reference {
            enclosing: None,
            ..r
        }));
    }
    calls.sort_by_key(|r| r.line);
    calls
}
