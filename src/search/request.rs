//! A search request as the service understands it, validated from what a caller sent.

use crate::config::{SearchConfig, SearchMode};
use crate::store::Filters;

use super::SearchError;
use crate::text::glob_to_regex;

/// Deepest result a request may page to (`offset + limit`).
pub const MAX_DEPTH: usize = 1000;
/// Entries a list filter may have.
const MAX_FILTER_ENTRIES: usize = 100;

/// The fields of a search as a caller sends them, before validation. Every field but `query`
/// is optional; the wire adapters fill this from their own formats.
#[derive(Debug, Clone, Default)]
pub struct RawSearch {
    pub query: String,
    pub file_types: Option<Vec<String>>,
    pub modules: Option<Vec<String>>,
    pub component_types: Option<Vec<String>>,
    pub languages: Option<Vec<String>>,
    pub repository: Option<String>,
    pub path_glob: Option<String>,
    pub limit: Option<i64>,
    pub offset: Option<i64>,
    pub min_similarity: Option<f64>,
    pub mode: Option<String>,
    pub max_per_file: Option<i64>,
    pub workspace: Option<String>,
}

impl RawSearch {
    pub fn query(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            ..Self::default()
        }
    }
}

/// A validated search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    pub query: String,
    pub filters: Filters,
    pub mode: SearchMode,
    pub limit: usize,
    pub offset: usize,
    /// Cosine similarity a result must reach; `None` when the caller set no minimum.
    pub min_similarity: Option<f64>,
    pub max_per_file: usize,
    /// The workspace to search; `None` is the service's default.
    pub workspace: Option<String>,
    /// In hybrid mode, which of a file's chunks come first is decided by the query's words as
    /// much as by its vector ([`crate::search`]'s `pick_chunks_by_words`); where files rank is
    /// unchanged. On unless turned off (the relevance bench does, to compare); not on the
    /// wire. It costs one more statement when a file on the page has several candidates: their
    /// chunks scored by the words (0.3 to 0.8 ms at 100k chunks; docs/BENCHMARKS.md).
    pub chunks_by_words: bool,
    /// What a file's change history adds in hybrid mode (convex fusion), in place of
    /// `search.history_weight`: the context pre-fetch, whose tasks are changes, sets
    /// `context.history_weight`. Not on the wire.
    pub history_weight: Option<f64>,
}

impl SearchRequest {
    /// Validates the raw fields against the configured limits.
    pub fn new(raw: RawSearch, cfg: &SearchConfig) -> Result<Self, SearchError> {
        let invalid = |m: String| Err(SearchError::Invalid(m));
        let query = raw.query.trim();
        if query.is_empty() {
            return invalid("query must not be empty".into());
        }
        no_nul("query", query)?;
        if query.chars().count() > cfg.max_query_chars {
            return invalid(format!(
                "query is longer than {} characters",
                cfg.max_query_chars
            ));
        }
        let limit = match raw.limit {
            None => cfg.default_limit,
            Some(n) if n >= 1 && n as u64 <= cfg.max_limit as u64 => n as usize,
            Some(n) => {
                return invalid(format!(
                    "limit must be between 1 and {}, got {n}",
                    cfg.max_limit
                ));
            }
        };
        let offset = match raw.offset {
            None => 0,
            Some(n) if n >= 0 && (n as u64) + (limit as u64) <= MAX_DEPTH as u64 => n as usize,
            Some(n) => {
                return invalid(format!(
                    "offset must be between 0 and {} - limit, got {n}",
                    MAX_DEPTH
                ));
            }
        };
        let min_similarity = match raw.min_similarity {
            None => None,
            Some(s) if (-1.0..=1.0).contains(&s) => Some(s),
            Some(s) => return invalid(format!("minSimilarity must be between -1 and 1, got {s}")),
        };
        let mode = match raw.mode.as_deref().map(str::trim) {
            None => cfg.mode,
            Some("hybrid") => SearchMode::Hybrid,
            Some("vector") => SearchMode::Vector,
            Some("lexical") => SearchMode::Lexical,
            Some(other) => {
                return invalid(format!(
                    "mode must be \"hybrid\", \"vector\" or \"lexical\", got {other:?}"
                ));
            }
        };
        let max_per_file = match raw.max_per_file {
            None => cfg.max_chunks_per_file.max(1),
            Some(n) if (1..=MAX_DEPTH as i64).contains(&n) => n as usize,
            Some(n) => {
                return invalid(format!(
                    "maxPerFile must be between 1 and {MAX_DEPTH}, got {n}"
                ));
            }
        };
        let lower =
            |l: Option<Vec<String>>| l.map(|l| l.into_iter().map(|s| s.to_lowercase()).collect());
        let path_regex = match raw.path_glob {
            None => None,
            Some(g) => {
                no_nul("pathGlob", &g)?;
                Some(
                    glob_to_regex(&g)
                        .map_err(|e| SearchError::Invalid(format!("pathGlob: {e}")))?,
                )
            }
        };
        let repositories = match raw.repository.map(|r| r.trim().to_owned()) {
            None => None,
            Some(r) if r.is_empty() => return invalid("repository must not be empty".into()),
            Some(r) => {
                no_nul("repository", &r)?;
                Some(vec![r])
            }
        };
        let workspace = match raw.workspace {
            None => None,
            Some(w) => {
                crate::config::check_workspace_name(&w)
                    .map_err(|m| SearchError::Invalid(format!("workspace: {m}")))?;
                Some(w)
            }
        };
        let filters = Filters {
            file_types: lower(clean("fileTypes", raw.file_types)?),
            modules: clean("modules", raw.modules)?,
            component_types: clean("componentTypes", raw.component_types)?,
            languages: lower(clean("languages", raw.languages)?).map(with_language_aliases),
            repositories,
            path_regex,
        };
        Ok(Self {
            query: query.to_owned(),
            filters,
            mode,
            limit,
            offset,
            min_similarity,
            max_per_file,
            workspace,
            chunks_by_words: true,
            history_weight: None,
        })
    }
}

/// Trims the entries of a list filter (and a leading dot, for extensions); an empty list is
/// no filter.
fn clean(name: &str, list: Option<Vec<String>>) -> Result<Option<Vec<String>>, SearchError> {
    let Some(list) = list else { return Ok(None) };
    if list.len() > MAX_FILTER_ENTRIES {
        return Err(SearchError::Invalid(format!(
            "{name} has more than {MAX_FILTER_ENTRIES} entries"
        )));
    }
    let list: Vec<String> = list
        .into_iter()
        .map(|s| s.trim().trim_start_matches('.').to_owned())
        .collect();
    if list.iter().any(String::is_empty) {
        return Err(SearchError::Invalid(format!(
            "{name} must not contain empty strings"
        )));
    }
    for entry in &list {
        no_nul(name, entry)?;
    }
    Ok((!list.is_empty()).then_some(list))
}

/// Refuses a NUL character (PostgreSQL cannot store or compare one in text).
fn no_nul(name: &str, value: &str) -> Result<(), SearchError> {
    if value.contains('\0') {
        return Err(SearchError::Invalid(format!(
            "{name} must not contain NUL characters"
        )));
    }
    Ok(())
}

/// Languages as file extensions (or other common names) find the names results report: `cs`
/// finds `csharp`, `rb` `ruby`, `golang` `go`, `h` both `c` and `cpp` (a header is either, by
/// its text), `yaml` also `yml`. `typescript` also finds `tsx`, as `javascript` holds `.jsx`
/// files: TSX is TypeScript, parsed with its own grammar.
pub fn with_language_aliases(languages: Vec<String>) -> Vec<String> {
    let mut out = languages.clone();
    for l in &languages {
        let aliases: &[&str] = match l.as_str() {
            "cs" | "c#" => &["csharp"],
            "rb" => &["ruby"],
            "cc" | "cxx" | "c++" | "hpp" | "hh" | "hxx" => &["cpp"],
            "h" => &["c", "cpp"],
            "ts" => &["typescript", "tsx"],
            "typescript" => &["tsx"],
            "js" | "jsx" => &["javascript"],
            "py" => &["python"],
            "rs" => &["rust"],
            "md" => &["markdown"],
            "golang" => &["go"],
            // Plain-text files are named by their extension: YAML is `yaml` or `yml`.
            "yaml" => &["yml"],
            "yml" => &["yaml"],
            _ => &[],
        };
        out.extend(aliases.iter().map(|a| (*a).to_owned()));
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn languages_written_as_extensions_find_the_reported_names() {
        let cfg = Config::defaults().expect("defaults").search;
        let req = SearchRequest::new(
            RawSearch {
                languages: Some(vec![
                    "CS".into(),
                    "h".into(),
                    "java".into(),
                    "golang".into(),
                    "yaml".into(),
                    "typescript".into(),
                ]),
                ..RawSearch::query("find")
            },
            &cfg,
        )
        .expect("valid");
        assert_eq!(
            req.filters.languages.as_deref(),
            Some(
                &[
                    "c",
                    "cpp",
                    "cs",
                    "csharp",
                    "go",
                    "golang",
                    "h",
                    "java",
                    "tsx",
                    "typescript",
                    "yaml",
                    "yml"
                ]
                .map(String::from)[..]
            )
        );
    }

    #[test]
    fn requests_are_validated() {
        let cfg = Config::defaults().expect("defaults").search;
        let ok = SearchRequest::new(
            RawSearch {
                file_types: Some(vec![".TS".into()]),
                path_glob: Some("src/**".into()),
                ..RawSearch::query(" find ")
            },
            &cfg,
        )
        .expect("valid");
        assert_eq!(ok.query, "find");
        assert_eq!(ok.limit, 5);
        assert_eq!(ok.mode, SearchMode::Hybrid);
        assert_eq!(
            ok.filters.file_types.as_deref(),
            Some(&["ts".to_string()][..])
        );
        assert!(ok.filters.path_regex.is_some());
        let bad = [
            RawSearch::query(""),
            RawSearch {
                limit: Some(0),
                ..RawSearch::query("x")
            },
            RawSearch {
                limit: Some(100_000),
                ..RawSearch::query("x")
            },
            RawSearch {
                min_similarity: Some(2.0),
                ..RawSearch::query("x")
            },
            RawSearch {
                offset: Some(-1),
                ..RawSearch::query("x")
            },
            RawSearch {
                offset: Some(999),
                limit: Some(5),
                ..RawSearch::query("x")
            },
            RawSearch {
                mode: Some("fuzzy".into()),
                ..RawSearch::query("x")
            },
            RawSearch {
                max_per_file: Some(0),
                ..RawSearch::query("x")
            },
            RawSearch {
                path_glob: Some("[".into()),
                ..RawSearch::query("x")
            },
            RawSearch {
                repository: Some(" ".into()),
                ..RawSearch::query("x")
            },
            RawSearch {
                languages: Some(vec!["".into()]),
                ..RawSearch::query("x")
            },
        ];
        // Every field refuses NUL, naming itself.
        let nul = "a\0b".to_owned();
        let with_nul = [
            ("query", RawSearch::query(nul.clone())),
            (
                "fileTypes",
                RawSearch {
                    file_types: Some(vec![nul.clone()]),
                    ..RawSearch::query("x")
                },
            ),
            (
                "modules",
                RawSearch {
                    modules: Some(vec![nul.clone()]),
                    ..RawSearch::query("x")
                },
            ),
            (
                "componentTypes",
                RawSearch {
                    component_types: Some(vec![nul.clone()]),
                    ..RawSearch::query("x")
                },
            ),
            (
                "languages",
                RawSearch {
                    languages: Some(vec![nul.clone()]),
                    ..RawSearch::query("x")
                },
            ),
            (
                "repository",
                RawSearch {
                    repository: Some(nul.clone()),
                    ..RawSearch::query("x")
                },
            ),
            (
                "pathGlob",
                RawSearch {
                    path_glob: Some(nul.clone()),
                    ..RawSearch::query("x")
                },
            ),
            (
                "workspace",
                RawSearch {
                    workspace: Some(nul.clone()),
                    ..RawSearch::query("x")
                },
            ),
            (
                "mode",
                RawSearch {
                    mode: Some(nul.clone()),
                    ..RawSearch::query("x")
                },
            ),
        ];
        for (field, raw) in with_nul {
            match SearchRequest::new(raw, &cfg) {
                Err(SearchError::Invalid(m)) => assert!(m.starts_with(field), "{field}: {m}"),
                other => panic!("{field}: {other:?}"),
            }
        }
        match SearchRequest::new(
            RawSearch {
                path_glob: Some("[".into()),
                ..RawSearch::query("x")
            },
            &cfg,
        ) {
            Err(SearchError::Invalid(m)) => assert!(m.starts_with("pathGlob"), "{m}"),
            other => panic!("{other:?}"),
        }
        for raw in bad {
            let shown = format!("{raw:?}");
            assert!(
                matches!(SearchRequest::new(raw, &cfg), Err(SearchError::Invalid(_))),
                "{shown}"
            );
        }
    }
}
