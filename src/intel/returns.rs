//! The class a function or method returns, read from its signature (its head, up to the body,
//! on one line), for the resolver to follow a chain of calls: in `Router::new().route(…)`,
//! `new` returns `Self`, so `route` is `Router`'s. Only a named type counts: a generic
//! parameter, a tuple, a closure, `impl Trait`, a union or a primitive gives `None`, and the
//! call stays on an unknown receiver; but a Python optional (`Context | None`,
//! `Optional[Context]`) is its class, and a Rust primitive (`usize`, `&str`) is one, which a
//! crate's trait may extend.

/// What a definition returns: `signature` is its head, `name` its name, `owner` the class or
/// type it is a member of (what `Self`, `this` and a constructor return), `family` its
/// language's family as the resolver names them (`rust`, `ecma`, `java`, ...).
pub(super) fn returned_class(
    family: &str,
    signature: &str,
    name: &str,
    owner: Option<&str>,
) -> Option<String> {
    let written = match family {
        "rust" => after_parameters(signature, name)?
            .trim_start()
            .strip_prefix("->")?
            .split(" where ")
            .next()?,
        // `-> Context | None`, `-> Optional[Context]`, `-> "Context"`: a `Context`.
        "python" => super::extract::python_annotated(
            after_parameters(signature, name)?
                .trim_start()
                .strip_prefix("->")?
                .trim_end_matches(':'),
        )?,
        "ecma" => after_parameters(signature, name)?
            .trim_start()
            .strip_prefix(':')?
            .split("=>")
            .next()?,
        "go" => {
            let rest = after_parameters(go_after_receiver(signature), name)?.trim();
            // `(*Mux, error)`: the first result.
            let first = match rest.strip_prefix('(') {
                Some(results) => results.split([',', ')']).next()?,
                None => rest,
            };
            // A type of another package keeps it (`http.Handler`).
            return super::extract::go_type(first.trim());
        }
        "java" | "csharp" => before_name(signature, name)?,
        _ => return None,
    };
    let written = written.trim().trim_matches(['"', '\'']);
    // A Rust primitive a crate's trait may extend (`fn line(&self) -> usize`, then
    // `.ordinal()`) is a class there ([`super::extract::RUST_PRIMITIVES`]).
    if family == "rust"
        && let Some(primitive) = super::extract::RUST_PRIMITIVES
            .iter()
            .find(|p| written.trim_start_matches('&').trim() == **p)
    {
        return Some((*primitive).to_owned());
    }
    let class = unwrapped(written, family == "rust")?;
    match class {
        "Self" | "this" | "self" => owner.map(str::to_owned),
        c => Some(c.to_owned()),
    }
}

/// What iterating over what a Rust function returns gives ([`super::extract::rust_element`]),
/// read through a `Result` (its `?` is not written in a receiver): `Recipe` of `-> Vec<&Recipe>`,
/// `-> Option<Recipe>`, `-> impl Iterator<Item = &Recipe>` and `-> io::Result<Vec<Recipe>>`;
/// `Self` is `owner`.
pub(super) fn returned_element(signature: &str, name: &str, owner: Option<&str>) -> Option<String> {
    let mut written = after_parameters(signature, name)?
        .trim_start()
        .strip_prefix("->")?
        .split(" where ")
        .next()?
        .trim();
    if let Some((outer, inner)) = written.split_once('<')
        && outer
            .rsplit("::")
            .next()
            .is_some_and(|o| o.ends_with("Result"))
    {
        // `RunResult<'src, Vec<Invocation<'src>>>`: its lifetimes are no argument.
        let inner = without_lifetimes(inner);
        let mut depth = 0usize;
        let end = inner.char_indices().find(|&(_, c)| match c {
            '<' | '(' | '[' => {
                depth += 1;
                false
            }
            '>' | ')' | ']' if depth > 0 => {
                depth -= 1;
                false
            }
            ',' | '>' => depth == 0,
            _ => false,
        });
        written = inner[..end.map_or(inner.len(), |(i, _)| i)].trim();
    }
    match super::extract::rust_element(written)?.as_str() {
        "Self" => owner.map(str::to_owned),
        element => Some(element.to_owned()),
    }
}

/// The signature after the parameter list that follows `name`: `-> Self` of
/// `pub fn new(x: u8) -> Self`.
fn after_parameters<'a>(signature: &'a str, name: &str) -> Option<&'a str> {
    let at = find_word(signature, name)? + name.len();
    let rest = &signature[at..];
    // Generic parameters before the list: `fn get<T: Into<u8>>(…)`.
    let close = closing_parenthesis(rest, rest.find('(')?)?;
    Some(&rest[close + 1..])
}

/// Where the parenthesis that closes the one at `open` in `text` is.
pub(super) fn closing_parenthesis(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// A Go method's signature without its receiver: `Route(…) Router` of
/// `func (mx *Mux) Route(…) Router`.
fn go_after_receiver(signature: &str) -> &str {
    let rest = signature
        .trim_start()
        .trim_start_matches("func")
        .trim_start();
    if rest.starts_with('(') {
        rest.find(')').map_or(rest, |i| &rest[i + 1..])
    } else {
        rest
    }
}

/// The word before `name(` in a Java or C# head: `GsonBuilder` of
/// `public GsonBuilder setLenient()`; `None` for a constructor (nothing before but modifiers).
fn before_name<'a>(signature: &'a str, name: &str) -> Option<&'a str> {
    let at = find_word(signature, name)?;
    let head = signature[..at].trim_end();
    // The type's start: the space before it, outside its generic arguments
    // (`Map<String, Integer>`).
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in head.char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => depth = depth.saturating_sub(1),
            ' ' if depth == 0 => {
                start = i + 1;
                break;
            }
            _ => {}
        }
    }
    let ty = &head[start..];
    const MODIFIERS: &[&str] = &[
        "public",
        "private",
        "protected",
        "internal",
        "static",
        "final",
        "abstract",
        "synchronized",
        "native",
        "virtual",
        "override",
        "sealed",
        "async",
        "new",
        "extern",
        "unsafe",
        "default",
        "void",
    ];
    (!ty.is_empty() && !MODIFIERS.contains(&ty)).then_some(ty)
}

/// Where `name` starts in `signature` as a whole word followed by `(` or `<`.
fn find_word(signature: &str, name: &str) -> Option<usize> {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    signature.match_indices(name).map(|(i, _)| i).find(|&i| {
        let before = signature[..i].chars().next_back();
        let after = signature[i + name.len()..].trim_start().chars().next();
        !before.is_some_and(ident) && matches!(after, Some('(' | '<'))
    })
}

/// The named type a written return type calls methods on: references, pointers and the
/// wrappers that only hold or defer it are taken off (`&mut Self`, `Result<Router, E>`,
/// `Option<Box<Node>>`, `Promise<Response>`, `*Mux`, `Task<T>`), generics and paths too
/// (`http::Request<B>` is `Request`). With `rust`, a generic type named `…Result` is taken to
/// be an alias of `Result` (`io::Result<File>`, `CompileResult<'src, Name<'src>>`), and its
/// lifetimes are no argument.
fn unwrapped(written: &str, rust: bool) -> Option<&str> {
    const WRAPPERS: &[&str] = &[
        "Result",
        "Option",
        "Box",
        "Arc",
        "Rc",
        "Promise",
        "Task",
        "ValueTask",
        "Optional",
        "Awaitable",
        "Coroutine",
    ];
    let mut t = written.trim();
    loop {
        let before = t;
        t = t.trim_start_matches(['&', '*']).trim_start();
        if let Some(rest) = t.strip_prefix('\'') {
            t = rest.split_once(' ').map_or("", |(_, r)| r).trim_start();
        }
        t = t.strip_prefix("mut ").unwrap_or(t).trim_start();
        if let Some((outer, inner)) = t.split_once('<') {
            let outer_name = outer.rsplit(['.', ':']).next().unwrap_or(outer);
            if WRAPPERS.contains(&outer_name) || (rust && outer_name.ends_with("Result")) {
                // The first argument: `Result<Router, Error>` is `Router`.
                let inner = if rust {
                    without_lifetimes(inner)
                } else {
                    inner
                };
                let mut depth = 0usize;
                let end = inner
                    .char_indices()
                    .find(|&(_, c)| match c {
                        '<' => {
                            depth += 1;
                            false
                        }
                        '>' if depth == 0 => true,
                        '>' => {
                            depth -= 1;
                            false
                        }
                        ',' => depth == 0,
                        _ => false,
                    })
                    .map_or(inner.len(), |(i, _)| i);
                t = inner[..end].trim();
            }
        }
        if t == before {
            break;
        }
    }
    let base = t.split('<').next().unwrap_or(t).trim();
    let last = base.rsplit(['.', ':']).next().unwrap_or(base);
    let named = !last.is_empty()
        && last.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !last.starts_with(|c: char| c.is_ascii_digit())
        // A type parameter (`<T> T fromJson(…)`), not a class.
        && !(last.starts_with(|c: char| c.is_ascii_uppercase())
            && (last.len() == 1 || (last.len() == 2 && last.as_bytes()[1].is_ascii_digit())))
        && !matches!(
            last,
            "void"
                | "bool"
                | "boolean"
                | "int"
                | "long"
                | "string"
                | "number"
                | "any"
                | "unknown"
                | "never"
                | "object"
                | "str"
                | "String"
                | "usize"
                | "isize"
                | "u8"
                | "u16"
                | "u32"
                | "u64"
                | "i8"
                | "i16"
                | "i32"
                | "i64"
                | "f32"
                | "f64"
                | "char"
                | "double"
                | "float"
                | "byte"
                | "short"
                | "None"
                | "error"
                | "undefined"
                | "null"
        )
        && !base.contains(['(', '|', '[', ' ']);
    named.then_some(last)
}

/// A Rust argument list without its leading lifetimes: `Name<'src>>` of `'src, Name<'src>>`.
fn without_lifetimes(mut args: &str) -> &str {
    while let Some(rest) = args.trim_start().strip_prefix('\'') {
        match rest.find([',', '>']) {
            Some(i) if rest.as_bytes()[i] == b',' => args = &rest[i + 1..],
            _ => break,
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::{returned_class, returned_element};

    #[test]
    fn rust_element_types_read_from_heads() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            (
                "pub fn public_recipes(&self) -> Vec<&Recipe<'src>>",
                "public_recipes",
                Some("Recipe"),
            ),
            (
                "fn context(&self) -> Option<Token<'src>>",
                "context",
                Some("Token"),
            ),
            (
                "fn rest(&self) -> impl Iterator<Item = Token<'src>> + 'run",
                "rest",
                Some("Token"),
            ),
            ("fn load() -> io::Result<Vec<Line>>", "load", Some("Line")),
            (
                "fn parse(root: &'run Justfile<'src>) -> RunResult<'src, Vec<Invocation<'src, 'run>>>",
                "parse",
                Some("Invocation"),
            ),
            (
                "fn iter(&self) -> slice::Iter<'_, Name<'src>>",
                "iter",
                Some("Name"),
            ),
            ("fn children(&self) -> Vec<Self>", "children", Some("Node")),
            ("fn pairs(&self) -> Vec<(Key, Value)>", "pairs", None),
            ("fn lock(&self) -> Mutex<State>", "lock", None),
            ("fn count(&self) -> usize", "count", None),
        ];
        for (signature, name, want) in cases {
            assert_eq!(
                returned_element(signature, name, Some("Node")).as_deref(),
                *want,
                "{signature}"
            );
        }
    }

    /// (family, signature, name, owner, the class it returns)
    type Case<'a> = (&'a str, &'a str, &'a str, Option<&'a str>, Option<&'a str>);

    #[test]
    fn return_types_read_from_heads() {
        let cases: &[Case<'_>] = &[
            (
                "rust",
                "pub fn new() -> Self",
                "new",
                Some("Router"),
                Some("Router"),
            ),
            (
                "rust",
                "pub fn route(self, path: &str, f: impl Fn() -> u8) -> Self where S: Clone",
                "route",
                Some("Router"),
                Some("Router"),
            ),
            (
                "rust",
                "pub async fn get(&self, url: &str) -> Result<TestResponse, Error>",
                "get",
                Some("TestClient"),
                Some("TestResponse"),
            ),
            (
                "rust",
                "fn inner(&mut self) -> &mut Inner<T>",
                "inner",
                None,
                Some("Inner"),
            ),
            ("rust", "fn len(&self) -> usize", "len", None, Some("usize")),
            ("rust", "fn run(self)", "run", None, None),
            (
                "rust",
                "fn iter(&self) -> impl Iterator<Item = u8>",
                "iter",
                None,
                None,
            ),
            ("rust", "fn pair() -> (A, B)", "pair", None, None),
            (
                "ecma",
                "async fetch(url: string): Promise<Response>",
                "fetch",
                None,
                Some("Response"),
            ),
            (
                "ecma",
                "where(cond: string): this",
                "where",
                Some("Qb"),
                Some("Qb"),
            ),
            ("ecma", "function parse(s)", "parse", None, None),
            ("ecma", "get(): string | undefined", "get", None, None),
            (
                "java",
                "public GsonBuilder setLenient()",
                "setLenient",
                Some("GsonBuilder"),
                Some("GsonBuilder"),
            ),
            (
                "java",
                "public static <T> List<T> of(T a)",
                "of",
                None,
                Some("List"),
            ),
            ("java", "public void close()", "close", None, None),
            (
                "java",
                "public <T> T fromJson(String json)",
                "fromJson",
                None,
                None,
            ),
            ("rust", "fn get<T>(&self) -> Option<T>", "get", None, None),
            // Aliases of `Result`, with lifetimes before the type.
            (
                "rust",
                "fn parse_name(&mut self) -> CompileResult<'src, Name<'src>>",
                "parse_name",
                Some("Parser"),
                Some("Name"),
            ),
            (
                "rust",
                "pub fn open(p: &Path) -> io::Result<File>",
                "open",
                None,
                Some("File"),
            ),
            (
                "rust",
                "fn run(&self) -> RunResult<'static, 'src>",
                "run",
                None,
                None,
            ),
            // Elsewhere a `…Result` is a class of its own.
            (
                "ecma",
                "query(sql: string): QueryResult<Row>",
                "query",
                None,
                Some("QueryResult"),
            ),
            (
                "java",
                "private Map<String, Integer> counts(int n)",
                "counts",
                None,
                Some("Map"),
            ),
            (
                "java",
                "public Gson(Excluder e)",
                "Gson",
                Some("Gson"),
                None,
            ),
            (
                "go",
                "func (mx *Mux) Route(pattern string, fn func(r Router)) Router",
                "Route",
                Some("Mux"),
                Some("Router"),
            ),
            (
                "go",
                "func NewMux() (*Mux, error)",
                "NewMux",
                None,
                Some("Mux"),
            ),
            (
                "go",
                "func (hr HeaderRouter) Handler(next http.Handler) http.Handler",
                "Handler",
                None,
                Some("http.Handler"),
            ),
            ("go", "func Count() int", "Count", None, None),
            (
                "go",
                "func (mx *Mux) Use(m ...func(http.Handler))",
                "Use",
                None,
                None,
            ),
            (
                "python",
                "def build(self) -> \"Client\":",
                "build",
                None,
                Some("Client"),
            ),
            (
                "python",
                "def with_(self) -> Self:",
                "with_",
                Some("Q"),
                Some("Q"),
            ),
            ("python", "def run(self):", "run", None, None),
            (
                "python",
                "def get_current_context(silent: bool = False) -> Context | None:",
                "get_current_context",
                None,
                Some("Context"),
            ),
            (
                "python",
                "def find(self) -> t.Optional[\"Command\"]:",
                "find",
                None,
                Some("Command"),
            ),
            ("python", "def pair(self) -> A | B:", "pair", None, None),
            (
                "rust",
                "pub fn line(&self) -> usize",
                "line",
                None,
                Some("usize"),
            ),
            ("rust", "fn name(&self) -> &str", "name", None, Some("str")),
            ("kotlin", "fun build(): Client", "build", None, None),
        ];
        for (family, signature, name, owner, want) in cases {
            assert_eq!(
                returned_class(family, signature, name, *owner).as_deref(),
                *want,
                "{family}: {signature}"
            );
        }
    }
}
