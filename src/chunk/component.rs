//! Single-file components: Vue (`.vue`) and Svelte (`.svelte`).
//!
//! A component holds its code in top-level `<script>` blocks (`<script setup lang="ts">`,
//! Svelte's `<script context="module">`) beside markup and styles. The scripts are parsed as
//! TypeScript or JavaScript with everything else blanked out ([`mask`]): every byte keeps its
//! offset and every line its number, so the tree's positions are the file's, and chunking and
//! code intelligence read names and lines from the file itself. The markup between and around
//! the scripts is laid out as `markup` spans, split by size like any text.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::code::CodeLanguage;
use super::{Layout, Span};

/// The language the component's scripts are parsed in: TypeScript when any of them says
/// `lang="ts"` (TypeScript's grammar reads plain JavaScript too), TSX for `lang="tsx"`,
/// JavaScript otherwise.
pub(crate) fn script_language(text: &str) -> CodeLanguage {
    let mut lang = CodeLanguage::JavaScript;
    for block in scripts(text) {
        match block.lang {
            ScriptLang::Tsx => return CodeLanguage::Tsx,
            ScriptLang::TypeScript => lang = CodeLanguage::TypeScript,
            ScriptLang::JavaScript | ScriptLang::Other => {}
        }
    }
    lang
}

/// `text` with every character outside the scripts' code replaced by spaces of its width in
/// bytes, line breaks kept: what the parser reads.
pub(crate) fn mask(text: &str) -> String {
    let code = code_ranges(text);
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for r in code
        .iter()
        .chain(std::iter::once(&(text.len()..text.len())))
    {
        blank_into(&mut out, &text[pos..r.start]);
        out.push_str(&text[r.clone()]);
        pos = r.end;
    }
    out
}

/// The markup around the scripts (from the end of one `</script>` to the next `<script>`) as
/// spans, added to the layout of the scripts' code; the script tags are glue of the code.
pub(crate) fn add_markup(text: &str, layout: &mut Layout) {
    let mut pos = 0;
    let blocks = scripts(text).filter(|s| s.lang != ScriptLang::Other);
    for r in blocks
        .map(|s| s.block)
        .chain(std::iter::once(text.len()..text.len()))
    {
        if !text[pos..r.start].trim().is_empty() {
            layout.spans.push(Span {
                start: pos,
                end: r.start,
                symbol: None,
                kind: "markup",
                defines: Vec::new(),
                parent: 0,
                mergeable: true,
            });
        }
        pos = r.end;
    }
}

fn blank_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push(c),
            c => out.extend(std::iter::repeat_n(' ', c.len_utf8())),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScriptLang {
    JavaScript,
    TypeScript,
    Tsx,
    /// CoffeeScript, JSON, a template: not parsed.
    Other,
}

/// A top-level `<script>` block: its byte range (tags included), its code's and its language.
#[derive(Debug)]
struct Script {
    block: Range<usize>,
    code: Range<usize>,
    lang: ScriptLang,
}

/// The byte ranges of the scripts that are parsed, in file order.
fn code_ranges(text: &str) -> Vec<Range<usize>> {
    scripts(text)
        .filter(|s| s.lang != ScriptLang::Other)
        .map(|s| s.code)
        .collect()
}

/// The top-level `<script>` blocks: those whose tag starts a line, as a component's blocks do
/// (a `<script>` inside the markup, as in Svelte's `<svelte:head>`, is indented).
fn scripts(text: &str) -> impl Iterator<Item = Script> + '_ {
    // Attribute values may hold `>`: `<script setup lang="ts" generic="T extends Map<K, V>">`.
    static OPEN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?m)^<script\b((?:[^>"']|"[^"]*"|'[^']*')*)>"#).expect("a valid pattern")
    });
    let mut from = 0;
    std::iter::from_fn(move || {
        let open = OPEN.captures(&text[from..])?;
        let (tag, attrs) = (open.get(0)?, open.get(1)?.as_str());
        let begin = from + tag.start();
        let start = from + tag.end();
        // A self-closing tag (`<script src="x.js" />`) holds no code.
        let end = if attrs.trim_end().ends_with('/') {
            start
        } else {
            text[start..]
                .find("</script>")
                .map_or(text.len(), |i| start + i)
        };
        from = end;
        let close = if text[end..].starts_with("</script>") {
            end + "</script>".len()
        } else {
            end
        };
        Some(Script {
            block: begin..close,
            code: start..end,
            lang: lang_of(attrs),
        })
    })
}

/// The language a script tag's attributes name: `lang="ts"`, `lang='tsx'`, `type="module"`.
fn lang_of(attrs: &str) -> ScriptLang {
    static ATTR: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"\b(lang|type)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))"#)
            .expect("a valid pattern")
    });
    let mut lang = ScriptLang::JavaScript;
    for c in ATTR.captures_iter(attrs) {
        let value = c
            .get(2)
            .or(c.get(3))
            .or(c.get(4))
            .map_or("", |m| m.as_str())
            .to_ascii_lowercase();
        lang = match (&c[1], value.as_str()) {
            ("lang", "ts" | "typescript") => ScriptLang::TypeScript,
            ("lang", "tsx") => ScriptLang::Tsx,
            ("lang", "js" | "javascript" | "jsx") => ScriptLang::JavaScript,
            (
                "type",
                "module" | "text/javascript" | "application/javascript" | "text/babel" | "",
            ) => lang,
            _ => return ScriptLang::Other,
        };
    }
    lang
}

#[cfg(test)]
mod tests {
    use super::*;

    const VUE: &str = "<template>\n  <p>{{ greeting }}</p>\n</template>\n\n<script setup lang=\"ts\">\nimport { ref } from 'vue'\nconst greeting = ref('hé')\n</script>\n\n<style scoped>\np { color: red }\n</style>\n";

    #[test]
    fn the_mask_keeps_the_scripts_and_every_offset_and_line() {
        let masked = mask(VUE);
        assert_eq!(masked.len(), VUE.len());
        assert_eq!(masked.lines().count(), VUE.lines().count());
        let code = "import { ref } from 'vue'\nconst greeting = ref('hé')\n";
        let at = VUE.find(code).expect("the script");
        assert_eq!(&masked[at..at + code.len()], code);
        assert!(masked[..at].chars().all(char::is_whitespace));
        assert!(masked[at + code.len()..].chars().all(char::is_whitespace));
        assert_eq!(script_language(VUE), CodeLanguage::TypeScript);
    }

    #[test]
    fn scripts_are_read_by_their_lang_and_type() {
        assert_eq!(lang_of(""), ScriptLang::JavaScript);
        assert_eq!(lang_of(" setup lang='ts'"), ScriptLang::TypeScript);
        assert_eq!(lang_of(" lang=tsx"), ScriptLang::Tsx);
        assert_eq!(
            lang_of(" context=\"module\" lang=\"ts\""),
            ScriptLang::TypeScript
        );
        assert_eq!(lang_of(" type=\"module\""), ScriptLang::JavaScript);
        assert_eq!(lang_of(" lang=\"coffee\""), ScriptLang::Other);
        assert_eq!(lang_of(" type=\"application/ld+json\""), ScriptLang::Other);
        let svelte = "<script context=\"module\">\nexport const prerender = true\n</script>\n<script src=\"x.js\" />\n<script>\nlet n = 0\n</script>\n\n<svelte:head>\n  <script type=\"application/ld+json\">{}</script>\n</svelte:head>\n<button on:click={() => n++}>{n}</button>\n";
        let code: Vec<&str> = code_ranges(svelte)
            .into_iter()
            .map(|r| &svelte[r])
            .collect();
        assert_eq!(
            code,
            ["\nexport const prerender = true\n", "", "\nlet n = 0\n"]
        );
        let generic =
            "<script setup lang=\"ts\" generic=\"T extends Map<K, V>\">\nconst a = 1\n</script>\n";
        let code: Vec<&str> = code_ranges(generic)
            .into_iter()
            .map(|r| &generic[r])
            .collect();
        assert_eq!(code, ["\nconst a = 1\n"]);
        assert_eq!(script_language(generic), CodeLanguage::TypeScript);
        // An unclosed script runs to the end of the file.
        assert_eq!(code_ranges("<script>\nlet a").len(), 1);
        assert_eq!(
            script_language("<p>no script</p>"),
            CodeLanguage::JavaScript
        );
    }
}
