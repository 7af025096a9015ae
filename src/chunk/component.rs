//! Single-file components: Vue (`.vue`), Svelte (`.svelte`) and Astro (`.astro`).
//!
//! A component holds its code in top-level `<script>` blocks (`<script setup lang="ts">`,
//! Svelte's `<script context="module">`), or in Astro's frontmatter (TypeScript between `---`
//! lines at the top of the file), beside markup and styles. The scripts are parsed as
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
    keep_only(text, &code_ranges(text), false)
}

/// `text` with only the `kept` ranges (in order) as they are and everything else blanked
/// ([`blank_into`]); with `end_each`, the one-byte delimiter after each kept range becomes a
/// `;`. A range that overlaps the one before is left out.
fn keep_only(text: &str, kept: &[Range<usize>], end_each: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for r in kept {
        if r.start < pos || r.end > text.len() || (end_each && r.end == text.len()) {
            continue;
        }
        blank_into(&mut out, &text[pos..r.start]);
        out.push_str(&text[r.clone()]);
        pos = r.end;
        if end_each {
            out.push(';');
            pos += 1;
        }
    }
    blank_into(&mut out, &text[pos..]);
    out
}

/// An MDX page as its markup: fenced code blocks and inline code spans blanked (their `<Tag>`
/// and `{…}` are text), offsets and lines kept. Its ESM (`import`, `export`) stays.
pub fn mdx_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // The open fence's character and length.
    let mut fence: Option<(char, usize)> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let run = |c: char| trimmed.chars().take_while(|&x| x == c).count();
        let opens = ['`', '~'].into_iter().find(|&c| run(c) >= 3);
        match (fence, opens) {
            (None, Some(c)) => {
                fence = Some((c, run(c)));
                blank_into(&mut out, line);
            }
            (Some((c, n)), _) => {
                if run(c) >= n && trimmed[run(c)..].trim().is_empty() {
                    fence = None;
                }
                blank_into(&mut out, line);
            }
            (None, None) => blank_code_spans(&mut out, line),
        }
    }
    out
}

/// `line` with each inline code span (`` `a<B>` ``, a run of backticks to the next run as long)
/// blanked.
fn blank_code_spans(out: &mut String, line: &str) {
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        let n = rest[open..].chars().take_while(|&c| c == '`').count();
        let ticks = &rest[open..open + n];
        let Some(close) = rest[open + n..].find(ticks) else {
            break;
        };
        let end = open + n + close + n;
        out.push_str(&rest[..open]);
        blank_into(out, &rest[open..end]);
        rest = &rest[end..];
    }
    out.push_str(rest);
}

/// An MDX page's ESM alone (its `import` and `export` statements: a line that starts with one,
/// to the next blank line), everything else blanked: what the parser reads. `markup` is
/// [`mdx_markup`]'s.
pub fn mdx_esm(markup: &str) -> String {
    let mut out = String::with_capacity(markup.len());
    let mut inside = false;
    for line in markup.split_inclusive('\n') {
        if line.trim().is_empty() {
            inside = false;
        } else if line.starts_with("import ") || line.starts_with("export ") {
            inside = true;
        }
        if inside {
            out.push_str(line);
        } else {
            blank_into(&mut out, line);
        }
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

/// The expressions of a component's template, for code intelligence to read the calls the
/// markup makes (`@click="select(user)"`, `{{ format(date) }}`, Svelte's `{total()}`).
#[derive(Debug, Default)]
pub struct Template {
    /// The file's text with everything but the template's expressions blanked out, each
    /// expression ended by a `;` where its closing delimiter was: offsets and lines are the
    /// file's, and the parser reads one statement per expression.
    pub masked: String,
    /// Event handlers named without a call (`@click="select"`, `on:click={reset}`): the
    /// framework calls them. Each is the name, the path before it (`store.reset`'s `store`)
    /// and its 1-based line.
    pub handlers: Vec<(String, Option<String>, u32)>,
    /// The project's components the markup uses, by the tags that name them (`<UserCard>`,
    /// Svelte's `<Icon.Close>`, Vue's `<user-card>` as `UserCard`): the name, the path before
    /// a dotted one, and the 1-based line.
    pub components: Vec<(String, Option<String>, u32)>,
    /// Vue's one-word tags in lower case (`<pagination>`), as components (`Pagination`): the
    /// script's imports tell which of them are, since HTML's elements are written so too.
    pub lowercase: Vec<(String, Option<String>, u32)>,
}

/// The expressions in the markup of a Vue component (`braces` false) or of a Svelte or Astro
/// one: Vue's directives (`v-if`, `:prop`, `@event`, the list of a `v-for`) and `{{ }}`
/// interpolations; Svelte's and Astro's `{…}` tags (the expression of `{#if}`,
/// `{#each … as …}`, `{#await}`, `{@html}`, `{@render}`) in text and attributes. Styles and
/// scripts are skipped.
pub fn template(text: &str, braces: bool) -> Template {
    let mut kept: Vec<Range<usize>> = Vec::new();
    let mut handlers = Vec::new();
    let (mut components, mut lowercase) = (Vec::new(), Vec::new());
    for region in markup_regions(text) {
        if braces {
            svelte_expressions(text, region.clone(), &mut kept, &mut handlers);
        } else {
            vue_expressions(text, region.clone(), &mut kept, &mut handlers);
        }
        let vue = (!braces).then_some(&mut lowercase);
        component_tags(text, region, vue, &mut components);
    }
    kept.sort_by_key(|r| r.start);
    // The delimiter after each expression (a quote, a brace, a space: one byte) ends it.
    let masked = keep_only(text, &kept, true);
    Template {
        masked,
        handlers: named_at_lines(text, handlers),
        components: named_at_lines(text, components),
        lowercase: named_at_lines(text, lowercase),
    }
}

/// Each `(offset, path)` as its last name, the path before it (`store.reset`'s `store`) and the
/// 1-based line of the offset, in the file's order.
fn named_at_lines<P: AsRef<str>>(
    text: &str,
    mut found: Vec<(usize, P)>,
) -> Vec<(String, Option<String>, u32)> {
    found.sort_by_key(|f| f.0);
    // Lines counted once, in order.
    let (mut line, mut counted) = (1u32, 0);
    found
        .into_iter()
        .map(|(at, path)| {
            line += text[counted..at].matches('\n').count() as u32;
            counted = at;
            match path.as_ref().rsplit_once('.') {
                Some((owner, name)) => (name.to_owned(), Some(owner.to_owned()), line),
                None => (path.as_ref().to_owned(), None, line),
            }
        })
        .collect()
}

/// `user-card` and `user_card` as `UserCard`: how a component's tag names it.
pub fn pascal_case(name: &str) -> String {
    name.split(['-', '_'])
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

/// The tags in `region` that name a component: capitalised (`<UserCard`, `<Icon.Close`), or in
/// Vue written in kebab case (`<user-card`, which Vue resolves to `UserCard`). Vue's one-word
/// tags in lower case go to `vue_lowercase` (`<pagination` as `Pagination`), for the caller to
/// tell from HTML's. Svelte's `<svelte:…>`, the frameworks' built-ins (`<Transition>`,
/// `<KeepAlive>`, Astro's `<Fragment>`), tags in comments and a `<` that compares or opens a
/// type's arguments in an expression (`n<Max`, `Array<Item>`) are none.
fn component_tags(
    text: &str,
    region: Range<usize>,
    mut vue_lowercase: Option<&mut Vec<(usize, String)>>,
    out: &mut Vec<(usize, String)>,
) {
    static TAG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"<([A-Za-z][\w.:-]*)").expect("a valid pattern"));
    static COMMENT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?s)<!--.*?(?:-->|\z)").expect("a valid pattern"));
    const BUILT_IN: &[&str] = &[
        "Transition",
        "TransitionGroup",
        "KeepAlive",
        "Teleport",
        "Suspense",
        "Component",
        "Slot",
        "Fragment",
        "Template",
    ];
    let markup = &text[region.clone()];
    let comments: Vec<Range<usize>> = COMMENT.find_iter(markup).map(|m| m.range()).collect();
    for c in TAG.captures_iter(markup) {
        let Some(tag) = c.get(1) else { continue };
        if comments.iter().any(|r| r.contains(&tag.start())) {
            continue;
        }
        // A `<` right after a name, a call or an index compares (`n<Max`) or opens a type's
        // arguments (`Array<Item>`): a tag opens after a space, `>`, `(`, `{`, `=` and the like.
        if markup[..tag.start() - 1]
            .ends_with(|c: char| c.is_alphanumeric() || matches!(c, '_' | '$' | ')' | ']'))
        {
            continue;
        }
        let raw = tag.as_str().trim_end_matches(['.', '-']);
        let at = region.start + tag.start();
        let name = if raw.contains(':') {
            continue;
        } else if raw.starts_with(|c: char| c.is_ascii_uppercase()) {
            raw.to_owned()
        } else if let Some(lowercase) = vue_lowercase.as_deref_mut() {
            if raw.contains('-') {
                pascal_case(raw)
            } else {
                lowercase.push((at, pascal_case(raw)));
                continue;
            }
        } else {
            continue;
        };
        if !BUILT_IN.contains(&name.as_str()) {
            out.push((at, name));
        }
    }
}

/// The byte ranges of the markup: outside the scripts and the `<style>` blocks.
fn markup_regions(text: &str) -> Vec<Range<usize>> {
    static STYLE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?s)<style\b[^>]*>.*?(?:</style>|\z)").expect("a valid pattern")
    });
    let mut skipped: Vec<Range<usize>> = scripts(text).map(|s| s.block).collect();
    skipped.extend(STYLE.find_iter(text).map(|m| m.range()));
    skipped.sort_by_key(|r| r.start);
    let mut regions = Vec::new();
    let mut pos = 0;
    for r in skipped {
        if r.start > pos {
            regions.push(pos..r.start);
        }
        pos = pos.max(r.end);
    }
    if pos < text.len() {
        regions.push(pos..text.len());
    }
    regions
}

/// A name or a dotted path: a handler passed, not called.
fn is_path(expr: &str) -> bool {
    static PATH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$").expect("a valid pattern")
    });
    PATH.is_match(expr)
}

/// `range` without the white space at its ends.
fn trimmed(text: &str, range: Range<usize>) -> Range<usize> {
    let s = &text[range.clone()];
    let start = range.start + (s.len() - s.trim_start().len());
    let end = range.end - (s.len() - s.trim_end().len());
    start..end.max(start)
}

fn vue_expressions<'t>(
    text: &'t str,
    region: Range<usize>,
    kept: &mut Vec<Range<usize>>,
    handlers: &mut Vec<(usize, &'t str)>,
) {
    static DIRECTIVE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r#"\s(@[\w.:\[\]-]+|v-on:[\w.:\[\]-]+|:[\w.:\[\]-]+|v-bind:[\w.:\[\]-]+|v-(?:if|else-if|show|for|html|text|memo))\s*=\s*(?:"([^"]*)"|'([^']*)')"#,
        )
        .expect("a valid pattern")
    });
    static INTERPOLATION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?s)\{\{(.*?)\}\}").expect("a valid pattern"));
    static FOR_LIST: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?s)^.*?\s(?:in|of)\s").expect("a valid pattern"));
    let markup = &text[region.clone()];
    for c in DIRECTIVE.captures_iter(markup) {
        let (Some(name), Some(value)) = (c.get(1), c.get(2).or(c.get(3))) else {
            continue;
        };
        let mut at = region.start + value.start()..region.start + value.end();
        if name.as_str() == "v-for" {
            // `(user, i) in users`: only the list is an expression.
            let Some(head) = FOR_LIST.find(value.as_str()) else {
                continue;
            };
            at.start += head.end();
        }
        let at = trimmed(text, at);
        let expr = &text[at.clone()];
        if expr.is_empty() {
            continue;
        }
        let event = name.as_str().starts_with('@') || name.as_str().starts_with("v-on:");
        if event && is_path(expr) {
            handlers.push((at.start, expr));
        } else {
            // Up to the closing quote, which becomes the statement's end.
            kept.push(at.start..region.start + value.end());
        }
    }
    for c in INTERPOLATION.captures_iter(markup) {
        if let Some(m) = c.get(1) {
            kept.push(region.start + m.start()..region.start + m.end());
        }
    }
}

fn svelte_expressions<'t>(
    text: &'t str,
    region: Range<usize>,
    kept: &mut Vec<Range<usize>>,
    handlers: &mut Vec<(usize, &'t str)>,
) {
    // `on:click|preventDefault={reset}` (Svelte 4), `onclick={reset}` (Svelte 5).
    static HANDLER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\son(?::[\w|-]+|[a-z]+)\s*=\s*$").expect("a valid pattern"));
    static BLOCK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:#if|:else if|#await|#key|#each|@html|@render|@const)\s")
            .expect("a valid pattern")
    });
    let bytes = text.as_bytes();
    let mut i = region.start;
    while i < region.end {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        // The tag's end: the brace that balances it (strings and template literals aside).
        let mut depth = 0usize;
        let mut end = None;
        let mut quote: Option<u8> = None;
        for (j, &b) in bytes.iter().enumerate().take(region.end).skip(i) {
            match (quote, b) {
                (Some(q), _) if b == q && bytes[j - 1] != b'\\' => quote = None,
                (Some(_), _) => {}
                (None, b'"' | b'\'' | b'`') => quote = Some(b),
                (None, b'{') => depth += 1,
                (None, b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            break;
        };
        let inner = trimmed(text, i + 1..end);
        let body = &text[inner.clone()];
        let mut start = inner.start;
        let mut stop = end;
        if let Some(m) = BLOCK.find(body) {
            start += m.end();
            if body.starts_with("#each") {
                // `{#each items as item, i (item.id)}`: only the list is an expression.
                match body[m.end()..].find(" as ") {
                    Some(k) => stop = start + k,
                    None => {
                        i = end + 1;
                        continue;
                    }
                }
            }
        } else if body.starts_with(['#', ':', '/', '@']) {
            // `{:else}`, `{/if}`, `{:then value}`: no expression.
            i = end + 1;
            continue;
        }
        let at = trimmed(text, start..stop);
        let expr = &text[at.clone()];
        if !expr.is_empty() {
            // What comes just before the tag: an attribute's name when the tag is its value.
            let mut before = i.saturating_sub(64).max(region.start);
            while !text.is_char_boundary(before) {
                before += 1;
            }
            if HANDLER.is_match(&text[before..i]) && is_path(expr) {
                handlers.push((at.start, expr));
            } else {
                kept.push(at.start..stop);
            }
        }
        i = end + 1;
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

/// The code blocks: Astro's frontmatter, then the top-level `<script>` blocks, those whose tag
/// starts a line, as a component's blocks do (a `<script>` inside the markup, as in Svelte's
/// `<svelte:head>`, is indented).
fn scripts(text: &str) -> impl Iterator<Item = Script> + '_ {
    // Attribute values may hold `>`: `<script setup lang="ts" generic="T extends Map<K, V>">`.
    static OPEN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?m)^<script\b((?:[^>"']|"[^"]*"|'[^']*')*)>"#).expect("a valid pattern")
    });
    let frontmatter = frontmatter(text);
    let mut from = frontmatter.as_ref().map_or(0, |f| f.block.end);
    frontmatter.into_iter().chain(std::iter::from_fn(move || {
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
    }))
}

/// Astro's frontmatter: TypeScript between a first line `---` and the next line `---`.
fn frontmatter(text: &str) -> Option<Script> {
    let first = text.split_inclusive('\n').next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let start = first.len();
    let mut at = start;
    for line in text[start..].split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some(Script {
                block: 0..at + line.trim_end().len(),
                code: start..at,
                lang: ScriptLang::TypeScript,
            });
        }
        at += line.len();
    }
    None
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
    fn the_templates_mask_keeps_each_expression_where_it_is_ended_by_a_semicolon() {
        let t = template(VUE, false);
        assert_eq!(t.masked.len(), VUE.len());
        assert_eq!(t.masked.lines().count(), VUE.lines().count());
        let at = VUE.find("greeting }}").expect("the interpolation");
        assert_eq!(&t.masked[at - 1..at + "greeting".len() + 2], " greeting ;");
        assert_eq!(t.masked.trim(), "greeting ;");
        assert!(t.handlers.is_empty());
    }

    #[test]
    fn an_mdx_pages_code_is_blanked_and_its_esm_kept_in_place() {
        let text = "import { Card } from '@acme/ui';\nexport const meta = {\n  title: 'A',\n};\n\n# Use `<Card>`\n\n````tsx\n<Tabs>{x()}</Tabs>\n```\n````\n\n<Card title=\"a\" />\n";
        let markup = mdx_markup(text);
        assert_eq!(markup.len(), text.len());
        assert_eq!(markup.lines().count(), text.lines().count());
        assert!(
            !markup.contains("Tabs") && !markup.contains("<Card>"),
            "{markup}"
        );
        assert!(markup.contains("<Card title"));
        let esm = mdx_esm(&markup);
        assert_eq!(esm.len(), text.len());
        assert!(esm.starts_with(
            "import { Card } from '@acme/ui';\nexport const meta = {\n  title: 'A',\n};\n"
        ));
        assert_eq!(esm[text.find("\n\n").expect("a blank line")..].trim(), "");
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
