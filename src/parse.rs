//! One tree-sitter parse per file, handed to chunking and to extraction.

use crate::chunk::{self, Chunk, ChunkOptions, Language};
use crate::intel::{self, Extraction};

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
    let intel = match (language.code(), &tree) {
        (Some(lang), Some(tree)) => intel::extract(lang, tree, text, rel_path),
        _ => Extraction::default(),
    };
    Analysis {
        language,
        chunks,
        intel,
    }
}
