//! reStructuredText by section.
//!
//! A section title is a line of text with an underline, and optionally an overline, of one
//! punctuation character repeated (`Title` over `=====`). Title levels are not fixed by the
//! character: as in docutils, each adornment style (character, and whether it has an overline)
//! gets the next level the first time it appears. Each title starts a section that runs to the
//! next one, with the link targets (`.. _name:`) right above it; the symbol is the title path
//! (`User Guide > Sessions`), as for Markdown. Indented lines (literal blocks, directives'
//! bodies) are never titles, and neither is a transition (an adornment line between blank
//! lines).

use super::Layout;
use super::sections::Sections;

pub(crate) fn layout(text: &str) -> Layout {
    let mut lines = Vec::new(); // (start, line without its end)
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        lines.push((offset, line.trim_end()));
        offset += line.len();
    }

    let mut sections = Sections::default();
    let mut styles: Vec<(char, bool)> = Vec::new(); // adornment styles, in order of first use
    let mut i = 0;
    while i < lines.len() {
        let Some(title) = title_at(&lines, i) else {
            if !lines[i].1.is_empty() {
                sections.text(lines[i].0);
            }
            i += 1;
            continue;
        };
        let level = match styles.iter().position(|s| *s == title.style) {
            Some(level) => level,
            None => {
                styles.push(title.style);
                styles.len() - 1
            }
        };
        sections.heading(
            lines[labels_above(&lines, title.first)].0,
            level,
            title.text,
        );
        i = title.last + 1;
    }
    sections.finish(text.len())
}

struct Title<'a> {
    /// The first line of the title: its overline, or the text.
    first: usize,
    /// The underline.
    last: usize,
    text: &'a str,
    /// The adornment character, and whether the title has an overline.
    style: (char, bool),
}

/// The section title starting at line `i`, if one does.
fn title_at<'a>(lines: &[(usize, &'a str)], i: usize) -> Option<Title<'a>> {
    let line = |k: usize| lines.get(k).map(|(_, l)| *l);
    // Overline, text, underline of the same character; the text may be inset.
    if let Some(c) = adornment(line(i)?)
        && let (Some(text), Some(under)) = (line(i + 1), line(i + 2))
        && !text.trim().is_empty()
        && adornment(text).is_none()
        && adornment(under) == Some(c)
    {
        return Some(Title {
            first: i,
            last: i + 2,
            text: text.trim(),
            style: (c, true),
        });
    }
    // Text at the margin, then its underline: as long as the text, or of four characters at
    // least (docutils reads a shorter one under a longer text as part of the paragraph).
    let text = line(i)?;
    let under = line(i + 1)?;
    let c = adornment(under)?;
    let starts_at_margin = !text.starts_with([' ', '\t']);
    let long_enough = under.len() >= text.chars().count().min(4);
    (starts_at_margin && long_enough && !text.is_empty() && adornment(text).is_none()).then(|| {
        Title {
            first: i,
            last: i + 1,
            text: text.trim(),
            style: (c, false),
        }
    })
}

/// The first line of the link targets (`.. _sessions:`) right above line `first`, blank lines
/// between them allowed: they name the section below, so they start it. `first` without any.
fn labels_above(lines: &[(usize, &str)], first: usize) -> usize {
    let mut start = first;
    for k in (0..first).rev() {
        match lines[k].1 {
            "" => {}
            l if l.starts_with(".. _") && l.ends_with(':') => start = k,
            _ => break,
        }
    }
    start
}

/// The character of an adornment line: at least three of one punctuation character from the
/// margin, nothing else.
fn adornment(line: &str) -> Option<char> {
    let c = line.chars().next()?;
    let is_punctuation = c.is_ascii_punctuation();
    (is_punctuation && line.len() >= 3 && line.chars().all(|x| x == c)).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::sections::texts_and_symbols;

    fn symbols(text: &str) -> Vec<(String, Option<String>)> {
        texts_and_symbols(text, &layout(text))
    }

    #[test]
    fn each_adornment_style_is_a_level_in_order_of_first_use() {
        let text = "\
=========
Reference
=========

Intro.

Sessions
--------

Text.

.. _cookies:

Cookies
~~~~~~~

More.

Adapters
--------

Last.
";
        let spans = symbols(text);
        assert_eq!(spans[1].0, "Sessions\n--------\n\nText.");
        assert!(spans[2].0.starts_with(".. _cookies:"), "{spans:#?}");
        let got: Vec<Option<String>> = spans.into_iter().map(|(_, s)| s).collect();
        assert_eq!(
            got,
            [
                Some("Reference".to_owned()),
                Some("Reference > Sessions".to_owned()),
                Some("Reference > Sessions > Cookies".to_owned()),
                Some("Reference > Adapters".to_owned()),
            ]
        );
    }

    #[test]
    fn literal_blocks_transitions_and_tables_are_not_titles() {
        let text = "\
.. _usage:

Usage
=====

Run it::

    title in a block
    ----------------

Before a transition.

----------

A paragraph whose last line is followed by a short rule
***

=====  =====
col a  col b
=====  =====
";
        let got = symbols(text);
        assert_eq!(got.len(), 1, "{got:#?}");
        assert_eq!(got[0].1.as_deref(), Some("Usage"));
        assert!(got[0].0.starts_with(".. _usage:\n\nUsage\n"), "{got:#?}");
        assert!(got[0].0.ends_with("col a  col b\n=====  ====="), "{got:#?}");
    }
}
