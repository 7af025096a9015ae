//! Text as lexical search sees it: identifiers split and kept whole, path globs as regexes.

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
pub fn lexical_text(path: &str, symbol: Option<&str>, content: &str) -> (String, i32) {
    let mut out: Vec<String> = Vec::new();
    for _ in 0..2 {
        out.extend(words(path));
        out.extend(symbol.into_iter().flat_map(words));
    }
    out.extend(words(content));
    let n = out.len() as i32;
    (out.join(" "), n)
}

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

/// Translates a path glob into an anchored POSIX regular expression for PostgreSQL's `~`.
///
/// `*` matches within one path segment, `**` across segments, `?` one character, `[...]` a
/// class, `{a,b}` alternatives. As in `.gitignore`, a glob without `/` matches the file name at
/// any depth (`*.ts`), and a leading `/` anchors at the repository root.
pub fn glob_to_regex(glob: &str) -> Result<String, String> {
    let glob = glob.trim();
    if glob.is_empty() {
        return Err("path glob must not be empty".into());
    }
    let anchored = glob.starts_with('/') || glob.trim_end_matches('/').contains('/');
    let glob = glob.trim_start_matches('/');
    let mut re = String::from("^");
    if !anchored || glob.starts_with("**/") {
        re.push_str("(.*/)?");
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
                    re.push_str("(.*/)?");
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
        re.push_str("(/.*)?");
    }
    re.push('$');
    Ok(re)
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
            Ok("^(.*/)?[^/]*\\.ts(/.*)?$")
        );
        assert_eq!(
            glob_to_regex("src/**/*.{ts,tsx}").as_deref(),
            Ok("^src/(.*/)?[^/]*\\.(?:ts|tsx)(/.*)?$")
        );
        assert_eq!(glob_to_regex("/docs/").as_deref(), Ok("^docs/.*$"));
        assert_eq!(
            glob_to_regex("a[!x]?").as_deref(),
            Ok("^(.*/)?a[^x][^/](/.*)?$")
        );
        assert!(glob_to_regex("a[b").is_err());
        assert!(glob_to_regex("{a,b").is_err());
        assert!(glob_to_regex(" ").is_err());
    }
}
