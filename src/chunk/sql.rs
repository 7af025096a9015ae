//! SQL by statement.
//!
//! A small lexer finds the `;` that end statements, skipping those inside strings (`'...'`,
//! `E'...'`), quoted identifiers, comments (`--`, nested `/* */`), PostgreSQL dollar quotes
//! (`$$ ... $$`, `$tag$ ... $tag$`) and `BEGIN ... END` bodies of routines. Comments above a
//! statement belong to it. The symbol is the object a statement creates or changes.

use super::{Layout, Span};

pub(crate) fn layout(text: &str) -> Layout {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut depth = 0usize; // BEGIN ... END nesting inside CREATE FUNCTION/PROCEDURE/TRIGGER
    let mut word_start: Option<usize> = None;
    let mut in_routine = false;
    let push = |spans: &mut Vec<Span>, s: usize, e: usize| {
        let stmt = &text[s..e];
        if stmt.trim().is_empty() {
            return;
        }
        let (kind, symbol) = describe(stmt);
        spans.push(Span {
            start: s,
            end: e,
            // `ALTER TABLE x` or `INSERT INTO x` names an object defined elsewhere.
            defines: symbol
                .iter()
                .filter(|_| kind.starts_with("create"))
                .cloned()
                .collect(),
            symbol,
            kind,
            parent: 0,
            mergeable: true,
        });
    };
    while i < bytes.len() {
        let b = bytes[i];
        let is_word = b.is_ascii_alphanumeric() || b == b'_';
        if is_word {
            word_start.get_or_insert(i);
            i += 1;
            if i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                continue;
            }
            if let Some(ws) = word_start.take() {
                let word = text[ws..i].to_ascii_uppercase();
                match word.as_str() {
                    "FUNCTION" | "PROCEDURE" | "TRIGGER" => in_routine = true,
                    "BEGIN" | "CASE" if in_routine => depth += 1,
                    "END" if depth > 0 => {
                        let next = text[i..]
                            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                            .find(|w| !w.is_empty())
                            .unwrap_or("")
                            .to_ascii_uppercase();
                        if !matches!(next.as_str(), "IF" | "LOOP" | "WHILE" | "REPEAT") {
                            depth -= 1;
                        }
                    }
                    _ => {}
                }
            }
            continue;
        }
        match b {
            b'\'' | b'"' | b'`' => i = skip_quoted(bytes, i, b),
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i = text[i..].find('\n').map_or(bytes.len(), |n| i + n + 1);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => i = skip_block_comment(bytes, i),
            b'$' => i = skip_dollar_quote(text, i),
            b';' if depth == 0 => {
                push(&mut spans, start, i + 1);
                start = i + 1;
                in_routine = false;
                i += 1;
            }
            _ => i += 1,
        }
    }
    push(&mut spans, start, bytes.len());
    Layout {
        spans,
        containers: Vec::new(),
    }
}

fn skip_quoted(bytes: &[u8], open: usize, quote: u8) -> usize {
    let mut i = open + 1;
    while i < bytes.len() {
        if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2; // doubled quote is an escaped quote
                continue;
            }
            return i + 1;
        }
        if bytes[i] == b'\\' && quote == b'\'' {
            i += 2; // E'...' escapes; harmless for standard strings
            continue;
        }
        i += 1;
    }
    bytes.len()
}

fn skip_block_comment(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0;
    let mut i = open;
    while i + 1 < bytes.len() {
        if bytes[i] == b'/' && bytes[i + 1] == b'*' {
            depth += 1;
            i += 2;
        } else if bytes[i] == b'*' && bytes[i + 1] == b'/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    bytes.len()
}

/// `$tag$ ... $tag$`; a `$` that does not open a dollar quote (a `$1` parameter) is skipped.
fn skip_dollar_quote(text: &str, open: usize) -> usize {
    let rest = &text[open + 1..];
    let tag_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let tag = &rest[..tag_len];
    if !rest[tag_len..].starts_with('$') || tag.starts_with(|c: char| c.is_ascii_digit()) {
        return open + 1;
    }
    let delimiter = format!("${tag}$");
    let body = open + delimiter.len();
    match text[body..].find(&delimiter) {
        Some(n) => body + n + delimiter.len(),
        None => text.len(),
    }
}

/// The statement's kind (`create table`, `insert`, ...) and the object it names.
fn describe(stmt: &str) -> (&'static str, Option<String>) {
    let code = strip_comments(stmt);
    let words: Vec<&str> = code.split_whitespace().take(12).collect();
    let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
    let at = |i: usize| upper.get(i).map(String::as_str).unwrap_or("");
    let name_after = |i: usize| -> Option<String> {
        let mut j = i;
        while matches!(at(j), "IF" | "NOT" | "EXISTS" | "ONLY" | "CONCURRENTLY") {
            j += 1;
        }
        let w = words.get(j)?;
        let name: String = w
            .chars()
            .take_while(|c| !matches!(c, '(' | ';' | ','))
            .filter(|c| !matches!(c, '"' | '`' | '[' | ']'))
            .collect();
        (!name.is_empty()).then_some(name)
    };
    match at(0) {
        "CREATE" => {
            let mut i = 1;
            while matches!(
                at(i),
                "OR" | "REPLACE"
                    | "TEMP"
                    | "TEMPORARY"
                    | "UNIQUE"
                    | "MATERIALIZED"
                    | "UNLOGGED"
                    | "GLOBAL"
                    | "LOCAL"
                    | "RECURSIVE"
                    | "CONSTRAINT"
                    | "DEFINER"
            ) {
                i += 1;
            }
            let kind = match at(i) {
                "TABLE" => "create table",
                "VIEW" => "create view",
                "INDEX" => "create index",
                "FUNCTION" => "create function",
                "PROCEDURE" => "create procedure",
                "TRIGGER" => "create trigger",
                "TYPE" => "create type",
                "SCHEMA" => "create schema",
                "SEQUENCE" => "create sequence",
                "EXTENSION" => "create extension",
                "POLICY" => "create policy",
                _ => "create",
            };
            if kind == "create index" && at(i + 1) == "ON" {
                return (kind, None);
            }
            (kind, name_after(i + 1))
        }
        "ALTER" => ("alter", name_after(2)),
        "DROP" => ("drop", name_after(2)),
        "INSERT" => ("insert", name_after(2)),
        "UPDATE" => ("update", name_after(1)),
        "DELETE" => ("delete", name_after(2)),
        "SELECT" | "WITH" => ("query", None),
        "COMMENT" => ("comment", None),
        "GRANT" | "REVOKE" => ("grant", None),
        _ => ("statement", None),
    }
}

/// The statement without `--` and `/* */` comments (strings are left alone: only the first
/// words matter here).
fn strip_comments(stmt: &str) -> String {
    let bytes = stmt.as_bytes();
    let mut out = String::with_capacity(stmt.len());
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        if bytes[i] == b'-' && bytes.get(i + 1) == Some(&b'-') {
            out.push_str(&stmt[copied..i]);
            i = stmt[i..].find('\n').map_or(bytes.len(), |n| i + n);
            copied = i;
        } else if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
            out.push_str(&stmt[copied..i]);
            out.push(' ');
            i = skip_block_comment(bytes, i);
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&stmt[copied..]);
    out
}
