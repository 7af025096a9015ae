//! TypeScript's and JavaScript's path aliases: `compilerOptions.paths` and `baseUrl` of the
//! `tsconfig.json` (or `jsconfig.json`) nearest an importing file, read when a question is
//! asked, so an edit to the config needs no re-index.
//!
//! A bare specifier (`@app/core/user`, `components/Button`) is stored as the import candidate
//! `bare:<specifier>` ([`BARE`]); [`Aliases::bases`] turns it into the paths the compiler would
//! try, and [`Aliases::specifiers`] the other way round, for the files that import a file.
//! Followed: relative `extends` (a string or a list), and a solution config's `references`
//! when it sets no alias of its own (Vite's `tsconfig.json` → `tsconfig.app.json`). Not
//! followed: `extends` from a package. The workspace's own packages: [`super::workspaces`].

use std::path::Path;

use serde_json::Value;

use super::imports::{dir_of, join, resolve};

/// The prefix of an import candidate that is a bare specifier, resolved through [`Aliases`] and
/// [`super::workspaces::Packages`].
pub const BARE: &str = "bare:";

/// Each pattern (`@app/*`, `config`) and its targets (`src/app/*`), in the config's order.
type Patterns = Vec<(String, Vec<String>)>;

/// How deep `extends` and `references` are followed.
const MAX_DEPTH: usize = 4;

/// The aliases in force for the files under one config; paths are from the repository root.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Aliases {
    /// Where `paths`' targets start: `baseUrl` when set, else the directory of the config
    /// that sets `paths`.
    paths_base: String,
    paths: Patterns,
    /// `baseUrl`: a bare specifier is also tried under it.
    base_url: Option<String>,
}

impl Aliases {
    /// The aliases of the config nearest `dir` (a directory from the repository root), up to
    /// the root: `None` when there is none, or it sets no alias.
    #[cfg(test)]
    pub fn nearest(root: &Path, dir: &str) -> Option<Aliases> {
        Self::of_config(root, &nearest_config(root, dir)?)
    }

    /// The aliases the config at `file` (from the repository root) sets, with what it extends:
    /// `None` when it sets none.
    pub fn of_config(root: &Path, file: &str) -> Option<Aliases> {
        let aliases = read(root, file, 0).into_aliases();
        (!aliases.is_empty()).then_some(aliases)
    }

    fn is_empty(&self) -> bool {
        self.paths.is_empty() && self.base_url.is_none()
    }

    /// The paths (without an extension, as a bundler would try them) `spec` may name, in the
    /// compiler's order: the targets of the pattern that matches it with the longest prefix
    /// (an exact pattern first), then the specifier under `baseUrl`.
    pub fn bases(&self, spec: &str) -> Vec<String> {
        let mut best: Option<(usize, &str, &[String])> = None;
        for (pattern, targets) in &self.paths {
            let Some(star) = star_match(pattern, spec) else {
                continue;
            };
            let rank = pattern.find('*').unwrap_or(usize::MAX);
            if best.is_none_or(|(r, _, _)| rank > r) {
                best = Some((rank, star, targets));
            }
        }
        let mut out: Vec<String> = best
            .into_iter()
            .flat_map(|(_, star, targets)| {
                targets
                    .iter()
                    .filter_map(move |t| resolve(&self.paths_base, &t.replacen('*', star, 1)))
            })
            .collect();
        if let Some(base) = &self.base_url {
            out.extend(resolve(base, spec));
        }
        out.retain(|p| !p.is_empty());
        out.dedup();
        out
    }

    /// The bare specifiers under which the file at `path` may be imported: through each
    /// pattern whose target names it, and as its path under `baseUrl`.
    pub fn specifiers(&self, path: &str) -> Vec<String> {
        // The file as a bundler names it: with and without its extension, and as its
        // directory when it is an `index`.
        let mut names = vec![path.to_owned()];
        let file = path.rsplit('/').next().unwrap_or(path);
        if let Some(dot) = file.find('.') {
            let stem = &path[..path.len() - file.len() + dot];
            names.push(stem.to_owned());
            if &file[..dot] == "index" {
                names.push(dir_of(path).to_owned());
            }
        }
        let mut out = Vec::new();
        for (pattern, targets) in &self.paths {
            for target in targets {
                let Some(full) = resolve(&self.paths_base, target) else {
                    continue;
                };
                for name in &names {
                    if let Some(star) = star_match(&full, name) {
                        out.push(pattern.replacen('*', star, 1));
                    }
                }
            }
        }
        if let Some(base) = &self.base_url {
            for name in &names {
                let under = if base.is_empty() {
                    Some(name.as_str())
                } else {
                    name.strip_prefix(base.as_str())
                        .and_then(|r| r.strip_prefix('/'))
                };
                out.extend(under.filter(|u| !u.is_empty()).map(str::to_owned));
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// What `*` stands for when `pattern` (`@app/*`, `./icons/*.js`, or no `*` at all) matches `s`:
/// `Some("")` for a pattern without one that is `s` itself, `None` when it does not match.
pub(super) fn star_match<'a>(pattern: &str, s: &'a str) -> Option<&'a str> {
    match pattern.split_once('*') {
        None => (pattern == s).then_some(""),
        Some((pre, suf)) => {
            (s.len() >= pre.len() + suf.len() && s.starts_with(pre) && s.ends_with(suf))
                .then(|| &s[pre.len()..s.len() - suf.len()])
        }
    }
}

/// The `tsconfig.json` (or `jsconfig.json`) nearest `dir` (a directory from the repository
/// root), up to the root, as a path from the root.
pub fn nearest_config(root: &Path, dir: &str) -> Option<String> {
    let mut dir = dir.trim_matches('/').to_owned();
    loop {
        for name in ["tsconfig.json", "jsconfig.json"] {
            let file = join(&dir, name);
            if root.join(&file).is_file() {
                return Some(file);
            }
        }
        if dir.is_empty() {
            return None;
        }
        dir = dir_of(&dir).to_owned();
    }
}

/// What one config and those it extends set, paths from the repository root.
#[derive(Debug, Default)]
struct Read {
    base_url: Option<String>,
    /// The directory of the config that set `paths`, and the patterns.
    paths: Option<(String, Patterns)>,
}

impl Read {
    /// Options set later win, each as a whole (TypeScript does not merge `paths`).
    fn over(self, later: Read) -> Read {
        Read {
            base_url: later.base_url.or(self.base_url),
            paths: later.paths.or(self.paths),
        }
    }

    fn into_aliases(self) -> Aliases {
        let (declared_in, paths) = self.paths.unwrap_or_default();
        Aliases {
            paths_base: self.base_url.clone().unwrap_or(declared_in),
            paths,
            base_url: self.base_url,
        }
    }
}

/// The config at `file` (from the repository root) with what it extends; a file that cannot be
/// read or parsed sets nothing.
fn read(root: &Path, file: &str, depth: usize) -> Read {
    let Some(config) = read_jsonc(&root.join(file)) else {
        return Read::default();
    };
    let dir = dir_of(file);
    let related = |v: Option<&Value>| -> Vec<String> {
        let specs: Vec<&str> = match v {
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|e| e.as_str().or_else(|| e.get("path")?.as_str()))
                .collect(),
            _ => Vec::new(),
        };
        specs
            .into_iter()
            .filter(|s| s.starts_with("./") || s.starts_with("../"))
            .filter_map(|s| resolve(dir, s))
            .map(|p| {
                // `extends: "./base"` and `references: [{ path: "./app" }]` name a file or a
                // directory's tsconfig.json.
                if p.ends_with(".json") {
                    p
                } else if root.join(&p).is_dir() {
                    join(&p, "tsconfig.json")
                } else {
                    format!("{p}.json")
                }
            })
            .collect()
    };
    let mut out = Read::default();
    if depth < MAX_DEPTH {
        for base in related(config.get("extends")) {
            out = out.over(read(root, &base, depth + 1));
        }
    }
    let options = config.get("compilerOptions");
    let own = Read {
        base_url: options
            .and_then(|o| o.get("baseUrl")?.as_str())
            .and_then(|b| resolve(dir, b)),
        paths: options
            .and_then(|o| o.get("paths")?.as_object())
            .map(|paths| {
                let patterns = paths
                    .iter()
                    .map(|(pattern, targets)| {
                        let targets = targets
                            .as_array()
                            .map(|t| t.iter().filter_map(|t| t.as_str()).map(str::to_owned))
                            .into_iter()
                            .flatten()
                            .collect();
                        (pattern.clone(), targets)
                    })
                    .collect();
                (dir.to_owned(), patterns)
            }),
    };
    out = out.over(own);
    // A solution config (`files: []` and `references`) sets its aliases in the configs it
    // references: the first that sets any.
    if out.paths.is_none() && out.base_url.is_none() && depth < MAX_DEPTH {
        for reference in related(config.get("references")) {
            let r = read(root, &reference, depth + 1);
            if r.paths.is_some() || r.base_url.is_some() {
                return r;
            }
        }
    }
    out
}

/// The JSON (with comments and trailing commas allowed) of the file at `path`; `None` when it
/// cannot be read or parsed.
pub(super) fn read_jsonc(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&strip_jsonc(&text)).ok()
}

/// JSON with comments and trailing commas (what `tsc` reads) as JSON: both dropped outside
/// strings. Byte by byte: every character it looks for is ASCII, which no byte of another
/// character's UTF-8 equals.
fn strip_jsonc(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    // `text[kept..i]` is kept, not yet copied.
    let (mut i, mut kept) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() {
                    match b[i] {
                        b'\\' => i += 2,
                        b'"' => {
                            i += 1;
                            break;
                        }
                        _ => i += 1,
                    }
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                out.push_str(&text[kept..i]);
                i = text[i..].find('\n').map_or(b.len(), |n| i + n);
                kept = i;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                out.push_str(&text[kept..i]);
                i = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                kept = i;
            }
            b',' if matches!(first_significant(&text[i + 1..]), Some('}' | ']')) => {
                out.push_str(&text[kept..i]);
                i += 1;
                kept = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[kept.min(text.len())..]);
    out
}

/// The first character of `text` that is not blank or in a comment.
fn first_significant(text: &str) -> Option<char> {
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, after)| after);
        } else {
            return rest.chars().next();
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Writes `text` to `file` under `root`, making its directories.
    pub(in crate::intel) fn write(root: &Path, file: &str, text: &str) {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn comments_and_trailing_commas_are_dropped_outside_strings() {
        let text = "{\n  // a comment\n  \"a\": \"http://x/*y*/\", /* b */\n  \"c\": [1, 2,],\n}\n";
        let v: Value = serde_json::from_str(&strip_jsonc(text)).expect("json");
        assert_eq!(v["a"], "http://x/*y*/");
        assert_eq!(v["c"], serde_json::json!([1, 2]));
    }

    #[test]
    fn paths_resolve_by_the_longest_prefix_and_then_under_base_url() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        write(
            root,
            "tsconfig.base.json",
            r#"{ "compilerOptions": { "baseUrl": ".", "paths": {
                // Nx: one entry per library.
                "@acme/data": ["libs/data/src/index.ts"],
                "@acme/*": ["libs/*/src"],
                "@acme/ui/*": ["libs/ui/src/lib/*"],
            } } }"#,
        );
        write(
            root,
            "apps/web/tsconfig.json",
            r#"{ "extends": "../../tsconfig.base.json", "compilerOptions": { "strict": true } }"#,
        );
        let a = Aliases::nearest(root, "apps/web/src/pages").expect("aliases");
        assert_eq!(
            a.bases("@acme/data"),
            ["libs/data/src/index.ts", "@acme/data"]
        );
        assert_eq!(
            a.bases("@acme/ui/button"),
            ["libs/ui/src/lib/button", "@acme/ui/button"]
        );
        assert_eq!(a.bases("@acme/auth")[0], "libs/auth/src");
        // Under `baseUrl` (the root) only, as the compiler would try it.
        assert_eq!(a.bases("react"), ["react"]);
        assert_eq!(
            a.specifiers("libs/ui/src/lib/button.tsx"),
            [
                "@acme/ui/button",
                "@acme/ui/button.tsx",
                "libs/ui/src/lib/button",
                "libs/ui/src/lib/button.tsx"
            ]
        );
        assert_eq!(
            a.specifiers("libs/data/src/index.ts"),
            [
                "@acme/data",
                "libs/data/src",
                "libs/data/src/index",
                "libs/data/src/index.ts"
            ]
        );
    }

    #[test]
    fn a_solution_config_takes_the_aliases_of_the_config_it_references() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        // Vite's template: no `baseUrl`, so targets start at the config's own directory.
        write(
            root,
            "web/tsconfig.json",
            r#"{ "files": [], "references": [{ "path": "./tsconfig.node.json" }, { "path": "./tsconfig.app.json" }] }"#,
        );
        write(
            root,
            "web/tsconfig.node.json",
            r#"{ "include": ["vite.config.ts"] }"#,
        );
        write(
            root,
            "web/tsconfig.app.json",
            r#"{ "compilerOptions": { "paths": { "~/*": ["./src/*"] } } }"#,
        );
        let a = Aliases::nearest(root, "web/src/views").expect("aliases");
        assert_eq!(a.bases("~/stores/user"), ["web/src/stores/user"]);
        assert!(a.bases("vue").is_empty());
        assert_eq!(
            a.specifiers("web/src/stores/user.ts"),
            ["~/stores/user", "~/stores/user.ts"]
        );
        // No config above: nothing.
        assert_eq!(Aliases::nearest(root, "scripts"), None);
    }

    #[test]
    fn a_config_that_climbs_out_of_the_root_or_cannot_be_read_sets_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        write(
            root,
            "tsconfig.json",
            r#"{ "compilerOptions": { "paths": { "x/*": ["../../*"], "y": ["src/y.ts"] } } }"#,
        );
        write(root, "pkg/jsconfig.json", "{ not json");
        let a = Aliases::nearest(root, "src").expect("aliases");
        assert!(a.bases("x/etc/passwd").is_empty());
        assert_eq!(a.bases("y"), ["src/y.ts"]);
        assert_eq!(Aliases::nearest(root, "pkg/lib"), None);
    }
}
