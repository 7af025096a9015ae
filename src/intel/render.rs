//! Answers as text for people and agents: the CLI prints these, MCP tools return them beside
//! the structured result.

use std::fmt::Write as _;

use crate::cli::one_line;

use super::graph::{Call, Calls, Graph, Impact, Related, Resolution, Symbol, Symbols};

fn place(s: &Symbol) -> String {
    format!("{}:{}-{}", one_line(&s.path), s.start_line, s.end_line)
}

fn how(resolution: Resolution, confidence: f32) -> String {
    let r = match resolution {
        Resolution::Import => "import",
        Resolution::SameFile => "same file",
        Resolution::Qualified => "qualified",
        Resolution::SameModule => "same module",
        Resolution::NameOnly => "name only",
        Resolution::External => "external",
    };
    format!("{r}, {confidence:.2}")
}

pub fn symbols(s: &Symbols) -> String {
    let mut out = String::new();
    if s.definitions.is_empty() {
        out.push_str("no definitions\n");
    }
    for d in &s.definitions {
        let _ = write!(out, "{} {}", d.kind, d.qualified);
        if let Some(t) = &d.implements {
            let _ = write!(out, " (impl {t})");
        }
        let _ = writeln!(out, "  {}", place(d));
        if !d.signature.is_empty() {
            let _ = writeln!(out, "    {}", d.signature);
        }
    }
    if s.has_more {
        out.push_str("(more definitions: page with offset)\n");
    }
    if !s.references.is_empty() {
        let _ = writeln!(out, "\ncall sites ({}):", s.references.len());
        for r in &s.references {
            let _ = writeln!(out, "  {}:{}  {}", one_line(&r.path), r.line, r.call);
        }
    }
    out
}

fn call_line(c: &Call) -> String {
    let who = c
        .symbol
        .as_ref()
        .map(|s| format!("{} ({})", s.qualified, place(s)))
        .unwrap_or_else(|| "(outside the index)".to_owned());
    format!(
        "  {}:{}  {}  → {}  [{}]",
        one_line(&c.path),
        c.line,
        c.call,
        who,
        how(c.resolution, c.confidence)
    )
}

/// Callers (`callers: true`) or callees.
pub fn calls(c: &Calls, callers: bool) -> String {
    let mut out = format!(
        "{} {} of {} {} ({}):\n",
        c.calls.len(),
        if callers { "callers" } else { "calls" },
        c.symbol.kind,
        c.symbol.qualified,
        place(&c.symbol)
    );
    for call in &c.calls {
        if callers {
            let who = call
                .symbol
                .as_ref()
                .map(|s| s.qualified.as_str())
                .unwrap_or("?");
            let _ = writeln!(
                out,
                "  {}:{}  in {}  `{}`  [{}]",
                one_line(&call.path),
                call.line,
                who,
                call.call,
                how(call.resolution, call.confidence)
            );
        } else {
            out.push_str(&call_line(call));
            out.push('\n');
        }
    }
    if c.truncated {
        out.push_str("(more: raise the limit)\n");
    }
    if c.name_only_unread {
        out.push_str(
            "(calls from other repositories that only the name could tie to it, at a confidence \
             under 0.05, were not read)\n",
        );
    }
    if callers && c.calls.is_empty() && matches!(c.symbol.kind.as_str(), "const" | "variable") {
        let _ = writeln!(
            out,
            "(a {} is read, not called: a search for {} finds where it is used)",
            if c.symbol.kind == "const" {
                "constant"
            } else {
                "variable"
            },
            c.symbol.name
        );
    }
    out
}

pub fn graph(g: &Graph) -> String {
    let mut out = format!(
        "{} nodes, {} edges from {}{}\n",
        g.nodes.len(),
        g.edges.len(),
        g.root,
        if g.truncated {
            " (node limit reached)"
        } else {
            ""
        }
    );
    let name = |id: &str| {
        g.nodes
            .iter()
            .find(|n| n.symbol.id == id)
            .map(|n| n.symbol.qualified.clone())
            .unwrap_or_else(|| id.to_owned())
    };
    for n in &g.nodes {
        let _ = writeln!(
            out,
            "  [{}] {} {}  {}",
            n.depth,
            n.symbol.kind,
            n.symbol.qualified,
            place(&n.symbol)
        );
    }
    out.push_str("edges:\n");
    for e in &g.edges {
        let _ = writeln!(
            out,
            "  {} → {}  ({}:{}, {})",
            name(&e.from),
            name(&e.to),
            one_line(&e.path),
            e.line,
            how(e.resolution, e.confidence)
        );
    }
    out
}

pub fn impact(i: &Impact) -> String {
    let mut out = format!(
        "{} callers of {} in {} files, up to {} levels{}\n",
        i.callers,
        i.symbol.qualified,
        i.files.len(),
        i.depth,
        if i.truncated { " (limit reached)" } else { "" }
    );
    for f in &i.files {
        let _ = writeln!(
            out,
            "{}{}",
            one_line(&f.path),
            if f.test { "  (test)" } else { "" }
        );
        for n in &f.symbols {
            // Calls outside any definition: the file's top level, whose path is the heading.
            let _ = if n.symbol.kind == "file" {
                writeln!(out, "  [{}] top level", n.depth)
            } else {
                writeln!(
                    out,
                    "  [{}] {} {}  :{}",
                    n.depth, n.symbol.kind, n.symbol.qualified, n.symbol.start_line
                )
            };
        }
    }
    out
}

pub fn related(r: &Related) -> String {
    let mut out = format!("{} ({})\n", one_line(&r.path), r.repository);
    let _ = writeln!(out, "imports ({}):", r.imports.len());
    for f in &r.imports {
        let _ = writeln!(
            out,
            "  :{}  {}  {}",
            f.line,
            one_line(f.path.as_deref().unwrap_or("(outside the repository)")),
            f.specifier
        );
    }
    let _ = writeln!(out, "imported by ({}):", r.imported_by.len());
    for f in &r.imported_by {
        let _ = writeln!(
            out,
            "  {}:{}  {}",
            one_line(f.path.as_deref().unwrap_or("?")),
            f.line,
            f.specifier
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::graph::{GraphNode, ImpactFile};
    use super::*;

    fn calls_of(kind: &str) -> Calls {
        Calls {
            workspace: "default".into(),
            symbol: Symbol {
                id: "r:src/a.py:3".into(),
                name: "MAX_TRIES".into(),
                qualified: "MAX_TRIES".into(),
                kind: kind.into(),
                repository: "r".into(),
                path: "src/a.py".into(),
                language: Some("python".into()),
                start_line: 3,
                end_line: 3,
                signature: "MAX_TRIES = 3".into(),
                implements: None,
            },
            calls: Vec::new(),
            truncated: false,
            name_only_unread: false,
        }
    }

    #[test]
    fn impact_names_a_files_top_level_without_a_line() {
        let node = |kind: &str, qualified: &str, line: i32, depth: u32| GraphNode {
            symbol: Symbol {
                kind: kind.into(),
                qualified: qualified.into(),
                start_line: line,
                ..calls_of("function").symbol
            },
            depth,
        };
        let affected = Impact {
            workspace: "default".into(),
            symbol: calls_of("component").symbol,
            depth: 3,
            files: vec![ImpactFile {
                repository: "r".into(),
                path: "src/routes/+page.svelte".into(),
                test: false,
                symbols: vec![
                    node("file", "src/routes/+page.svelte (top level)", 0, 1),
                    node("component", "Header", 1, 2),
                ],
            }],
            callers: 2,
            truncated: false,
        };
        let text = impact(&affected);
        assert!(text.contains("\n  [1] top level\n"), "{text}");
        assert!(text.contains("\n  [2] component Header  :1\n"), "{text}");
    }

    #[test]
    fn a_constant_without_callers_points_to_search() {
        let text = calls(&calls_of("const"), true);
        assert!(
            text.contains("a constant is read, not called: a search for MAX_TRIES finds"),
            "{text}"
        );
        assert!(!calls(&calls_of("function"), true).contains("read, not called"));
        assert!(!calls(&calls_of("const"), false).contains("read, not called"));
    }
}
