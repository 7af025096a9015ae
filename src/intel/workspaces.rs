//! A JavaScript monorepo's own packages (npm's, Yarn's and pnpm's workspaces): a bare specifier
//! that names one (`@acme/ui`, `@acme/ui/button`) resolves to its sources, as the link the
//! package manager puts in `node_modules` would, but to the files that are indexed (`src/`)
//! rather than to what a build writes (`dist/`, `lib/`). Read from the repository's root
//! `package.json` (`workspaces`) or `pnpm-workspace.yaml` when a question needs them, and kept
//! until the workspace's index changes (`IntelService`).

use std::path::Path;

use serde_json::Value;

use super::imports::resolve;
use super::tsconfig::{read_jsonc, star_match};

/// Directories a package's build writes, whose sources are in `src/`.
const BUILD_DIRS: &[&str] = &["dist", "lib", "build", "out", "esm", "cjs", "es", "types"];
/// How deep a `**` in a workspace pattern looks.
const MAX_GLOB_DEPTH: usize = 4;
/// At most this many packages are read.
const MAX_PACKAGES: usize = 2000;

/// The workspace's packages, by name.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Packages {
    packages: Vec<Package>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Package {
    name: String,
    /// From the repository root.
    dir: String,
    /// What the bare name imports, as paths without an extension: its `source`, `exports`,
    /// `module`, `main` and `types` (each also under `src/` for a build's directory), then
    /// `src/index` and `index`.
    entries: Vec<String>,
    /// `exports`' subpaths (`./button`, `./icons/*`, without the `./`) and what each names, as
    /// `entries` are.
    subpaths: Vec<(String, Vec<String>)>,
}

impl Packages {
    /// The packages of the workspaces the root declares; none without a declaration.
    pub fn read(root: &Path) -> Packages {
        let mut dirs = Vec::new();
        for pattern in workspace_patterns(root) {
            let segments: Vec<&str> = pattern
                .trim_start_matches("./")
                .trim_end_matches('/')
                .split('/')
                .filter(|s| !s.is_empty() && *s != ".")
                .collect();
            if segments.contains(&"..") {
                continue;
            }
            expand(root, String::new(), &segments, &mut dirs);
        }
        dirs.sort();
        dirs.dedup();
        let mut packages: Vec<Package> = dirs
            .into_iter()
            .take(MAX_PACKAGES)
            .filter_map(|dir| package(root, dir))
            .collect();
        packages.sort_by(|a, b| a.name.cmp(&b.name));
        packages.dedup_by(|a, b| a.name == b.name);
        Packages { packages }
    }

    fn named(&self, name: &str) -> Option<&Package> {
        self.packages
            .binary_search_by(|p| p.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.packages[i])
    }

    /// The paths (without an extension) `spec` may name: the package's entries for its bare
    /// name, else the subpath through the package's `exports` map, then in the package, under
    /// `src/`, and under `src/` in place of a build's directory (`@acme/data/lib/user` →
    /// `src/user`).
    pub fn bases(&self, spec: &str) -> Vec<String> {
        let (name, sub) = split_specifier(spec);
        let Some(p) = self.named(name) else {
            return Vec::new();
        };
        if sub.is_empty() {
            return p.entries.clone();
        }
        // The package's own map first (`"./button": "./dist/button.js"`, `"./icons/*"`).
        let mut out: Vec<String> = Vec::new();
        for (pattern, targets) in &p.subpaths {
            let Some(star) = star_match(pattern, sub) else {
                continue;
            };
            if star.split('/').any(|s| s == "..") {
                continue;
            }
            out.extend(targets.iter().map(|t| t.replacen('*', star, 1)));
        }
        out.extend(
            [resolve(&p.dir, sub), resolve(&p.dir, &format!("src/{sub}"))]
                .into_iter()
                .flatten(),
        );
        if let Some((first, rest)) = sub.split_once('/')
            && BUILD_DIRS.contains(&first)
        {
            out.extend(resolve(&p.dir, &format!("src/{rest}")));
        }
        out.dedup();
        out
    }

    /// The bare specifiers under which the file at `path` may be imported from another
    /// package: the package's name for an entry, its path in the package (with and without its
    /// extension, a TypeScript file's also as `.js`), and that path without `src/` or with a
    /// build's directory in its place.
    pub fn specifiers(&self, path: &str) -> Vec<String> {
        let stem = strip_extension(path);
        let mut out = Vec::new();
        for p in &self.packages {
            let Some(rel) = stem.strip_prefix(p.dir.as_str()).and_then(|r| {
                if p.dir.is_empty() {
                    Some(r)
                } else {
                    r.strip_prefix('/')
                }
            }) else {
                continue;
            };
            let index_dir = rel
                .strip_suffix("/index")
                .or((rel == "index").then_some(""));
            if p.entries.iter().any(|e| e == stem) {
                out.push(p.name.clone());
            }
            // Written with its extension too (`…/StarlightPage.astro`, `…/button.js`).
            let mut rels = vec![rel.to_owned(), format!("{rel}{}", &path[stem.len()..])];
            if path[stem.len()..].starts_with(".ts") {
                rels.push(format!("{rel}.js"));
            }
            rels.extend(index_dir.filter(|d| !d.is_empty()).map(str::to_owned));
            for r in rels {
                out.push(format!("{}/{r}", p.name));
                if let Some(under) = r.strip_prefix("src/") {
                    out.push(format!("{}/{under}", p.name));
                    for build in BUILD_DIRS {
                        out.push(format!("{}/{build}/{under}", p.name));
                    }
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// `@scope/name/sub/path` → (`@scope/name`, `sub/path`); `name/sub` → (`name`, `sub`).
fn split_specifier(spec: &str) -> (&str, &str) {
    let cut = if spec.starts_with('@') {
        spec.match_indices('/').nth(1).map(|(i, _)| i)
    } else {
        spec.find('/')
    };
    match cut {
        Some(i) => (&spec[..i], &spec[i + 1..]),
        None => (spec, ""),
    }
}

/// `a/b.d.ts`, `a/b.mjs` → `a/b`.
fn strip_extension(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem_len = [".d.ts", ".d.mts", ".d.cts"]
        .iter()
        .find_map(|e| file.strip_suffix(e))
        .or_else(|| file.rsplit_once('.').map(|(s, _)| s))
        .map_or(file.len(), str::len);
    &path[..path.len() - file.len() + stem_len]
}

/// The workspace globs the root declares: `package.json`'s `workspaces` (a list, or Yarn's
/// `{ "packages": [...] }`) and `pnpm-workspace.yaml`'s `packages`. Exclusions (`!…`) are
/// dropped.
fn workspace_patterns(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(json) = read_jsonc(&root.join("package.json")) {
        let list = match json.get("workspaces") {
            Some(Value::Array(a)) => Some(a),
            Some(Value::Object(o)) => o.get("packages").and_then(Value::as_array),
            _ => None,
        };
        out.extend(
            list.into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned),
        );
    }
    if let Ok(yaml) = std::fs::read_to_string(root.join("pnpm-workspace.yaml")) {
        // `packages:` then `  - 'packages/*'` lines; the other keys are not read.
        let mut inside = false;
        for line in yaml.lines() {
            let trimmed = line.trim();
            if !line.starts_with([' ', '\t', '-']) && !trimmed.is_empty() {
                inside = trimmed.starts_with("packages:");
                continue;
            }
            if inside && let Some(item) = trimmed.strip_prefix('-') {
                let item = item.split(" #").next().unwrap_or_default().trim();
                out.push(item.trim_matches(['"', '\'']).to_owned());
            }
        }
    }
    out.retain(|p| !p.is_empty() && !p.starts_with('!'));
    out
}

/// The directories under `prefix` that `segments` match: `*` any one directory, `**` any
/// number (up to [`MAX_GLOB_DEPTH`]); `node_modules` and hidden directories never.
fn expand(root: &Path, prefix: String, segments: &[&str], out: &mut Vec<String>) {
    let Some((first, rest)) = segments.split_first() else {
        out.push(prefix);
        return;
    };
    let join = |name: &str| {
        if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}/{name}")
        }
    };
    if !first.contains('*') {
        let next = join(first);
        if root.join(&next).is_dir() {
            expand(root, next, rest, out);
        }
        return;
    }
    let children = || -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(root.join(&prefix)) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n != "node_modules" && !n.starts_with('.'))
            .collect();
        names.sort();
        names
    };
    if *first == "**" {
        // Zero directories, then one more level at a time.
        expand(root, prefix.clone(), rest, out);
        if prefix.matches('/').count() < MAX_GLOB_DEPTH {
            for name in children() {
                expand(root, join(&name), segments, out);
            }
        }
        return;
    }
    // `*`, or a part of a name (`pkg-*`).
    for name in children() {
        if star_match(first, &name).is_some() {
            expand(root, join(&name), rest, out);
        }
    }
}

/// The package at `dir`, if its `package.json` names it.
fn package(root: &Path, dir: String) -> Option<Package> {
    let json = read_jsonc(&root.join(&dir).join("package.json"))?;
    let name = json.get("name")?.as_str()?.to_owned();
    let mut declared: Vec<&str> = Vec::new();
    for key in ["source", "exports", "module", "main", "types", "typings"] {
        match json.get(key) {
            Some(Value::String(s)) => declared.push(s),
            // `exports: { ".": "./dist/index.js" }` or `{ ".": { "import": …, "types": … } }`,
            // or the conditions at the top (`{ "import": …, "require": … }`).
            // Subpaths only (`{ "./button": … }`): no entry.
            Some(Value::Object(o))
                if !o.contains_key(".") && o.keys().any(|k| k.starts_with('.')) => {}
            Some(Value::Object(o)) => {
                let dot = o.get(".").unwrap_or(&json[key]);
                match dot {
                    Value::String(s) => declared.push(s),
                    Value::Object(conditions) => {
                        declared.extend(conditions.values().filter_map(Value::as_str));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let mut entries = sources(&dir, declared);
    entries.extend(resolve(&dir, "src/index"));
    entries.extend(resolve(&dir, "index"));
    let mut seen = std::collections::HashSet::new();
    entries.retain(|e| seen.insert(e.clone()));
    let subpaths = match json.get("exports") {
        Some(Value::Object(o)) => o
            .iter()
            .filter_map(|(key, target)| {
                let sub = key.strip_prefix("./").filter(|s| !s.is_empty())?;
                let declared: Vec<&str> = match target {
                    Value::String(s) => vec![s],
                    Value::Object(conditions) => {
                        conditions.values().filter_map(Value::as_str).collect()
                    }
                    _ => Vec::new(),
                };
                Some((sub.to_owned(), sources(&dir, declared)))
            })
            .collect(),
        _ => Vec::new(),
    };
    Some(Package {
        name,
        dir,
        entries,
        subpaths,
    })
}

/// The files a package's `declared` paths (`./dist/index.js`) name, as paths without an
/// extension from the repository root: under `src/` in place of a build's directory first,
/// then as written.
fn sources(dir: &str, declared: Vec<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for d in declared {
        let Some(path) = resolve(dir, d) else {
            continue;
        };
        let stem = strip_extension(&path).to_owned();
        let rel = stem
            .strip_prefix(dir)
            .map(|r| r.trim_start_matches('/'))
            .unwrap_or(&stem);
        if let Some((first, rest)) = rel.split_once('/')
            && BUILD_DIRS.contains(&first)
        {
            out.extend(resolve(dir, &format!("src/{rest}")));
        }
        out.push(stem);
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intel::tsconfig::tests::write;

    #[test]
    fn a_package_of_the_workspace_resolves_to_its_sources() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        write(
            root,
            "package.json",
            r#"{ "private": true, "workspaces": ["packages/*", "!packages/old"] }"#,
        );
        write(
            root,
            "packages/common/package.json",
            r#"{ "name": "@acme/common", "main": "lib/index.js", "types": "lib/index.d.ts" }"#,
        );
        write(
            root,
            "packages/core/package.json",
            r#"{ "name": "@acme/core", "exports": { ".": { "import": "./dist/core.mjs" },
                 "./client": { "types": "./dist/client/index.d.ts" }, "./icons/*": "./assets/*.js" } }"#,
        );
        // A directory without a package.json, and node_modules, are no packages.
        write(root, "packages/notes/README.md", "notes");
        write(root, "node_modules/x/package.json", r#"{ "name": "x" }"#);
        let p = Packages::read(root);
        assert_eq!(
            p.bases("@acme/common"),
            [
                "packages/common/src/index",
                "packages/common/lib/index",
                "packages/common/index"
            ]
        );
        assert_eq!(
            p.bases("@acme/common/lib/shared-types"),
            [
                "packages/common/lib/shared-types",
                "packages/common/src/lib/shared-types",
                "packages/common/src/shared-types"
            ]
        );
        assert_eq!(
            p.bases("@acme/core")[..2],
            ["packages/core/src/core", "packages/core/dist/core"]
        );
        // A subpath through `exports`, before the path as written.
        assert_eq!(
            p.bases("@acme/core/client")[..2],
            [
                "packages/core/src/client/index",
                "packages/core/dist/client/index"
            ]
        );
        assert_eq!(
            p.bases("@acme/core/icons/star")[0],
            "packages/core/assets/star"
        );
        // A wildcard never climbs out of its target.
        assert!(
            !p.bases("@acme/core/icons/../../x")
                .iter()
                .any(|b| b.contains("assets"))
        );
        assert!(p.bases("react").is_empty());
        // The other way round.
        let specs = p.specifiers("packages/common/src/shared-types.ts");
        for s in [
            "@acme/common/lib/shared-types",
            "@acme/common/shared-types",
            "@acme/common/src/shared-types",
        ] {
            assert!(specs.contains(&s.to_owned()), "{s}: {specs:?}");
        }
        assert!(!specs.contains(&"@acme/common".to_owned()));
        assert!(
            specs.contains(&"@acme/common/lib/shared-types.js".to_owned()),
            "{specs:?}"
        );
        assert!(
            p.specifiers("packages/common/src/index.ts")
                .contains(&"@acme/common".to_owned())
        );
        assert!(p.specifiers("src/app.ts").is_empty());
    }

    #[test]
    fn pnpm_declares_its_workspaces_in_its_own_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        write(
            root,
            "pnpm-workspace.yaml",
            "packages:\n  - 'packages/**'\n  - \"apps/*\" # the apps\ncatalog:\n  - not-a-package\n",
        );
        write(
            root,
            "packages/ui/button/package.json",
            r#"{ "name": "@acme/button" }"#,
        );
        write(root, "apps/web/package.json", r#"{ "name": "web" }"#);
        write(root, "not-a-package/package.json", r#"{ "name": "nope" }"#);
        let p = Packages::read(root);
        assert_eq!(p.bases("@acme/button")[0], "packages/ui/button/src/index");
        assert_eq!(
            p.bases("web/src/main"),
            ["apps/web/src/main", "apps/web/src/src/main"]
        );
        assert!(p.bases("nope").is_empty());
        assert_eq!(Packages::read(&root.join("apps")), Packages::default());
    }

    #[test]
    fn specifiers_split_at_the_scope() {
        assert_eq!(split_specifier("@a/b/c/d"), ("@a/b", "c/d"));
        assert_eq!(split_specifier("@a/b"), ("@a/b", ""));
        assert_eq!(split_specifier("lodash/fp"), ("lodash", "fp"));
        assert_eq!(strip_extension("a/b.d.ts"), "a/b");
        assert_eq!(strip_extension("a.b/c"), "a.b/c");
    }
}
