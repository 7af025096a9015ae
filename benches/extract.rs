//! What extraction adds to the non-model work of indexing a file: chunking alone (one parse)
//! against one parse handed to chunking and extraction, over every code file (and Vue, Svelte
//! and Astro component) under the directories given (default: the crates this project builds with, from cargo's registry),
//! and apart, over the files of the languages read by their outline (Kotlin, Swift, PHP, ...).
//!
//! `cargo bench --bench extract -- DIR...`; prints files, definitions, calls, imports and the
//! time of each, best of five rounds; and what redacting credentials costs beside them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use codesearch::chunk::{self, ChunkOptions, Language};
use codesearch::{parse, scan, secrets};

/// The files under `dir` with a grammar (`outline` false) or read by their outline (true).
fn code_files(dir: &Path, outline: bool, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            code_files(&p, outline, out);
        } else if let Some(rel) = p.to_str()
            && if outline {
                chunk::reads_outline(rel)
            } else {
                Language::from_path(rel).code().is_some()
            }
            && let Ok(text) = std::fs::read_to_string(&p)
            && text.len() < 1_000_000
        {
            out.push((rel.to_owned(), text));
        }
    }
}

fn best_of(rounds: usize, mut f: impl FnMut()) -> Duration {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let mut dirs: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .collect();
    if dirs.is_empty() {
        let registry = std::env::var("CARGO_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|_| {
                PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cargo")
            })
            .join("registry/src");
        if let Ok(indexes) = std::fs::read_dir(&registry) {
            for index in indexes.flatten() {
                for name in ["tokio-util-0.7.20", "axum-0.8.9", "serde_json-1.0.154"] {
                    dirs.push(index.path().join(name));
                }
            }
        }
    }
    for outline in [false, true] {
        let mut files = Vec::new();
        for d in &dirs {
            code_files(d, outline, &mut files);
        }
        if !files.is_empty() {
            if outline {
                println!("\nread by their outline:");
            }
            measure(&files);
        }
    }
}

fn measure(files: &[(String, String)]) {
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    let opts = ChunkOptions::default();
    let chunk_only = best_of(5, || {
        for (p, t) in files {
            std::hint::black_box(chunk::chunk_file(p, t, &opts));
        }
    });
    let (mut defs, mut calls, mut imports) = (0, 0, 0);
    let both = best_of(5, || {
        (defs, calls, imports) = (0, 0, 0);
        for (p, t) in files {
            let a = std::hint::black_box(parse::analyze(p, t, &opts));
            defs += a.intel.definitions.len();
            calls += a.intel.references.len();
            imports += a.intel.imports.len();
        }
    });
    println!(
        "{} files, {:.1} MB: {defs} definitions, {calls} calls, {imports} imports",
        files.len(),
        bytes as f64 / 1e6
    );
    println!(
        "parse + chunk: {:.0} ms; parse + chunk + extract: {:.0} ms; extraction adds {:.0} %",
        chunk_only.as_secs_f64() * 1e3,
        both.as_secs_f64() * 1e3,
        (both.as_secs_f64() / chunk_only.as_secs_f64() - 1.0) * 100.0
    );
    let mut redacted = 0;
    let redact = best_of(5, || {
        redacted = 0;
        for (p, t) in files {
            let (out, n) = secrets::redact(t, &scan::file_type_of(p), p);
            std::hint::black_box(out);
            redacted += n;
        }
    });
    println!(
        "secret redaction: {:.0} ms ({:.0} % of parse + chunk + extract), {redacted} values redacted",
        redact.as_secs_f64() * 1e3,
        redact.as_secs_f64() / both.as_secs_f64() * 100.0
    );
}
