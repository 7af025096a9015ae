//! Markdown by heading section.
//!
//! Each ATX (`## Title`) or setext (`Title` over `===`/`---`) heading starts a section that runs
//! to the next heading; the symbol is the heading path (`Install > Docker`). Headings inside
//! fenced code blocks are text, not headings. Front matter (`---` at the top) is its own span.

use super::Layout;
use super::sections::Sections;

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
            sections.heading(heading_start, level, &title);
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
