//! The language-independent half of chunking: glue between spans, splitting what is too
//! large, merging what is too small, and line numbers.

use super::{Chunk, ChunkOptions, Layout, Span};

fn chars(text: &str, start: usize, end: usize) -> usize {
    text[start..end].chars().count()
}

/// Sorts the spans and covers the text between them with glue spans (imports, top-level
/// statements, class fields), named after the innermost container they sit in.
pub(crate) fn fill_gaps(text: &str, layout: Layout) -> Vec<Span> {
    let Layout {
        mut spans,
        containers,
    } = layout;
    spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let mut out: Vec<Span> = Vec::with_capacity(spans.len() * 2 + 1);
    let mut pos = 0;
    let push_glue = |out: &mut Vec<Span>, start: usize, end: usize| {
        if start >= end || text[start..end].trim().is_empty() {
            return;
        }
        // Innermost container holding the gap: the one that starts last.
        let container = containers
            .iter()
            .filter(|c| c.start <= start && end <= c.end)
            .max_by_key(|c| c.start);
        out.push(Span {
            start,
            end,
            symbol: container.and_then(|c| c.symbol.clone()),
            kind: "code",
            // The glue that opens a container (a large class's header) is its definition.
            defines: container
                .filter(|c| c.start == start && c.defines)
                .and_then(|c| c.symbol.clone())
                .into_iter()
                .collect(),
            parent: container.map_or(0, |c| c.id),
            mergeable: true,
        });
    };
    for span in spans {
        if span.end <= pos {
            continue; // nested in a span already taken
        }
        let start = span.start.max(pos);
        // A container member can start mid-glue: split the glue at container edges.
        let mut edges: Vec<usize> = containers
            .iter()
            .flat_map(|c| [c.start, c.end])
            .filter(|&e| pos < e && e < start)
            .collect();
        edges.sort_unstable();
        edges.dedup();
        let mut from = pos;
        for e in edges {
            push_glue(&mut out, from, e);
            from = e;
        }
        push_glue(&mut out, from, start);
        pos = span.end;
        out.push(Span { start, ..span });
    }
    let mut edges: Vec<usize> = containers
        .iter()
        .flat_map(|c| [c.start, c.end])
        .filter(|&e| pos < e && e < text.len())
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let mut from = pos;
    for e in edges {
        push_glue(&mut out, from, e);
        from = e;
    }
    push_glue(&mut out, from, text.len());
    out
}

/// Cuts every span larger than `max_chars` into overlapping pieces on line boundaries.
pub(crate) fn split_large(text: &str, mut spans: Vec<Span>, opts: &ChunkOptions) -> Vec<Span> {
    with_indentation(text, &mut spans);
    let mut out = Vec::with_capacity(spans.len());
    for span in spans {
        if chars(text, span.start, span.end) <= opts.max_chars {
            out.push(span);
            continue;
        }
        for (i, (start, end)) in split_range(text, span.start, span.end, opts)
            .into_iter()
            .enumerate()
        {
            out.push(Span {
                start,
                end,
                mergeable: false,
                // The definition starts in the first piece.
                defines: if i == 0 {
                    span.defines.clone()
                } else {
                    Vec::new()
                },
                ..span.clone()
            });
        }
    }
    out
}

/// Starts each span that only white space precedes on its line (an indented method) at the
/// start of that line, as its chunk will start ([`to_chunks`] keeps the first line's
/// indentation), so that sizes are measured on what the chunk holds. The span before gives up
/// that white space.
fn with_indentation(text: &str, spans: &mut [Span]) {
    let lines = line_starts(text);
    for i in 0..spans.len() {
        let start = spans[i].start;
        let line_start = lines[line_of(&lines, start)];
        if line_start == start || !text[line_start..start].trim().is_empty() {
            continue;
        }
        if i > 0 && spans[i - 1].end > line_start {
            if spans[i - 1].start >= line_start {
                continue; // the span before starts on this line too
            }
            spans[i - 1].end = line_start;
        }
        spans[i].start = line_start;
    }
}

/// Line-aligned pieces of `text[start..end]`, each at most `max_chars` long, consecutive pieces
/// sharing up to `overlap_chars` of whole lines. A single line longer than the limit is cut
/// at character boundaries.
pub(crate) fn split_range(
    text: &str,
    start: usize,
    end: usize,
    opts: &ChunkOptions,
) -> Vec<(usize, usize)> {
    let max = opts.max_chars;
    let mut lines: Vec<(usize, usize, usize)> = Vec::new(); // (start, end, chars)
    let mut s = start;
    for piece in text[start..end].split_inclusive('\n') {
        let e = s + piece.len();
        lines.push((s, e, piece.chars().count()));
        s = e;
    }
    let mut pieces = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut j = i;
        let mut total = 0;
        while j < lines.len() && (j == i || total + lines[j].2 <= max) {
            total += lines[j].2;
            j += 1;
        }
        if j == i + 1 && lines[i].2 > max {
            pieces.extend(split_line(text, lines[i].0, lines[i].1, opts));
            i = j;
            continue;
        }
        pieces.push((lines[i].0, lines[j - 1].1));
        if j >= lines.len() {
            break;
        }
        // Step back over whole lines that fit in the overlap, always moving forward.
        let mut k = j;
        let mut overlap = 0;
        while k - 1 > i && overlap + lines[k - 1].2 <= opts.overlap_chars {
            k -= 1;
            overlap += lines[k].2;
        }
        i = k;
    }
    pieces
}

fn split_line(text: &str, start: usize, end: usize, opts: &ChunkOptions) -> Vec<(usize, usize)> {
    let bounds: Vec<usize> = text[start..end]
        .char_indices()
        .map(|(i, _)| start + i)
        .chain(std::iter::once(end))
        .collect();
    let n = bounds.len() - 1; // characters
    let step = opts.max_chars - opts.overlap_chars;
    let mut out = Vec::new();
    let mut c = 0;
    while c < n {
        let stop = (c + opts.max_chars).min(n);
        out.push((bounds[c], bounds[stop]));
        if stop == n {
            break;
        }
        c += step;
    }
    out
}

/// Merges neighbouring spans of one parent while one of them is smaller than `min_chars` and
/// the result fits in `max_chars`.
pub(crate) fn merge_small(text: &str, spans: Vec<Span>, opts: &ChunkOptions) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        // A container's closing `}` (or `]);`, or `}  // namespace detail`) joins what comes
        // before it, even a definition too large to merge with: alone it is a chunk that says
        // nothing.
        if closing_only(&text[span.start..span.end]) && join_closing(text, &mut out, &span, opts) {
            continue;
        }
        if let Some(last) = out.last_mut() {
            let fits = chars(text, last.start, span.end) <= opts.max_chars;
            let small = chars(text, last.start, last.end) < opts.min_chars
                || chars(text, span.start, span.end) < opts.min_chars;
            if last.mergeable && span.mergeable && last.parent == span.parent && fits && small {
                // Glue (imports, a class header) takes the name of the definition it joins;
                // a component's markup takes the kind of the code it joins, and never names it.
                let takes_over = match (last.kind, span.kind) {
                    (_, "markup") => false,
                    ("markup", _) => true,
                    (kind, _) => (last.symbol.is_none() || kind == "code") && span.kind != "code",
                };
                if takes_over {
                    last.symbol = span.symbol;
                    last.kind = span.kind;
                }
                last.defines.extend(span.defines);
                last.end = span.end;
                continue;
            }
        }
        out.push(span);
    }
    out
}

/// Whether `text` is closing punctuation (or a component's `</script>`), with or without
/// comments: nothing a search could match. A comment alone is not (it can say something).
fn closing_only(text: &str) -> bool {
    let mut rest = text;
    let mut punctuation = false;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("</script>") {
            // A component's script ends with its last definition.
            punctuation = true;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("//") {
            rest = r.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, after)| after);
        } else {
            match rest.chars().next() {
                None => return punctuation,
                Some(c) if c.is_alphanumeric() || c == '_' || c == '"' || c == '\'' => {
                    return false;
                }
                Some(c) => {
                    punctuation = true;
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
    }
}

/// Joins a closing-only span to the span before it: at once when the two fit in `max_chars`,
/// or, after the last piece of a split definition, by starting that piece later, within its
/// overlap with the piece before it (so no line goes uncovered). False when neither works.
fn join_closing(text: &str, out: &mut [Span], span: &Span, opts: &ChunkOptions) -> bool {
    let (before_end, last) = match out {
        [.., before, last] => (Some(before.end), last),
        [last] => (None, last),
        [] => return false,
    };
    if chars(text, last.start, span.end) <= opts.max_chars {
        last.end = span.end;
        return true;
    }
    let Some(before_end) = before_end.filter(|_| !last.mergeable) else {
        return false;
    };
    let mut start = last.start;
    while chars(text, start, span.end) > opts.max_chars {
        match text[start..last.end].find('\n') {
            Some(i) if start + i < before_end => start += i + 1,
            _ => return false,
        }
    }
    last.start = start;
    last.end = span.end;
    true
}

/// The byte offset each line of `text` starts at.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// The index of the line (in `starts`, from [`line_starts`]) that holds `byte`.
fn line_of(starts: &[usize], byte: usize) -> usize {
    match starts.binary_search(&byte) {
        Ok(i) => i,
        Err(i) => i - 1,
    }
}

/// Trims blank lines around each span and numbers its lines.
pub(crate) fn to_chunks(text: &str, spans: Vec<Span>) -> Vec<Chunk> {
    let line_starts = line_starts(text);
    let line_of = |byte: usize| line_of(&line_starts, byte);
    let mut chunks = Vec::with_capacity(spans.len());
    for span in spans {
        let body = &text[span.start..span.end];
        let Some(first) = body.find(|c: char| !c.is_whitespace()) else {
            continue;
        };
        // Keep the first line's indentation: start at the beginning of its line when only
        // white space stands before the span on that line.
        let first_abs = span.start + first;
        let line_start = line_starts[line_of(first_abs)];
        let start = if text[line_start..first_abs].trim().is_empty() {
            line_start
        } else {
            span.start
        };
        let end = span.start + body.trim_end().len();
        // A getter and its setter, or overloads, define one name: listed once.
        let mut defines = span.defines;
        let mut seen = std::collections::HashSet::new();
        defines.retain(|d| seen.insert(d.clone()));
        chunks.push(Chunk {
            content: text[start..end].to_owned(),
            start_line: line_of(start) as u32 + 1,
            end_line: line_of(end.saturating_sub(1).max(start)) as u32 + 1,
            symbol: span.symbol,
            kind: span.kind,
            defines,
        });
    }
    chunks
}
