//! AsciiDoc by section.
//!
//! A section title is a line of one to six `=`, a space and the title (`== Configuration`); the
//! number of `=` is its level. Each title starts a section that runs to the next one, with the
//! block attributes and anchors written right above it (`[[config]]`, `[#config]`); the symbol
//! is the title path, as for Markdown. Lines inside delimited blocks (listings between `----`,
//! examples between `====`, comments between `////`, ...) are never titles.

use super::{Layout, Span};

pub(crate) fn layout(text: &str) -> Layout {
    let mut spans = Vec::new();
    let mut path: Vec<(usize, String)> = Vec::new(); // (level, title)
    let mut current: Option<(usize, Option<String>)> = None; // (start, symbol)
    let mut block: Option<&str> = None; // the delimiter of the open block
    let mut attributes: Option<usize> = None; // start of the attribute lines right above
    let mut offset = 0;

    let close = |spans: &mut Vec<Span>, current: &mut Option<(usize, Option<String>)>, end| {
        if let Some((start, symbol)) = current.take()
            && start < end
        {
            spans.push(Span {
                start,
                end,
                symbol,
                kind: "section",
                defines: Vec::new(),
                parent: 0,
                mergeable: true,
            });
        }
    };

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
            if current.is_none() {
                current = Some((start, None));
            }
            continue;
        }
        if let Some((level, title)) = section_title(trimmed) {
            let start = attributes.unwrap_or(start);
            close(&mut spans, &mut current, start);
            path.retain(|(l, _)| *l < level);
            path.push((level, title.to_owned()));
            let symbol = path
                .iter()
                .map(|(_, t)| t.as_str())
                .collect::<Vec<_>>()
                .join(" > ");
            current = Some((start, Some(symbol)));
            attributes = None;
            continue;
        }
        attributes = if trimmed.starts_with('[') && trimmed.ends_with(']') {
            attributes.or(Some(start))
        } else {
            None
        };
        if current.is_none() && !trimmed.is_empty() {
            current = Some((start, None));
        }
    }
    close(&mut spans, &mut current, text.len());
    Layout {
        spans,
        containers: Vec::new(),
    }
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

    fn spans(text: &str) -> Vec<(String, Option<String>)> {
        layout(text)
            .spans
            .iter()
            .map(|s| (text[s.start..s.end].trim().to_owned(), s.symbol.clone()))
            .collect()
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
