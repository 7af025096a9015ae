//! A Rust repository's crates, from its `Cargo.toml` files: a path that starts with the name
//! of one of the repository's own crates (`axum_core::body::Body`, a binary's
//! `codesearch::roots::remove_unattended()`) resolves into that crate's sources as `crate::`
//! does inside it, and a path that starts with a dependency's name (`tokio::spawn()`,
//! `serde_json::to_string()`) is outside the index, whatever the index defines by that name.
//!
//! The manifests read are the ones indexed (a crate whose sources are indexed has its
//! `Cargo.toml` beside them) and the root's; read when a question needs them, and kept until
//! the repository's index changes (`IntelService`).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use toml::{Table, Value};

use super::imports::{exact, rust_candidates};

/// Crates every Rust file can name without declaring a dependency.
const SYSROOT: &[&str] = &["std", "core", "alloc", "proc_macro", "test"];
/// At most this many manifests are read.
pub(super) const MAX_MANIFESTS: usize = 2000;
/// A manifest larger than this is not one (a fixture, a generated file): skipped.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;
/// The tables that declare dependencies, at a manifest's top level, under
/// `[target.'cfg(…)']` and (`dependencies` only) under `[workspace]`.
const DEPENDENCY_TABLES: &[&str] = &["dependencies", "dev-dependencies", "build-dependencies"];

/// The repository's own crates and the dependencies its manifests declare.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Crates {
    /// A library's name as a path names it (`axum_core`) → its root file from the repository
    /// root (`axum-core/src/lib.rs`).
    own: HashMap<String, String>,
    /// The names paths give the crates the manifests depend on that are not the repository's
    /// own, with the sysroot's.
    external: HashSet<String>,
}

impl Crates {
    /// Reads the manifests at `manifests` (paths from `root`) and the root's `Cargo.toml`.
    pub fn read(root: &Path, manifests: &[String]) -> Crates {
        let mut paths: Vec<&str> = manifests
            .iter()
            .map(String::as_str)
            .filter(|p| *p == "Cargo.toml" || p.ends_with("/Cargo.toml"))
            .collect();
        if root.join("Cargo.toml").is_file() {
            paths.push("Cargo.toml");
        }
        paths.sort_unstable();
        paths.dedup();
        paths.truncate(MAX_MANIFESTS);
        let read: Vec<(&str, Table)> = paths
            .into_iter()
            .filter_map(|p| Some((p, read_manifest(&root.join(p))?)))
            .collect();
        let mut crates = Crates::default();
        // (the name a path gives it, the package it names): `core2 = { package = "axum-core" }`.
        let mut dependencies: Vec<(String, String)> = Vec::new();
        for (path, manifest) in &read {
            let dir = path.strip_suffix("Cargo.toml").unwrap_or_default();
            if let Some((name, lib)) = library(manifest)
                && root.join(dir).join(&lib).is_file()
            {
                crates
                    .own
                    .insert(name, format!("{dir}{}", lib.trim_start_matches("./")));
            }
            for table in dependency_tables(manifest) {
                for (key, spec) in table {
                    let package = spec
                        .get("package")
                        .and_then(Value::as_str)
                        .unwrap_or(key.as_str());
                    dependencies.push((ident(key), ident(package)));
                }
            }
        }
        for (name, package) in dependencies {
            if crates.own.contains_key(&name) {
                continue;
            }
            match crates.own.get(&package).cloned() {
                Some(lib) => {
                    crates.own.insert(name, lib);
                }
                None => {
                    crates.external.insert(name);
                }
            }
        }
        crates
            .external
            .extend(SYSROOT.iter().map(|s| (*s).to_owned()));
        crates
    }

    /// The files a path starting with one of the repository's crates may name (as
    /// [`rust_candidates`] gives them, keys from the root); `None` when it names no crate of the
    /// repository.
    pub fn candidates(&self, path: &[String]) -> Option<Vec<String>> {
        let lib = self.own.get(path.first()?)?;
        let mut from_crate = vec!["crate".to_owned()];
        from_crate.extend(path[1..].iter().cloned());
        let mut out = rust_candidates(lib, &from_crate);
        // A library whose root is not `lib.rs` (`[lib] path = "src/axum.rs"`).
        let root = exact(lib);
        if !out.contains(&root) {
            out.push(root);
        }
        Some(out)
    }

    /// Whether `name` is a crate of the repository.
    pub fn owns(&self, name: &str) -> bool {
        self.own.contains_key(name)
    }

    /// Whether a path starting with `name` is in a crate outside the repository.
    pub fn is_external(&self, name: &str) -> bool {
        self.external.contains(name)
    }
}

fn read_manifest(path: &Path) -> Option<Table> {
    if std::fs::metadata(path).ok()?.len() > MAX_MANIFEST_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()?.parse().ok()
}

/// A package's library: the name paths give it and its root file from the manifest's
/// directory. `None` for a virtual manifest (a workspace's root without a package).
fn library(manifest: &Table) -> Option<(String, String)> {
    let package = manifest.get("package")?.as_table()?;
    let lib = manifest.get("lib").and_then(Value::as_table);
    let field = |key: &str| lib.and_then(|l| l.get(key)).and_then(Value::as_str);
    let name = match field("name") {
        Some(n) => n.to_owned(),
        None => package.get("name")?.as_str()?.to_owned(),
    };
    let path = field("path").unwrap_or("src/lib.rs").to_owned();
    Some((ident(&name), path))
}

/// Every dependency table of a manifest.
fn dependency_tables(manifest: &Table) -> Vec<&Table> {
    fn tables_in(t: &Table) -> impl Iterator<Item = &Table> {
        DEPENDENCY_TABLES
            .iter()
            .filter_map(|k| t.get(*k).and_then(Value::as_table))
    }
    let mut out: Vec<&Table> = tables_in(manifest).collect();
    if let Some(targets) = manifest.get("target").and_then(Value::as_table) {
        for target in targets.values().filter_map(Value::as_table) {
            out.extend(tables_in(target));
        }
    }
    if let Some(deps) = manifest
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(Value::as_table)
    {
        out.push(deps);
    }
    out
}

/// The name a path gives a package: `axum-core` is `axum_core`.
fn ident(package: &str) -> String {
    package.replace('-', "_")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intel::tsconfig::tests::write;

    #[test]
    fn own_crates_dependencies_and_renames() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        write(
            root,
            "Cargo.toml",
            "[workspace]\nmembers = [\"web\", \"web-core\", \"cli\"]\n\
             [workspace.dependencies]\nserde = \"1\"\n",
        );
        write(
            root,
            "web/Cargo.toml",
            "[package]\nname = \"web\"\n[dependencies]\n\
             core2 = { package = \"web-core\", path = \"../web-core\" }\ntokio = \"1\"\n\
             [target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n",
        );
        write(root, "web/src/lib.rs", "");
        write(
            root,
            "web-core/Cargo.toml",
            "[package]\nname = \"web-core\"\n[lib]\npath = \"src/core.rs\"\n",
        );
        write(root, "web-core/src/core.rs", "");
        // A binary-only package has no library to name.
        write(root, "cli/Cargo.toml", "[package]\nname = \"cli\"\n");
        write(root, "cli/src/main.rs", "");
        let manifests: Vec<String> = ["web/Cargo.toml", "web-core/Cargo.toml", "cli/Cargo.toml"]
            .map(str::to_owned)
            .to_vec();
        let crates = Crates::read(root, &manifests);
        let path = |p: &str| -> Vec<String> { p.split("::").map(str::to_owned).collect() };

        let web = crates.candidates(&path("web::routing::get")).expect("own");
        assert_eq!(web[0], "/web/src/routing/get.rs");
        assert!(web.contains(&"/web/src/routing.rs".to_owned()));
        assert!(web.contains(&"/web/src/lib.rs".to_owned()));
        let core = crates.candidates(&path("web_core::body")).expect("own");
        assert!(core.contains(&"/web-core/src/body.rs".to_owned()));
        assert!(
            core.contains(&"/web-core/src/core.rs".to_owned()),
            "{core:?}"
        );
        // A dependency renamed in one manifest names the same crate.
        assert_eq!(crates.candidates(&path("core2::body")), Some(core));
        assert_eq!(crates.candidates(&path("cli::run")), None);

        for name in ["tokio", "libc", "serde", "std", "core"] {
            assert!(crates.is_external(name), "{name}");
        }
        for name in ["web", "web_core", "core2", "cli", "crate"] {
            assert!(!crates.is_external(name), "{name}");
        }
    }

    #[test]
    fn a_repository_without_manifests_has_only_the_sysroot() {
        let dir = tempfile::tempdir().expect("tempdir");
        let crates = Crates::read(dir.path(), &["broken/Cargo.toml".to_owned()]);
        assert!(crates.is_external("std"));
        assert!(!crates.is_external("tokio"));
        assert_eq!(crates.candidates(&["web".to_owned()]), None);
    }
}
