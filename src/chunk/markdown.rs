//! Markdown by heading section.
//!
//! Each ATX (`## Title`) or setext (`Title` over `===`/`---`) heading starts a section that runs
//! to the next heading; the symbol is the heading path (`Install > Docker`). Headings inside
//! fenced code blocks are text, not headings. Front matter (`---` at the top) is its own span.
//!
//! A heading names its section as it reads, not as it is written ([`plain_title`]): a
//! README's `# Logrus <img alt=":walrus:" …> [![Build Status](https://…)](https://…)` is
//! `Logrus :walrus:`. Every
//! section's symbol starts with its document's title, and the symbol comes first in what is
//! embedded, so badge URLs there would take the model's 128 tokens from the section's own text.

use std::sync::LazyLock;

use regex::Regex;

use super::Layout;
use super::sections::Sections;

/// `<img … alt="x" …>`: its alt text.
static HTML_IMAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)<img\b[^>]*?\balt\s*=\s*["']([^"']*)["'][^>]*>"#).expect("a valid regex")
});
/// Another HTML tag of the kind headings carry, opening or closing. Named ones only, so that a
/// type's parameters (`Vec<T>`) and a component's tag (`<Button>`) stay.
static HTML_TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)</?(?:a|img|picture|source|br|hr|p|div|span|sup|sub|code|kbd|b|i|u|s|em|strong|small|big|font|center|details|summary|h[1-6])\b[^>]*>",
    )
    .expect("a valid regex")
});
/// An image, linked or not (a badge): dropped.
static MD_IMAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\[!\[[^\]]*\]\([^)]*\)\]\([^)]*\)|!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])")
        .expect("a valid regex")
});
/// A link, inline or by reference: its text.
static MD_LINK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])").expect("a valid regex"));

pub(crate) fn layout(text: &str) -> Layout {
    let mut sections = Sections::default();
    let mut fence: Option<(char, usize)> = None;
    let mut offset = 0;
    let mut prev_line: Option<(usize, &str)> = None; // (start, text) of the previous non-blank line
    let mut in_front_matter = false;

    for (n, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_end();
        if n == 0 && trimmed == "---" {
            in_front_matter = true;
            continue;
        }
        if in_front_matter {
            if trimmed == "---" || trimmed == "..." {
                in_front_matter = false;
            }
            continue;
        }
        if let Some(marker) = fence_marker(trimmed) {
            match fence {
                None => fence = Some(marker),
                Some((c, len))
                    if marker.0 == c
                        && marker.1 >= len
                        && trimmed.trim_start().len() == marker.1 =>
                {
                    fence = None
                }
                Some(_) => {}
            }
            prev_line = None;
            continue;
        }
        if fence.is_some() {
            continue;
        }
        let heading = if let Some((level, title)) = atx_heading(trimmed) {
            Some((start, level, title))
        } else if let (Some((prev_start, prev)), Some(level)) = (prev_line, setext_level(trimmed)) {
            Some((prev_start, level, prev.trim().to_owned()))
        } else {
            None
        };
        if let Some((heading_start, level, title)) = heading {
            sections.heading(heading_start, level, &plain_title(&title));
            prev_line = None;
            continue;
        }
        sections.text(start);
        prev_line = if trimmed.trim().is_empty() || is_list_or_block(trimmed) {
            None
        } else {
            Some((start, trimmed))
        };
    }
    sections.finish(text.len())
}

fn fence_marker(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start();
    if line.len() - t.len() > 3 {
        return None;
    }
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = t.chars().take_while(|x| *x == c).count();
    (len >= 3).then_some((c, len))
}

fn atx_heading(line: &str) -> Option<(usize, String)> {
    let t = line.trim_start();
    if line.len() - t.len() > 3 {
        return None;
    }
    let level = t.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &t[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let title = rest.trim().trim_end_matches('#').trim().to_owned();
    Some((level, title))
}

/// A heading as it reads: links as their text, an HTML image as its alt text, badges and other
/// images and tags dropped, spaces collapsed. A heading of nothing else keeps what it had.
fn plain_title(title: &str) -> String {
    if !title.contains(['<', '[']) {
        return title.to_owned();
    }
    let text = HTML_IMAGE.replace_all(title, " $1 ");
    let text = HTML_TAG.replace_all(&text, " ");
    let text = MD_IMAGE.replace_all(&text, " ");
    let text = MD_LINK.replace_all(&text, "$1");
    let plain = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if plain.is_empty() {
        title.to_owned()
    } else {
        plain
    }
}

fn setext_level(line: &str) -> Option<usize> {
    let t = line.trim();
    if t.len() >= 2 && t.chars().all(|c| c == '=') {
        Some(1)
    } else if t.len() >= 2 && t.chars().all(|c| c == '-') {
        Some(2)
    } else {
        None
    }
}

fn is_list_or_block(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with(['-', '*', '+', '>', '|'])
        || t.split_once(". ")
            .is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_name_their_sections_as_they_read() {
        for (written, read) in [
            (
                r#"Logrus <img src="http://i.imgur.com/hTeVwmJ.png" width="40" height="40" alt=":walrus:" class="emoji" title=":walrus:"/> [![Build Status](https://github.com/sirupsen/logrus/workflows/CI/badge.svg)](https://github.com/sirupsen/logrus/actions?query=workflow%3ACI) [![Go Reference](https://pkg.go.dev/badge/github.com/sirupsen/logrus.svg)](https://pkg.go.dev/github.com/sirupsen/logrus)"#,
                "Logrus :walrus:",
            ),
            (
                r#"<img alt="chi" src="https://cdn.rawgit.com/go-chi/chi/master/_examples/chi.svg" width="220" />"#,
                "chi",
            ),
            (
                "[1.56.0](https://github.com/casey/just/releases/tag/1.56.0) - 2026-07-09",
                "1.56.0 - 2026-07-09",
            ),
            (
                "Using [`Router.With`][with] and <code>Use</code>",
                "Using `Router.With` and Use",
            ),
            (
                "`impl<T> From<Vec<T>>` for <Button>",
                "`impl<T> From<Vec<T>>` for <Button>",
            ),
            ("![logo](logo.svg)", "![logo](logo.svg)"),
            ("Install > Docker [beta]", "Install > Docker [beta]"),
            ("Plain title", "Plain title"),
        ] {
            assert_eq!(plain_title(written), read, "{written}");
        }
        let text = "# Logrus [![CI](https://x/badge.svg)](https://x)\n\nIntro.\n\n## Hooks\n\nAdd hooks.\n";
        let symbols: Vec<_> = layout(text).spans.into_iter().map(|s| s.symbol).collect();
        assert_eq!(
            symbols,
            [Some("Logrus".to_owned()), Some("Logrus > Hooks".to_owned())]
        );
    }
}
