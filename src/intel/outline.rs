//! Definitions, calls and imports of code in the languages without a grammar here (Kotlin, PHP,
//! Swift, Scala, Elixir, Lua, Dart, ...: [`crate::chunk::outline`]), read from its lines.
//!
//! A definition is a line the outline chunker names a block by (`fun peek`, `public function
//! send`, `defp render`, `class Client`); it ends where its indentation does, with the line that
//! closes it (`}`, `end`). A call is a name followed by `(`, with the path written before it
//! (`$this->send(`, `Conn.put_status(`). An import names a class or module by its path, read as
//! the files it may live in ([`imports`]). Strings and comments are not read. This is
//! approximate, as resolving calls by name already is: the only types are those a receiver is
//! declared with ([`typed_names`]), and a call resolves among the definitions of its own
//! language by name, owner, enclosing class and imports.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use super::extract::{IMPLICIT_RECEIVER, UNNAMED_RECEIVER};
use super::imports::{PACKAGE, SWIFT_MODULE};
use super::{
    Definition, Extraction, Import, MAX_DEFINITIONS, MAX_REFERENCES, Reference, SIGNATURE_CHARS,
};
use crate::chunk::outline::{definition_in, definition_kind};

/// A call: an optional path and separator, then the called name, `type_arguments` (a pattern,
/// or none) and `opener` (`\(`). [`calls`] reads Lua's `obj:method(` for Lua alone (`:` is a
/// label or a type elsewhere), and `->` for PHP and Perl alone (a lambda's or a clause's arrow
/// elsewhere).
fn call_pattern(type_arguments: &str, opener: &str) -> Regex {
    Regex::new(&format!(
        r"(?:([A-Za-z_$][\w$]*(?:(?:\.|->|::|\?\.)[A-Za-z_$][\w$]*)*)(->|::|\?\.|\.|:))?\b([A-Za-z_][\w]*[!?]?)\s*{type_arguments}{opener}"
    ))
    .expect("a valid regex")
}

static CALL: LazyLock<Regex> = LazyLock::new(|| call_pattern("", r"\("));

/// [`CALL`] with type arguments between the name and `(`, in the languages that write them so:
/// Dart's `BlocBuilder<CounterCubit, int>(`, Kotlin's `listOf<Item>(`, Swift's `Array<Int>(`.
/// Nothing but names, `,`, `.`, `?` and spaces inside, so a comparison (`i < n && m > f(x)`)
/// stays one.
static CALL_GENERIC: LazyLock<Regex> =
    LazyLock::new(|| call_pattern(r"(?:<[\w\s,.?<>]*>)?\s*", r"\("));

/// [`CALL_GENERIC`] in Kotlin, where a call may pass its lambda alone, without parentheses:
/// `writeZip {`, `items.forEach {`, `AppTheme {`.
static CALL_KOTLIN: LazyLock<Regex> =
    LazyLock::new(|| call_pattern(r"(?:<[\w\s,.?<>]*>)?\s*", r"[({]"));

/// Kotlin words followed by `{` that are no call: keywords that open a block, and the scope
/// functions, whose lambdas are read as such ([`scope_lambdas`]).
#[rustfmt::skip]
const KOTLIN_NOT_BLOCK_CALLS: &[&str] = &[
    "else", "try", "finally", "do", "init", "object", "companion", "get", "set", "constructor",
    "class", "interface", "enum", "when", "where", "return", "throw", "annotation", "sealed",
    "data", "value", "inner", "open", "abstract", "override", "private", "internal", "public",
    "protected", "suspend", "inline", "const", "lateinit", "fun", "val", "var", "is", "in", "as",
    "apply", "run", "let", "also", "with", "takeIf", "takeUnless", "repeat",
];

/// Words followed by `(` that are not calls.
#[rustfmt::skip]
const NOT_CALLS: &[&str] = &[
    "if", "elseif", "else", "for", "foreach", "while", "do", "switch", "case", "catch", "when",
    "match", "return", "throw", "function", "fun", "func", "fn", "def", "defp", "defmacro",
    "sizeof", "typeof", "instanceof", "isset", "unset", "empty", "array", "list", "echo", "print",
    "require", "require_once", "include", "include_once", "use", "guard", "in", "is", "as", "and",
    "or", "not", "new", "super", "this", "self", "assert", "cond", "with", "unless", "try",
    "rescue", "receive", "quote", "unquote", "init", "where", "yield", "await", "synchronized",
];

/// What `text` (the file at `rel_path`, of type `file_type` that
/// [`crate::chunk::outline::applies_to`]) defines, calls and imports.
pub fn extract(file_type: &str, text: &str, rel_path: &str) -> Extraction {
    let lines = code_lines(file_type, text);
    let definitions = definitions(file_type, &lines);
    let references = calls(file_type, &lines, &definitions);
    Extraction {
        definitions,
        references,
        imports: imports(file_type, text, &lines, rel_path),
        members: Vec::new(),
    }
}

/// One line of code: its indentation and its text with each character of its string literals
/// and comments blanked out.
struct CodeLine {
    indent: usize,
    code: String,
}

impl CodeLine {
    fn blank(&self) -> bool {
        self.code.trim().is_empty()
    }

    /// A line that closes the block above it: `}`, `end`, `)`, `]`.
    fn closes(&self) -> bool {
        let t = self.code.trim();
        t.starts_with(['}', ')', ']'])
            || t == "end"
            || t.starts_with("end ")
            || t.starts_with("end)")
    }

    /// A line at a definition's own indentation that still belongs to its head: PHP's `{` on a
    /// line of its own, the `): Type {` that ends a signature written over several lines.
    fn continues_head(&self) -> bool {
        let t = self.code.trim();
        t.starts_with('{')
            || (t.starts_with(')') && (t.ends_with('{') || t.ends_with('=') || t.ends_with(" do")))
    }
}

/// The file's lines, strings and comments blanked: `//`, `/* */` everywhere; `#` in the
/// languages whose comments it starts; `--` in Lua, Haskell and Elm; `;` in the Lisps. A
/// `"""` or `'''` string may span lines (Kotlin, Swift, Scala, Dart, and Elixir's heredocs:
/// its `@doc`s, whose examples are not calls).
fn code_lines(file_type: &str, text: &str) -> Vec<CodeLine> {
    let hash = matches!(
        file_type,
        "php" | "ex" | "exs" | "r" | "jl" | "pl" | "pm" | "nim" | "tcl" | "proto"
    );
    let dashes = matches!(file_type, "lua" | "hs" | "elm");
    let semicolon = matches!(
        file_type,
        "el" | "lisp" | "scm" | "rkt" | "clj" | "cljs" | "cljc"
    );
    // Elsewhere a backtick quotes a name (Kotlin's `` fun `reads a date`() ``).
    let backtick_strings = matches!(file_type, "php" | "pl" | "pm");
    let mut in_block = false;
    let mut triple: Option<&str> = None;
    text.lines()
        .map(|line| {
            let indent = line
                .chars()
                .take_while(|c| c.is_whitespace())
                .map(|c| if c == '\t' { 4 } else { 1 })
                .sum();
            let mut code = String::with_capacity(line.len());
            let mut quote: Option<char> = None;
            let mut at = 0;
            while let Some(c) = line[at..].chars().next() {
                let rest = &line[at..];
                at += c.len_utf8();
                if let Some(delimiter) = triple {
                    if rest.starts_with(delimiter) {
                        triple = None;
                        code.push_str(delimiter);
                        at += 2;
                    } else {
                        code.push(' ');
                    }
                    continue;
                }
                if in_block {
                    if rest.starts_with("*/") {
                        in_block = false;
                        at += 1;
                    }
                    code.push(' ');
                    continue;
                }
                if let Some(q) = quote {
                    if c == '\\' {
                        at += rest[1..].chars().next().map_or(0, char::len_utf8);
                    } else if c == q {
                        quote = None;
                        code.push(c);
                        continue;
                    }
                    code.push(' ');
                    continue;
                }
                let comment = rest.starts_with("//")
                    || (hash && c == '#' && !rest.starts_with("#["))
                    || (dashes && rest.starts_with("--"))
                    || (semicolon && c == ';');
                if comment {
                    break;
                }
                if rest.starts_with("/*") {
                    in_block = true;
                    at += 1;
                    code.push(' ');
                    continue;
                }
                if let Some(delimiter) = ["\"\"\"", "'''"].into_iter().find(|d| rest.starts_with(d))
                {
                    triple = Some(delimiter);
                    code.push_str(delimiter);
                    at += 2;
                    continue;
                }
                if c == '"' || c == '\'' || (backtick_strings && c == '`') {
                    quote = Some(c);
                }
                code.push(c);
            }
            CodeLine { indent, code }
        })
        .collect()
}

/// The kind a definition's keyword makes: a function inside a class is a method (it is called
/// on an object), except in Elixir, whose modules hold functions; a Swift `extension` is one.
fn kind_of(keyword: &str, in_class: bool, file_type: &str) -> &'static str {
    // Swift's `extension Int { … }` adds members to a type it does not define: `Int(x)`
    // calls the type, not the extension.
    if keyword == "extension" && file_type == "swift" {
        return "extension";
    }
    match definition_kind(keyword) {
        "function" if in_class && !matches!(file_type, "ex" | "exs") => "method",
        kind => kind,
    }
}

fn definitions(file_type: &str, lines: &[CodeLine]) -> Vec<Definition> {
    let mut out: Vec<Definition> = Vec::new();
    // The definitions still open: (index in `out`, indentation).
    let mut open: Vec<(usize, usize)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.blank() || out.len() >= MAX_DEFINITIONS {
            continue;
        }
        let number = i as u32 + 1;
        let found = definition_in(file_type, &line.code).or_else(|| {
            if file_type != "dart" {
                return None;
            }
            // The innermost definition still open at this line, a named constructor's class.
            let &(enclosing, _) = open
                .iter()
                .rev()
                .find(|&&(d, indent)| out[d].end_line >= number && indent < line.indent)?;
            let name = dart_named_constructor(&line.code, &out[enclosing])?;
            Some(("function", Cow::Borrowed(name)))
        });
        let Some((keyword, name)) = found else {
            continue;
        };
        while open
            .last()
            .is_some_and(|&(d, indent)| out[d].end_line < number || indent >= line.indent)
        {
            open.pop();
        }
        let parent = open.last().map(|&(d, _)| d);
        let in_class = parent.is_some_and(|p| !matches!(out[p].kind, "function" | "method"));
        // Kotlin's `fun Buffer.readByte()` is a function with a receiver, in a class or not:
        // called on a `Buffer` (its owner), or bare where `this` is one.
        let extension = matches!(file_type, "kt" | "kts") && keyword == "fun" && name.contains('.');
        let qualified = match parent {
            Some(p) => format!("{}.{name}", out[p].qualified),
            None => name.to_string(),
        };
        let joined = head_of(lines, i);
        let head = joined.as_str();
        let head = head
            .strip_suffix('{')
            .or_else(|| head.strip_suffix(" do"))
            .unwrap_or(head)
            .trim_end();
        out.push(Definition {
            name: name.rsplit(['.', ':']).next().unwrap_or(&name).to_owned(),
            qualified,
            kind: kind_of(keyword, in_class && !extension, file_type),
            signature: head.chars().take(SIGNATURE_CHARS).collect(),
            start_line: number,
            end_line: end_of(lines, i),
            parent: parent.map(|p| p as u32),
            implements: None,
        });
        open.push((out.len() - 1, line.indent));
    }
    out
}

/// The most lines after its first that a definition's head is read over.
const HEAD_LINES: usize = 12;

/// A definition's head on one line, as the grammar languages' are: its first line and, while a
/// parenthesis is open, the lines after it (parameters one a line, Kotlin's `) : FileSystem() {`
/// after a constructor's), at most [`HEAD_LINES`] more.
fn head_of(lines: &[CodeLine], at: usize) -> String {
    let depth = |s: &str| {
        s.chars().fold(0i32, |d, c| match c {
            '(' => d + 1,
            ')' => d - 1,
            _ => d,
        })
    };
    let mut head = lines[at].code.trim().to_owned();
    let mut open = depth(&head);
    for line in lines.iter().skip(at + 1).take(HEAD_LINES) {
        if open <= 0 || head.len() > 2 * SIGNATURE_CHARS {
            break;
        }
        let part = line.code.trim();
        if part.is_empty() {
            continue;
        }
        if part.starts_with(')') {
            // The last parameter's trailing comma: `T,` then `): T {`.
            if head.ends_with(',') {
                head.pop();
            }
        } else if !head.ends_with('(') {
            head.push(' ');
        }
        head.push_str(part);
        open += depth(part);
    }
    head
}

/// A Dart named constructor of `class`, declared on `code`: `fromJson` of `factory
/// User.fromJson(Map<String, dynamic> json) =>` or `const Point.origin()` in `class User`,
/// `class Point`; called as `User.fromJson(json)`, as a static method is.
fn dart_named_constructor<'a>(code: &'a str, class: &Definition) -> Option<&'a str> {
    if class.kind != "class" {
        return None;
    }
    let caps = DART_NAMED_CONSTRUCTOR.captures(code)?;
    (caps.get(1)?.as_str() == class.name).then_some(caps.get(2)?.as_str())
}

/// A line that declares a Dart named constructor (if the name before the `.` is its class's).
static DART_NAMED_CONSTRUCTOR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:(?:const|factory|external)\s+)*([A-Za-z_$][\w$]*)\.([A-Za-z_$][\w$]*)\s*\(")
        .expect("a valid regex")
});

/// The last line (1-based) of the definition on line `at`: the line before the next one at its
/// indentation or shallower, or that line when it closes the definition.
fn end_of(lines: &[CodeLine], at: usize) -> u32 {
    let indent = lines[at].indent;
    let mut last = at;
    for (j, line) in lines.iter().enumerate().skip(at + 1) {
        if line.blank() {
            continue;
        }
        if line.indent > indent || (line.indent == indent && line.continues_head()) {
            last = j;
            continue;
        }
        if line.indent == indent && line.closes() {
            last = j;
        }
        break;
    }
    last as u32 + 1
}

/// A name declared with a class type in Kotlin, Swift and Scala: `reader: JsonReader` (a
/// parameter, a `val`, a property), or bound to a constructor's result, `val reader =
/// JsonReader(…)`.
static TYPED_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b([a-z_]\w*)\s*:\s*([A-Z]\w*)|\b(?:val|var|let)\s+([a-z_]\w*)\s*=\s*([A-Z]\w*)\s*\(",
    )
    .expect("a valid regex")
});

/// The same in PHP: a parameter `JsonReader $reader`, `$reader = new JsonReader(`.
static TYPED_PHP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b([A-Z][\w\\]*)\s+\$(\w+)|\$(\w+)\s*=\s*new\s+\\?([A-Z][\w\\]*)")
        .expect("a valid regex")
});

/// The same in Dart: `CounterCubit cubit` (a parameter, a field, a local), `final cubit =
/// CounterCubit(`.
static TYPED_DART: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b([A-Z]\w*)(?:<[^<>()]*>)?\??\s+([a-z_]\w*)\s*[=;,)]|\b(?:final|var|late)\s+([a-z_]\w*)\s*=\s*(?:const\s+|new\s+)?([A-Z]\w*)\s*[(<]",
    )
    .expect("a valid regex")
});

/// The names declared with a class type on a line (see [`TYPED_AFTER`], [`TYPED_PHP`]): a
/// call on one of them is a call on its class (`reader.peek()` → `JsonReader.peek`).
fn typed_names(file_type: &str, code: &str) -> Vec<(String, String)> {
    let (pattern, name_first) = match file_type {
        "kt" | "kts" | "swift" | "scala" | "sc" => (&*TYPED_AFTER, true),
        "php" => (&*TYPED_PHP, false),
        "dart" => (&*TYPED_DART, false),
        _ => return Vec::new(),
    };
    pattern
        .captures_iter(code)
        .filter_map(|c| {
            let (name, class) = match (c.get(1), c.get(2)) {
                (Some(a), Some(b)) if name_first => (a, b),
                (Some(a), Some(b)) => (b, a),
                _ => (c.get(3)?, c.get(4)?),
            };
            let class = class.as_str();
            let class = class.rsplit('\\').next().unwrap_or(class);
            Some((name.as_str().to_owned(), class.to_owned()))
        })
        .collect()
}

fn calls(file_type: &str, lines: &[CodeLine], definitions: &[Definition]) -> Vec<Reference> {
    let mut out = Vec::new();
    // The names declared with a class type, by the definition they are declared in (`None`:
    // the file's top level); a definition sees its own and those of the definitions around it.
    let mut typed: HashMap<Option<u32>, HashMap<String, String>> = HashMap::new();
    let arrows = matches!(file_type, "php" | "pl" | "pm");
    // The definitions open at the line, innermost last (they start in file order, and nest).
    let mut open: Vec<u32> = Vec::new();
    let mut next = 0;
    let kotlin = matches!(file_type, "kt" | "kts");
    // Kotlin's lambdas with a receiver open over several lines, innermost last.
    let mut lambdas: Vec<ScopeLambda> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let number = i as u32 + 1;
        while !line.blank() && lambdas.last().is_some_and(|l| line.indent <= l.indent) {
            lambdas.pop();
        }
        while next < definitions.len() && definitions[next].start_line <= number {
            open.push(next as u32);
            next += 1;
        }
        while open
            .last()
            .is_some_and(|&d| definitions[d as usize].end_line < number)
        {
            open.pop();
        }
        let enclosing = open.last().copied();
        if matches!(file_type, "ex" | "exs") && is_typespec(&line.code) {
            continue;
        }
        for (name, class) in typed_names(file_type, &line.code) {
            typed.entry(enclosing).or_default().insert(name, class);
        }
        let type_of = |name: &str| -> Option<String> {
            open.iter()
                .rev()
                .map(|&d| Some(d))
                .chain([None])
                .find_map(|scope| typed.get(&scope)?.get(name).cloned())
        };
        // The lambdas that open on this line: a scope function's, and a call's trailing one.
        let mut line_lambdas: Vec<ScopeLambda> = if kotlin {
            scope_lambdas(&line.code, line.indent, |name| {
                lambdas
                    .iter()
                    .rev()
                    .find(|l| l.param.as_deref() == Some(name))
                    .and_then(|l| l.class())
                    .map(str::to_owned)
                    .or_else(|| type_of(name))
            })
        } else {
            Vec::new()
        };
        // The name a definition line defines is not a call of it.
        let own_definition = open
            .last()
            .map(|&d| &definitions[d as usize])
            .filter(|d| d.start_line == number);
        let own = own_definition.map(|d| d.name.as_str());
        // A class's head: its `{` opens its body, no lambda; so do an enum's entries.
        let class_head = own_definition.is_some_and(|d| !matches!(d.kind, "function" | "method"));
        let in_enum = kotlin
            && enclosing
                .map(|e| &definitions[e as usize])
                .is_some_and(|d| d.signature.split_whitespace().any(|w| w == "enum"));
        // A Dart constructor (`CounterCubit() : super(0);`, `const Point.origin();`) declares
        // what its class makes; it calls nothing by its own name.
        let mut constructor = file_type == "dart"
            && enclosing
                .map(|e| &definitions[e as usize])
                .is_some_and(|d| {
                    let t = line.code.trim_start();
                    let t = ["const ", "factory ", "external "]
                        .iter()
                        .find_map(|p| t.strip_prefix(p))
                        .unwrap_or(t);
                    d.kind == "class"
                        && t.strip_prefix(d.name.as_str())
                            .is_some_and(|rest| rest.starts_with(['(', '.']))
                });
        let pattern = match file_type {
            "kt" | "kts" => &*CALL_KOTLIN,
            "dart" | "swift" => &*CALL_GENERIC,
            _ => &*CALL,
        };
        for caps in pattern.captures_iter(&line.code) {
            let Some(name) = caps.get(3).map(|m| m.as_str()) else {
                continue;
            };
            if std::mem::take(&mut constructor) {
                continue;
            }
            if NOT_CALLS.contains(&name) || own == Some(name) {
                continue;
            }
            let whole = caps.get(0).map_or(0, |m| m.start());
            if line.code[..whole].ends_with('@') {
                // An annotation: `@Throws(IOException::class)`.
                continue;
            }
            // Kotlin's `writeZip {`, a call whose only argument is its lambda; not a block's
            // keyword, a class's head, a type before a body (`object : Comparator<T> {`), a
            // delegate before one (`object : Sink by buffer {`), nor an enum entry's body.
            let braced = caps.get(0).is_some_and(|m| m.as_str().ends_with('{'));
            if braced
                && (KOTLIN_NOT_BLOCK_CALLS.contains(&name) || class_head || in_enum || {
                    let before = line.code[..whole].trim_end();
                    before.ends_with(':') || before.ends_with(" by")
                })
            {
                continue;
            }
            let separator = caps.get(2).map(|m| m.as_str());
            // Only Kotlin reads lambdas: the other languages' calls allocate nothing here.
            let around = if kotlin {
                lambdas_around(&lambdas, &line_lambdas, whole)
            } else {
                Vec::new()
            };
            // The receivers `this` may be in the lambdas around, innermost first.
            let receivers: Vec<&ScopeLambda> = around
                .iter()
                .rev()
                .filter(|l| l.param.is_none())
                .copied()
                .collect();
            let param_class = |q: &str| {
                around
                    .iter()
                    .rev()
                    .find(|l| l.param.as_deref() == Some(q))
                    .and_then(|l| l.class())
            };
            let qualifier = match (caps.get(1).map(|m| m.as_str()), separator) {
                // `label:call(` in Swift, `x ? a :b(`: not a receiver outside Lua.
                (Some(_), Some(":")) if file_type != "lua" => None,
                (Some(q), Some(s)) if !arrows && (s == "->" || q.contains("->")) => None,
                // In `Buffer().apply { this.flush() }`, the lambda's receiver.
                (Some("this"), _) if !receivers.is_empty() => Some(
                    receivers[0]
                        .class()
                        .map_or_else(|| implicit_receivers(&receivers), str::to_owned),
                ),
                (Some("$this" | "this" | "self" | "static" | "Self"), _) => enclosing
                    .and_then(|e| class_of(definitions, e))
                    .map(str::to_owned),
                // `sink.also { it.flush() }`: the lambda's parameter is its receiver.
                (Some(q), _) if param_class(q).is_some() => param_class(q).map(str::to_owned),
                (Some(q), _) => {
                    let q = q.trim_start_matches('$');
                    // `reader.peek()`, `this.reader.peek()`, `$this->reader->peek()`: a name
                    // declared with a class type is that class.
                    let bare = ["this.", "self.", "this->"]
                        .iter()
                        .find_map(|p| q.strip_prefix(p))
                        .unwrap_or(q);
                    let simple = !bare.contains(['.', ':', '-', '?']);
                    Some(
                        simple
                            .then(|| type_of(bare))
                            .flatten()
                            .unwrap_or_else(|| q.to_owned()),
                    )
                }
                // `load().parse()`, `"/a".toPath()`, a chain's next line `.filter(…)`: a call on
                // a receiver that is no name is still one, which reaches methods.
                (None, _) => {
                    let name_at = caps.get(3).map_or(0, |m| m.start());
                    let before = &line.code[..name_at];
                    let on_value = if arrows {
                        before.ends_with("->")
                    } else if let Some(dot) = before.strip_suffix('.') {
                        // Dart's cascade `..add(x)`; a chain's next line `.filter(…)`; else
                        // what ends an expression, `)`, `]`, a name, a literal's quote.
                        // Swift's `.customLong(name)` after `= ` or `(` names a static member
                        // of the type the context expects: no receiver.
                        (dot.ends_with('.') && file_type == "dart")
                            || dot.trim().is_empty()
                            || dot.ends_with(|c: char| {
                                c.is_alphanumeric() || "_)]}\"'?!>`".contains(c)
                            })
                    } else {
                        false
                    };
                    if on_value {
                        Some(
                            literal_type(file_type, before)
                                .unwrap_or(UNNAMED_RECEIVER)
                                .to_owned(),
                        )
                    } else {
                        // In `Buffer().apply { writeUtf8(s) }`, on the lambda's receiver if
                        // its class has the method, else the bare call it looks like; a
                        // capitalised name is a class's constructor.
                        (!receivers.is_empty() && name.starts_with(|c: char| c.is_lowercase()))
                            .then(|| implicit_receivers(&receivers))
                    }
                }
            };
            // `fileSystem.read(path) {`, `writeZip {`: its lambda's receiver is what the
            // called function declares. (A capitalised name with parentheses may be a
            // supertype's constructor before a class's body, `: Base() {`.)
            let opener = caps.get(0).map_or(0, |m| m.end() - 1);
            let lambda = if braced {
                without_parameters(&line.code[opener..]).then_some(opener)
            } else if name.starts_with(|c: char| c.is_lowercase()) {
                trailing_lambda(&line.code, opener)
            } else {
                None
            };
            if kotlin && let Some(brace) = lambda {
                let on = match &qualifier {
                    Some(q) if !q.contains(' ') => format!("{q}.{name}()"),
                    _ => format!("{name}()"),
                };
                line_lambdas.push(ScopeLambda {
                    receiver: LambdaReceiver::Of(on),
                    param: None,
                    indent: line.indent,
                    open_at: brace,
                    close_at: closing(&line.code, brace, ('{', '}')),
                });
            }
            out.push(Reference {
                name: name.to_owned(),
                qualifier,
                line: number,
                enclosing,
                args: None,
                argument: None,
            });
            if out.len() >= MAX_REFERENCES {
                return out;
            }
        }
        line_lambdas.sort_by_key(|l| l.open_at);
        lambdas.extend(line_lambdas.into_iter().filter(|l| l.close_at.is_none()));
        if matches!(file_type, "ex" | "exs") {
            for (qualifier, name) in elixir_calls_without_parentheses(&line.code) {
                out.push(Reference {
                    name: name.to_owned(),
                    qualifier: qualifier.map(str::to_owned),
                    line: number,
                    enclosing,
                    args: None,
                    argument: None,
                });
            }
            if out.len() >= MAX_REFERENCES {
                out.truncate(MAX_REFERENCES);
                return out;
            }
        }
    }
    out
}

/// A Kotlin lambda with a receiver: a scope function's on a receiver of known class,
/// `Buffer().apply {`, `sink.run {`, `with(reader) {` (`this` in the lambda is the receiver),
/// `sink.also {`, `source?.let { s ->` (the receiver is the lambda's parameter); or a call's
/// trailing lambda, `fileSystem.read(path) {`, whose receiver the called function declares.
#[derive(Debug)]
struct ScopeLambda {
    receiver: LambdaReceiver,
    /// The parameter that names the receiver (`it`, or the one declared); `None` where the
    /// receiver is `this`, which bare calls reach.
    param: Option<String>,
    /// The indentation of the line it opens on: it closes at the next line indented no deeper.
    indent: usize,
    /// Where, on the line it opens on, its `{` is, and its `}` if it closes there.
    open_at: usize,
    close_at: Option<usize>,
}

/// What a Kotlin lambda's receiver is.
#[derive(Debug)]
enum LambdaReceiver {
    /// A class, known where the lambda is written: `Buffer().apply {`, `with(reader) {`.
    Class(String),
    /// Whatever the called function declares its last parameter's receiver to be
    /// (`readerAction: BufferedSource.() -> T`), read when the call is resolved: the call as
    /// written, `fileSystem.read()` for `fileSystem.read(path) {`.
    Of(String),
}

impl ScopeLambda {
    /// The receiver's class, when it is known here.
    fn class(&self) -> Option<&str> {
        match &self.receiver {
            LambdaReceiver::Class(c) => Some(c),
            LambdaReceiver::Of(_) => None,
        }
    }
}

/// The lambdas around a call at `at` on a line: those opened on lines before, then the line's
/// own that hold `at`, innermost last.
fn lambdas_around<'a>(
    open: &'a [ScopeLambda],
    line: &'a [ScopeLambda],
    at: usize,
) -> Vec<&'a ScopeLambda> {
    let mut here: Vec<&ScopeLambda> = line
        .iter()
        .filter(|l| l.open_at < at && l.close_at.is_none_or(|c| at < c))
        .collect();
    here.sort_by_key(|l| l.open_at);
    open.iter().chain(here).collect()
}

/// The qualifier of a call without a receiver inside lambdas with receivers (innermost
/// first): `this@Buffer`, `this@fileSystem.read() Buffer` (the resolver tries each in turn,
/// then the bare call).
fn implicit_receivers(receivers: &[&ScopeLambda]) -> String {
    let names: Vec<&str> = receivers
        .iter()
        .map(|l| match &l.receiver {
            LambdaReceiver::Class(c) | LambdaReceiver::Of(c) => c.as_str(),
        })
        .collect();
    format!("{IMPLICIT_RECEIVER}{}", names.join(" "))
}

/// Where the `{` of a trailing lambda without parameters is, after the call whose `(` is at
/// `paren` (`read(path) {`); `None` for a lambda that declares parameters (`{ line ->`),
/// whose receiver is none.
fn trailing_lambda(code: &str, paren: usize) -> Option<usize> {
    if code.as_bytes().get(paren) != Some(&b'(') {
        return None;
    }
    let close = closing(code, paren, ('(', ')'))?;
    let rest = &code[close + 1..];
    let brace = close + 1 + (rest.len() - rest.trim_start().len());
    (code[brace..].starts_with('{') && without_parameters(&code[brace..])).then_some(brace)
}

/// Whether the lambda `code` starts with (at its `{`) declares no parameters (`{ line ->`).
fn without_parameters(code: &str) -> bool {
    static PARAMETERS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\{\s*(?:\(?[a-z_][\w\s,:<>?]*\)?)\s*->").expect("a valid regex")
    });
    !PARAMETERS.is_match(code)
}

/// A scope function called on a name (`sink.apply {`, `source?.let {`) or on a constructor's
/// result (`Buffer().apply {`, `Moshi.Builder().run {`), its lambda's parameter if declared.
static SCOPE_CALL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:^|[^\w.$])(?:([a-z_]\w*)|((?:[A-Z]\w*\.)*[A-Z]\w*)(?:<[^<>()]*>)?\([^()]*\))\s*\??\.\s*(apply|run|also|let)\s*(\{)(?:\s*([a-z_]\w*)\s*->)?",
    )
    .expect("a valid regex")
});

/// `with(reader) {`, `with(Buffer()) {`.
static SCOPE_WITH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:^|[^\w.$])with\s*\(\s*(?:([a-z_]\w*)|((?:[A-Z]\w*\.)*[A-Z]\w*)(?:<[^<>()]*>)?\([^()]*\))\s*\)\s*(\{)",
    )
    .expect("a valid regex")
});

/// The scope-function lambdas that open on a Kotlin line whose receiver's class is known: a
/// constructor's, or a name's that `type_of` knows.
fn scope_lambdas(
    code: &str,
    indent: usize,
    type_of: impl Fn(&str) -> Option<String>,
) -> Vec<ScopeLambda> {
    if !code.contains('{') {
        return Vec::new();
    }
    let mut out = Vec::new();
    let found = SCOPE_CALL
        .captures_iter(code)
        .map(|c| (c, true))
        .chain(SCOPE_WITH.captures_iter(code).map(|c| (c, false)));
    for (caps, call) in found {
        let class = match (caps.get(1), caps.get(2)) {
            (Some(name), _) if name.as_str() == "this" => None,
            (Some(name), _) => type_of(name.as_str()),
            (None, Some(class)) => class.as_str().rsplit('.').next().map(str::to_owned),
            (None, None) => None,
        };
        let (Some(class), Some(brace)) = (class, if call { caps.get(4) } else { caps.get(3) })
        else {
            continue;
        };
        let param = match caps.get(3).map(|m| m.as_str()) {
            Some("also" | "let") if call => {
                Some(caps.get(5).map_or("it", |m| m.as_str()).to_owned())
            }
            _ => None,
        };
        let open_at = brace.start();
        out.push(ScopeLambda {
            receiver: LambdaReceiver::Class(class),
            param,
            indent,
            open_at,
            close_at: closing(code, open_at, ('{', '}')),
        });
    }
    out.sort_by_key(|l| l.open_at);
    out
}

/// Where the bracket that closes the one at `open` (`{` or `(`) is on the same line, if it is.
fn closing(code: &str, open: usize, (opening, closing): (char, char)) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in code.char_indices().skip_while(|&(i, _)| i < open) {
        if c == opening {
            depth += 1;
        } else if c == closing {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// Elixir's calls written without parentheses that are calls whatever the context: a pipe into
/// a name, `conn |> fetch_session |> Plug.Conn.halt` (each followed by another pipe or the
/// line's end), and a function plug, `plug :fetch_session`, which calls the module's own
/// function. (`halt conn`, a call of one argument without parentheses, cannot be told from
/// a variable by its line alone.)
fn elixir_calls_without_parentheses(code: &str) -> Vec<(Option<&str>, &str)> {
    static PIPED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\|>\s*(?:([A-Z][\w.]*)\.)?([a-z_][\w]*[?!]?)\s*(?:$|\|>)")
            .expect("a valid regex")
    });
    static PLUG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*plug\s+:([a-z_][\w]*[?!]?)").expect("a valid regex"));
    let mut out: Vec<(Option<&str>, &str)> = Vec::new();
    // A pipe's end is the next pipe's start: step over one match at a time.
    let mut at = 0;
    while let Some(caps) = PIPED.captures_at(code, at) {
        let Some(name) = caps.get(2) else {
            break;
        };
        out.push((caps.get(1).map(|m| m.as_str()), name.as_str()));
        at = name.end();
    }
    out.retain(|(_, name)| !NOT_CALLS.contains(name));
    // An atom names a function, whatever the word (`plug :match`).
    if let Some(name) = PLUG.captures(code).and_then(|c| c.get(1)) {
        out.push((None, name.as_str()));
    }
    out
}

/// The type of a literal a call is made on, from the code before the call's name (strings
/// blanked, their quotes kept): `"/a".toPath()` is a call on a `String`, Kotlin's and Scala's
/// `'a'.repeat(3)` on a `Char` (Dart's `'…'` is a string).
fn literal_type(file_type: &str, before: &str) -> Option<&'static str> {
    let quote = before.strip_suffix('.')?.chars().next_back()?;
    match (file_type, quote) {
        ("kt" | "kts" | "scala" | "sc", '\'') => Some("Char"),
        ("kt" | "kts" | "scala" | "sc" | "swift" | "dart", '"') | ("dart", '\'') => Some("String"),
        _ => None,
    }
}

/// Whether an Elixir line is a typespec (`@spec send_resp(t) :: t`), whose `name(` is the
/// function it describes, not a call.
fn is_typespec(code: &str) -> bool {
    let t = code.trim_start();
    [
        "@spec ",
        "@callback ",
        "@macrocallback ",
        "@type ",
        "@typep ",
        "@opaque ",
    ]
    .iter()
    .any(|attribute| t.starts_with(attribute))
}

/// The qualified name of the class a definition is in (or is): for a function with a receiver
/// written before its name (Kotlin's `fun Buffer.readByte()`, Lua's `function M:start()`), that
/// receiver, which `this` (`self`) is in its body.
fn class_of(definitions: &[Definition], mut at: u32) -> Option<&str> {
    loop {
        let d = &definitions[at as usize];
        if !matches!(d.kind, "function" | "method") {
            return Some(&d.qualified);
        }
        let outer = d
            .parent
            .map_or(0, |p| definitions[p as usize].qualified.len() + 1);
        let own = d.qualified.get(outer..).unwrap_or_default();
        if let Some(dot) = own.rfind(['.', ':']) {
            return Some(&d.qualified[..outer + dot]);
        }
        at = d.parent?;
    }
}

/// An import of a class by its package path: Kotlin's, Scala's and Groovy's `import a.b.C`
/// (`as D`, or `a.b.*`), PHP's `use A\B\C;` (`as D`, `use function`), Elixir's
/// `alias`, `import`, `require` and `use` of a module (`alias A.B.{C, D}` too), Haskell's and
/// Elm's `import (qualified) A.B`.
static IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(import|use|alias|require)\s+(?:function\s+|const\s+|qualified\s+)?\\?([A-Za-z_][\w\\]*(?:\.[A-Za-z_][\w\\]*)*(?:\.\*|\.\{[\w,\s]+\})?)(?:\s+as\s+(\w+)|,\s*as:\s*(\w+))?",
    )
    .expect("a valid regex")
});

/// Swift's `import ArgumentParser`, with attributes and an access level (`@testable import`,
/// `@_spi(Testing) public import`), and of one declaration, `import struct WinSDK.COORD`.
static SWIFT_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+([A-Za-z_]\w*)\.([A-Za-z_]\w*)|([A-Za-z_]\w*))",
    )
    .expect("a valid regex")
});

/// Lua's `require("a.b")` and `require "a.b"`.
static LUA_REQUIRE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\brequire\s*\(?\s*["']([\w./-]+)["']"#).expect("a valid regex"));

/// Dart's `import`, `export` and `part` of a file by its URI, up to the `as` of an import:
/// `import 'package:bloc/bloc.dart' as b;`, `export 'src/bloc_builder.dart' show X;`.
static DART_DIRECTIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\s*(import|export|part)\s+['"]([^'"]+)['"](?:[^;]*?\bas\s+(\w+))?"#)
        .expect("a valid regex")
});

/// What a file imports, each with the files it may come from (the keys of
/// [`super::path_keys`], most specific first): the package path as directories, as Java's
/// imports are (a Kotlin file also from a Java one); in PHP the namespace less its leading
/// parts too (PSR-4 maps a vendor's prefix to `src/`); in Elixir the module's path in snake
/// case (`Plug.Conn` → `plug/conn.ex`); in Lua the module's path, or its `init.lua`; in Dart
/// the file its URI names (see [`dart_candidates`]).
fn imports(file_type: &str, text: &str, lines: &[CodeLine], rel_path: &str) -> Vec<Import> {
    let mut out = Vec::new();
    // Read from the lines of code (an example in a doc comment or an Elixir `@doc` imports
    // nothing), but for Lua's module name and Dart's URI, a string.
    for ((i, line), code) in text.lines().enumerate().zip(lines) {
        let number = i as u32 + 1;
        if file_type == "dart" {
            let keyword = code.code.split_whitespace().next().unwrap_or_default();
            if !matches!(keyword, "import" | "export" | "part") {
                continue;
            }
            // `part of 'x.dart';` names the library this file belongs to: no import.
            let Some(caps) = DART_DIRECTIVE.captures(line) else {
                continue;
            };
            let uri = &caps[2];
            out.push(Import {
                specifier: uri.to_owned(),
                // An export binds no name here (a barrel's, followed as TypeScript's are); a
                // part shares its library's names, as an import without a prefix brings in
                // every public name of the file.
                name: match (&caps[1], caps.get(3)) {
                    ("export", _) => String::new(),
                    ("import", Some(prefix)) => prefix.as_str().to_owned(),
                    _ => "*".to_owned(),
                },
                line: number,
                candidates: dart_candidates(rel_path, uri),
            });
            continue;
        }
        if file_type == "lua" {
            if !code.code.contains("require") {
                continue;
            }
            // Up to where a comment starts (the line of code stops there).
            let line = line.get(..code.code.len()).unwrap_or(line);
            for caps in LUA_REQUIRE.captures_iter(line) {
                let spec = &caps[1];
                let path = spec.replace('.', "/");
                out.push(Import {
                    specifier: spec.to_owned(),
                    name: "*".to_owned(),
                    line: number,
                    candidates: vec![format!("{path}.lua"), format!("{path}/init.lua")],
                });
            }
            continue;
        }
        if file_type == "swift" {
            let caps = SWIFT_IMPORT.captures(&code.code);
            if let Some(module) = caps.as_ref().and_then(|c| c.get(1).or(c.get(3))) {
                let module = module.as_str();
                // A module brings in every name it declares; `import struct M.X`, one.
                let one = caps.as_ref().and_then(|c| c.get(2)).map(|m| m.as_str());
                out.push(Import {
                    specifier: match one {
                        Some(name) => format!("{module}.{name}"),
                        None => module.to_owned(),
                    },
                    name: one.unwrap_or("*").to_owned(),
                    line: number,
                    candidates: vec![format!("{SWIFT_MODULE}{module}")],
                });
            }
            continue;
        }
        let Some(caps) = IMPORT.captures(&code.code) else {
            continue;
        };
        let (keyword, spec) = (&caps[1], &caps[2]);
        let alias = caps.get(3).or(caps.get(4)).map(|m| m.as_str());
        let (elixir, php) = (matches!(file_type, "ex" | "exs"), file_type == "php");
        // Each language's own keywords: `use` in Kotlin is nothing, `import` in PHP neither.
        let ours = match keyword {
            "import" => !php,
            "use" => php || elixir,
            _ => elixir,
        };
        if !ours {
            continue;
        }
        let separator = if php { '\\' } else { '.' };
        let (base, members) = match spec.split_once(".{") {
            Some((base, rest)) => (
                base,
                rest.trim_end_matches('}')
                    .split(',')
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                    .collect(),
            ),
            None => (spec, Vec::new()),
        };
        let modules: Vec<String> = if members.is_empty() {
            vec![base.to_owned()]
        } else {
            members.iter().map(|m| format!("{base}.{m}")).collect()
        };
        for module in modules {
            let segments: Vec<&str> = module.split(separator).filter(|s| !s.is_empty()).collect();
            let Some(&last) = segments.last() else {
                continue;
            };
            // `a.b.*`, Scala's `a.b._`.
            let wildcard = last == "*" || last == "_";
            // Elixir's `import`/`use` bring in the module's functions; `alias` and `require`
            // bind its last part. A wildcard names a package, which no file is.
            let name = match alias {
                Some(alias) => alias.to_owned(),
                None if wildcard || (elixir && matches!(keyword, "import" | "use")) => {
                    "*".to_owned()
                }
                None => last.to_owned(),
            };
            let candidates = if wildcard {
                Vec::new()
            } else if elixir {
                let path: Vec<String> = segments.iter().map(|s| snake_case(s)).collect();
                vec![format!("{}.ex", path.join("/"))]
            } else if php {
                // PSR-4: a vendor's prefix stands for a directory (`GuzzleHttp\` is `src/`).
                (0..segments.len())
                    .map(|from| format!("{}.php", segments[from..].join("/")))
                    .collect()
            } else {
                module_candidates(file_type, &segments)
            };
            out.push(Import {
                specifier: module.clone(),
                name,
                line: number,
                candidates,
            });
        }
    }
    out
}

/// The files an import of a class or module by its path (`a.b.C`) may come from: `a/b/C.kt`
/// (and `a/b/C.java`, for Kotlin), `.scala`, `.groovy`, Haskell's `.hs`. A member of a class
/// (`a.b.C.name`, `okio.ByteString.Companion.encodeUtf8`: a segment before the last is
/// capitalised) comes
/// from its class's file; in Kotlin, a top-level function or property (`okio.internal.
/// commonReadByte`: no segment capitalised) from a file of its package that defines it,
/// whatever the file's name ([`PACKAGE`]).
fn module_candidates(file_type: &str, segments: &[&str]) -> Vec<String> {
    let kotlin = matches!(file_type, "kt" | "kts");
    // Haskell's and Elm's modules are capitalised all along: `Data.Map.Strict` is a path.
    let jvm = kotlin || matches!(file_type, "scala" | "sc" | "groovy" | "gradle");
    let class = segments
        .iter()
        .position(|s| jvm && s.starts_with(|c: char| c.is_ascii_uppercase()));
    let end = match class {
        Some(at) => at + 1,
        None if kotlin && segments.len() > 1 => {
            return vec![format!(
                "{PACKAGE}{}",
                segments[..segments.len() - 1].join("/")
            )];
        }
        None => segments.len(),
    };
    let path = segments[..end].join("/");
    if kotlin {
        vec![format!("{path}.kt"), format!("{path}.java")]
    } else {
        vec![format!("{path}.{file_type}")]
    }
}

/// The files a Dart URI may name: a relative one from the importing file's directory; a
/// `package:name/path.dart` from the `lib/` of that package, first in a directory named for it
/// (`packages/bloc/lib/…` of a repository of several packages), then at the repository's root
/// (a repository that is the package). `dart:` libraries and packages from outside the
/// repository resolve to no file here.
fn dart_candidates(rel_path: &str, uri: &str) -> Vec<String> {
    if let Some(rest) = uri.strip_prefix("package:") {
        return match rest.split_once('/') {
            Some((package, path)) if !package.is_empty() && !path.is_empty() => {
                vec![format!("{package}/lib/{path}"), format!("/lib/{path}")]
            }
            _ => Vec::new(),
        };
    }
    if uri.contains(':') {
        return Vec::new(); // `dart:async`, `http://…`
    }
    super::imports::resolve(super::imports::dir_of(rel_path), uri)
        .map(|path| vec![format!("/{path}")])
        .unwrap_or_default()
}

/// An Elixir module's part as its file names it: `ErrorHandler` → `error_handler`.
fn snake_case(part: &str) -> String {
    let mut out = String::with_capacity(part.len() + 4);
    let mut previous_lower = false;
    for c in part.chars() {
        if c.is_uppercase() {
            if previous_lower {
                out.push('_');
            }
            out.extend(c.to_lowercase());
            previous_lower = false;
        } else {
            out.push(c);
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defs(file_type: &str, text: &str) -> Vec<(String, &'static str, u32, u32, Option<u32>)> {
        extract(file_type, text, "x")
            .definitions
            .into_iter()
            .map(|d| (d.qualified, d.kind, d.start_line, d.end_line, d.parent))
            .collect()
    }

    /// Each call as `qualifier.name:line` (or `name:line`).
    fn calls(file_type: &str, text: &str) -> Vec<String> {
        extract(file_type, text, "x")
            .references
            .into_iter()
            .map(|r| match r.qualifier {
                Some(q) => format!("{q}.{}:{}", r.name, r.line),
                None => format!("{}:{}", r.name, r.line),
            })
            .collect()
    }

    #[test]
    fn php_classes_and_methods_with_braces_on_their_own_lines() {
        let php = "<?php\nnamespace GuzzleHttp;\n\nclass Client implements ClientInterface\n{\n    /** Sends. */\n    public function send(RequestInterface $request, array $options = [])\n    {\n        $options = $this->prepareDefaults($options);\n        return $this->sendAsync($request, $options)->wait();\n    }\n\n    private function prepareDefaults(array $options): array\n    {\n        // $this->ignored();\n        $defaults = \"call(\";\n        return \\array_merge($defaults, $options);\n    }\n}\n\nfunction describe_type($input): string\n{\n    return gettype($input);\n}\n";
        assert_eq!(
            defs("php", php),
            [
                ("Client".to_owned(), "class", 4, 19, None),
                ("Client.send".to_owned(), "method", 7, 11, Some(0)),
                (
                    "Client.prepareDefaults".to_owned(),
                    "method",
                    13,
                    18,
                    Some(0)
                ),
                ("describe_type".to_owned(), "function", 21, 24, None),
            ]
        );
        // `$this->` is the enclosing class; comments and strings are not read.
        assert_eq!(
            calls("php", php),
            [
                "Client.prepareDefaults:9",
                "Client.sendAsync:10",
                "(…).wait:10",
                "array_merge:17",
                "gettype:23"
            ]
        );
        let enclosing: Vec<Option<u32>> = extract("php", php, "x.php")
            .references
            .iter()
            .map(|r| r.enclosing)
            .collect();
        assert_eq!(enclosing, [Some(1), Some(1), Some(1), Some(2), Some(3)]);
    }

    #[test]
    fn kotlin_signatures_over_several_lines_and_expression_bodies() {
        let kotlin = "class JsonReader(\n  private val source: Source,\n) : Closeable {\n  @Throws(IOException::class) fun peek(): Token = doPeek()\n\n  fun select(\n    options: Options,\n  ): Int {\n    return options.strings.indexOf(peek()).also { it->check(it) }\n  }\n\n  companion object {\n    @JvmStatic fun of(source: BufferedSource): JsonReader = JsonUtf8Reader(source)\n  }\n}\n";
        assert_eq!(
            defs("kt", kotlin),
            [
                ("JsonReader".to_owned(), "class", 1, 15, None),
                ("JsonReader.peek".to_owned(), "method", 4, 4, Some(0)),
                ("JsonReader.select".to_owned(), "method", 6, 10, Some(0)),
                ("JsonReader.of".to_owned(), "method", 13, 13, Some(0)),
            ]
        );
        assert_eq!(
            calls("kt", kotlin),
            [
                "doPeek:4",
                "options.strings.indexOf:9",
                "peek:9",
                "check:9",
                "JsonUtf8Reader:13"
            ]
        );
        // A head over several lines is read as one, as the grammar languages' are.
        let signatures: Vec<String> = extract("kt", kotlin, "x")
            .definitions
            .into_iter()
            .map(|d| d.signature)
            .collect();
        assert_eq!(
            signatures,
            [
                "class JsonReader(private val source: Source) : Closeable",
                "@Throws(IOException::class) fun peek(): Token = doPeek()",
                "fun select(options: Options): Int",
                "@JvmStatic fun of(source: BufferedSource): JsonReader = JsonUtf8Reader(source)",
            ]
        );
    }

    #[test]
    fn kotlin_scope_functions_lend_their_receiver_to_the_lambda() {
        let kotlin = "class Writer(private val sink: Sink) {\n  fun write(source: Source?) {\n    Buffer().apply {\n      writeUtf8(\"a\")\n      this.flush()\n      helper(Item())\n    }\n    sink.also { it.close() }\n    source?.let { s ->\n      s.read(1)\n      it.read(2)\n    }\n    with(sink) { emit() }\n    load().apply { unknown() }\n    this.apply { own() }\n    helper()\n  }\n\n  fun helper() = Unit\n}\n";
        assert_eq!(
            calls("kt", kotlin),
            [
                "Buffer:3",
                // In the lambda, `this` is the Buffer: bare calls are on it (or bare, when it
                // has no such method: `helper()` is the class's own).
                "this@Buffer.writeUtf8:4",
                "Buffer.flush:5",
                "this@Buffer.helper:6",
                "Item:6",
                // `it` and a declared parameter are the receiver.
                "Sink.close:8",
                "Source.read:10",
                "it.read:11",
                "this@Sink.emit:13",
                // A receiver of unknown class, or `this`: bare calls stay bare.
                "load:14",
                "unknown:14",
                "own:15",
                "helper:16",
            ]
        );
        // A call's trailing lambda has the receiver the called function declares, read when
        // the call is resolved; a lambda with parameters has none.
        let kotlin = "fun copy(fileSystem: FileSystem) {\n  fileSystem.read(path) {\n    readUtf8()\n    with(Buffer()) {\n      write(p) { flush() }\n    }\n  }\n  lines.forEach { line -> emit(line) }\n}\n";
        assert_eq!(
            calls("kt", kotlin),
            [
                "FileSystem.read:2",
                "this@FileSystem.read().readUtf8:3",
                "Buffer:4",
                "this@Buffer FileSystem.read().write:5",
                "this@write() Buffer FileSystem.read().flush:5",
                "lines.forEach:8",
                "emit:8",
            ]
        );
        // A call whose only argument is its lambda, without parentheses; not a block's keyword,
        // a class's head or a type before a body.
        let kotlin = "class Zip : Base() {\n  init {\n    writeZip {\n      putEntry()\n    }\n    AppTheme { Text() }\n    val c = object : Comparator<Int> {\n    }\n    if (c) {\n    } else {\n    }\n    val s = object : Sink by buffer {\n    }\n  }\n\n  fun f(): Unit {\n  }\n}\n\nenum class Factory {\n  PeekSource {\n    override fun pipe() = Unit\n  },\n}\n";
        assert_eq!(
            calls("kt", kotlin),
            [
                "Base:1",
                "writeZip:3",
                "this@writeZip().putEntry:4",
                "AppTheme:6",
                "Text:6",
            ]
        );
    }

    #[test]
    fn kotlin_extension_functions_are_owned_by_their_receiver() {
        let kotlin = "package okio\n\nclass Buffer {\n  fun readByte(): Byte = commonReadByte()\n\n  companion object {\n    fun String.encodeUtf8(): ByteString = commonEncodeUtf8()\n  }\n}\n\ninternal inline fun Buffer.commonReadByte(): Byte {\n  val b = this.request(1)\n  return b\n}\n\nfun <T> List<T>.second(): T = this.get(1)\n\nfun use(s: Source) {\n  \"/a\".toPath()\n  s.buffer().readUtf8()\n    .trim()\n}\n";
        assert_eq!(
            defs("kt", kotlin),
            [
                ("Buffer".to_owned(), "class", 3, 9, None),
                ("Buffer.readByte".to_owned(), "method", 4, 4, Some(0)),
                // In a class still a function: called on a String, not on a Buffer.
                (
                    "Buffer.String.encodeUtf8".to_owned(),
                    "function",
                    7,
                    7,
                    Some(0)
                ),
                ("Buffer.commonReadByte".to_owned(), "function", 11, 14, None),
                ("List.second".to_owned(), "function", 16, 16, None),
                ("use".to_owned(), "function", 18, 22, None),
            ]
        );
        // `this` in an extension function is its receiver.
        assert_eq!(
            calls("kt", kotlin),
            [
                "commonReadByte:4",
                "commonEncodeUtf8:7",
                "Buffer.request:12",
                "List.get:16",
                // On a literal, a call's result, a chain's line before: receivers all.
                "String.toPath:19",
                "Source.buffer:20",
                "(…).readUtf8:20",
                "(…).trim:21",
            ]
        );
    }

    #[test]
    fn elixir_modules_hold_functions_ended_by_end() {
        let elixir = "defmodule Plug.Conn do\n  @moduledoc \"\"\"\n  The connection: put_status(conn, 404).\n  \"\"\"\n\n  @spec put_status(t, status) :: t\n  def put_status(%Conn{} = conn, status) do\n    %{conn | status: Plug.Conn.Status.code(status)}\n  end\n\n  defp run_before_send(conn), do: conn # put_status(x)\n\nend\n";
        assert_eq!(
            defs("ex", elixir),
            [
                ("Plug.Conn".to_owned(), "module", 1, 13, None),
                ("Plug.Conn.put_status".to_owned(), "function", 7, 9, Some(0)),
                (
                    "Plug.Conn.run_before_send".to_owned(),
                    "function",
                    11,
                    11,
                    Some(0)
                ),
            ]
        );
        assert_eq!(calls("ex", elixir), ["Plug.Conn.Status.code:8"]);
        // Without parentheses: piped into a name, and a function plug.
        let piped = "defmodule App.Router do\n  plug :match\n  plug Plug.Logger\n\n  def call(conn) do\n    conn\n    |> fetch_session\n    |> Plug.Conn.halt |> put_status(404)\n    |> done?\n    value = conn |> other\n  end\nend\n";
        assert_eq!(
            calls("ex", piped),
            [
                "match:2",
                "fetch_session:7",
                "put_status:8",
                "Plug.Conn.halt:8",
                "done?:9",
                "other:10"
            ]
        );
    }

    #[test]
    fn lua_methods_on_a_module_table() {
        let lua = "local M = {}\n\nfunction M.setup(opts)\n  M.config = vim.tbl_extend('force', M.config, opts)\n  M:start() -- M.stop()\nend\n\nlocal function helper() return 1 end\n";
        let d = defs("lua", lua);
        assert_eq!(
            d,
            [
                ("M.setup".to_owned(), "function", 3, 6, None),
                ("helper".to_owned(), "function", 8, 8, None),
            ]
        );
        assert_eq!(calls("lua", lua), ["vim.tbl_extend:4", "M.start:5"]);
    }

    #[test]
    fn dart_functions_methods_and_getters_are_declared_by_their_types() {
        let dart = "mixin Counting on Object {}\n\nclass CounterCubit extends Cubit<int> with Counting {\n  CounterCubit() : super(0);\n\n  @override\n  void increment() => emit(state + 1);\n\n  int get doubled => helper(state) * 2;\n\n  static Map<String, List<int>> toJson(CounterCubit c) {\n    return {'n': [c.state]};\n  }\n}\n\nFuture<void> main() async {\n  final cubit = CounterCubit();\n  cubit.increment();\n  if (ready(cubit) && n < m && k > limit(2)) {\n    return print(startValue<int>());\n  }\n}\n\nint startValue() {\n  return 0;\n}\n";
        assert_eq!(
            defs("dart", dart),
            [
                ("Counting".to_owned(), "class", 1, 1, None),
                ("CounterCubit".to_owned(), "class", 3, 14, None),
                ("CounterCubit.increment".to_owned(), "method", 7, 7, Some(1)),
                ("CounterCubit.doubled".to_owned(), "method", 9, 9, Some(1)),
                ("CounterCubit.toJson".to_owned(), "method", 11, 13, Some(1)),
                ("main".to_owned(), "function", 16, 22, None),
                ("startValue".to_owned(), "function", 24, 26, None),
            ]
        );
        // Not the constructor's own name, nor a definition's; a call on a name declared by its
        // class is a call on the class.
        assert_eq!(
            calls("dart", dart),
            [
                "emit:7",
                "helper:9",
                "CounterCubit:17",
                "CounterCubit.increment:18",
                "ready:19",
                "limit:19",
                "startValue:20",
            ]
        );
    }

    #[test]
    fn swift_extensions_and_implicit_members() {
        let swift = "extension Int {\n  func clamped() -> Int { self }\n}\n\nfunc run(name: String) {\n  let n = Int(name)\n  self = .customLong(name)\n  let s = parse().first()\n  values\n    .filter(keep)\n}\n";
        assert_eq!(
            defs("swift", swift),
            [
                // Not a class: `Int(name)` is the standard library's.
                ("Int".to_owned(), "extension", 1, 3, None),
                ("Int.clamped".to_owned(), "method", 2, 2, Some(0)),
                ("run".to_owned(), "function", 5, 11, None),
            ]
        );
        assert_eq!(
            calls("swift", swift),
            [
                "Int:6",
                // A static member of the type the context expects: no receiver here.
                "customLong:7",
                "parse:8",
                "(…).first:8",
                "(…).filter:10",
            ]
        );
    }

    #[test]
    fn dart_named_constructors_are_their_classes_members() {
        let dart = "class User {\n  const User(this.name);\n\n  const User._guest() : name = 'guest';\n\n  factory User.fromJson(Map<String, dynamic> json) =>\n      User(json['name'] as String);\n\n  factory User.guest() => const User._guest();\n\n  final String name;\n}\n\nvoid main() {\n  final u = User.fromJson(decode(text));\n  Other.named(u);\n}\n";
        assert_eq!(
            defs("dart", dart),
            [
                ("User".to_owned(), "class", 1, 12, None),
                ("User._guest".to_owned(), "method", 4, 4, Some(0)),
                ("User.fromJson".to_owned(), "method", 6, 7, Some(0)),
                ("User.guest".to_owned(), "method", 9, 9, Some(0)),
                ("main".to_owned(), "function", 14, 17, None),
            ]
        );
        assert_eq!(
            calls("dart", dart),
            [
                "User:7",
                "User._guest:9",
                "User.fromJson:15",
                "decode:15",
                "Other.named:16",
            ]
        );
    }

    #[test]
    fn imports_name_the_files_they_come_from() {
        let imports = |file_type: &str, text: &str| -> Vec<(String, String, Vec<String>)> {
            extract(file_type, text, "lib/src/x")
                .imports
                .into_iter()
                .map(|i| (i.specifier, i.name, i.candidates))
                .collect()
        };
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            imports(
                "kt",
                "package a\nimport com.squareup.moshi.JsonReader\nimport okio.*\nimport a.b.C as D\n"
            ),
            [
                (
                    "com.squareup.moshi.JsonReader".to_owned(),
                    "JsonReader".to_owned(),
                    owned(&[
                        "com/squareup/moshi/JsonReader.kt",
                        "com/squareup/moshi/JsonReader.java"
                    ])
                ),
                ("okio.*".to_owned(), "*".to_owned(), Vec::new()),
                (
                    "a.b.C".to_owned(),
                    "D".to_owned(),
                    owned(&["a/b/C.kt", "a/b/C.java"])
                ),
            ]
        );
        // A class's member from the class's file; a top-level function from its package.
        assert_eq!(
            imports(
                "kt",
                "import okio.ByteString.Companion.encodeUtf8\nimport okio.internal.commonReadByte\nimport a.Outer.Inner\n"
            ),
            [
                (
                    "okio.ByteString.Companion.encodeUtf8".to_owned(),
                    "encodeUtf8".to_owned(),
                    owned(&["okio/ByteString.kt", "okio/ByteString.java"])
                ),
                (
                    "okio.internal.commonReadByte".to_owned(),
                    "commonReadByte".to_owned(),
                    owned(&["package:okio/internal"])
                ),
                (
                    "a.Outer.Inner".to_owned(),
                    "Inner".to_owned(),
                    owned(&["a/Outer.kt", "a/Outer.java"])
                ),
            ]
        );
        // A Swift module, with attributes and an access level; one declaration of it.
        assert_eq!(
            imports(
                "swift",
                "import Foundation\n@testable import ArgumentParser\n@_spi(Testing) public import Tools\nimport struct WinSDK.COORD\n// import Nothing\n"
            ),
            [
                (
                    "Foundation".to_owned(),
                    "*".to_owned(),
                    owned(&["swift:Foundation"])
                ),
                (
                    "ArgumentParser".to_owned(),
                    "*".to_owned(),
                    owned(&["swift:ArgumentParser"])
                ),
                ("Tools".to_owned(), "*".to_owned(), owned(&["swift:Tools"])),
                (
                    "WinSDK.COORD".to_owned(),
                    "COORD".to_owned(),
                    owned(&["swift:WinSDK"])
                ),
            ]
        );
        assert_eq!(
            imports("scala", "import a.b.Util.helper\nimport a.b.c\n"),
            [
                (
                    "a.b.Util.helper".to_owned(),
                    "helper".to_owned(),
                    owned(&["a/b/Util.scala"])
                ),
                ("a.b.c".to_owned(), "c".to_owned(), owned(&["a/b/c.scala"])),
            ]
        );
        assert_eq!(
            imports(
                "php",
                "<?php\nuse GuzzleHttp\\Psr7\\Request;\nuse Psr\\Log\\LoggerInterface as Log;\n"
            ),
            [
                (
                    "GuzzleHttp\\Psr7\\Request".to_owned(),
                    "Request".to_owned(),
                    owned(&[
                        "GuzzleHttp/Psr7/Request.php",
                        "Psr7/Request.php",
                        "Request.php"
                    ])
                ),
                (
                    "Psr\\Log\\LoggerInterface".to_owned(),
                    "Log".to_owned(),
                    owned(&[
                        "Psr/Log/LoggerInterface.php",
                        "Log/LoggerInterface.php",
                        "LoggerInterface.php"
                    ])
                ),
            ]
        );
        assert_eq!(
            imports(
                "ex",
                "defmodule A do\n  @moduledoc \"\"\"\n  import Plug.Test\n  \"\"\"\n  alias Plug.Conn.{Status, Utils}\n  import Plug.ErrorHandler\n  alias Plug.Conn, as: C\nend\n"
            ),
            [
                (
                    "Plug.Conn.Status".to_owned(),
                    "Status".to_owned(),
                    owned(&["plug/conn/status.ex"])
                ),
                (
                    "Plug.Conn.Utils".to_owned(),
                    "Utils".to_owned(),
                    owned(&["plug/conn/utils.ex"])
                ),
                (
                    "Plug.ErrorHandler".to_owned(),
                    "*".to_owned(),
                    owned(&["plug/error_handler.ex"])
                ),
                (
                    "Plug.Conn".to_owned(),
                    "C".to_owned(),
                    owned(&["plug/conn.ex"])
                ),
            ]
        );
        assert_eq!(
            imports(
                "lua",
                "local util = require(\"telescope.utils\")\nlocal M = require 'x' -- require 'y'\n-- require('z')\n"
            ),
            [
                (
                    "telescope.utils".to_owned(),
                    "*".to_owned(),
                    owned(&["telescope/utils.lua", "telescope/utils/init.lua"])
                ),
                (
                    "x".to_owned(),
                    "*".to_owned(),
                    owned(&["x.lua", "x/init.lua"])
                ),
            ]
        );
        assert_eq!(
            imports("hs", "import qualified Data.Map.Strict as Map\n"),
            [(
                "Data.Map.Strict".to_owned(),
                "Map".to_owned(),
                owned(&["Data/Map/Strict.hs"])
            )]
        );
        // Dart, from `lib/src/x`: a package's `lib/`, a path from this file's directory; an
        // export binds no name, a part every name, `part of` and `dart:` nothing here.
        assert_eq!(
            imports(
                "dart",
                "library x;\n\nimport 'dart:async';\nimport 'package:bloc/bloc.dart' as b;\nimport \"../model.dart\" show Model;\n// import 'gone.dart';\nexport 'package:provider/provider.dart'\n    show ReadContext;\nexport 'builder.dart';\npart 'x.g.dart';\npart of 'lib.dart';\n"
            ),
            [
                ("dart:async".to_owned(), "*".to_owned(), Vec::new()),
                (
                    "package:bloc/bloc.dart".to_owned(),
                    "b".to_owned(),
                    owned(&["bloc/lib/bloc.dart", "/lib/bloc.dart"])
                ),
                (
                    "../model.dart".to_owned(),
                    "*".to_owned(),
                    owned(&["/lib/model.dart"])
                ),
                (
                    "package:provider/provider.dart".to_owned(),
                    String::new(),
                    owned(&["provider/lib/provider.dart", "/lib/provider.dart"])
                ),
                (
                    "builder.dart".to_owned(),
                    String::new(),
                    owned(&["/lib/src/builder.dart"])
                ),
                (
                    "x.g.dart".to_owned(),
                    "*".to_owned(),
                    owned(&["/lib/src/x.g.dart"])
                ),
            ]
        );
        assert_eq!(
            imports("scala", "import scala.collection._\n"),
            [("scala.collection._".to_owned(), "*".to_owned(), Vec::new())]
        );
    }

    #[test]
    fn a_call_on_a_name_declared_with_a_class_is_a_call_on_the_class() {
        let kotlin = "class Checkout(private val client: HttpClient) {\n  fun pay(item: Item): Int {\n    val cart = Cart()\n    cart.add(item)\n    this.client.send(item)\n    return item.price()\n  }\n\n  fun other() = item.price()\n}\n";
        assert_eq!(
            calls("kt", kotlin),
            [
                "Cart:3",
                "Cart.add:4",
                "HttpClient.send:5",
                "Item.price:6",
                // `item` is `pay`'s parameter, not `other`'s.
                "item.price:9"
            ]
        );
        let php = "<?php\nclass Client\n{\n    private ClientInterface $client;\n\n    public function send(RequestInterface $request)\n    {\n        $stream = new Stream();\n        $stream->write($request->getBody());\n        return $this->client->send($request);\n    }\n}\n";
        assert_eq!(
            calls("php", php),
            [
                "Stream:8",
                "Stream.write:9",
                "RequestInterface.getBody:9",
                "ClientInterface.send:10"
            ]
        );
    }
}
