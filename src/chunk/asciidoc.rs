//! AsciiDoc by section.
//!
//! A section title is a line of one to six `=`, a space and the title (`== Configuration`); the
//! number of `=` is its level. Each title starts a section that runs to the next one, with the
//! block attributes and anchors written right above it (`[[config]]`, `[#config]`); the symbol
//! is the title path, as for Markdown. Lines inside delimited blocks (listings between `----`,
//! examples between `====`, comments between `////`, ...) are never titles.

use super::Layout;
use super::sections::Sections;

pub(crate) fn layout(text: &str) -> Layout {
    let mut sections = Sections::default();
    let mut block: Option<&str> = None; // the delimiter of the open block
    let mut attributes: Option<usize> = None; // start of the attribute lines right above
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_end();
        if let Some(open) = block {
            if trimmed == open {
                block = None;
            }
            continue;
        }
        if is_delimiter(trimmed) {
            block = Some(trimmed);
            attributes = None;
            sections.text(start);
            continue;
        }
        if let Some((level, title)) = section_title(trimmed) {
            sections.heading(attributes.unwrap_or(start), level, title);
            attributes = None;
            continue;
        }
        attributes = if trimmed.starts_with('[') && trimmed.ends_with(']') {
            attributes.or(Some(start))
        } else {
            None
        };
        if !trimmed.is_empty() {
            sections.text(start);
        }
    }
    sections.finish(text.len())
}

/// `== Title` at the margin: (level, title).
fn section_title(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '=').count();
    let title = line[level..].strip_prefix(' ')?.trim();
    ((1..=6).contains(&level) && !title.is_empty()).then_some((level, title))
}

/// A line that opens or closes a delimited block: four or more of one of `-.=*_+/`, or the open
/// block's `--`.
fn is_delimiter(line: &str) -> bool {
    let Some(c) = line.chars().next() else {
        return false;
    };
    line == "--" || ("-.=*_+/".contains(c) && line.len() >= 4 && line.chars().all(|x| x == c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::sections::texts_and_symbols;

    fn spans(text: &str) -> Vec<(String, Option<String>)> {
        texts_and_symbols(text, &layout(text))
    }

    #[test]
    fn titles_nest_by_their_equals_signs_and_take_the_anchors_above() {
        let text = "\
= Server guide

Intro.

== Install

Steps.

[[config]]
== Configuration

=== Ports

Text.
";
        let got = spans(text);
        let symbols: Vec<Option<&str>> = got.iter().map(|(_, s)| s.as_deref()).collect();
        assert_eq!(
            symbols,
            [
                Some("Server guide"),
                Some("Server guide > Install"),
                Some("Server guide > Configuration"),
                Some("Server guide > Configuration > Ports"),
            ]
        );
        assert_eq!(got[1].0, "== Install\n\nSteps.");
        assert!(
            got[2].0.starts_with("[[config]]\n== Configuration"),
            "{got:#?}"
        );
    }

    #[test]
    fn lines_in_delimited_blocks_are_not_titles() {
        let text = "\
== Usage

[source,ruby]
----
== not a title
----

////
== nor this
////

====
An example.
====
";
        let got = spans(text);
        assert_eq!(got.len(), 1, "{got:#?}");
        assert_eq!(got[0].1.as_deref(), Some("Usage"));
    }
}
