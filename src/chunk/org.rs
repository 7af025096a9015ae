//! Org by heading.
//!
//! A heading is a line of one or more `*` at the margin, a space and the title (`** Install`);
//! the number of stars is its level. Each heading starts a section that runs to the next one;
//! the symbol is the heading path, as for Markdown, and a document's `#+TITLE:` above the first
//! heading is the outermost part of it (`Magit User Manual > Installation`). A title is read as
//! a person would name the section: without the `TODO`/`DONE` keyword, the `COMMENT` marker,
//! the priority cookie (`[#A]`) and the trailing tags (`:noexport:`). Lines inside blocks
//! (`#+begin_src` ... `#+end_src`, `#+begin_example`, dynamic blocks `#+BEGIN:` ... `#+END:`)
//! are never headings.

use super::Layout;
use super::sections::Sections;

pub(crate) fn layout(text: &str) -> Layout {
    let mut sections = Sections::default();
    // Every line that could close a block, lowercased, and where it starts: a block that is
    // never closed is not one (its first line is text), as Org reads it.
    let mut ends: Vec<(usize, String)> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let lower = line.trim().to_ascii_lowercase();
        if lower.starts_with("#+end") {
            ends.push((at, lower));
        }
        at += line.len();
    }
    let mut block: Option<String> = None; // the line that closes the open block, lowercased
    let mut headed = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim();
        let lower = trimmed.to_ascii_lowercase();
        if let Some(end) = &block {
            if lower == *end {
                block = None;
            }
            continue;
        }
        if let Some(end) = block_end(&lower)
            && ends.iter().any(|(at, e)| *at > start && *e == end)
        {
            block = Some(end);
            sections.text(start);
            continue;
        }
        if let Some((level, title)) = heading(line.trim_end()) {
            sections.heading(start, level, title);
            headed = true;
            continue;
        }
        if !headed && let Some(title) = document_title(trimmed) {
            sections.heading(start, 0, title);
            continue;
        }
        if !trimmed.is_empty() {
            sections.text(start);
        }
    }
    sections.finish(text.len())
}

/// The line that closes the block a (trimmed, lowercased) line opens: `#+end_src` for
/// `#+begin_src emacs-lisp`, `#+end:` for a dynamic block's `#+begin: clocktable`.
fn block_end(lower: &str) -> Option<String> {
    let rest = lower.strip_prefix("#+begin")?;
    if rest.starts_with(':') {
        return Some("#+end:".to_owned());
    }
    let name = rest.strip_prefix('_')?.split_whitespace().next()?;
    Some(format!("#+end_{name}"))
}

/// `** Title` at the margin: (level, title as a person would name it).
fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|b| *b == b'*').count();
    if level == 0 {
        return None;
    }
    let mut title = line[level..].strip_prefix(' ')?.trim();
    // In Org's order: the keyword, the priority cookie, the COMMENT marker.
    for keyword in ["TODO ", "DONE "] {
        title = title.strip_prefix(keyword).unwrap_or(title).trim_start();
    }
    if let Some(rest) = title.strip_prefix("[#")
        && let Some((cookie, rest)) = rest.split_once(']')
        && cookie.len() == 1
    {
        title = rest.trim_start();
    }
    title = title.strip_prefix("COMMENT ").unwrap_or(title).trim_start();
    if let Some((head, tags)) = title.rsplit_once(char::is_whitespace)
        && tags.len() > 2
        && tags.starts_with(':')
        && tags.ends_with(':')
        && !tags.contains("::")
        && tags[1..tags.len() - 1]
            .split(':')
            .all(|t| !t.is_empty() && t.chars().all(|c| c.is_alphanumeric() || "_@#%".contains(c)))
    {
        title = head.trim_end();
    }
    (!title.is_empty()).then_some((level, title))
}

/// The document's title, from a `#+TITLE:` line.
fn document_title(line: &str) -> Option<&str> {
    let (key, value) = line.split_once(':')?;
    let title = value.trim();
    (key.eq_ignore_ascii_case("#+title") && !title.is_empty()).then_some(title)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::sections::texts_and_symbols;

    fn spans(text: &str) -> Vec<(String, Option<String>)> {
        texts_and_symbols(text, &layout(text))
    }

    #[test]
    fn headings_nest_by_their_stars_under_the_document_title() {
        let text = "\
#+TITLE: Server Guide
#+AUTHOR: Someone

Intro.

* Install

Steps.

** TODO [#A] From source                                   :build:unix:

Make it.

* Configuration
:PROPERTIES:
:CUSTOM_ID: config
:END:

Text with *bold* words.
";
        let got = spans(text);
        let symbols: Vec<Option<&str>> = got.iter().map(|(_, s)| s.as_deref()).collect();
        assert_eq!(
            symbols,
            [
                Some("Server Guide"),
                Some("Server Guide > Install"),
                Some("Server Guide > Install > From source"),
                Some("Server Guide > Configuration"),
            ]
        );
        assert_eq!(got[1].0, "* Install\n\nSteps.");
        assert!(got[3].0.ends_with("Text with *bold* words."), "{got:#?}");
    }

    #[test]
    fn lines_in_blocks_are_not_headings() {
        let text = "\
* Usage

#+begin_src org
* not a heading
#+end_src

#+BEGIN_EXAMPLE
** nor this
#+END_EXAMPLE

#+BEGIN: clocktable :scope file
* nor this
#+END:

*bold* at the margin is not one either.
";
        let got = spans(text);
        assert_eq!(got.len(), 1, "{got:#?}");
        assert_eq!(got[0].1.as_deref(), Some("Usage"));
    }

    #[test]
    fn a_block_never_closed_does_not_hide_the_headings_below() {
        let text = "\
* Usage

#+begin_src sh
make

* Install

Steps.
";
        let symbols: Vec<Option<String>> = spans(text).into_iter().map(|(_, s)| s).collect();
        assert_eq!(symbols, [Some("Usage".into()), Some("Install".into())]);
    }

    #[test]
    fn a_title_keeps_words_that_only_look_like_tags_or_keywords() {
        assert_eq!(heading("* TODOs and notes"), Some((1, "TODOs and notes")));
        assert_eq!(heading("* Use a::b paths"), Some((1, "Use a::b paths")));
        assert_eq!(heading("*** COMMENT Tasks  :noexport:"), Some((3, "Tasks")));
        assert_eq!(
            heading("** DONE [#B] COMMENT Old plan :a:b:"),
            Some((2, "Old plan"))
        );
        assert_eq!(heading("**bold**"), None);
        assert_eq!(heading("* "), None);
    }
}
