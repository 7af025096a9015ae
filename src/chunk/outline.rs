//! Code in languages without a grammar here (Kotlin, PHP, Swift, Scala, Elixir, Lua, Dart, ...)
//! cut where its indentation says a definition starts, not by size alone.
//!
//! Nearly all code is laid out the same way whatever its language: definitions at one level of
//! indentation, separated by blank lines or by the line that closes the one before (`}`, `end`),
//! their comments directly above them, and their bodies indented deeper. A block of lines that
//! fits in a chunk is kept whole; one that does not (a class) is opened up, and the blocks one
//! level deeper (its methods) are cut the same way. What follows a definition's keyword (`fun`,
//! `function`, `def`, `class`, ...) names the block, so that a search for the name finds it.

use std::borrow::Cow;
use std::rc::Rc;
use std::sync::LazyLock;

use regex::Regex;

use super::{Layout, Span};

/// The file types cut this way: source code of languages the chunker has no grammar for.
/// Configuration, data and prose (`toml`, `yaml`, `txt`) stay cut by size.
pub(crate) fn applies_to(file_type: &str) -> bool {
    matches!(
        file_type,
        "kt" | "kts"
            | "scala"
            | "sc"
            | "php"
            | "swift"
            | "m"
            | "mm"
            | "dart"
            | "lua"
            | "ex"
            | "exs"
            | "erl"
            | "hrl"
            | "hs"
            | "ml"
            | "mli"
            | "fs"
            | "fsi"
            | "fsx"
            | "clj"
            | "cljs"
            | "cljc"
            | "el"
            | "lisp"
            | "scm"
            | "rkt"
            | "r"
            | "jl"
            | "zig"
            | "nim"
            | "pl"
            | "pm"
            | "groovy"
            | "gradle"
            | "elm"
            | "sol"
            | "vb"
            | "tcl"
            | "proto"
    )
}

/// The modifiers and annotations a definition's keyword may follow (`private suspend fun`,
/// `@JvmStatic fun`, `export async function`).
const MODIFIERS: &str = r"(?:(?:public|private|protected|internal|open|abstract|final|static|override|inline|suspend|data|sealed|enum|export|async|local|pub|readonly|lazy|operator|infix|tailrec|external|actual|expect|annotation|companion|value|inner|mutating|fileprivate|convenience|required|@\w+(?:\([^)]*\))?)\s+)*";

/// A definition's keyword and name, at the start of a line after any [`MODIFIERS`], and after
/// the type parameters of a generic function (`fun <T> name`): `fun`, `function`, `def`
/// (Elixir's `defp`, `defmacro`), `class`, `interface`, `object`, ...; and Lisp's
/// `(defun name`. A name may be quoted in backticks (Kotlin's `` fun `parses a date`() ``).
static DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^\s*\(?{MODIFIERS}(fun|function|func|def|defp|defmacro|defmacrop|defmodule|defprotocol|defimpl|defn|defun|defmethod|defclass|defstruct|define|sub|proc|method|class|interface|trait|object|struct|enum|protocol|extension|module|message|service|contract|library|type|typealias)\s+\(?(?:<[^>]*>\s*)?(`[^`]+`|[A-Za-z_$][\w$.:?!-]*)",
    ))
    .expect("a valid regex")
});

/// A Kotlin extension function, `fun` then its receiver type, a `.` and its name: `fun
/// Buffer.readByte()`, `fun <T> List<T>.second()`, `fun String?.orEmpty()`, `fun <K, V :
/// Comparable<V>> Map<K, V>.maxBy()`. The receiver's type arguments and `?` are left out of
/// the name it gives (`List.second`), so that the receiver is the function's owner.
static KOTLIN_EXTENSION: LazyLock<Regex> = LazyLock::new(|| {
    // Type parameters or arguments, one level of nesting deep: `<K, V : Comparable<V>>`.
    let generics = r"<(?:[^<>]|<[^<>]*>)*>";
    Regex::new(&format!(
        r"^\s*{MODIFIERS}fun\s+(?:{generics}\s*)?([A-Za-z_][\w.]*?)\s*(?:{generics})?\??\.(`[^`]+`|[A-Za-z_]\w*)\s*\("
    ))
    .expect("a valid regex")
});

/// The keyword and name of the definition `line` starts, if it starts one: `("fun", "peek")`,
/// `("function", "M.setup")`, `("defmodule", "Plug.Conn")`.
pub(crate) fn definition(line: &str) -> Option<(&str, &str)> {
    let caps = DEFINITION.captures(line)?;
    let (keyword, name) = (caps.get(1)?, caps.get(2)?);
    // A `(` before the name is Scheme's `(define (name args)`; elsewhere it opens the
    // parameters of an anonymous function (PHP's `function (int $code)`), which names nothing.
    if keyword.as_str() != "define" && line[keyword.end()..name.start()].contains('(') {
        return None;
    }
    Some((keyword.as_str(), unquoted(name.as_str())))
}

/// What follows a Dart declaration's type: `get`/`set`, the name, type parameters, then its
/// parameters or body (`(`, `=>`, `{`, `async`).
const DART_NAME_THEN_BODY: &str =
    r"\s+(?:(?:get|set)\s+)?([A-Za-z_$][\w$]*)\s*(?:<[^()]*?>)?\s*(?:\(|=>|\{|async\b)";

/// Dart declares a function, method, getter or setter by its type, with no keyword:
/// `Widget build(BuildContext context) {`, `Future<void> main() async {`, `int get count =>`,
/// `static Map<String, dynamic> toJson(User u) =>`. Constructors (`CounterCubit() :
/// super(0);`) are their class's.
static DART_DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:static|external|abstract|covariant)\s+)*([A-Za-z_$][\w$]*)(?:<[^()]*?>)?\??{DART_NAME_THEN_BODY}"
    ))
    .expect("a valid regex")
});

/// A Dart declaration whose return type is a function type, from that type's `Function(…)`:
/// `void Function() overridePrint(void Function() body) {` declares `overridePrint`, where
/// [`DART_DEFINITION`] reads `Function` (a field `void Function()? onTap,` declares nothing).
static DART_AFTER_FUNCTION_TYPE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"\bFunction\s*\([^()]*\)\??{DART_NAME_THEN_BODY}")).expect("a valid regex")
});

/// A Dart class with Dart 3's modifiers (`base class`, `interface class`, `sealed class`,
/// `abstract mixin class`, `final class`), a mixin (`mixin Counting on Object`) and an
/// extension type (`extension type UserId(int id)`).
static DART_CLASS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:(?:(?:abstract|sealed|base|final|interface|mixin)\s+)+class|extension\s+type(?:\s+const)?|mixin)\s+([A-Za-z_$][\w$]*)",
    )
    .expect("a valid regex")
});

/// Words that start a Dart statement or expression rather than a declaration's type, or that
/// cannot name one: `return foo(x);`, `await for (…) {`, `else if (…) {`, `final x = f();`.
#[rustfmt::skip]
const DART_NOT_DECLARATIONS: &[&str] = &[
    "return", "await", "yield", "throw", "new", "const", "final", "var", "late", "case", "else",
    "if", "for", "while", "switch", "do", "try", "catch", "on", "in", "is", "as", "assert",
    "super", "this", "import", "export", "part", "library", "typedef", "extends", "implements",
    "with", "default", "break", "continue", "required", "when", "factory", "operator", "sync",
];

/// [`definition`] in a file of type `file_type`: in Dart also the classes [`DART_CLASS`] reads,
/// and the declarations [`DART_DEFINITION`] reads, as functions (methods in a class).
pub(crate) fn definition_in<'a>(file_type: &str, line: &'a str) -> Option<(&'a str, Cow<'a, str>)> {
    if matches!(file_type, "kt" | "kts")
        && let Some(caps) = KOTLIN_EXTENSION.captures(line)
    {
        let receiver = caps.get(1)?.as_str();
        let name = unquoted(caps.get(2)?.as_str());
        return Some(("fun", Cow::Owned(format!("{receiver}.{name}"))));
    }
    if file_type != "dart" {
        return definition(line).map(|(keyword, name)| (keyword, Cow::Borrowed(name)));
    }
    // Dart 3's class modifiers, which [`DEFINITION`] would read as `interface class`; mixins.
    if let Some(caps) = DART_CLASS.captures(line) {
        return Some(("class", Cow::Borrowed(caps.get(1)?.as_str())));
    }
    // An extension without a name (`extension on String {`) names nothing.
    if line.trim_start().starts_with("extension on ") {
        return None;
    }
    if let Some((keyword, name)) = definition(line) {
        return Some((keyword, Cow::Borrowed(name)));
    }
    let caps = DART_DEFINITION.captures(line)?;
    let (ty, mut name) = (caps.get(1)?.as_str(), caps.get(2)?.as_str());
    if name == "Function" {
        name = DART_AFTER_FUNCTION_TYPE.captures(line)?.get(1)?.as_str();
    }
    if DART_NOT_DECLARATIONS.contains(&ty) || DART_NOT_DECLARATIONS.contains(&name) {
        return None;
    }
    Some(("function", Cow::Borrowed(name)))
}

/// A definition's name as [`DEFINITION`] captured it, without backticks or a trailing `:`/`.`.
fn unquoted(name: &str) -> &str {
    match name.strip_prefix('`').and_then(|n| n.strip_suffix('`')) {
        Some(quoted) => quoted,
        None => name.trim_end_matches([':', '.']),
    }
}

/// One line: where it starts and ends (after its `\n`), its indentation, whether it is blank.
#[derive(Clone, Copy)]
struct Line {
    start: usize,
    end: usize,
    indent: usize,
    blank: bool,
}

/// The layout of `text`: blocks of lines at most `max_chars` long where its indentation allows,
/// each named after the definition it starts with.
pub(crate) fn layout(text: &str, max_chars: usize, file_type: &str) -> Layout {
    let mut lines: Vec<Line> = Vec::new();
    let mut pos = 0;
    for piece in text.split_inclusive('\n') {
        let body = piece.trim_end();
        let mut indent = body
            .chars()
            .take_while(|c| c.is_whitespace())
            .map(|c| if c == '\t' { 4 } else { 1 })
            .sum();
        // A doc comment's ` * ` lines are at the indentation of its `/**`.
        if body.trim_start().starts_with('*')
            && let Some(above) = lines.iter().rev().find(|l| !l.blank)
        {
            indent = above.indent;
        }
        lines.push(Line {
            start: pos,
            end: pos + piece.len(),
            indent,
            blank: body.trim().is_empty(),
        });
        pos += piece.len();
    }
    let mut blocks = Vec::new();
    cut(text, &lines, max_chars, file_type, &mut blocks);
    let owners = owners(text, &lines, file_type);
    let spans = blocks
        .into_iter()
        .map(|(start, end)| {
            let first = lines.partition_point(|l| l.start < start);
            let (kind, symbol) = match named(&text[start..end], file_type) {
                // A member is named by the definitions it is in: `RateLimiter.refill`.
                Some((kind, name, at)) => {
                    let owner = owners.get(first + at).cloned().flatten();
                    let name = match owner {
                        Some(owner) if !name.contains(['.', ':']) => format!("{owner}.{name}"),
                        _ => name,
                    };
                    (kind, Some(name))
                }
                // Code between a class's members is the class's.
                None => {
                    let code = (first..lines.len()).find(|&i| !lines[i].blank);
                    (
                        "code",
                        code.and_then(|i| owners[i].as_deref().map(str::to_owned)),
                    )
                }
            };
            Span {
                start,
                end,
                defines: if kind == "code" {
                    Vec::new()
                } else {
                    symbol.iter().cloned().collect()
                },
                symbol,
                kind,
                parent: 0,
                mergeable: true,
            }
        })
        .collect();
    Layout {
        spans,
        containers: Vec::new(),
    }
}

/// Lines of a block looked at for the definition it starts with (its comments and annotations
/// come first).
const HEAD_LINES: usize = 30;

/// The kind (`class` or `function`) and name of the definition a block starts with: the first
/// of its first [`HEAD_LINES`] lines at the indentation of its first line that [`DEFINITION`]
/// matches, and the index of that line in the block. Definitions nested deeper are not the
/// block's, nor is the code of the container whose closing line ends it.
fn named(block: &str, file_type: &str) -> Option<(&'static str, String, usize)> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let base = block.lines().find(|l| !l.trim().is_empty()).map(indent)?;
    let (at, (keyword, name)) = block
        .lines()
        .take(HEAD_LINES)
        .enumerate()
        .filter(|(_, l)| indent(l) == base)
        .find_map(|(at, l)| Some((at, definition_in(file_type, l)?)))?;
    let kind = match definition_kind(keyword) {
        "function" => "function",
        _ => "class",
    };
    Some((kind, name.into_owned(), at))
}

/// For each line, the classes (objects, modules, structs, extensions, ...) it is inside, as
/// a member's name is qualified by them: `Outer.Inner`; `None` at the top level or inside a
/// function. Read from the indentation, as the blocks are: a definition is inside the ones
/// above it indented less that were not closed since. A class whose body has begun (a line
/// indented deeper, or a `{` line) is closed by a line at its indentation or less that closes
/// a block (`}`, `end`) or starts another definition, and not by other lines (a raw string's
/// lines at column 0, a multi-line header's `) : Base {`); a function, or a class without a
/// body yet (`data class Point(val x: Int)`), by any line at its indentation or less but such a
/// continuation.
fn owners(text: &str, lines: &[Line], file_type: &str) -> Vec<Option<Rc<str>>> {
    struct Open {
        indent: usize,
        /// The qualified name of a class; `None` for a function.
        class: Option<Rc<str>>,
        body: bool,
    }
    let mut open: Vec<Open> = Vec::with_capacity(8);
    let mut out = Vec::with_capacity(lines.len());
    for l in lines {
        if l.blank {
            out.push(open.last().and_then(|o| o.class.clone()));
            continue;
        }
        let code = text[l.start..l.end].trim();
        let definition = definition_in(file_type, code);
        let closes = code.starts_with('}') || code == "end" || code.starts_with("end ");
        let continues = code.starts_with([')', ']', '.', ',', '?', ':', '|', '&', '+', '{']);
        while let Some(o) = open.last() {
            let ends = if o.class.is_some() && o.body {
                definition.is_some() || closes
            } else {
                !continues
            };
            if o.indent >= l.indent && ends {
                open.pop();
            } else {
                break;
            }
        }
        if let Some(o) = open.last_mut()
            && (l.indent > o.indent || code.starts_with('{'))
        {
            o.body = true;
        }
        let owner = open.last().and_then(|o| o.class.clone());
        if let Some((keyword, name)) = definition {
            let container = matches!(
                definition_kind(keyword),
                "class" | "interface" | "struct" | "enum" | "module"
            );
            let name = match &owner {
                Some(outer) if container && !name.contains(['.', ':']) => {
                    Rc::from(format!("{outer}.{name}"))
                }
                _ => Rc::from(&*name),
            };
            open.push(Open {
                indent: l.indent,
                class: container.then_some(name),
                body: code.ends_with('{'),
            });
        }
        out.push(owner);
    }
    out
}

/// The kind of definition a keyword of [`DEFINITION`] makes: `class`, `interface`, `struct`,
/// `enum`, `module`, `type`, or `function` (`fun`, `def`, `sub`, ...).
pub(crate) fn definition_kind(keyword: &str) -> &'static str {
    match keyword {
        "class" | "object" | "defclass" | "extension" | "contract" | "library" => "class",
        "interface" | "trait" | "protocol" | "defprotocol" => "interface",
        "struct" | "defstruct" | "message" => "struct",
        "enum" => "enum",
        "module" | "defmodule" | "defimpl" | "service" => "module",
        "type" | "typealias" => "type",
        _ => "function",
    }
}

/// Levels of indentation tried, from a block's own, for the lines that start its parts.
const LEVELS: usize = 3;

/// Appends to `out` the byte ranges of `lines` cut into blocks: the whole when it fits in
/// `max_chars`; else at each line of the block's shallowest indentation that follows a blank
/// line or a closing line (`}`, `end`) at that indentation, each part still too large cut
/// again. When no line starts a part there (a class: its header, a deeper body, its `}`), the
/// next deeper level is tried (its members), unless the block is a function, which is left
/// whole, as is what cannot be cut: the size split cuts it, its pieces keeping its name.
fn cut(
    text: &str,
    lines: &[Line],
    max_chars: usize,
    file_type: &str,
    out: &mut Vec<(usize, usize)>,
) {
    let (Some(first), Some(last)) = (
        lines.iter().position(|l| !l.blank),
        lines.iter().rposition(|l| !l.blank),
    ) else {
        return;
    };
    let lines = &lines[first..=last];
    let (start, end) = (lines[0].start, lines[lines.len() - 1].end);
    if text[start..end].chars().count() <= max_chars {
        out.push((start, end));
        return;
    }
    let closing = |l: &Line| {
        let t = text[l.start..l.end].trim();
        t.starts_with('}') || t.starts_with(')') || t == "end" || t.starts_with("end ")
    };
    let mut levels: Vec<usize> = lines
        .iter()
        .filter(|l| !l.blank)
        .map(|l| l.indent)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    for (depth, &level) in levels.iter().take(LEVELS).enumerate() {
        // One block at its own level: a function is not opened up.
        if depth == 1
            && named(&text[start..end], file_type).is_some_and(|(kind, ..)| kind == "function")
        {
            break;
        }
        let mut starts = vec![0];
        let mut previous: Option<&Line> = None;
        for (i, l) in lines.iter().enumerate().skip(1) {
            if l.blank {
                continue;
            }
            let after_blank = lines[i - 1].blank;
            let after_closing = previous.is_some_and(|p| p.indent == level && closing(p));
            if l.indent == level && (after_blank || after_closing) && !closing(l) {
                starts.push(i);
            }
            previous = Some(l);
        }
        if starts.len() > 1 {
            starts.push(lines.len());
            for pair in starts.windows(2) {
                cut(text, &lines[pair[0]..pair[1]], max_chars, file_type, out);
            }
            return;
        }
    }
    out.push((start, end));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(text: &str, max: usize) -> Vec<(Option<String>, &'static str, String)> {
        layout(text, max, "kt")
            .spans
            .into_iter()
            .map(|s| {
                let first = text[s.start..s.end].lines().next().unwrap_or("").to_owned();
                (s.symbol, s.kind, first)
            })
            .collect()
    }

    #[test]
    fn a_large_class_is_cut_at_its_methods_and_each_named() {
        let kotlin = "package com.squareup.moshi\n\nimport okio.Buffer\n\n\
            /** Reads JSON. */\n\
            public abstract class JsonReader : Closeable {\n\
            \x20 /** The next token. */\n\
            \x20 @Throws(IOException::class)\n\
            \x20 public abstract fun peek(): Token\n\n\
            \x20 public fun skipValue() {\n    val depth = 0\n    while (depth > 0) {\n      next()\n    }\n  }\n\n\
            \x20 internal companion object {\n    fun of(source: BufferedSource): JsonReader = JsonUtf8Reader(source)\n  }\n\
            }\n";
        // The class's header keeps its first member; a member is named by its class; a part
        // named by a definition nested deeper (the companion's `fun of`) is not named by it, but
        // is its class's code.
        assert_eq!(
            blocks(kotlin, 120),
            [
                (None, "code", "package com.squareup.moshi".to_owned()),
                (None, "code", "import okio.Buffer".to_owned()),
                (
                    Some("JsonReader".to_owned()),
                    "class",
                    "/** Reads JSON. */".to_owned()
                ),
                (
                    Some("JsonReader.skipValue".to_owned()),
                    "function",
                    "  public fun skipValue() {".to_owned()
                ),
                (
                    Some("JsonReader".to_owned()),
                    "code",
                    "  internal companion object {".to_owned()
                ),
            ]
        );
        // Small enough: one block.
        assert_eq!(blocks(kotlin, 10_000).len(), 1);
    }

    #[test]
    fn a_kotlin_extension_function_is_named_by_its_receiver_type() {
        for (line, name) in [
            (
                "internal inline fun Buffer.commonReadByte(): Byte {",
                "Buffer.commonReadByte",
            ),
            ("fun <T> List<T>.second(): T = this[1]", "List.second"),
            ("public fun String?.orEmpty(): String", "String.orEmpty"),
            (
                "fun <K, V : Comparable<V>> Map<K, V>.maxValue(): V? =",
                "Map.maxValue",
            ),
            (
                "  fun Map.Entry<K, V>.swap() = value to key",
                "Map.Entry.swap",
            ),
            (
                "  @JvmStatic @JvmName(\"encodeUtf8\") fun String.encodeUtf8(): ByteString",
                "String.encodeUtf8",
            ),
            ("fun Path.`reads a date`() {", "Path.reads a date"),
            ("fun <T> listOf(vararg items: T): List<T>", "listOf"),
            ("  private fun peek(): Token {", "peek"),
        ] {
            assert_eq!(
                definition_in("kt", line)
                    .as_ref()
                    .map(|(k, n)| (*k, n.as_ref())),
                Some(("fun", name)),
                "{line}"
            );
        }
    }

    /// Each definition's name as the blocks give it, one block per definition (`max` 1).
    fn names(text: &str, file_type: &str) -> Vec<String> {
        layout(text, 1, file_type)
            .spans
            .into_iter()
            .filter(|s| s.kind != "code")
            .filter_map(|s| s.symbol)
            .collect()
    }

    #[test]
    fn members_are_named_by_the_classes_they_are_in_and_nothing_else() {
        let kotlin = "class Outer(\n  val a: Int,\n) : Base {\n\n  fun first() {\n    val s = \"\"\"\n\
            raw at column 0\n    \"\"\".trimIndent()\n  }\n\n  fun Buffer.ext() = 1\n\n\
            \x20 class Inner {\n\n    fun deep() {\n      fun local() {}\n    }\n  }\n\n\
            \x20 fun second() = 2\n\n  companion object {\n\n    fun create(): Outer = Outer(1)\n  }\n}\n\n\
            fun top() {}\n\ndata class Point(val x: Int)\n\nprivate val origin = Point(0)\n\nfun Point.far() = 1\n";
        assert_eq!(
            names(kotlin, "kt"),
            [
                "Outer",
                "Outer.first",
                "Buffer.ext",
                "Outer.Inner",
                "Outer.Inner.deep",
                "Outer.second",
                "Outer.create",
                "top",
                "Point",
                "Point.far",
            ]
        );
        // What follows a class without a body is not in it.
        let glue: Vec<Option<String>> = layout(kotlin, 1, "kt")
            .spans
            .into_iter()
            .filter(|s| s.kind == "code")
            .map(|s| s.symbol)
            .collect();
        assert_eq!(glue.last(), Some(&None), "{glue:?}");
        let elixir = "defmodule Plug.Conn do\n\n  def halt(conn) do\n    conn\n  end\n\n  defp put(conn), do: conn\nend\n\ndefmodule Other do\n\n  def x, do: 1\nend\n";
        assert_eq!(
            names(elixir, "ex"),
            [
                "Plug.Conn",
                "Plug.Conn.halt",
                "Plug.Conn.put",
                "Other",
                "Other.x"
            ]
        );
        let swift = "extension Parser: Sendable {\n\n  func parse() {}\n}\n\nstruct Flag<T> {\n\n  init() {}\n\n  func value() -> T {}\n}\n";
        assert_eq!(
            names(swift, "swift"),
            ["Parser", "Parser.parse", "Flag", "Flag.value"]
        );
        let lua = "local M = {}\n\nfunction M.setup()\nend\n";
        assert_eq!(names(lua, "lua"), ["M.setup"]);
    }

    #[test]
    fn a_file_of_functions_is_cut_at_them_and_a_large_function_kept_whole() {
        let body: String = (0..12).map(|i| format!("  local v{i} = {i}\n")).collect();
        let lua = format!(
            "local M = {{}}\n\nfunction M.setup(opts)\n{body}end\n\nfunction M.run()\n{body}end\n"
        );
        let got = blocks(&lua, 150);
        let names: Vec<Option<&str>> = got.iter().map(|b| b.0.as_deref()).collect();
        assert_eq!(names, [None, Some("M.setup"), Some("M.run")], "{got:?}");
    }

    #[test]
    fn methods_without_blank_lines_between_are_cut_at_the_closing_line() {
        let php = "<?php\nclass Client\n{\n    public function send($request)\n    {\n        return $this->sendAsync($request)->wait();\n    }\n    private function prepareDefaults(array $options): array\n    {\n        $defaults = $this->config;\n        return $defaults;\n    }\n}\n";
        let got = blocks(php, 100);
        let names: Vec<Option<&str>> = got.iter().map(|b| b.0.as_deref()).collect();
        assert_eq!(
            names,
            [Some("Client"), Some("Client.prepareDefaults")],
            "{got:?}"
        );
        // Elixir's `def`, Lua's `function M.name`, Lisp's `(defun name`.
        for (line, name) in [
            ("  defp render(conn, status) do", "render"),
            ("function M.setup(opts)", "M.setup"),
            ("(defun magit-status (directory)", "magit-status"),
            ("  @objc public func reload() {", "reload"),
            ("  public abstract fun <T> nextNull(): T?", "nextNull"),
            ("fun String.toSnakeCase(): String =", "String.toSnakeCase"),
            (
                "internal class `-JsonUtf8Reader` : JsonReader {",
                "-JsonUtf8Reader",
            ),
            ("  @Test fun `reads a null`() {", "reads a null"),
        ] {
            assert_eq!(definition(line).map(|(_, n)| n), Some(name), "{line}");
        }
        for (line, name) in [
            ("  Widget build(BuildContext context) {", Some("build")),
            ("Future<void> main() async {", Some("main")),
            ("  @override Stream<int> get ticks async* {", Some("ticks")),
            (
                "  static Map<String, dynamic> toJson(User u) =>",
                Some("toJson"),
            ),
            ("  set value(int v) {", Some("value")),
            ("mixin Counting on Object {", Some("Counting")),
            ("interface class Repository {", Some("Repository")),
            ("abstract base class Shape extends Object {", Some("Shape")),
            ("sealed class Result<T> {", Some("Result")),
            ("extension type const UserId(int id) {", Some("UserId")),
            ("extension StringX on String {", Some("StringX")),
            ("extension on String {", None),
            ("    return BlocBuilder<CounterCubit, int>(", None),
            ("    await for (final s in states) {", None),
            ("    } else if (done) {", None),
            ("    final cubit = CounterCubit();", None),
            ("  CounterCubit() : super(0);", None),
            (
                "  factory User.fromJson(Map<String, dynamic> json) =>",
                None,
            ),
            ("    expect(find.text('1'), findsOneWidget);", None),
            (
                "void Function() overridePrint(void Function() body) {",
                Some("overridePrint"),
            ),
            ("    TodosOverviewStatus Function()? status,", None),
            ("  final void Function(Object error)? onError;", None),
        ] {
            assert_eq!(
                definition_in("dart", line)
                    .as_ref()
                    .map(|(_, n)| n.as_ref()),
                name,
                "{line}"
            );
        }
        // A declaration by its type is Dart's alone.
        assert!(definition_in("kt", "  Widget build(BuildContext context) {").is_none());
        assert!(definition("    return $defaults;").is_none());
        assert!(definition("    $fn = static function (int $code) use ($x) {").is_none());
        assert_eq!(
            definition("(define (make-counter start)"),
            Some(("define", "make-counter"))
        );
    }
}
