//! Which files exist and what they contain.
//!
//! In: the configured roots. Out: [`SourceFile`]s (relative path, text, sha256, language, module,
//! component type) and [`Skipped`] records with a reason, so a run can say how many files were
//! left out and why. Walking honours `.gitignore`, the include and exclude rules and the size
//! limit; symbolic links are not followed (a link is never a way into a loop), and a broken one
//! is reported as such. Nothing here touches the database.

mod classify;
mod walk;

pub use classify::Classifier;
pub use walk::{Candidate, Unlisted, Walker};

use std::fmt;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::config::IndexConfig;

/// How many leading bytes are checked for a NUL byte to call a file binary (git uses 8000).
const BINARY_SNIFF_BYTES: usize = 8000;

/// A file read from disk, ready to chunk.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path relative to the root, with `/` separators.
    pub rel_path: String,
    pub text: String,
    /// Lower-case hex sha256 of the bytes on disk.
    pub sha256: String,
    /// Extension without the dot, lower-cased; empty when there is none.
    pub file_type: String,
    pub module: Option<String>,
    pub component_type: Option<String>,
}

/// Why a file was left out.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    TooLarge,
    Binary,
    NotUtf8,
    BrokenSymlink,
    Symlink,
    Unreadable(String),
    /// A line longer than `index.max_line_chars`: minified or generated.
    Generated {
        line_chars: usize,
    },
    /// The database refused the file's rows (the message says why).
    Unstorable(String),
    /// Its name is one of `index.secret_files`: never read.
    Secret,
}

impl SkipReason {
    /// A short stable label, for summaries and metrics.
    pub fn label(&self) -> &'static str {
        match self {
            SkipReason::TooLarge => "too large",
            SkipReason::Binary => "binary",
            SkipReason::NotUtf8 => "not utf-8",
            SkipReason::BrokenSymlink => "broken symlink",
            SkipReason::Symlink => "symlink",
            SkipReason::Unreadable(_) => "unreadable",
            SkipReason::Generated { .. } => "minified or generated",
            SkipReason::Unstorable(_) => "cannot be stored",
            SkipReason::Secret => "secret file",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Unreadable(e) => write!(f, "unreadable: {e}"),
            SkipReason::Generated { line_chars } => write!(
                f,
                "minified or generated: a line of {line_chars} characters (index.max_line_chars)"
            ),
            SkipReason::Unstorable(e) => write!(f, "cannot be stored: {e}"),
            SkipReason::Secret => f.write_str("secret file (index.secret_files)"),
            other => f.write_str(other.label()),
        }
    }
}

/// A file that was seen but not indexed.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub rel_path: String,
    pub reason: SkipReason,
}

/// At most this share of a file's bytes (or 4 bytes) may be invalid UTF-8 for it to be read
/// as text.
const MAX_INVALID_SHARE: f64 = 0.02;

/// A file's text. Source files in UTF-8 with a few bytes of a legacy encoding (a Windows-1252
/// dash or a Latin-1 `é` in a comment) are common in older code; they are read with those
/// bytes replaced (U+FFFD), which keeps every line where it was, rather than losing the whole
/// file's definitions. A file that is mostly something else is no UTF-8 text.
fn decode(bytes: Vec<u8>, rel_path: &str) -> Result<String, SkipReason> {
    let bytes = match String::from_utf8(bytes) {
        Ok(text) => return Ok(text),
        Err(e) => e.into_bytes(),
    };
    let invalid: usize = bytes.utf8_chunks().map(|c| c.invalid().len()).sum();
    if invalid > 4 && invalid as f64 > bytes.len() as f64 * MAX_INVALID_SHARE {
        return Err(SkipReason::NotUtf8);
    }
    tracing::debug!(
        path = rel_path,
        invalid,
        "bytes that are not UTF-8 replaced"
    );
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        use fmt::Write;
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// Reads and hashes one candidate, by the repository's `rules` (size and line limits, secret
/// redaction). The hash is of the bytes on disk; the text has its credentials blanked
/// ([`crate::secrets`]). Blocking: call from a blocking thread.
pub fn read_candidate(
    candidate: &Candidate,
    rules: &IndexConfig,
    classifier: &Classifier,
) -> Result<SourceFile, SkipReason> {
    let max_line_chars = rules.max_line_chars;
    let bytes = read_limited(&candidate.abs_path, rules.max_file_bytes)?;
    let sniff = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    if sniff.contains(&0) {
        return Err(SkipReason::Binary);
    }
    let sha256 = sha256_hex(&bytes);
    let text = decode(bytes, &candidate.rel_path)?;
    if max_line_chars > 0 {
        // Bytes bound characters from above: only a long line in bytes needs counting.
        let longest = text
            .lines()
            .filter(|l| l.len() > max_line_chars)
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0);
        if longest > max_line_chars {
            return Err(SkipReason::Generated {
                line_chars: longest,
            });
        }
    }
    let (module, component_type) = classifier.classify(&candidate.rel_path);
    let file_type = file_type_of(&candidate.rel_path);
    let text = if rules.redact_secrets {
        match crate::secrets::redact(&text, &file_type, &candidate.rel_path) {
            (std::borrow::Cow::Owned(clean), n) => {
                tracing::debug!(path = %candidate.rel_path, secrets = n, "credentials redacted");
                clean
            }
            (std::borrow::Cow::Borrowed(_), _) => text,
        }
    } else {
        text
    };
    Ok(SourceFile {
        file_type,
        rel_path: candidate.rel_path.clone(),
        text,
        sha256,
        module,
        component_type,
    })
}

fn read_limited(path: &Path, max_bytes: u64) -> Result<Vec<u8>, SkipReason> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| SkipReason::Unreadable(e.to_string()))?;
    let len = file
        .metadata()
        .map_err(|e| SkipReason::Unreadable(e.to_string()))?
        .len();
    if len > max_bytes {
        return Err(SkipReason::TooLarge);
    }
    // The file may grow between stat and read: never read more than the limit allows.
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| SkipReason::Unreadable(e.to_string()))?;
    if bytes.len() as u64 > max_bytes {
        return Err(SkipReason::TooLarge);
    }
    Ok(bytes)
}

/// The extension of a path, lower-cased, without the dot.
pub fn file_type_of(rel_path: &str) -> String {
    let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn file_types() {
        assert_eq!(file_type_of("a/b/c.TS"), "ts");
        assert_eq!(file_type_of("a/.gitignore"), "");
        assert_eq!(file_type_of("Makefile"), "");
        assert_eq!(file_type_of("x.service.ts"), "ts");
    }
}
