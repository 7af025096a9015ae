//! File context: lines of an indexed file, with lines around them, confined to indexed roots.
//!
//! A path is read only when it names a file the index holds (so never an excluded, skipped or
//! unknown file), relative to its repository's root, without `..` and with no symlink leading
//! out of the root: the daemon may run with more rights than the caller. The lines come from
//! disk; `stale` says when the file no longer has the bytes that were indexed.

use std::path::{Component, Path, PathBuf};

use thiserror::Error;

use crate::scan::sha256_hex;
use crate::search::{SearchError, SearchService};
use crate::store::StoreError;

/// Lines around the asked range a request may add on each side.
pub const MAX_CONTEXT_LINES: u32 = 200;
/// Lines one answer may hold.
pub const MAX_LINES: u32 = 2000;

#[derive(Debug, Error)]
pub enum SourceError {
    /// The caller's: a bad path or range.
    #[error("{0}")]
    Invalid(String),
    /// No such indexed file (or it is gone from disk).
    #[error("{0}")]
    NotFound(String),
    /// The path leads out of its repository's root.
    #[error("{0}")]
    Forbidden(String),
    #[error("reading {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<SearchError> for SourceError {
    fn from(e: SearchError) -> Self {
        match e {
            SearchError::Invalid(m) => SourceError::Invalid(m),
            SearchError::Forbidden(m) => SourceError::Forbidden(m),
            SearchError::Store(s) => SourceError::Store(s),
            SearchError::Embedding(e) => SourceError::Invalid(e.to_string()),
        }
    }
}

/// What a caller asks for.
#[derive(Debug, Clone, Default)]
pub struct FileRequest {
    /// The file's path relative to its repository's root, as search results give it.
    pub path: String,
    /// Needed only when several repositories of the workspace hold the path.
    pub repository: Option<String>,
    /// First line wanted, 1-based (default 1).
    pub start_line: Option<i64>,
    /// Last line wanted, inclusive (default: `start_line`'s end of file, capped at [`MAX_LINES`]).
    pub end_line: Option<i64>,
    /// Lines added before and after the range.
    pub context: Option<i64>,
    pub workspace: Option<String>,
}

/// Lines of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLines {
    pub repository: String,
    pub path: String,
    pub language: Option<String>,
    pub workspace: String,
    /// The range returned, 1-based and inclusive (context included, clamped to the file).
    pub start_line: u32,
    pub end_line: u32,
    pub total_lines: u32,
    /// The lines, each ending in a line break.
    pub content: String,
    /// The file on disk differs from what was indexed.
    pub stale: bool,
}

/// Reads indexed files' lines. Cheap to clone.
#[derive(Clone)]
pub struct SourceService {
    search: SearchService,
    max_bytes: u64,
    redact_secrets: bool,
}

impl SourceService {
    /// By the index rules: files larger than `index.max_file_bytes` are not read (a notebook
    /// larger than [`crate::scan::read_limit`]), and
    /// credentials are blanked as indexing blanks them when `index.redact_secrets` is on.
    pub fn new(search: SearchService, rules: &crate::config::IndexConfig) -> Self {
        Self {
            search,
            max_bytes: rules.max_file_bytes,
            redact_secrets: rules.redact_secrets,
        }
    }

    pub async fn lines(&self, req: FileRequest) -> Result<FileLines, SourceError> {
        let path = clean_path(&req.path)?;
        let (start, end, context) = range(&req)?;
        let workspace = req
            .workspace
            .clone()
            .unwrap_or_else(|| self.search.default_workspace().to_owned());
        let store = self.search.store();
        let scope = store.scope(&workspace).await?;
        if let Some(r) = &req.repository
            && !scope.contains(r)
        {
            return Err(SourceError::NotFound(format!(
                "no repository `{r}` in workspace `{workspace}`"
            )));
        }
        let mut found = store
            .indexed_file(&scope, req.repository.as_deref(), &path)
            .await?;
        let file = match found.len() {
            0 => {
                return Err(SourceError::NotFound(format!(
                    "no indexed file `{path}` in workspace `{workspace}`{}",
                    req.repository
                        .as_deref()
                        .map(|r| format!(", repository `{r}`"))
                        .unwrap_or_default()
                )));
            }
            1 => found.remove(0),
            _ => {
                let names: Vec<&str> = found.iter().map(|f| f.repository.as_str()).collect();
                return Err(SourceError::Invalid(format!(
                    "`{path}` is indexed in several repositories ({}); name one in `repository`",
                    names.join(", ")
                )));
            }
        };
        let root = PathBuf::from(&file.root);
        let max_bytes = crate::scan::read_limit(self.max_bytes, &path);
        let rel = path.clone();
        let bytes = tokio::task::spawn_blocking(move || read_confined(&root, &rel, max_bytes))
            .await
            .map_err(|e| SourceError::Invalid(format!("reading the file failed: {e}")))??;
        let stale = sha256_hex(&bytes) != file.file_hash;
        let (text, _) = crate::scan::text_of(bytes);
        let text = if self.redact_secrets {
            let file_type = crate::scan::file_type_of(&path);
            crate::secrets::redact(&text, &file_type, &path)
                .0
                .into_owned()
        } else {
            text
        };
        let lines: Vec<&str> = text.lines().collect();
        let total = lines.len() as u32;
        if start > total.max(1) {
            return Err(SourceError::Invalid(format!(
                "startLine {start} is past the end of `{path}` ({total} lines)"
            )));
        }
        let first = start.saturating_sub(context).max(1);
        let last = end
            .unwrap_or(u32::MAX)
            .saturating_add(context)
            .min(total)
            .min(first.saturating_add(MAX_LINES - 1));
        let mut content = String::new();
        for line in lines
            .iter()
            .skip(first as usize - 1)
            .take((last + 1).saturating_sub(first) as usize)
        {
            content.push_str(line);
            content.push('\n');
        }
        Ok(FileLines {
            repository: file.repository,
            path,
            language: file.language,
            workspace,
            start_line: first,
            end_line: last.max(first.min(total)),
            total_lines: total,
            content,
            stale,
        })
    }
}

/// The path as stored: relative, `/`-separated, without `.` parts; `..`, absolute paths and
/// NUL are refused.
pub(crate) fn clean_path(path: &str) -> Result<String, SourceError> {
    let invalid = |m: &str| Err(SourceError::Invalid(format!("path: {m}")));
    if path.trim().is_empty() {
        return invalid("must not be empty");
    }
    if path.contains('\0') {
        return invalid("must not contain NUL characters");
    }
    if path.starts_with('/') || path.starts_with('\\') || Path::new(path).is_absolute() {
        return Err(SourceError::Forbidden(format!(
            "path: `{path}` is absolute; give it relative to its repository's root, as search \
             results do"
        )));
    }
    let mut parts = Vec::new();
    for part in Path::new(path).components() {
        match part {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(SourceError::Forbidden(format!(
                    "path: `{path}` leads out of its repository (`..`)"
                )));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(SourceError::Forbidden(format!(
                    "path: `{path}` is absolute"
                )));
            }
        }
    }
    Ok(parts.join("/"))
}

/// The asked range: first line, last line if given, context lines.
fn range(req: &FileRequest) -> Result<(u32, Option<u32>, u32), SourceError> {
    let invalid = |m: String| Err(SourceError::Invalid(m));
    let start = req.start_line.unwrap_or(1);
    if start < 1 || start > i64::from(u32::MAX) {
        return invalid(format!("startLine must be at least 1, got {start}"));
    }
    let end = match req.end_line {
        Some(e) if e < start || e > i64::from(u32::MAX) => {
            return invalid(format!(
                "endLine must be at least startLine ({start}), got {e}"
            ));
        }
        e => e.map(|e| e as u32),
    };
    let context = req.context.unwrap_or(0);
    if !(0..=i64::from(MAX_CONTEXT_LINES)).contains(&context) {
        return invalid(format!(
            "context must be between 0 and {MAX_CONTEXT_LINES}, got {context}"
        ));
    }
    Ok((start as u32, end, context as u32))
}

/// The file's bytes, when its real path is inside the root's real path.
fn read_confined(root: &Path, rel: &str, max_bytes: u64) -> Result<Vec<u8>, SourceError> {
    let gone = || {
        SourceError::NotFound(format!(
            "`{rel}` is indexed but no longer on disk under {}",
            root.display()
        ))
    };
    let real_root = root.canonicalize().map_err(|_| gone())?;
    let real = root.join(rel).canonicalize().map_err(|_| gone())?;
    if !real.starts_with(&real_root) {
        return Err(SourceError::Forbidden(format!(
            "`{rel}` leads out of its repository's root (a symbolic link to {})",
            real.display()
        )));
    }
    let read = |source| SourceError::Read {
        path: real.clone(),
        source,
    };
    let meta = std::fs::metadata(&real).map_err(read)?;
    if !meta.is_file() {
        return Err(gone());
    }
    if meta.len() > max_bytes {
        return Err(SourceError::Invalid(format!(
            "`{rel}` is {} bytes, more than index.max_file_bytes ({max_bytes})",
            meta.len()
        )));
    }
    std::fs::read(&real).map_err(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_relative_and_stay_inside() {
        assert_eq!(clean_path("./src//a.rs").ok().as_deref(), Some("src/a.rs"));
        assert!(matches!(
            clean_path("../../etc/passwd"),
            Err(SourceError::Forbidden(_))
        ));
        assert!(matches!(
            clean_path("src/../../x"),
            Err(SourceError::Forbidden(_))
        ));
        assert!(matches!(
            clean_path("/etc/passwd"),
            Err(SourceError::Forbidden(_))
        ));
        assert!(matches!(clean_path(""), Err(SourceError::Invalid(_))));
        assert!(matches!(clean_path("a\0b"), Err(SourceError::Invalid(_))));
    }

    #[test]
    fn ranges_are_checked() {
        let req = |s, e, c| FileRequest {
            start_line: s,
            end_line: e,
            context: c,
            ..FileRequest::default()
        };
        assert_eq!(range(&req(None, None, None)).ok(), Some((1, None, 0)));
        assert_eq!(
            range(&req(Some(5), Some(9), Some(2))).ok(),
            Some((5, Some(9), 2))
        );
        assert!(range(&req(Some(0), None, None)).is_err());
        assert!(range(&req(Some(9), Some(5), None)).is_err());
        assert!(range(&req(None, None, Some(1000))).is_err());
    }

    #[test]
    fn a_symlink_out_of_the_root_is_refused() {
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("secret"), "s").expect("write");
        let root = tempfile::tempdir().expect("tempdir");
        std::fs::write(root.path().join("in.txt"), "a\nb\n").expect("write");
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join("link"))
            .expect("symlink");
        assert_eq!(
            read_confined(root.path(), "in.txt", 100).ok(),
            Some(b"a\nb\n".to_vec())
        );
        #[cfg(unix)]
        assert!(matches!(
            read_confined(root.path(), "link", 100),
            Err(SourceError::Forbidden(_))
        ));
        assert!(matches!(
            read_confined(root.path(), "missing", 100),
            Err(SourceError::NotFound(_))
        ));
    }
}
