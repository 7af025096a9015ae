//! Text as indexing and search both see it: identifiers split and kept whole, definitions
//! keyed by name, path globs as regexes. Used at index time (lexical text, definition keys)
//! and at query time (query words, named identifiers), so it belongs to neither.

/// The words of a text as code search sees them: lower-cased, identifiers split at case
/// changes, digits and underscores (`getUserById` -> get, user, by, id), whole identifiers kept
/// too (`getuserbyid`).
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|t| !t.is_empty())
        .flat_map(|token| {
            let parts = split_identifier(token);
            let whole = (parts.len() > 1).then(|| token.replace('_', "").to_lowercase());
            parts.into_iter().chain(whole)
        })
}

/// The text stored for a chunk's lexical search, and its length in words. The path and the
/// symbol are counted twice: a chunk is more about the words that name it than about the
/// words it happens to contain.
///
/// At most [`MAX_LEXICAL_WORDS`] words and [`MAX_LEXICAL_BYTES`] bytes are kept: PostgreSQL
/// refuses a `tsvector` over 1 MB, and a chunk of a megabyte of distinct identifiers (a
/// minified line) made one. The file postings do not go through this: see [`file_terms`].
pub fn lexical_text(path: &str, symbol: Option<&str>, content: &str) -> (String, i32) {
    let mut out: Vec<String> = Vec::new();
    for _ in 0..2 {
        out.extend(words(path));
        out.extend(symbol.into_iter().flat_map(words));
    }
    let mut bytes: usize = out.iter().map(|w| w.len() + 1).sum();
    for word in words(content) {
        if out.len() >= MAX_LEXICAL_WORDS || bytes + word.len() >= MAX_LEXICAL_BYTES {
            break;
        }
        bytes += word.len() + 1;
        out.push(word);
    }
    let n = out.len() as i32;
    (out.join(" "), n)
}

/// A whole file's words for the file postings: each distinct word once with its count, and the
/// number of words in all. Unlike [`lexical_text`] nothing is cut at a word count: a file's
/// terms reach the database as an array, never as one `tsvector`, so the 1 MB limit does not
/// apply, and a 7,000-line source file is searchable to its last line. Words longer than
/// [`MAX_TERM_CHARS`] (base64, minified noise) are left out, and at most [`MAX_FILE_TERMS`]
/// distinct words are kept, the most frequent first (a minified bundle of distinct
/// identifiers does not write a posting per identifier).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileTerms {
    pub words: Vec<String>,
    pub counts: Vec<i32>,
    /// Words in the file, the path's twice included, whatever was left out.
    pub length: i32,
}

/// See [`FileTerms`]. The path is counted twice, as in [`lexical_text`].
pub fn file_terms(path: &str, content: &str) -> FileTerms {
    let mut counts: std::collections::HashMap<String, (i32, usize)> =
        std::collections::HashMap::new();
    let mut length: i64 = 0;
    let all = words(path).chain(words(path)).chain(words(content));
    for (order, word) in all.enumerate() {
        length += 1;
        if word.chars().count() > MAX_TERM_CHARS {
            continue;
        }
        counts.entry(word).or_insert((0, order)).0 += 1;
    }
    let mut distinct: Vec<(String, (i32, usize))> = counts.into_iter().collect();
    if distinct.len() > MAX_FILE_TERMS {
        distinct.sort_unstable_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
        distinct.truncate(MAX_FILE_TERMS);
    }
    // In order of first occurrence: the same file gives the same arrays.
    distinct.sort_unstable_by_key(|(_, (_, first))| *first);
    let (words, counts) = distinct.into_iter().map(|(w, (n, _))| (w, n)).unzip();
    FileTerms {
        words,
        counts,
        length: length.min(i64::from(i32::MAX)) as i32,
    }
}

/// Characters of a word the file postings keep at most.
pub const MAX_TERM_CHARS: usize = 64;
/// Distinct words of one file the file postings keep at most.
pub const MAX_FILE_TERMS: usize = 50_000;

/// Words of one text's lexical side at most. A `tsvector` holds each distinct lexeme's bytes
/// plus about 8 bytes of entry and positions, so 20,000 words of at most 600,000 bytes in all
/// stay under 800 KB, below PostgreSQL's 1 MB limit, whatever the words.
pub const MAX_LEXICAL_WORDS: usize = 20_000;
/// Bytes of one text's lexical side at most (see [`MAX_LEXICAL_WORDS`]).
pub const MAX_LEXICAL_BYTES: usize = 600_000;

fn split_identifier(token: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = token.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            if !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        let boundary = match prev {
            Some(p) if p.is_lowercase() && c.is_uppercase() => true,
            Some(p) if p.is_uppercase() && c.is_uppercase() => {
                next.is_some_and(|n| n.is_lowercase())
            }
            Some(p) if p.is_alphabetic() != c.is_alphabetic() => true,
            _ => false,
        };
        if boundary && !current.is_empty() {
            parts.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
}

/// The keys a definition is found by: each suffix of its qualified name, lower-cased, with
/// `::`, `.` and `#` read as one separator and anything after the name dropped
/// (`Stack::push` -> `stack.push`, `push`; `LinesCodecError (fmt::Display impl)` ->
/// `linescodecerror`).
pub fn definition_keys(symbol: &str) -> Vec<String> {
    // `Type (Trait impl)::method` is `Type::method`.
    let mut name = String::with_capacity(symbol.len());
    let mut depth = 0usize;
    for c in symbol.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 => name.push(c),
            _ => {}
        }
    }
    let name = name.replace(" ::", "::");
    let Some(segments) = name.split_whitespace().next().and_then(qualified_segments) else {
        return Vec::new();
    };
    (0..segments.len())
        .map(|i| segments[i..].join("."))
        .collect()
}

/// An identifier a query names, as [`definition_keys`] spells it.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedKey {
    pub key: String,
    /// How closely a definition with this key answers: 1 for the name as written (qualified
    /// or not), less for a part of a qualified name (`Stack` or `push` of `Stack::push`).
    pub weight: f64,
}

/// Weight of a definition that matches only the name or the qualifier of a qualified query
/// identifier.
const PART_KEY_WEIGHT: f64 = 0.6;

/// The identifiers a query names, as definition keys: tokens written like code (`snake_case`,
/// `camelCase`, `PascalCase` with two or more humps, or qualified with `::`, `.` or `#`).
/// Plain words are not looked up: `Semaphore` or `close` name too much.
pub fn named_keys(query: &str) -> Vec<NamedKey> {
    let mut out: Vec<NamedKey> = Vec::new();
    let mut add = |key: String, weight: f64| match out.iter_mut().find(|k| k.key == key) {
        Some(k) => k.weight = k.weight.max(weight),
        None => out.push(NamedKey { key, weight }),
    };
    let tokens =
        query.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '$' | '#' | ':' | '.')));
    for token in tokens {
        let token = token.trim_matches(|c: char| matches!(c, ':' | '.'));
        let Some(segments) = qualified_segments(token) else {
            continue;
        };
        let qualified = segments.len() > 1;
        if qualified && !token.contains("::") && !token.contains('#') && names_a_file(&segments) {
            continue;
        }
        if !qualified && !looks_like_code(token.trim_matches('#')) {
            continue;
        }
        add(segments.join("."), 1.0);
        if qualified {
            add(segments[segments.len() - 1].clone(), PART_KEY_WEIGHT);
            add(segments[..segments.len() - 1].join("."), PART_KEY_WEIGHT);
        }
    }
    // A pasted stack trace names dozens: the first ones are looked up.
    out.truncate(MAX_NAMED_KEYS);
    out
}

/// Keys one query looks up at most.
const MAX_NAMED_KEYS: usize = 32;

/// The lower-cased segments of a name qualified with `::`, `.` or `#`, or `None` when a
/// segment is not an identifier.
fn qualified_segments(name: &str) -> Option<Vec<String>> {
    let segments: Vec<String> = name
        .split("::")
        .flat_map(|s| s.split(['.', '#']))
        .filter(|s| !s.is_empty())
        .map(str::to_lowercase)
        .collect();
    let identifier = |s: &String| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
            && s.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    };
    (!segments.is_empty() && segments.iter().all(identifier)).then_some(segments)
}

/// Whether a dotted name reads as a file name (`utils.py`, `Cargo.toml`) or an abbreviation
/// (`e.g`) rather than a member (`loop.close`).
fn names_a_file(segments: &[String]) -> bool {
    const FILE_TYPES: [&str; 12] = [
        "json", "toml", "yaml", "yml", "txt", "lock", "cfg", "ini", "html", "css", "sh", "xml",
    ];
    let last = segments[segments.len() - 1].as_str();
    segments.iter().any(|s| s.chars().count() < 2)
        || FILE_TYPES.contains(&last)
        || !matches!(
            crate::chunk::Language::from_path(&format!("x.{last}")),
            crate::chunk::Language::Text
        )
}

/// Whether a word is written like an identifier rather than prose: an inner underscore, or a
/// lower-case letter followed by an upper-case one (`getUser`, `HeaderParseError`).
fn looks_like_code(word: &str) -> bool {
    let inner = word.trim_matches('_');
    let chars: Vec<char> = word.chars().collect();
    inner.contains('_')
        || (word.starts_with("__") && word.ends_with("__") && !inner.is_empty())
        || chars
            .windows(2)
            .any(|w| w[0].is_lowercase() && w[1].is_uppercase())
}

/// Translates a path glob into an anchored POSIX regular expression for PostgreSQL's `~`.
///
/// `*` matches within one path segment, `**` across segments, `?` one character, `[...]` a
/// class, `{a,b}` alternatives. As in `.gitignore`, a glob without `/` matches the file name at
/// any depth (`*.ts`), and a leading `/` anchors at the repository root.
///
/// Its groups do not capture: PostgreSQL matches a pattern with capturing groups on a slower
/// engine, and `**/tests/**` cost 20 % more per path with them (docs/BENCHMARKS.md).
pub fn glob_to_regex(glob: &str) -> Result<String, String> {
    let glob = glob.trim();
    if glob.is_empty() {
        return Err("path glob must not be empty".into());
    }
    let anchored = glob.starts_with('/') || glob.trim_end_matches('/').contains('/');
    let glob = glob.trim_start_matches('/');
    let mut re = String::from("^");
    if !anchored || glob.starts_with("**/") {
        re.push_str("(?:.*/)?");
    }
    let body = glob.strip_prefix("**/").unwrap_or(glob);
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    let mut braces = 0usize;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '*' if chars.get(i + 1) == Some(&'*') => {
                if chars.get(i + 2) == Some(&'/') {
                    re.push_str("(?:.*/)?");
                    i += 3;
                } else {
                    re.push_str(".*");
                    i += 2;
                }
                continue;
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            '[' => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == ']')
                    .ok_or_else(|| format!("unclosed `[` in path glob {glob:?}"))?;
                let class: String = chars[i + 1..i + 1 + end].iter().collect();
                let class = class
                    .strip_prefix('!')
                    .map_or(class.clone(), |c| format!("^{c}"));
                re.push('[');
                re.push_str(&class.replace('\\', "\\\\"));
                re.push(']');
                i += end + 2;
                continue;
            }
            '{' => {
                braces += 1;
                re.push_str("(?:");
            }
            '}' if braces > 0 => {
                braces -= 1;
                re.push(')');
            }
            ',' if braces > 0 => re.push('|'),
            '\\' => {
                if let Some(&next) = chars.get(i + 1) {
                    re.push('\\');
                    re.push(next);
                    i += 2;
                    continue;
                }
                re.push_str("\\\\");
            }
            c if ".+()|^$}{".contains(c) => {
                re.push('\\');
                re.push(c);
            }
            c => re.push(c),
        }
        i += 1;
    }
    if braces > 0 {
        return Err(format!("unclosed `{{` in path glob {glob:?}"));
    }
    // A glob naming a directory matches everything below it.
    if body.ends_with('/') {
        re.push_str(".*");
    } else {
        re.push_str("(?:/.*)?");
    }
    re.push('$');
    Ok(re)
}

/// Tokens a text costs a language model, counted the way `docs/WIRE.md` ("Context") says: a
/// run of ASCII letters and digits costs one token per 4 characters (rounded up), every other
/// non-space character one, a line break one, and a run of two or more spaces or tabs one.
/// Byte-pair tokenizers (cl100k, o200k, Llama's) merge more than this, so the count is an upper
/// bound for them on code and prose: a block within a budget by this count fits the model's.
pub fn estimate_tokens(text: &str) -> usize {
    let mut tokens = 0;
    let mut word = 0usize;
    let mut blanks = 0usize;
    let flush = |word: &mut usize, blanks: &mut usize, tokens: &mut usize| {
        *tokens += word.div_ceil(4) + usize::from(*blanks >= 2);
        *word = 0;
        *blanks = 0;
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if blanks > 0 {
                flush(&mut word, &mut blanks, &mut tokens);
            }
            word += 1;
        } else if c == ' ' || c == '\t' {
            if word > 0 {
                flush(&mut word, &mut blanks, &mut tokens);
            }
            blanks += 1;
        } else {
            flush(&mut word, &mut blanks, &mut tokens);
            tokens += 1;
        }
    }
    flush(&mut word, &mut blanks, &mut tokens);
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split() {
        let w: Vec<String> = words("getUserById parse_HTTPResponse v2").collect();
        assert_eq!(
            w,
            [
                "get",
                "user",
                "by",
                "id",
                "getuserbyid",
                "parse",
                "http",
                "response",
                "parsehttpresponse",
                "v",
                "2",
                "v2"
            ]
        );
    }

    #[test]
    fn definitions_are_keyed_by_each_suffix_of_their_name() {
        assert_eq!(definition_keys("Stack::push"), ["stack.push", "push"]);
        assert_eq!(
            definition_keys("LinesCodecError (fmt::Display impl)"),
            ["linescodecerror"]
        );
        assert_eq!(definition_keys("Npm.#exec"), ["npm.exec", "exec"]);
        assert_eq!(
            definition_keys("Error (fmt::Display impl)::fmt"),
            ["error.fmt", "fmt"]
        );
        assert_eq!(definition_keys("a.B.c_d"), ["a.b.c_d", "b.c_d", "c_d"]);
        assert!(definition_keys("Class: Agent > Example").is_empty());
        assert!(definition_keys("0.2.0 (23. August, 2021)").is_empty());
    }

    #[test]
    fn queries_name_identifiers_written_like_code() {
        let keys = |q: &str| -> Vec<(String, f64)> {
            named_keys(q)
                .into_iter()
                .map(|k| (k.key, k.weight))
                .collect()
        };
        assert_eq!(
            keys("where is max_frame_length set?"),
            [("max_frame_length".into(), 1.0)]
        );
        assert_eq!(
            keys("HeaderParseError raised"),
            [("headerparseerror".into(), 1.0)]
        );
        assert_eq!(
            keys("CancellationToken::child_token()"),
            [
                ("cancellationtoken.child_token".into(), 1.0),
                ("child_token".into(), PART_KEY_WEIGHT),
                ("cancellationtoken".into(), PART_KEY_WEIGHT),
            ]
        );
        assert_eq!(keys("Semaphore.__init__"), keys("semaphore.__init__"));
        assert_eq!(keys("__init__")[0], ("__init__".into(), 1.0));
        // Prose, sentence case and a trailing full stop are not identifiers.
        assert!(keys("Cancel the remaining tasks. Event loop is closed.").is_empty());
        assert!(keys("RFC 2047 encoded words").is_empty());
        assert!(keys("see utils.py, Cargo.toml and e.g. x.y").is_empty());
        assert_eq!(keys("loop.close")[0], ("loop.close".into(), 1.0));
    }

    #[test]
    fn lexical_text_is_capped_below_the_tsvector_limit() {
        let text: String = (0..200_000).map(|i| format!("uniqueName{i}xyz ")).collect();
        let (lexical, n) = lexical_text("dist/bundle.js", None, &text);
        assert!(n as usize <= MAX_LEXICAL_WORDS, "{n}");
        assert!(lexical.len() <= MAX_LEXICAL_BYTES, "{}", lexical.len());
        assert!(lexical.starts_with("dist bundle js dist bundle js unique name 0"));
    }

    #[test]
    fn file_terms_count_every_word_and_bound_the_distinct_ones() {
        let t = file_terms("src/user.rs", "fn getUser() { getUser() }");
        let count = |w: &str| {
            let i = t.words.iter().position(|x| x == w).expect(w);
            t.counts[i]
        };
        assert_eq!(count("user"), 4);
        assert_eq!(count("getuser"), 2);
        assert_eq!(count("src"), 2);
        assert_eq!(t.length, 2 * 3 + 7);
        // Past the word cap of `lexical_text`, the file's last words are still there.
        let letters = |mut i: usize| {
            let mut w = String::from("w");
            while i > 0 {
                w.push((b'a' + (i % 26) as u8) as char);
                i /= 26;
            }
            w + " "
        };
        let long: String = (0..30_000).map(letters).collect::<String>() + "needle";
        let t = file_terms("a.txt", &long);
        assert!(t.words.iter().any(|w| w == "needle"));
        assert_eq!(t.length, 4 + 30_000 + 1);
        // A bundle of distinct identifiers keeps the most frequent ones, a bounded number.
        let bundle: String = (0..120_000).map(|i| format!("id{i}x ")).collect::<String>()
            + &"common ".repeat(3)
            + &"x".repeat(100);
        let t = file_terms("dist/bundle.js", &bundle);
        assert_eq!(t.words.len(), MAX_FILE_TERMS);
        assert!(t.words.iter().any(|w| w == "common"));
        assert!(t.words.iter().all(|w| w.len() <= MAX_TERM_CHARS));
    }

    #[test]
    fn lexical_text_weights_path_and_symbol() {
        let (text, n) = lexical_text("src/user.rs", Some("getUser"), "fn x() {}");
        assert_eq!(
            text,
            "src user rs get user getuser src user rs get user getuser fn x"
        );
        assert_eq!(n, 14);
    }

    #[test]
    fn globs_translate() {
        assert_eq!(
            glob_to_regex("*.ts").as_deref(),
            Ok("^(?:.*/)?[^/]*\\.ts(?:/.*)?$")
        );
        assert_eq!(
            glob_to_regex("src/**/*.{ts,tsx}").as_deref(),
            Ok("^src/(?:.*/)?[^/]*\\.(?:ts|tsx)(?:/.*)?$")
        );
        assert_eq!(glob_to_regex("/docs/").as_deref(), Ok("^docs/.*$"));
        assert_eq!(
            glob_to_regex("a[!x]?").as_deref(),
            Ok("^(?:.*/)?a[^x][^/](?:/.*)?$")
        );
        assert!(glob_to_regex("a[b").is_err());
        assert!(glob_to_regex("{a,b").is_err());
        assert!(glob_to_regex(" ").is_err());
    }

    #[test]
    fn token_estimate_counts_words_by_four_letters_and_symbols_one_each() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("fn"), 1);
        assert_eq!(estimate_tokens("validate"), 2);
        assert_eq!(estimate_tokens("validate_total"), 5); // 2 + `_` + 2
        assert_eq!(estimate_tokens("a b"), 2); // a single space is free
        assert_eq!(estimate_tokens("    return x;\n"), 1 + 2 + 1 + 1 + 1);
        assert_eq!(estimate_tokens("é"), 1);
    }
}
