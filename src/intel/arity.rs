//! Overloads told apart by their number of arguments. Java, C# and C++ give one name several
//! definitions in one class (`WriteValue(int)`, `WriteValue(string, bool)`); resolving a call by
//! name alone spreads it over all of them, and a class with thirty overloads leaves each too
//! little confidence to show. The call's argument count is recorded at extraction
//! ([`call_args`]); a definition's accepted counts are read from its signature when a call is
//! resolved ([`fit`]), so no definition row needs more than it has.
//!
//! Rust has no overloads, but a type's several `From<T>` impls are one name to a call
//! (`Value::from("a")` and `Value::from(true)` are both `Value::from`): the type the first
//! argument is written as, where a literal or a constructor says it ([`written_argument`]),
//! picks the impl whose type argument it is ([`takes_written`]).

use tree_sitter::Node;

use crate::chunk::CodeLanguage;

/// The languages whose calls are counted: those with overloading.
pub(super) fn counted(lang: CodeLanguage) -> bool {
    matches!(
        lang,
        CodeLanguage::Java | CodeLanguage::CSharp | CodeLanguage::Cpp | CodeLanguage::C
    )
}

/// How many arguments the call `node` passes; `None` when that says nothing (a spread
/// argument, a call without an argument list).
pub(super) fn call_args(node: Node<'_>) -> Option<u16> {
    let Some(list) = node.child_by_field_name("arguments") else {
        // C#'s `new Options { Depth = 2 }` calls the constructor without arguments.
        return (node.kind() == "object_creation_expression").then_some(0);
    };
    let mut cursor = list.walk();
    let mut n = 0u16;
    for arg in list.named_children(&mut cursor) {
        match arg.kind() {
            "comment" => {}
            // Java's and C++'s pack expansions (`args...`) pass any number.
            "parameter_pack_expansion" => return None,
            _ => n = n.saturating_add(1),
        }
    }
    Some(n)
}

/// How well a definition takes a call's arguments, worst first. Java, C# and C++ all prefer
/// an overload that takes the arguments as they are over one that needs its default values,
/// and that over one that collects them into `params`, varargs or `...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fit {
    Variadic,
    Defaults,
    Exact,
}

/// How a definition with `signature` takes `args` arguments: `Some(None)` when it cannot,
/// `None` when the signature says nothing (no parameter list, or one cut short). A C#
/// extension method (`this string s`) called `on_value` (`s.FormatWith(p)`, not
/// `StringUtils.FormatWith(s, p)`) gets its first argument from the receiver.
pub fn fit(signature: &str, name: &str, args: u16, on_value: bool) -> Option<Option<Fit>> {
    let p = parameter_counts(signature, name)?;
    let args = if p.extension && on_value {
        args + 1
    } else {
        args
    };
    Some(if args < p.required {
        None
    } else if args < p.fixed {
        Some(Fit::Defaults)
    } else if p.variadic {
        // `params` and varargs with nothing in them too: `log(fmt)` of `log(fmt, args...)`.
        Some(Fit::Variadic)
    } else if args == p.fixed {
        Some(Fit::Exact)
    } else {
        None
    })
}

/// Whether a definition with `signature` takes `args` arguments at all ([`fit`]).
#[cfg(test)]
fn accepts(signature: &str, name: &str, args: u16) -> Option<bool> {
    fit(signature, name, args, false).map(|f| f.is_some())
}

/// A parameter list's shape.
#[derive(Debug, PartialEq, Eq)]
struct Parameters {
    /// Parameters without a default value.
    required: u16,
    /// Parameters before any `params`, varargs or `...`.
    fixed: u16,
    variadic: bool,
    /// C#'s `this T x` first parameter.
    extension: bool,
}

/// The shape of a signature's parameter list.
fn parameter_counts(signature: &str, name: &str) -> Option<Parameters> {
    let list = parameter_list(signature, name)?;
    let params = split_top_level(list);
    let mut shape = Parameters {
        required: 0,
        fixed: 0,
        variadic: false,
        extension: false,
    };
    if params.len() == 1 && params[0] == "void" {
        return Some(shape);
    }
    for (i, p) in params.iter().enumerate() {
        if p.contains("...") || p.starts_with("params ") {
            shape.variadic = true;
            continue;
        }
        shape.fixed += 1;
        if i == 0 && p.starts_with("this ") {
            shape.extension = true;
        }
        if !has_top_level_eq(p) {
            shape.required += 1;
        }
    }
    Some(shape)
}

/// The text between the parentheses after `name` in `signature`, skipping a generic list
/// (`Parse<T>(`); `None` without both parentheses. The name may also stand in the return type
/// (`JsonReader Read(`): the first place it is followed by a list counts.
fn parameter_list<'s>(signature: &'s str, name: &str) -> Option<&'s str> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    signature.match_indices(name).find_map(|(at, _)| {
        if signature[..at].chars().next_back().is_some_and(word) {
            return None;
        }
        let rest = signature[at + name.len()..].trim_start();
        let rest = if rest.starts_with('<') {
            rest[matching(rest)? + 1..].trim_start()
        } else {
            rest
        };
        if !rest.starts_with('(') {
            return None;
        }
        Some(&rest[1..matching(rest)?])
    })
}

/// The byte index of the bracket that closes the one `s` starts with.
fn matching(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The parameters of a list, split at commas outside brackets and trimmed; none for `()`.
pub(super) fn split_top_level(list: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in list.char_indices() {
        match c {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(list[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = list[start..].trim();
    if !last.is_empty() || !out.is_empty() {
        out.push(last);
    }
    out
}

/// Whether a parameter has a default value: an `=` outside brackets that is no `==`, `<=`...
fn has_top_level_eq(param: &str) -> bool {
    let mut depth = 0i32;
    let bytes = param.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'<' | b'[' | b'{' => depth += 1,
            b')' | b'>' | b']' | b'}' => depth -= 1,
            b'=' if depth == 0 => {
                let prev = i.checked_sub(1).map(|j| bytes[j]);
                let next = bytes.get(i + 1);
                if !matches!(prev, Some(b'=' | b'!' | b'<' | b'>')) && next != Some(&b'=') {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The type the first argument of the Rust call `node` is written as, where a literal or a
/// constructor says it: `"a"` is `&str`; `format!(…)`, `String::from(…)`, `x.to_string()`
/// `String`; `vec![…]` `Vec`; `true` `bool`; `'a'` `char`; `1` `integer`; `1.5` `float`; `()`
/// `()`. `None` for any other argument. A call in a macro's tokens is read by
/// [`written_token_argument`].
pub(super) fn written_argument(node: Node<'_>, text: &str) -> Option<String> {
    let list = node.child_by_field_name("arguments")?;
    let mut cursor = list.walk();
    let first = list
        .named_children(&mut cursor)
        .find(|a| !a.kind().ends_with("comment"))?;
    let written = match first.kind() {
        "unary_expression" if first.named_child(0)?.kind() == "integer_literal" => "integer",
        "unary_expression" if first.named_child(0)?.kind() == "float_literal" => "float",
        "macro_invocation" => match &text[first.child_by_field_name("macro")?.byte_range()] {
            "format" => "String",
            "vec" => "Vec",
            _ => return None,
        },
        "call_expression" => {
            let function = first.child_by_field_name("function")?;
            let called = &text[function.byte_range()];
            let method = function
                .child_by_field_name("field")
                .map(|f| &text[f.byte_range()]);
            match (called, method) {
                ("String::new" | "String::from" | "String::with_capacity", _) => "String",
                (_, Some("to_string")) => "String",
                _ => return None,
            }
        }
        kind => literal(kind)?,
    };
    Some(written.to_owned())
}

/// [`written_argument`] of a call in a macro's tokens (`assert_eq!(v, Value::from("a"))`),
/// whose name is `tokens[name]`: a literal that is the whole first argument, or `format!` or
/// `vec!` opening it.
pub(super) fn written_token_argument(
    tokens: &[Node<'_>],
    name: usize,
    text: &str,
) -> Option<String> {
    let group = tokens.get(name + 1).filter(|t| t.kind() == "token_tree")?;
    let mut cursor = group.walk();
    let inner: Vec<Node<'_>> = group.children(&mut cursor).take(4).collect();
    if inner.first()?.kind() != "(" {
        return None;
    }
    let (first, next) = (inner.get(1)?, inner.get(2)?);
    let written = match (first.kind(), next.kind()) {
        ("identifier", "!") => match &text[first.byte_range()] {
            "format" => "String",
            "vec" => "Vec",
            _ => return None,
        },
        (kind, "," | ")") => literal(kind)?,
        _ => return None,
    };
    Some(written.to_owned())
}

/// The type a literal of tree-sitter `kind` is.
fn literal(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "string_literal" | "raw_string_literal" => "&str",
        "boolean_literal" => "bool",
        "char_literal" => "char",
        "integer_literal" => "integer",
        "float_literal" => "float",
        "unit_expression" => "()",
        _ => return None,
    })
}

/// Whether a trait impl's type argument as stored (`&str` of `From<&str>`) is the type a call's
/// first argument is written as ([`written_argument`]).
pub(super) fn takes_written(type_argument: &str, written: &str) -> bool {
    const INTEGERS: &[&str] = &[
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    ];
    match written {
        "integer" => INTEGERS.contains(&type_argument),
        "float" => matches!(type_argument, "f32" | "f64"),
        "Vec" => type_argument == "Vec" || type_argument.starts_with("Vec<"),
        _ => type_argument == written,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overloads_fit_by_their_parameters() {
        let fits = |sig: &str, name: &str, args: u16| fit(sig, name, args, false);
        let create =
            "internal static JsonReaderException Create(JsonReader reader, string message)";
        assert_eq!(fits(create, "Create", 2), Some(Some(Fit::Exact)));
        assert_eq!(fits(create, "Create", 3), Some(None));
        // An extension method, called on a value (its first argument) or with it.
        let format = "static string FormatWith(this string format, IFormatProvider p, object a)";
        assert_eq!(fit(format, "FormatWith", 2, true), Some(Some(Fit::Exact)));
        assert_eq!(fit(format, "FormatWith", 3, true), Some(None));
        assert_eq!(fits(format, "FormatWith", 3), Some(Some(Fit::Exact)));
        assert_eq!(fits(format, "FormatWith", 2), Some(None));
        let params =
            "static string FormatWith(this string f, IFormatProvider p, params object[] a)";
        assert_eq!(
            fit(params, "FormatWith", 3, true),
            Some(Some(Fit::Variadic))
        );
        assert_eq!(
            fit(params, "FormatWith", 1, true),
            Some(Some(Fit::Variadic))
        );
        let write = "public void Write(string s, int depth = 0, params object[] rest)";
        assert_eq!(fits(write, "Write", 0), Some(None));
        assert_eq!(fits(write, "Write", 1), Some(Some(Fit::Defaults)));
        assert_eq!(fits(write, "Write", 2), Some(Some(Fit::Variadic)));
        assert_eq!(fits(write, "Write", 5), Some(Some(Fit::Variadic)));
        let generic = "public <T> T fromJson(Map<String, List<T>> m, Class<T> c)";
        assert_eq!(fits(generic, "fromJson", 2), Some(Some(Fit::Exact)));
        assert_eq!(
            fits("void log(String fmt, Object... args)", "log", 1),
            Some(Some(Fit::Variadic))
        );
        assert_eq!(fits("int main(void)", "main", 0), Some(Some(Fit::Exact)));
        assert_eq!(fits("void Flush()", "Flush", 1), Some(None));
        assert_eq!(
            fits("public JsonReader Read(JsonReader r)", "Read", 1),
            Some(Some(Fit::Exact))
        );
        assert_eq!(
            fits("T Parse<T>(string s, bool strict = x == y)", "Parse", 1),
            Some(Some(Fit::Defaults))
        );
        let get = "Status DBImpl::Get(const ReadOptions& o, const Slice& key, std::string* v)";
        assert_eq!(fits(get, "Get", 3), Some(Some(Fit::Exact)));
        // A class, or a signature cut before its list closes, says nothing.
        assert_eq!(fits("public class Stack<T>", "Stack", 1), None);
        assert_eq!(fits("void Write(string a, int b", "Write", 1), None);
        assert_eq!(accepts("void Write(string a)", "Write", 2), Some(false));
    }
}
