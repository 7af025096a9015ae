//! Snapshot tests: fixture files in `tests/fixtures/chunk/` in, a readable rendering out.
//! Review changes with `cargo insta review` (or `INSTA_UPDATE=always cargo test`).

use std::time::Duration;

use super::*;

/// Small limits so the fixtures exercise both splitting and merging.
const SMALL: ChunkOptions = ChunkOptions {
    max_chars: 400,
    overlap_chars: 40,
    min_chars: 120,
    parse_timeout: Duration::from_secs(5),
};

fn render(name: &str, opts: &ChunkOptions) -> String {
    let path = format!("{}/tests/fixtures/chunk/{name}", env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    if name.ends_with(".ipynb") {
        text = crate::scan::notebook::cells_text(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    let chunks = chunk_file(name, &text, opts);
    check_invariants(&text, &chunks, opts);
    let mut out = String::new();
    for (i, c) in chunks.iter().enumerate() {
        let defines = if c.defines.is_empty() {
            String::new()
        } else {
            format!(" · defines {}", c.defines.join(", "))
        };
        out.push_str(&format!(
            "── {i} · lines {}-{} · {} · {}{defines}\n{}\n",
            c.start_line,
            c.end_line,
            c.kind,
            c.symbol.as_deref().unwrap_or("-"),
            c.content
        ));
    }
    out
}

/// What must hold for any file: chunks are in order, within the limit, are the file's own text
/// at the lines they claim, and together cover every non-blank line.
fn check_invariants(text: &str, chunks: &[Chunk], opts: &ChunkOptions) {
    let lines: Vec<&str> = text.lines().collect();
    let mut covered = vec![false; lines.len()];
    for c in chunks {
        assert!(
            c.content.chars().count() <= opts.max_chars,
            "chunk too large: {c:?}"
        );
        assert!(c.start_line >= 1 && c.start_line <= c.end_line);
        let first = c.content.lines().next().unwrap_or("");
        assert!(
            lines[c.start_line as usize - 1].contains(first.trim_end()),
            "line {} is not where {first:?} starts",
            c.start_line
        );
        for l in c.start_line..=c.end_line {
            covered[l as usize - 1] = true;
        }
    }
    for (i, line) in lines.iter().enumerate() {
        assert!(
            line.trim().is_empty() || covered[i],
            "line {} lost: {line:?}",
            i + 1
        );
    }
}

/// The symbols of the chunks holding `text`.
fn owners<'a>(chunks: &'a [Chunk], text: &str) -> Vec<&'a str> {
    chunks
        .iter()
        .filter(|c| c.content.contains(text))
        .map(|c| c.symbol.as_deref().unwrap_or("-"))
        .collect()
}

#[test]
fn a_closing_brace_after_a_split_member_joins_it() {
    let body: String = (0..30)
        .map(|i| format!("        let value_{i} = compute_something_long(input, {i});\n"))
        .collect();
    let text = format!(
        "impl Big {{\n    fn small(&self) -> u32 {{\n        1\n    }}\n\n    fn large(&self, input: u32) {{\n{body}    }}\n}}\n"
    );
    let chunks = chunk_file("big.rs", &text, &SMALL);
    check_invariants(&text, &chunks, &SMALL);
    for c in &chunks {
        assert!(
            c.content.chars().any(char::is_alphanumeric),
            "a chunk of punctuation only: {c:?}"
        );
    }
}

#[test]
fn a_comment_on_a_definitions_closing_line_is_that_definitions() {
    let body: String = (0..12)
        .map(|i| format!("    let value_{i} = compute_something_long(input, {i});\n"))
        .collect();
    let text = format!(
        "fn first(input: u32) {{\n{body}}}  // end of first\n\
         fn second(input: u32) {{\n{body}}} /* end of second */\n"
    );
    let chunks = chunk_file("ends.rs", &text, &SMALL);
    check_invariants(&text, &chunks, &SMALL);
    let owner = |text: &str| owners(&chunks, text);
    assert_eq!(owner("// end of first"), ["first"], "{chunks:#?}");
    assert_eq!(owner("/* end of second */"), ["second"], "{chunks:#?}");
    assert!(
        chunks.iter().all(|c| !c.content.starts_with("//")),
        "{chunks:#?}"
    );

    // A namespace closed after a function too large for one chunk: its closing line joins the
    // function's last piece, which starts later within its overlap to make room.
    let body: String = (0..30)
        .map(|i| format!("    int value_{i} = compute_something_long(input, {i});\n"))
        .collect();
    let text = format!(
        "namespace detail {{\nvoid small() {{}}\n\nvoid large(int input) {{\n{body}}}\n}}  // namespace detail\n\nint after() {{ return 1; }}\n"
    );
    let chunks = chunk_file("ns.cpp", &text, &SMALL);
    check_invariants(&text, &chunks, &SMALL);
    let closing = chunks
        .iter()
        .find(|c| c.content.contains("}  // namespace detail"))
        .expect("the closing line is in a chunk");
    assert!(
        closing
            .content
            .contains("compute_something_long(input, 29)"),
        "{chunks:#?}"
    );
}

#[test]
fn a_doc_comment_belongs_to_the_definition_it_documents() {
    // tree-sitter-rust's `///` comments end with their newline: a run of them has no newline
    // between its nodes, which once read as "on the line the last method ends".
    let body: String = (0..3)
        .map(|i| format!("        let value_{i} = compute(input, {i});\n"))
        .collect();
    let text = format!(
        "impl Thing {{\n    fn first(&self, input: u32) {{\n{body}    }}  // end of first\n\n\
         \x20   /// Sums the values the input gives.\n\
         \x20   /// Every value, not only the first.\n\
         \x20   #[inline]\n\
         \x20   fn second(&self, input: u32) {{\n{body}    }}\n}}\n"
    );
    let chunks = chunk_file("doc.rs", &text, &SMALL);
    check_invariants(&text, &chunks, &SMALL);
    let owner = |text: &str| owners(&chunks, text);
    assert_eq!(owner("// end of first"), ["Thing::first"], "{chunks:#?}");
    for line in ["/// Sums", "/// Every value", "#[inline]"] {
        assert_eq!(owner(line), ["Thing::second"], "{line}: {chunks:#?}");
    }
}

macro_rules! snapshot {
    ($test:ident, $file:expr) => {
        #[test]
        fn $test() {
            insta::assert_snapshot!(render($file, &SMALL));
        }
    };
}

snapshot!(typescript, "invoice.service.ts");
snapshot!(tsx, "UserCard.tsx");
snapshot!(javascript, "debounce.js");
snapshot!(commonjs, "application.js");
snapshot!(python, "shapes.py");
snapshot!(rust, "stack.rs");
snapshot!(go, "server.go");
snapshot!(graphql, "schema.graphql");
snapshot!(sql, "001_init.sql");
snapshot!(markdown, "guide.md");
snapshot!(restructuredtext, "guide.rst");
snapshot!(plain_text, "settings.toml");
snapshot!(java, "BoundedStack.java");
snapshot!(csharp, "Inventory.cs");
snapshot!(c, "ring.c");
snapshot!(c_header, "ring.h");
snapshot!(cpp, "shapes.cpp");
snapshot!(ruby, "order.rb");
snapshot!(vue, "UserList.vue");
snapshot!(svelte, "Counter.svelte");
snapshot!(astro, "Card.astro");
snapshot!(notebook, "bigrams.ipynb");
snapshot!(kotlin, "RateLimiter.kt");
snapshot!(php, "Cache.php");

/// A notebook's chunks never span a cell's outputs (which lie between cells as blank lines),
/// its definitions are Python's, and its first line names its language.
#[test]
fn a_notebook_is_chunked_cell_by_cell() {
    let path = format!(
        "{}/tests/fixtures/chunk/bigrams.ipynb",
        env!("CARGO_MANIFEST_DIR")
    );
    let raw = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let text = crate::scan::notebook::cells_text(&raw).expect("cells");
    for opts in [SMALL, ChunkOptions::default()] {
        let chunks = chunk_file("lectures/bigrams.ipynb", &text, &opts);
        check_invariants(&text, &chunks, &opts);
        for c in &chunks {
            let outputs = "\n".repeat(12);
            assert!(
                !c.content.contains(&outputs),
                "a chunk spans outputs: {c:?}"
            );
        }
        let sampler = chunks
            .iter()
            .find(|c| c.defines.iter().any(|d| d == "Sampler"))
            .expect("the class is a definition");
        // Its lines are the file's: the JSON string of `class Sampler:` is on the line the
        // chunk says.
        let offset = sampler
            .content
            .lines()
            .position(|l| l == "class Sampler:")
            .expect("the class line");
        let line = raw.lines().nth(sampler.start_line as usize - 1 + offset);
        assert_eq!(line, Some("    \"class Sampler:\\n\","));
        assert!(
            chunks[0]
                .content
                .starts_with("# Jupyter notebook (python)\n")
        );
    }
    assert_eq!(
        Language::detect("bigrams.ipynb", &text),
        Language::Code(CodeLanguage::Python)
    );
    let r = text.replacen("(python)", "(r)", 1);
    assert_eq!(Language::detect("bigrams.ipynb", &r), Language::Text);
    let chunks = chunk_file("bigrams.ipynb", &r, &SMALL);
    check_invariants(&r, &chunks, &SMALL);
    assert!(chunks.iter().all(|c| !c.content.contains(&"\n".repeat(12))));
}

#[test]
fn default_limits_keep_small_files_whole_and_name_definitions() {
    let text = "def a():\n    return 1\n\n\ndef b():\n    return 2\n";
    let chunks = chunk_file("m.py", text, &ChunkOptions::default());
    assert_eq!(chunks.len(), 1, "{chunks:?}");
    assert_eq!(chunks[0].symbol.as_deref(), Some("a"));
    assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 6));
}

#[test]
fn oversized_definition_is_split_with_overlap_never_truncated() {
    let body: String = (0..200)
        .map(|i| format!("    let v{i} = {i} * 2;\n"))
        .collect();
    let text = format!("fn huge() {{\n{body}}}\n");
    let opts = ChunkOptions::default();
    let chunks = chunk_file("h.rs", &text, &opts);
    assert!(chunks.len() > 3);
    for pair in chunks.windows(2) {
        assert!(
            pair[1].start_line <= pair[0].end_line,
            "pieces overlap: {pair:?}"
        );
        assert_eq!(pair[0].symbol.as_deref(), Some("huge"));
    }
    assert!(chunks.last().expect("chunks").content.ends_with('}'));
    check_invariants(&text, &chunks, &opts);
}

#[test]
fn one_very_long_line_is_cut_at_char_boundaries() {
    let text = "é".repeat(4000);
    let opts = ChunkOptions::default();
    let chunks = chunk_file("min.txt", &text, &opts);
    assert_eq!(chunks.len(), 3);
    assert!(
        chunks
            .iter()
            .all(|c| c.content.chars().count() <= opts.max_chars)
    );
}

#[test]
fn parse_timeout_falls_back_to_size_chunks() {
    let text: String = (0..20_000)
        .map(|i| format!("function f{i}() {{ return {i}; }}\n"))
        .collect();
    let opts = ChunkOptions {
        parse_timeout: Duration::from_nanos(1),
        ..ChunkOptions::default()
    };
    let chunks = chunk_file("big.js", &text, &opts);
    assert!(chunks.iter().all(|c| c.kind == "text"));
    check_invariants(&text, &chunks, &opts);
}

#[test]
fn empty_and_blank_files_have_no_chunks() {
    assert!(chunk_file("a.ts", "", &ChunkOptions::default()).is_empty());
    assert!(chunk_file("a.md", "\n\n  \n", &ChunkOptions::default()).is_empty());
}

#[test]
fn an_indented_definition_split_in_pieces_stays_within_the_limit_with_its_indentation() {
    // A method too large for one chunk, in a class too large for one: its pieces are cut from
    // the start of its line, indentation included, as the chunks hold it.
    for width in 8..48 {
        let line = format!("        total += {};\n", "x".repeat(width));
        let text = format!(
            "class Big:\n    def first(self):\n{body}        return total\n\n    def second(self):\n{body}        return total\n",
            body = line.repeat(2000 / line.len())
        );
        let chunks = chunk_file("big.py", &text, &SMALL);
        check_invariants(&text, &chunks, &SMALL);
    }
}

#[test]
fn mdx_is_cut_by_heading_as_markdown_is() {
    let body = "Some words about it. ".repeat(12);
    let text = format!(
        "import {{ Tabs }} from '@astrojs/starlight/components';\n\n# Guide\n\n{body}\n\n## Install\n\n<Tabs>\n{body}\n</Tabs>\n"
    );
    let chunks = chunk_file("docs/guide.mdx", &text, &SMALL);
    check_invariants(&text, &chunks, &SMALL);
    let symbols: Vec<Option<&str>> = chunks.iter().map(|c| c.symbol.as_deref()).collect();
    assert!(symbols.contains(&Some("Guide > Install")), "{symbols:?}");
    assert_eq!(
        Language::detect("docs/guide.mdx", &text),
        Language::Markdown
    );
}
