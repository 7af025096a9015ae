//! Context pre-fetch: the code a task needs, as one block for an agent's prompt.
//!
//! In: a task description (a ticket's title and body: long prose, not a search query) and a
//! token budget. Out: a block headed `RELEVANT CODEBASE CONTEXT` holding the most relevant code
//! first, grouped by file under `path:start-end` headers, within the budget.
//!
//! How a block is chosen:
//! 1. One hybrid search with the task as the query (its first `search.max_query_chars`
//!    characters): the vector side reads the prose for meaning, the lexical side weighs its
//!    rare words, and identifiers written like code in the task find their definitions.
//!    `context.candidates` results, at most 2 per file.
//! 2. Whole chunks (definitions, as the chunker cut them) are added best first while the block
//!    stays within the budget; a chunk that is a piece of a definition too large for one chunk
//!    is offered as the whole definition first, then alone. One that does not fit is passed
//!    over for the next, so a block holds whole definitions rather than cut ones. Only when not
//!    even the best chunk fits is it cut, at a line boundary, and marked so.
//! 3. A file's chunks that overlap or touch are merged into one range; files appear in the
//!    order of their best chunk, a file's ranges in line order.
//!
//! The budget is checked on the rendered block with [`estimate_tokens`], so `tokens` is the
//! block's own count and never exceeds the budget. The same index and task give the same block.

use std::collections::BTreeMap;

use thiserror::Error;

use crate::config::ContextConfig;
use crate::search::{RawSearch, SearchError, SearchRequest, SearchService};
use crate::store::ChunkLines;
use crate::text::estimate_tokens;

/// The block's first line; hosts look for it.
pub const HEADING: &str = "RELEVANT CODEBASE CONTEXT";
/// Chunks one file may contribute. 4 filled a block with one file's functions: on the long
/// queries of the relevance benchmark as tasks, 2 put every changed file in the block for 220 of
/// 308 against 203 (docs/BENCHMARKS.md).
const PER_FILE: i64 = 2;
/// A definition other than the best match is offered whole only when it takes at most this
/// share of the budget (else the chunk found stands for it): whole long functions left a
/// 4,000-token block room for five files on average, and their pieces hold the changed code as
/// often (docs/BENCHMARKS.md).
const WHOLE_SHARE: f64 = 0.25;

#[derive(Debug, Error)]
pub enum ContextError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Search(#[from] SearchError),
}

/// What a caller asks for.
#[derive(Debug, Clone, Default)]
pub struct ContextRequest {
    pub task: String,
    pub budget_tokens: Option<i64>,
    pub workspace: Option<String>,
    pub repository: Option<String>,
    pub file_types: Option<Vec<String>>,
    pub languages: Option<Vec<String>>,
    pub path_glob: Option<String>,
    /// The search mode (`hybrid` when absent). Not on the wire: the benchmark compares a block
    /// filled from a plain keyword search (`lexical`).
    pub mode: Option<String>,
    /// Chunks one file may contribute before every other candidate file has had its share
    /// ([`PER_FILE`] when absent). Not on the wire: the benchmark compares shares.
    pub per_file: Option<i64>,
}

/// A block and what is in it.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextBlock {
    /// The text to inject, Markdown.
    pub block: String,
    /// The block's tokens, counted with [`estimate_tokens`].
    pub tokens: usize,
    pub budget_tokens: usize,
    pub files: Vec<ContextFile>,
    pub workspace: String,
    /// Why the block is not what was asked for (lexical only, nothing indexed, ...).
    pub warning: Option<String>,
    pub search_ms: u64,
    pub query_embedding_ms: u64,
}

/// One file's part of a block.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextFile {
    pub repository: String,
    pub file_path: String,
    pub language: Option<String>,
    /// Line ranges in the block, 1-based and inclusive, in line order.
    pub ranges: Vec<(u32, u32)>,
    /// Whether a range was cut to fit the budget.
    pub cut: bool,
}

/// Builds blocks over the search service. Cheap to clone.
#[derive(Clone)]
pub struct ContextService {
    search: SearchService,
    cfg: ContextConfig,
}

/// A chunk chosen for the block: its file and lines.
#[derive(Debug, Clone)]
struct Piece {
    /// Rank of the file's best chunk, which orders the files.
    file_rank: usize,
    repository: String,
    file_path: String,
    language: Option<String>,
    start: u32,
    lines: Vec<String>,
    cut: bool,
}

impl ContextService {
    pub fn new(search: SearchService, cfg: ContextConfig) -> Self {
        Self { search, cfg }
    }

    pub fn config(&self) -> &ContextConfig {
        &self.cfg
    }

    pub async fn build(&self, req: ContextRequest) -> Result<ContextBlock, ContextError> {
        let budget = match req.budget_tokens {
            None => self.cfg.budget_tokens,
            Some(b) if b >= 100 && b as usize <= self.cfg.max_budget_tokens => b as usize,
            Some(b) => {
                return Err(ContextError::Invalid(format!(
                    "budgetTokens must be between 100 and {}, got {b}",
                    self.cfg.max_budget_tokens
                )));
            }
        };
        let task = query_text(&req.task, self.search.config().max_query_chars);
        if task.is_empty() {
            return Err(ContextError::Invalid("task must not be empty".into()));
        }
        // Inside each file, its chunks are picked by the task's words as well as its vector
        // (`SearchRequest::chunks_by_words`): a block shows a file by the chunks its task
        // names, not only the ones most like it.
        let search = SearchRequest::new(
            RawSearch {
                query: task,
                file_types: req.file_types,
                languages: req.languages,
                repository: req.repository,
                path_glob: req.path_glob,
                mode: req.mode,
                limit: Some(self.cfg.candidates as i64),
                max_per_file: Some(req.per_file.unwrap_or(PER_FILE).max(1)),
                workspace: req.workspace,
                ..RawSearch::default()
            },
            self.search.config(),
        )?;
        // A task is a change: the files recent changes touched weigh more than in a search.
        let search = SearchRequest {
            history_weight: Some(self.cfg.history_weight),
            ..search
        };
        let outcome = self.search.search(&search).await?;
        let single_repository = {
            let mut names = outcome.hits.iter().map(|h| h.hit.repository.as_str());
            let first = names.next();
            names.all(|n| Some(n) == first)
        };
        // The pieces of each split definition found, to offer it whole.
        let keys: Vec<(String, String, String)> = outcome
            .hits
            .iter()
            .filter_map(|s| {
                let h = &s.hit;
                Some((h.repository.clone(), h.file_path.clone(), h.symbol.clone()?))
            })
            .collect();
        let scope = self
            .search
            .store()
            .scope(&outcome.workspace)
            .await
            .map_err(SearchError::from)?;
        let pieces = self
            .search
            .store()
            .chunks_of_symbols(&scope, &keys)
            .await
            .map_err(SearchError::from)?;
        let mut file_ranks: BTreeMap<(String, String), usize> = BTreeMap::new();
        // Best first: (the whole definition when the chunk is a piece of one, the chunk).
        let candidates: Vec<(Option<Piece>, Piece)> = outcome
            .hits
            .into_iter()
            .filter_map(|s| {
                let h = s.hit;
                // A closing brace left alone by the chunker says nothing.
                if !h.content.chars().any(char::is_alphanumeric) {
                    return None;
                }
                let start = u32::try_from(h.start_line?).ok()?.max(1);
                let end = u32::try_from(h.end_line?).ok()?.max(start);
                let next = file_ranks.len();
                let file_rank = *file_ranks
                    .entry((h.repository.clone(), h.file_path.clone()))
                    .or_insert(next);
                let whole = h.symbol.as_deref().and_then(|symbol| {
                    whole_definition(&pieces, &h.repository, &h.file_path, symbol, start, end)
                });
                let piece = Piece {
                    file_rank,
                    repository: h.repository,
                    file_path: h.file_path,
                    language: h.language,
                    start,
                    lines: h.content.lines().map(str::to_owned).collect(),
                    cut: false,
                };
                let whole = whole.map(|(start, lines)| Piece {
                    start,
                    lines,
                    ..piece.clone()
                });
                Some((whole, piece))
            })
            .collect();

        let header = header(&outcome.workspace, budget);
        let render = |pieces: &[Piece]| render(&header, pieces, single_repository);
        let mut chosen = fill(&candidates, budget, |pieces| render(pieces).0);
        if chosen.is_empty()
            && let Some((_, best)) = candidates.first()
        {
            // Not even the best chunk fits whole: as many of its lines as fit, marked cut.
            let mut piece = best.clone();
            piece.cut = true;
            let mut keep = piece.lines.len();
            while keep > 0 {
                piece.lines.truncate(keep);
                if estimate_tokens(&render(std::slice::from_ref(&piece)).0) <= budget {
                    chosen.push(piece);
                    break;
                }
                keep = keep * 3 / 4;
            }
        }
        let (block, files) = render(&chosen);
        let mut warning = outcome.warning;
        if files.is_empty() && warning.is_none() {
            warning = Some("no indexed code matched the task".into());
        }
        Ok(ContextBlock {
            tokens: estimate_tokens(&block),
            block,
            budget_tokens: budget,
            files,
            workspace: outcome.workspace,
            warning,
            search_ms: outcome.search_ms,
            query_embedding_ms: outcome.query_embedding_ms,
        })
    }
}

/// The pieces of a block, from the candidates best first (the whole definition when the
/// chunk is a piece of one, the chunk): each is added while the rendered block stays within
/// `budget`, its whole definition first when there is one and it is the best match or takes at
/// most [`WHOLE_SHARE`] of the budget, else the chunk alone; what does not fit is passed over.
fn fill(
    candidates: &[(Option<Piece>, Piece)],
    budget: usize,
    render: impl Fn(&[Piece]) -> String,
) -> Vec<Piece> {
    let small_enough =
        |w: &Piece| estimate_tokens(&w.lines.join("\n")) as f64 <= WHOLE_SHARE * budget as f64;
    let mut chosen: Vec<Piece> = Vec::new();
    for (n, (whole, piece)) in candidates.iter().enumerate() {
        let whole = whole.as_ref().filter(|w| n == 0 || small_enough(w));
        for option in whole.into_iter().chain([piece]) {
            chosen.push(option.clone());
            if estimate_tokens(&render(&chosen)) <= budget {
                break;
            }
            chosen.pop();
        }
    }
    chosen
}

/// The first line and lines of the definition that the chunk `start..=end` of `symbol` is a
/// piece of: the run of that symbol's chunks in the file that overlap or touch one another and
/// the chunk. `None` when the chunk is the whole definition.
fn whole_definition(
    pieces: &[ChunkLines],
    repository: &str,
    file_path: &str,
    symbol: &str,
    start: u32,
    end: u32,
) -> Option<(u32, Vec<String>)> {
    let mine: Vec<&ChunkLines> = pieces
        .iter()
        .filter(|p| p.repository == repository && p.file_path == file_path && p.symbol == symbol)
        .collect();
    // Runs of touching pieces, in line order (the store sorts them).
    let mut runs: Vec<Vec<&ChunkLines>> = Vec::new();
    for p in mine {
        match runs.last_mut() {
            Some(run) if run.last().is_some_and(|l| p.start_line <= l.end_line + 1) => run.push(p),
            _ => runs.push(vec![p]),
        }
    }
    let run = runs.into_iter().find(|run| {
        run.iter()
            .any(|p| p.start_line as u32 <= end && p.end_line as u32 >= start)
    })?;
    if run.len() < 2 {
        return None;
    }
    let mut lines: BTreeMap<u32, &str> = BTreeMap::new();
    for p in &run {
        for (i, line) in p.content.lines().enumerate() {
            lines.entry(p.start_line as u32 + i as u32).or_insert(line);
        }
    }
    let first = *lines.keys().next()?;
    Some((first, lines.values().map(|l| (*l).to_owned()).collect()))
}

/// The task as a query: whitespace runs collapsed (a ticket's layout carries no meaning for
/// search) except blank lines, which stay one blank line between paragraphs (a long query is
/// embedded by its first paragraph's first sentence, its title), cut at a word boundary to the
/// longest query accepted.
fn query_text(task: &str, max_chars: usize) -> String {
    let mut out = String::new();
    let mut len = 0;
    let mut new_paragraph = false;
    for line in task.lines() {
        if line.trim().is_empty() {
            new_paragraph = !out.is_empty();
            continue;
        }
        for word in line.split_whitespace() {
            let separator = match (out.is_empty(), new_paragraph) {
                (true, _) => "",
                (false, true) => "\n\n",
                (false, false) => " ",
            };
            let added = separator.len() + word.chars().count();
            if len + added > max_chars {
                return out;
            }
            out.push_str(separator);
            out.push_str(word);
            len += added;
            new_paragraph = false;
        }
    }
    out
}

fn header(workspace: &str, budget: usize) -> String {
    format!(
        "{HEADING}\nThe indexed code most relevant to the task, most relevant first \
         (codesearch, workspace `{workspace}`, at most {budget} tokens).\n"
    )
}

/// The block for `pieces` and the files in it: each file's pieces merged where they overlap
/// or touch, files in the order of their best piece.
fn render(header: &str, pieces: &[Piece], single_repository: bool) -> (String, Vec<ContextFile>) {
    // (file rank) -> the file's lines by number, and what the file is.
    let mut by_file: BTreeMap<usize, (BTreeMap<u32, &str>, &Piece, bool)> = BTreeMap::new();
    for p in pieces {
        let entry = by_file
            .entry(p.file_rank)
            .or_insert_with(|| (BTreeMap::new(), p, false));
        entry.2 |= p.cut;
        for (i, line) in p.lines.iter().enumerate() {
            entry.0.entry(p.start + i as u32).or_insert(line.as_str());
        }
    }
    let mut block = header.to_owned();
    let mut files = Vec::new();
    for (lines, first, cut) in by_file.values() {
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        for &n in lines.keys() {
            match ranges.last_mut() {
                Some((_, end)) if *end + 1 == n => *end = n,
                _ => ranges.push((n, n)),
            }
        }
        for &(start, end) in &ranges {
            let text: Vec<&str> = (start..=end)
                .filter_map(|n| lines.get(&n).copied())
                .collect();
            let fence = fence_for(&text);
            let lang = first.language.as_deref().unwrap_or("");
            block.push_str(&format!("\n### {}:{start}-{end}", first.file_path));
            if !single_repository {
                block.push_str(&format!(" (repository {})", first.repository));
            }
            if *cut {
                block.push_str(" (cut to fit the budget)");
            }
            block.push_str(&format!("\n{fence}{lang}\n"));
            for line in text {
                block.push_str(line);
                block.push('\n');
            }
            block.push_str(&fence);
            block.push('\n');
        }
        files.push(ContextFile {
            repository: first.repository.clone(),
            file_path: first.file_path.clone(),
            language: first.language.clone(),
            ranges,
            cut: *cut,
        });
    }
    (block, files)
}

/// A code fence longer than any run of backticks in the text.
fn fence_for(lines: &[&str]) -> String {
    let longest = lines
        .iter()
        .flat_map(|l| l.split(|c| c != '`'))
        .map(str::len)
        .max()
        .unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(file_rank: usize, path: &str, start: u32, lines: &[&str]) -> Piece {
        Piece {
            file_rank,
            repository: "r".into(),
            file_path: path.into(),
            language: Some("rust".into()),
            start,
            lines: lines.iter().map(|s| s.to_string()).collect(),
            cut: false,
        }
    }

    #[test]
    fn overlapping_and_adjacent_chunks_merge_and_files_keep_their_rank() {
        let pieces = [
            piece(0, "b.rs", 10, &["fn b() {", "}"]),
            piece(1, "a.rs", 1, &["fn a() {}"]),
            piece(0, "b.rs", 11, &["}", "fn c() {}"]),
            piece(0, "b.rs", 1, &["use x;"]),
        ];
        let (block, files) = render("H\n", &pieces, true);
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].file_path, "b.rs");
        assert_eq!(files[0].ranges, vec![(1, 1), (10, 12)]);
        assert_eq!(files[1].ranges, vec![(1, 1)]);
        assert!(block.contains("### b.rs:10-12\n```rust\nfn b() {\n}\nfn c() {}\n```\n"));
        let at = |h: &str| block.find(h).expect("header");
        assert!(at("### b.rs:1-1") < at("### a.rs:1-1"));
    }

    #[test]
    fn a_long_definition_is_offered_whole_only_as_the_best_match() {
        let long: Vec<String> = (0..60).map(|i| format!("    step_{i}(value);")).collect();
        let long: Vec<&str> = long.iter().map(String::as_str).collect();
        let candidate = |rank: usize, path: &str| {
            let chunk = piece(rank, path, 11, &long[10..14]);
            let whole = piece(rank, path, 1, &long);
            (Some(whole), chunk)
        };
        let render = |pieces: &[Piece]| render("", pieces, true).0;
        let lines = |pieces: &[Piece]| -> Vec<(String, usize)> {
            pieces
                .iter()
                .map(|p| (p.file_path.clone(), p.lines.len()))
                .collect()
        };
        // The 60 lines take more than a quarter of 1,400 tokens, though two of them fit in it,
        // and at most a quarter of 4,000.
        let tokens = estimate_tokens(&long.join("\n"));
        assert!(
            tokens > 350 && 2 * tokens < 1300 && tokens <= 1000,
            "{tokens}"
        );
        let chosen = fill(&[candidate(0, "a.rs"), candidate(1, "b.rs")], 1400, render);
        assert_eq!(
            lines(&chosen),
            [("a.rs".to_owned(), 60), ("b.rs".to_owned(), 4)]
        );
        // Within a quarter of 4,000, both are whole.
        let chosen = fill(&[candidate(0, "a.rs"), candidate(1, "b.rs")], 4000, render);
        assert_eq!(
            lines(&chosen),
            [("a.rs".to_owned(), 60), ("b.rs".to_owned(), 60)]
        );
    }

    #[test]
    fn fences_outgrow_backticks_in_the_code() {
        assert_eq!(fence_for(&["let s = ```x```;"]), "````");
        assert_eq!(fence_for(&["plain"]), "```");
    }

    #[test]
    fn the_task_is_cut_at_a_word_boundary() {
        assert_eq!(
            query_text("  fix the\n  bug \n \n\n it   crashes\n", 100),
            "fix the bug\n\nit crashes"
        );
        assert_eq!(query_text("alpha beta gamma", 10), "alpha beta");
        assert_eq!(query_text("alpha\n\nbeta gamma", 11), "alpha\n\nbeta");
    }
}
