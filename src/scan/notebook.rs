//! Jupyter notebooks (`.ipynb`) as the code and prose of their cells, line for line.
//!
//! A notebook is JSON: its cells' sources, and their outputs (tables, plots as base64 images,
//! HTML), which are often most of its bytes. What is indexed is the cells' text, written on the
//! very lines of the file that hold it: Jupyter, JupyterLab, VS Code and Colab write each line of
//! a cell's source as one JSON string on a line of its own, so the line of `"    x = f(y)\n",`
//! becomes `    x = f(y)` and every other line of the file (the JSON around the cells, the
//! outputs) becomes empty. Chunks, definitions and call sites then carry the notebook's own line
//! numbers, and an agent that opens the file finds them there.
//!
//! The text reads as a Python script in the percent format of Jupytext and VS Code: each cell
//! starts with `# %%` (`# %% [markdown]` for prose) on its `"source"` line, and prose is
//! commented (`# ## Training loop`), so code cells are parsed, chunked and cross-referenced as
//! Python when the notebook's kernel speaks it ([`language`]), and by size otherwise. The
//! first line names the kernel's language.

use serde_json::Value;

/// The first line of a notebook's text, before the kernel's language in brackets.
const HEADER: &str = "# Jupyter notebook (";

/// The language of a notebook's cells, from the first line of its text ([`cells_text`]), if
/// it is one.
pub fn language(text: &str) -> Option<&str> {
    let first = text.lines().next()?;
    first.strip_prefix(HEADER)?.strip_suffix(')')
}

/// The text of a notebook's cells on the lines of the file that hold them ([`self`]), or why it
/// cannot be read so: JSON that does not parse, no `cells` list, or a layout that puts two
/// lines of a cell's source on one line of the file (a notebook written without indentation,
/// or a cell's source as one string of several lines), where line numbers could not be kept.
pub fn cells_text(raw: &str) -> Result<String, String> {
    let notebook: Value = serde_json::from_str(raw).map_err(|e| format!("not JSON: {e}"))?;
    let cells = notebook
        .get("cells")
        .and_then(Value::as_array)
        .ok_or("no list of cells (nbformat 4)")?;
    let lines = source_lines(raw.as_bytes()).ok_or("its JSON could not be followed")?;
    if lines.len() != cells.len() {
        return Err("its cells could not be found".to_owned());
    }
    let metadata = notebook.get("metadata");
    let kernel = metadata
        .and_then(|m| m.pointer("/kernelspec/language"))
        .or_else(|| metadata.and_then(|m| m.pointer("/language_info/name")))
        .and_then(Value::as_str)
        .unwrap_or("python")
        .to_ascii_lowercase();

    let mut out: Vec<String> = vec![String::new(); raw.lines().count().max(1)];
    let mut put = |line: usize, text: String| -> Result<(), String> {
        match out.get_mut(line) {
            Some(slot) if slot.is_empty() => {
                *slot = text;
                Ok(())
            }
            _ => Err(format!(
                "two lines of its cells on line {} of the file",
                line + 1
            )),
        }
    };
    put(0, format!("{HEADER}{kernel})"))?;
    for (cell, (key_line, element_lines)) in cells.iter().zip(lines) {
        let kind = cell
            .get("cell_type")
            .and_then(Value::as_str)
            .unwrap_or("code");
        let source: Vec<&str> = match cell.get("source") {
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if source.len() != element_lines.len() {
            return Err("its cells could not be found".to_owned());
        }
        if !source.is_empty() && !element_lines.contains(&key_line) {
            let marker = match kind {
                "code" => "# %%".to_owned(),
                other => format!("# %% [{other}]"),
            };
            put(key_line, marker)?;
        }
        for (text, line) in source.into_iter().zip(element_lines) {
            let text = text.strip_suffix('\n').unwrap_or(text);
            let text = text.strip_suffix('\r').unwrap_or(text);
            if text.contains('\n') {
                return Err(format!(
                    "a cell's source holds several lines in one string (line {} of the file)",
                    line + 1
                ));
            }
            let text = match kind {
                "code" => text.to_owned(),
                _ if text.is_empty() => "#".to_owned(),
                _ => format!("# {text}"),
            };
            put(line, text)?;
        }
    }
    let mut text = out.join("\n");
    if raw.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// For each cell of the notebook, in order, the line (from 0) of its `"source"` key and the
/// line of each string of its source: found by walking the JSON's bytes, which serde does not
/// report positions for. `None` when the JSON is not as expected (it was parsed already, so
/// this does not happen to valid JSON).
fn source_lines(json: &[u8]) -> Option<Vec<(usize, Vec<usize>)>> {
    let mut r = Walker {
        json,
        pos: 0,
        line: 0,
    };
    let mut cells = Vec::new();
    r.object(|r, key| {
        if key != b"cells" {
            return r.skip_value();
        }
        r.array(|r| {
            let mut found = (r.line, Vec::new());
            r.object(|r, key| {
                if key != b"source" {
                    return r.skip_value();
                }
                found.0 = r.line;
                r.space();
                if r.peek()? == b'[' {
                    r.array(|r| {
                        found.1.push(r.line);
                        r.skip_value()
                    })
                } else {
                    found.1.push(r.line);
                    r.skip_value()
                }
            })?;
            cells.push(found);
            Some(())
        })
    })?;
    Some(cells)
}

/// A cursor over JSON that knows its line. JSON strings hold no raw line breaks, so every
/// line break it passes is whitespace between tokens.
struct Walker<'a> {
    json: &'a [u8],
    pos: usize,
    line: usize,
}

impl Walker<'_> {
    fn peek(&self) -> Option<u8> {
        self.json.get(self.pos).copied()
    }

    fn space(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => break,
            }
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.space();
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    /// The raw bytes of a string, between its quotes.
    fn string(&mut self) -> Option<&[u8]> {
        self.expect(b'"')?;
        let start = self.pos;
        loop {
            match self.peek()? {
                b'"' => break,
                b'\\' => self.pos += 2,
                _ => self.pos += 1,
            }
        }
        let end = self.pos;
        self.pos += 1;
        self.json.get(start..end)
    }

    /// An object, calling `member` with each key once the cursor is after its colon.
    fn object(&mut self, mut member: impl FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
        self.sequence(b'{', b'}', |r| {
            let key = r.string()?.to_vec();
            r.expect(b':')?;
            member(r, &key)
        })
    }

    /// An array, calling `element` with the cursor before each element.
    fn array(&mut self, element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.sequence(b'[', b']', element)
    }

    /// Items between `open` and `close`, separated by commas, each read by `item` with the
    /// cursor before it.
    fn sequence(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.expect(open)?;
        self.space();
        if self.peek()? == close {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.space();
            item(self)?;
            self.space();
            match self.peek()? {
                b',' => self.pos += 1,
                b if b == close => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn skip_value(&mut self) -> Option<()> {
        self.space();
        match self.peek()? {
            b'{' => self.object(|r, _| r.skip_value()),
            b'[' => self.array(Self::skip_value),
            b'"' => self.string().map(|_| ()),
            _ => {
                // A number, true, false or null.
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace() {
                        break;
                    }
                    self.pos += 1;
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTEBOOK: &str = r###"{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {},
   "source": [
    "## Bigrams\n",
    "\n",
    "Counts of \"pairs\"."
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "metadata": {},
   "outputs": [
    {
     "data": {
      "image/png": "iVBORw0KGgo=",
      "text/plain": [
       "<Figure>"
      ]
     },
     "output_type": "display_data"
    }
   ],
   "source": [
    "def counts(words):\n",
    "    return {w: 1 for w in words}\n",
    "\n",
    "N = counts(words)  # \u00e9"
   ]
  },
  {
   "cell_type": "code",
   "metadata": {},
   "outputs": [],
   "source": "plt.show()"
  },
  {
   "cell_type": "code",
   "metadata": {},
   "outputs": [],
   "source": []
  }
 ],
 "metadata": {
  "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
 },
 "nbformat": 4,
 "nbformat_minor": 4
}
"###;

    #[test]
    fn a_notebooks_cells_are_written_on_their_own_lines() {
        let text = cells_text(NOTEBOOK).expect("read");
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines.len(), NOTEBOOK.split('\n').count());
        assert_eq!(language(&text), Some("python"));
        let kept: Vec<(usize, &str)> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.is_empty())
            .map(|(i, l)| (i + 1, *l))
            .collect();
        assert_eq!(
            kept,
            [
                (1, "# Jupyter notebook (python)"),
                (6, "# %% [markdown]"),
                (7, "# ## Bigrams"),
                (8, "#"),
                (9, "# Counts of \"pairs\"."),
                (27, "# %%"),
                (28, "def counts(words):"),
                (29, "    return {w: 1 for w in words}"),
                (31, "N = counts(words)  # é"),
                (38, "plt.show()"),
            ]
        );
    }

    #[test]
    fn a_notebook_whose_lines_cannot_be_kept_says_why() {
        let one_line: String = NOTEBOOK.split('\n').map(str::trim).collect();
        let err = cells_text(&one_line).expect_err("one line");
        assert!(err.starts_with("two lines of its cells on line 1"), "{err}");
        let joined = NOTEBOOK.replace(
            "\"source\": \"plt.show()\"",
            "\"source\": \"plt.plot(x)\\nplt.show()\"",
        );
        let err = cells_text(&joined).expect_err("joined");
        assert!(
            err.contains("several lines in one string (line 38"),
            "{err}"
        );
        assert!(cells_text("{\"cells\": 3}").is_err());
        assert!(
            cells_text("not json")
                .expect_err("json")
                .starts_with("not JSON")
        );
        // The language of a notebook's text, and of any other text.
        assert_eq!(language("# Jupyter notebook (r)\n\nx <- 1"), Some("r"));
        assert_eq!(language("import os\n"), None);
    }
}
