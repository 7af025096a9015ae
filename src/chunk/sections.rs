//! Headed prose (Markdown, reStructuredText, AsciiDoc, Org) as spans: each heading starts a
//! section that runs to the next heading, and its symbol is the heading path (`Install >
//! Docker`).

use super::{Layout, Span};

/// Collects a document's sections as its headings are found, in order.
#[derive(Default)]
pub(crate) struct Sections {
    spans: Vec<Span>,
    /// The open headings: (level, title), outermost first.
    path: Vec<(usize, String)>,
    /// The section being read: where it starts, and its heading path.
    current: Option<(usize, Option<String>)>,
}

impl Sections {
    /// Text at `start`: it opens an untitled section when no section is open (text above the
    /// first heading).
    pub fn text(&mut self, start: usize) {
        self.current.get_or_insert((start, None));
    }

    /// A heading of `level` (smaller is outer) starting at `start`: it ends the open section
    /// and starts its own, below the open headings of a smaller level.
    pub fn heading(&mut self, start: usize, level: usize, title: &str) {
        self.close(start);
        self.path.retain(|(l, _)| *l < level);
        self.path.push((level, title.to_owned()));
        let symbol = self
            .path
            .iter()
            .map(|(_, t)| t.as_str())
            .collect::<Vec<_>>()
            .join(" > ");
        self.current = Some((start, Some(symbol)));
    }

    /// The sections, the last one ending at `end` (the text's length).
    pub fn finish(mut self, end: usize) -> Layout {
        self.close(end);
        Layout {
            spans: self.spans,
            containers: Vec::new(),
        }
    }

    fn close(&mut self, end: usize) {
        if let Some((start, symbol)) = self.current.take()
            && start < end
        {
            self.spans.push(Span {
                start,
                end,
                symbol,
                kind: "section",
                defines: Vec::new(),
                parent: 0,
                mergeable: true,
            });
        }
    }
}

/// Each section's text (trimmed) and symbol, for the prose chunkers' tests.
#[cfg(test)]
pub(crate) fn texts_and_symbols(text: &str, layout: &Layout) -> Vec<(String, Option<String>)> {
    layout
        .spans
        .iter()
        .map(|s| (text[s.start..s.end].trim().to_owned(), s.symbol.clone()))
        .collect()
}
