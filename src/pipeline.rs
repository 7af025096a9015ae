//! scan -> chunk -> embed -> store, for one root.
//!
//! Three stages joined by bounded channels, so the slowest (the model) sets the pace and the
//! others wait instead of piling up memory:
//!
//! 1. a blocking thread walks the root, reads and hashes each file, skips those whose
//!    (content hash, chunker version, model) key is unchanged, and chunks the rest;
//! 2. the embed stage gathers chunks from several files into batches, reuses vectors already
//!    stored for the same embedding input (same model, same text: an edit re-embeds only
//!    what changed), and embeds the rest;
//! 3. a writer replaces each file's chunks in one transaction.
//!
//! Two entry points share the stages: [`Indexer::index_root`] reconciles a whole root (walk,
//! sweep of files that vanished from disk, then the stages), and [`Indexer::index_paths`]
//! handles the paths a watcher reported changed (the same rules, the same stages).
//!
//! The embedder never decides whether a file is stored: a file whose chunks cannot be embedded
//! now (the embedder is down, or its circuit breaker paused it) is written with those vectors
//! pending, so it is searchable lexically at once, and [`crate::backfill`] embeds the backlog
//! when the embedder answers. An input the model refuses is recorded on its chunk; the others
//! get their vectors. On cancel, no new batch starts, the batch being embedded is dropped
//! between two embedding calls (its files wait for the next pass), and the writer finishes the
//! files it holds: nothing is half-written.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use indicatif::ProgressBar;
use thiserror::Error;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use crate::chunk::{CHUNKER_VERSION, Chunk, ChunkOptions};
use crate::config::{DEFAULT_WORKSPACE, IndexConfig};
use crate::embed::{Embedder, embed_documents};
use crate::intel::Extraction;
use crate::parse::{self, Analysis};
use crate::repository::{Repository, RepositoryError, default_name};
use crate::scan::{self, Candidate, SkipReason, Skipped, SourceFile, Walker};
use crate::store::{ChunkRow, Claimed, FileState, FileWrite, Origin, RepoClaim, Store, StoreError};
use crate::text::{file_terms, lexical_text};

/// Chunks gathered before calling the embedder.
const EMBED_BATCH_CHUNKS: usize = 64;
/// Prepared files waiting for the embed stage.
const PREPARED_QUEUE: usize = 32;
/// Embedded files waiting for the writer.
const WRITE_QUEUE: usize = 16;
/// Files written to the database at once.
const WRITERS: usize = 4;
/// Files whose module or component type changed (not their content), recorded at once.
const RECLASSIFY_BATCH: usize = 500;
/// How long a reconcile waits on `git log` for the change history. A thousand commits take
/// well under a second even on large repositories (hugo, typeorm); a git still running after
/// this is stuck (a hung network filesystem, a lock) and is killed.
const HISTORY_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, Error)]
pub enum IndexError {
    #[error("invalid index rule: {0}")]
    Rules(#[from] globset::Error),
    #[error(transparent)]
    Repository(#[from] RepositoryError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("indexing task failed: {0}")]
    Task(String),
    /// The root is not there to be read: its index is left as it is, not swept.
    #[error(
        "the repository's root {root} {why}; its index is kept as it is until the root is \
         back or the repository is removed"
    )]
    RootGone { root: String, why: String },
}

/// Fails with [`IndexError::RootGone`] unless `root` is a directory that can be read. A walk of
/// a root that is gone finds no file, and the sweep that follows would delete every file of the
/// repository from the index, to embed them all again when the root is back: a moved checkout,
/// an unmounted volume or a network share that blinked would cost a full re-index.
fn root_is_there(root: &Path) -> Result<(), IndexError> {
    let gone = |why: String| IndexError::RootGone {
        root: root.display().to_string(),
        why,
    };
    match std::fs::metadata(root) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(gone("is not a directory any more".into())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(gone("is gone (moved, deleted or unmounted)".into()))
        }
        Err(e) => Err(gone(format!("cannot be read ({e})"))),
    }
}

/// Whether `root` holds no entry at all, as the mount point of an unmounted volume does.
fn is_empty_dir(root: &Path) -> bool {
    std::fs::read_dir(root).is_ok_and(|mut entries| entries.next().is_none())
}

/// What one run did.
#[derive(Debug, Clone, Default)]
pub struct IndexReport {
    pub repository: String,
    pub files_seen: usize,
    pub indexed: usize,
    pub unchanged: usize,
    /// Unchanged files given another module or component type by the rules (counted in
    /// `unchanged` too).
    pub reclassified: usize,
    pub skipped: BTreeMap<&'static str, usize>,
    /// Files a full walk passed over because their type is not indexed, by extension (or name).
    pub unlisted: crate::scan::Unlisted,
    pub removed: u64,
    pub chunks: usize,
    pub embedded: usize,
    pub reused: usize,
    /// Chunks stored without a vector, for the backfill (the embedder was unavailable).
    pub pending: usize,
    /// Chunks whose input the model refused.
    pub rejected: usize,
    pub embed_time: Duration,
    pub total_time: Duration,
    /// The pass was cancelled (a signal): it finished the files in hand and left the rest for
    /// the next pass.
    pub interrupted: bool,
}

impl IndexReport {
    pub fn skipped_total(&self) -> usize {
        self.skipped.values().sum()
    }

    /// The unlisted file types, most files first, as `json 8, lock 2, LICENSE 1` (at most
    /// `max` types), with the total; `None` when the walk passed over none.
    pub fn unlisted_summary(&self, max: usize) -> Option<(usize, String)> {
        let total: usize = self.unlisted.values().sum();
        if total == 0 {
            return None;
        }
        let mut kinds: Vec<(&String, &usize)> = self.unlisted.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let mut text: Vec<String> = kinds
            .iter()
            .take(max)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        if kinds.len() > max {
            text.push("...".into());
        }
        Some((total, text.join(", ")))
    }

    /// Logs the pass: `reason` says which (`index`, or why a reconcile ran).
    pub fn log(&self, reason: &str) {
        let outcome = if self.interrupted {
            "interrupted; the rest waits for the next pass"
        } else {
            "complete"
        };
        tracing::info!(
            reason,
            repository = %self.repository,
            indexed = self.indexed,
            unchanged = self.unchanged,
            reclassified = self.reclassified,
            skipped = self.skipped_total(),
            unlisted_types = self.unlisted.values().sum::<usize>(),
            removed = self.removed,
            chunks = self.chunks,
            embedded = self.embedded,
            reused = self.reused,
            pending = self.pending,
            rejected = self.rejected,
            secs = self.total_time.as_secs_f64(),
            "index pass {outcome}"
        );
    }
}

/// A file read and chunked, waiting for vectors.
struct Prepared {
    file: SourceFile,
    language: String,
    chunks: Vec<Chunk>,
    /// What the file's code defines, calls and imports.
    intel: Extraction,
    /// Embedding input of each chunk and its sha256.
    inputs: Vec<(String, String)>,
}

/// Messages from the reader thread.
enum Scanned {
    Prepared(Box<Prepared>),
    Unchanged,
    /// Unchanged, but the rules now give its path another module or component type.
    Reclassified {
        rel_path: String,
        module: Option<String>,
        component_type: Option<String>,
    },
    Skipped {
        rel_path: String,
        reason: SkipReason,
        previous: Option<FileState>,
    },
}

/// The text given to the model for a chunk: where it lives and what it is, then the code.
pub fn embedding_input(rel_path: &str, chunk: &Chunk) -> String {
    input_of(
        rel_path,
        chunk.kind,
        chunk.symbol.as_deref(),
        &chunk.content,
    )
}

/// [`embedding_input`] from a chunk's stored parts (the backfill rebuilds inputs this way).
pub fn input_of(rel_path: &str, kind: &str, symbol: Option<&str>, content: &str) -> String {
    match symbol {
        Some(symbol) => format!("{rel_path} · {kind} {symbol}\n{content}"),
        None => format!("{rel_path}\n{content}"),
    }
}

/// Indexes roots into the store with one embedder.
#[derive(Clone)]
pub struct Indexer {
    store: Store,
    embedder: Arc<dyn Embedder>,
    cfg: IndexConfig,
    /// Woken whenever a run stored chunks with pending vectors.
    backlog: Arc<Notify>,
}

impl Indexer {
    pub fn new(
        store: Store,
        embedder: Arc<dyn Embedder>,
        cfg: IndexConfig,
    ) -> Result<Self, IndexError> {
        // The rules are checked here, once, for every repository that uses them as they are.
        crate::scan::Classifier::new(&cfg)?;
        Ok(Self {
            store,
            embedder,
            cfg,
            backlog: Arc::new(Notify::new()),
        })
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn embedder(&self) -> &Arc<dyn Embedder> {
        &self.embedder
    }

    /// Notified after a run that left vectors pending (see [`crate::backfill`]).
    pub fn backlog(&self) -> Arc<Notify> {
        Arc::clone(&self.backlog)
    }

    /// The walker of a repository, with its rules.
    pub fn walker(&self, repo: &Repository) -> Result<Walker, IndexError> {
        Ok(Walker::new(&repo.root, repo.rules())?)
    }

    fn chunk_options(&self) -> ChunkOptions {
        ChunkOptions {
            max_chars: self.cfg.max_chunk_chars,
            overlap_chars: self.cfg.chunk_overlap_chars,
            min_chars: self.cfg.min_chunk_chars,
            parse_timeout: Duration::from_millis(self.cfg.parse_timeout_ms),
        }
    }

    /// `root` as a repository with this indexer's rules in the default workspace, named by
    /// `index.repository` or else by its directory.
    pub fn repository(&self, root: &Path) -> Result<Repository, IndexError> {
        let root = crate::repository::canonical_root(root)?;
        let name = if self.cfg.repository.is_empty() {
            default_name(&root)
        } else {
            self.cfg.repository.clone()
        };
        Ok(Repository::new(
            &name,
            &root,
            DEFAULT_WORKSPACE,
            Origin::Local,
            self.cfg.clone(),
        )?)
    }

    /// Records `repo`'s name for its root, or fails when another root that still exists
    /// holds the name (nothing of that root is touched).
    pub async fn claim(&self, repo: &Repository) -> Result<(), IndexError> {
        let claimed = self
            .store
            .claim_repository(&RepoClaim {
                name: &repo.name,
                root: &repo.root.to_string_lossy(),
                workspace: &repo.workspace,
                origin: repo.origin,
                git_url: repo.git_url.as_deref(),
            })
            .await?;
        if let Claimed::Moved { from } = &claimed
            && !from.is_empty()
        {
            tracing::info!(repository = %repo.name, %from, to = %repo.root.display(),
                "the repository's recorded root is gone: taken as moved here");
        }
        if matches!(claimed, Claimed::New) {
            let root = repo.root.to_string_lossy();
            let others = self
                .store
                .other_names_at(&root, &repo.workspace, &repo.name)
                .await?;
            if !others.is_empty() {
                tracing::warn!(repository = %repo.name, root = %root, also = %others.join(", "),
                    "this root is also indexed under another name, so its files are stored and \
                     found twice; remove the name no longer wanted with `codesearch repo remove \
                     NAME`");
            }
        }
        Ok(())
    }

    /// Brings the index of `root` (named as [`Indexer::repository`] names it) up to date.
    pub async fn index_root(
        &self,
        root: &Path,
        progress: Option<&ProgressBar>,
        cancel: &CancellationToken,
    ) -> Result<IndexReport, IndexError> {
        let repo = self.repository(root)?;
        self.index_repository(&repo, progress, cancel).await
    }

    /// Brings the index of a repository up to date with the disk: a full reconcile
    /// ([`Indexer::reconcile`]), then its change counts ([`Indexer::record_history`]).
    pub async fn index_repository(
        &self,
        repo: &Repository,
        progress: Option<&ProgressBar>,
        cancel: &CancellationToken,
    ) -> Result<IndexReport, IndexError> {
        let started = Instant::now();
        let mut report = self.reconcile(repo, progress, cancel).await?;
        if !cancel.is_cancelled() {
            self.record_history(repo, cancel).await;
        }
        report.total_time = started.elapsed();
        Ok(report)
    }

    /// A full reconcile of a repository's index with the disk: the walk, the sweep of the files
    /// it recorded that are gone, the stages for the rest. The change counts are left as they
    /// are (the live loop reads them beside it, so that a slow git holds up no file).
    pub async fn reconcile(
        &self,
        repo: &Repository,
        progress: Option<&ProgressBar>,
        cancel: &CancellationToken,
    ) -> Result<IndexReport, IndexError> {
        let started = Instant::now();
        root_is_there(&repo.root)?;
        self.claim(repo).await?;
        let walker = self.walker(repo)?;
        let (candidates, walk_skips, unlisted) = tokio::task::spawn_blocking(move || walker.walk())
            .await
            .map_err(|e| IndexError::Task(e.to_string()))?;
        let states = self.store.file_states(&repo.name).await?;
        if candidates.is_empty() && !states.is_empty() && is_empty_dir(&repo.root) {
            return Err(IndexError::RootGone {
                root: repo.root.display().to_string(),
                why: format!(
                    "is empty (an unmounted volume?) while the index holds {} of its files",
                    states.len()
                ),
            });
        }
        let mut report = self
            .run(repo, candidates, walk_skips, states, progress, cancel)
            .await?;
        report.unlisted = unlisted;
        report.total_time = started.elapsed();
        Ok(report)
    }

    /// Counts how often each file of the repository changed in its latest
    /// `index.history_commits` commits and records it, the prior of `search.history_weight`
    /// (after each full reconcile, and when the watcher sees the history move). A
    /// root outside git has none; a failure, or a git that has not answered in
    /// [`HISTORY_TIMEOUT`], is logged and costs only the prior (the counts recorded before
    /// stay). A cancel (shutdown) stops it at once, killing git.
    pub async fn record_history(&self, repo: &Repository, cancel: &CancellationToken) {
        let max_commits = repo.rules().history_commits;
        if max_commits == 0 {
            return;
        }
        let read = scan::history::read(&repo.root, "HEAD", max_commits);
        let read = tokio::select! {
            read = tokio::time::timeout(HISTORY_TIMEOUT, read) => read,
            () = cancel.cancelled() => return,
        };
        let commits = match read {
            Ok(Ok(Some(commits))) => commits,
            Ok(Ok(None)) => {
                tracing::debug!(repository = %repo.name,
                    "no change history (not in a git repository, or no git on the PATH)");
                Vec::new()
            }
            Ok(Err(e)) => {
                tracing::warn!(repository = %repo.name, error = %e,
                    "cannot read the change history; searches go without it");
                return;
            }
            Err(_) => {
                tracing::warn!(repository = %repo.name, timeout = ?HISTORY_TIMEOUT,
                    "git log did not answer in time and was stopped; searches go without the \
                     new change history (the next reconcile retries)");
                return;
            }
        };
        let changes = scan::history::count(&commits, 0..commits.len());
        match self.store.set_file_changes(&repo.name, &changes).await {
            Ok(written) => tracing::debug!(repository = %repo.name, commits = commits.len(),
                files = changes.len(), written, "change history recorded"),
            Err(e) => tracing::warn!(repository = %repo.name, error = %e,
                "cannot record the change history; the next reconcile retries"),
        }
    }

    /// Brings the given paths of a repository (relative, `/`-separated; files or directories,
    /// present or gone) up to date: what a watcher reports. The same rules as a full walk apply.
    pub async fn index_paths(
        &self,
        repo: &Repository,
        paths: Vec<String>,
        cancel: &CancellationToken,
    ) -> Result<IndexReport, IndexError> {
        let started = Instant::now();
        root_is_there(&repo.root)?;
        let walker = self.walker(repo)?;
        let changed = paths.clone();
        let (candidates, walk_skips) =
            tokio::task::spawn_blocking(move || walker.walk_paths(&changed))
                .await
                .map_err(|e| IndexError::Task(e.to_string()))?;
        let states = self.store.file_states_under(&repo.name, &paths).await?;
        let mut report = self
            .run(repo, candidates, walk_skips, states, None, cancel)
            .await?;
        report.total_time = started.elapsed();
        Ok(report)
    }

    /// Records a file skipped for a reason checked again at every pass (binary, too large, a
    /// symbolic link, ...), unless it was recorded with that reason already.
    async fn record_skip(
        &self,
        repository: &str,
        rel_path: &str,
        previous: Option<&FileState>,
        reason: &SkipReason,
    ) -> Result<(), StoreError> {
        let message = reason.to_string();
        if previous.and_then(|p| p.error.as_deref()) == Some(message.as_str()) {
            return Ok(());
        }
        self.store
            .record_skip(
                repository,
                rel_path,
                "",
                CHUNKER_VERSION,
                self.embedder.model_id(),
                &message,
            )
            .await
    }

    /// The stages over `candidates`. `states` holds the recorded state of every file the run
    /// covers: recorded files that are not candidates any more are deleted.
    async fn run(
        &self,
        repo: &Repository,
        candidates: Vec<Candidate>,
        walk_skips: Vec<Skipped>,
        mut states: std::collections::HashMap<String, FileState>,
        progress: Option<&ProgressBar>,
        cancel: &CancellationToken,
    ) -> Result<IndexReport, IndexError> {
        let repository = repo.name.clone();
        let mut report = IndexReport {
            repository: repository.clone(),
            ..Default::default()
        };
        report.files_seen = candidates.len() + walk_skips.len();

        let present: HashSet<&str> = candidates.iter().map(|c| c.rel_path.as_str()).collect();
        // The walk's own skips (a symbolic link, a secret file, a name that is not UTF-8) are
        // recorded as any skipped file is, so that `status` counts them; a skip whose lossy
        // name reads as a candidate's is left out rather than written over that file.
        let walk_skips: Vec<Skipped> = walk_skips
            .into_iter()
            .filter(|s| !present.contains(s.rel_path.as_str()))
            .collect();
        let mut seen = present;
        seen.extend(walk_skips.iter().map(|s| s.rel_path.as_str()));
        let vanished: Vec<String> = states
            .keys()
            .filter(|p| !seen.contains(p.as_str()))
            .cloned()
            .collect();
        report.removed = self.store.delete_files(&repository, &vanished).await?;
        for p in &vanished {
            states.remove(p);
        }
        for s in &walk_skips {
            tracing::debug!(path = %s.rel_path, reason = %s.reason, "skipped");
            *report.skipped.entry(s.reason.label()).or_default() += 1;
            let previous = states.remove(&s.rel_path);
            self.record_skip(&repository, &s.rel_path, previous.as_ref(), &s.reason)
                .await?;
        }
        // Without a bar to draw (the daemon's passes), the same counts go to the log.
        let own_bar = progress.is_none().then(ProgressBar::hidden);
        let _progress_log = own_bar.as_ref().map(|bar| log_progress(&repository, bar));
        let progress = progress.or(own_bar.as_ref());
        if let Some(bar) = progress {
            bar.set_length(candidates.len() as u64);
            bar.set_position(0);
        }

        // Stage 1: read, hash, compare, chunk (blocking thread).
        let (scan_tx, mut scan_rx) = mpsc::channel::<Scanned>(PREPARED_QUEUE);
        let model = self.embedder.model_id().to_owned();
        let rules = repo.rules().clone();
        let classifier = repo.classifier().clone();
        let opts = self.chunk_options();
        let reader_cancel = cancel.clone();
        let reader = tokio::task::spawn_blocking(move || {
            for candidate in candidates {
                if reader_cancel.is_cancelled() {
                    break;
                }
                let previous = states.remove(&candidate.rel_path);
                let msg = match scan::read_candidate(&candidate, &rules, &classifier) {
                    Err(reason) => Scanned::Skipped {
                        rel_path: candidate.rel_path,
                        reason,
                        previous,
                    },
                    Ok(file) => {
                        let unchanged = previous.as_ref().is_some_and(|p| {
                            p.file_hash == file.sha256
                                && p.chunker_version == CHUNKER_VERSION
                                && p.embedding_model == model
                        });
                        match previous {
                            Some(p)
                                if unchanged
                                    && p.error.is_none()
                                    && (p.module != file.module
                                        || p.component_type != file.component_type) =>
                            {
                                Scanned::Reclassified {
                                    rel_path: candidate.rel_path,
                                    module: file.module,
                                    component_type: file.component_type,
                                }
                            }
                            _ if unchanged => Scanned::Unchanged,
                            _ => Scanned::Prepared(Box::new(prepare(file, &opts))),
                        }
                    }
                };
                if scan_tx.blocking_send(msg).is_err() {
                    break; // the consumer stopped
                }
            }
        });

        // Stage 3: the writer.
        let (write_tx, mut write_rx) = mpsc::channel::<(Prepared, Vec<Vectored>)>(WRITE_QUEUE);
        let writer = {
            let store = self.store.clone();
            let repository = repository.clone();
            let model = self.embedder.model_id().to_owned();
            let dim = self.embedder.dimension() as i32;
            let progress = progress.cloned();
            tokio::spawn(async move {
                let write = |(p, vectors): (Prepared, Vec<Vectored>)| {
                    let (store, repository, model) = (&store, &repository, &model);
                    async move {
                        let rows = rows_of(&p, vectors);
                        let terms = file_terms(&p.file.rel_path, &p.file.text);
                        let result = store
                            .replace_file(&FileWrite {
                                repository,
                                file_path: &p.file.rel_path,
                                file_hash: &p.file.sha256,
                                file_type: &p.file.file_type,
                                language: &p.language,
                                module: p.file.module.as_deref(),
                                component_type: p.file.component_type.as_deref(),
                                size_bytes: p.file.text.len() as i64,
                                line_count: p.file.text.lines().count() as i32,
                                chunker_version: CHUNKER_VERSION,
                                embedding_model: model,
                                embedding_dim: dim,
                                chunks: &rows,
                                terms: &terms,
                                intel: &p.intel,
                            })
                            .await;
                        (p.file.rel_path, p.file.sha256, result)
                    }
                };
                // Files are independent: a few transactions at once keep the database's
                // cores busy while this side waits for a round trip.
                let mut writes = futures::stream::poll_fn(|cx| write_rx.poll_recv(cx))
                    .map(write)
                    .buffer_unordered(WRITERS);
                let mut written = 0usize;
                let mut refused = Vec::new();
                while let Some((path, hash, done)) = writes.next().await {
                    match done {
                        Ok(()) => written += 1,
                        // The database is down: the pass fails and is retried.
                        Err(e) if e.is_transient() => return Err(e),
                        // The database refused this file's rows: that is this file's error,
                        // recorded under its hash so that it is skipped until it changes.
                        Err(e) => {
                            tracing::warn!(path = %path, error = %e, "file cannot be stored; skipped until it changes");
                            let reason = SkipReason::Unstorable(e.to_string());
                            store
                                .record_skip(
                                    &repository,
                                    &path,
                                    &hash,
                                    CHUNKER_VERSION,
                                    &model,
                                    &reason.to_string(),
                                )
                                .await?;
                            refused.push(reason);
                        }
                    }
                    if let Some(bar) = &progress {
                        bar.inc(1);
                    }
                }
                Ok::<_, StoreError>((written, refused))
            })
        };

        // Stage 2: gather, reuse, embed.
        let mut batch: Vec<Prepared> = Vec::new();
        let mut batch_chunks = 0;
        let mut reclassified: Vec<(String, Option<String>, Option<String>)> = Vec::new();
        let mut result: Result<(), IndexError> = Ok(());
        loop {
            // A full batch is embedded below before the next message is taken, so a partial
            // batch waits here only for more files or for the end of the walk.
            let msg = scan_rx.recv().await;
            let done = msg.is_none();
            match msg {
                Some(Scanned::Prepared(p)) => {
                    batch_chunks += p.chunks.len();
                    batch.push(*p);
                }
                Some(Scanned::Unchanged) => {
                    report.unchanged += 1;
                    if let Some(bar) = progress {
                        bar.inc(1);
                    }
                }
                Some(Scanned::Reclassified {
                    rel_path,
                    module,
                    component_type,
                }) => {
                    report.unchanged += 1;
                    if let Some(bar) = progress {
                        bar.inc(1);
                    }
                    reclassified.push((rel_path, module, component_type));
                    if reclassified.len() >= RECLASSIFY_BATCH {
                        let files = std::mem::take(&mut reclassified);
                        if let Err(e) = self.store.reclassify_files(&repository, &files).await {
                            result = Err(e.into());
                            break;
                        }
                        report.reclassified += files.len();
                    }
                }
                Some(Scanned::Skipped {
                    rel_path,
                    reason,
                    previous,
                }) => {
                    tracing::info!(path = %rel_path, reason = %reason, "skipped");
                    *report.skipped.entry(reason.label()).or_default() += 1;
                    if let Some(bar) = progress {
                        bar.inc(1);
                    }
                    if let Err(e) = self
                        .record_skip(&repository, &rel_path, previous.as_ref(), &reason)
                        .await
                    {
                        result = Err(e.into());
                        break;
                    }
                }
                None => {}
            }
            let full = batch_chunks >= EMBED_BATCH_CHUNKS;
            if (full || (done && !batch.is_empty())) && !cancel.is_cancelled() {
                let files = std::mem::take(&mut batch);
                batch_chunks = 0;
                match self.embed_files(files, &mut report, cancel).await {
                    // Cancelled while embedding: the batch's files are not written (the next
                    // pass indexes them), so a stop does not wait for a large file's chunks.
                    Ok(None) => break,
                    Ok(Some(embedded)) => {
                        let mut writer_gone = false;
                        for item in embedded {
                            if write_tx.send(item).await.is_err() {
                                writer_gone = true;
                                break;
                            }
                        }
                        if writer_gone {
                            break; // the writer failed: stop embedding; its error is reported below
                        }
                    }
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            if done || cancel.is_cancelled() {
                break;
            }
        }
        drop(scan_rx);
        drop(write_tx);
        if result.is_ok() && !reclassified.is_empty() {
            match self
                .store
                .reclassify_files(&repository, &reclassified)
                .await
            {
                Ok(()) => report.reclassified += reclassified.len(),
                Err(e) => result = Err(e.into()),
            }
        }
        let written = writer.await.map_err(|e| IndexError::Task(e.to_string()))?;
        reader.await.map_err(|e| IndexError::Task(e.to_string()))?;
        result?;
        let (written, refused) = written?;
        report.indexed = written;
        for reason in refused {
            *report.skipped.entry(reason.label()).or_default() += 1;
        }
        if report.pending > 0 {
            self.backlog.notify_one();
        }
        report.interrupted = cancel.is_cancelled();
        Ok(report)
    }

    /// Vectors for every chunk of `files`: reused where the store has them, embedded
    /// otherwise. Never fails on the embedder's account: what it cannot embed now is `None`
    /// (pending) or refused, with the reason. `None` when `cancel` fired before the last of
    /// them: they go one embedding call at a time, and one large file's hundreds of chunks
    /// would otherwise hold a stop for many seconds.
    async fn embed_files(
        &self,
        files: Vec<Prepared>,
        report: &mut IndexReport,
        cancel: &CancellationToken,
    ) -> Result<Option<Vec<(Prepared, Vec<Vectored>)>>, IndexError> {
        // Each distinct input once, whichever part of the batch it falls in.
        let mut seen = HashSet::new();
        let all = files.iter().flat_map(|p| p.inputs.iter());
        let inputs: Vec<(&str, &str)> = all
            .clone()
            .filter(|(_, h)| seen.insert(h.as_str()))
            .map(|(i, h)| (h.as_str(), i.as_str()))
            .collect();
        report.reused += all.count() - inputs.len();
        let mut outcome = std::collections::HashMap::new();
        let mut unavailable = None;
        for (i, part) in inputs.chunks(self.embedder.batch_size().max(1)).enumerate() {
            if i > 0 && cancel.is_cancelled() {
                return Ok(None);
            }
            let got = vectors_for(&self.store, self.embedder.as_ref(), part).await?;
            report.embedded += got.embedded;
            report.reused += got.reused;
            report.embed_time += got.embed_time;
            outcome.extend(got.by_hash);
            unavailable = unavailable.or(got.unavailable);
        }
        if let Some(e) = &unavailable {
            tracing::warn!(error = %e,
                "embedder unavailable; chunks are stored with pending vectors and embedded when it answers");
        }
        let mut out = Vec::with_capacity(files.len());
        for p in files {
            let vectors: Vec<Vectored> = p
                .inputs
                .iter()
                .map(|(_, h)| outcome.get(h).cloned().unwrap_or(Vectored::Pending))
                .collect();
            for v in &vectors {
                match v {
                    Vectored::Vector(_) => {}
                    Vectored::Pending => report.pending += 1,
                    Vectored::Rejected(_) => report.rejected += 1,
                }
            }
            report.chunks += p.chunks.len();
            out.push((p, vectors));
        }
        Ok(Some(out))
    }
}

/// Vectors for embedding inputs, keyed by the input's hash.
pub(crate) struct Vectors {
    pub by_hash: std::collections::HashMap<String, Vectored>,
    /// Inputs sent to the model, and inputs answered from the store or a duplicate.
    pub embedded: usize,
    pub reused: usize,
    pub embed_time: Duration,
    /// Why some inputs are pending, if any are.
    pub unavailable: Option<crate::embed::EmbedError>,
}

/// Vectors for `(hash, input)` pairs: copied from the store where it holds one for this model
/// and input, embedded otherwise (each distinct input once, bad inputs isolated). Never fails
/// on the embedder's account: what it cannot embed now is [`Vectored::Pending`].
pub(crate) async fn vectors_for(
    store: &Store,
    embedder: &dyn Embedder,
    inputs: &[(&str, &str)],
) -> Result<Vectors, StoreError> {
    let hashes: Vec<String> = inputs.iter().map(|(h, _)| (*h).to_owned()).collect();
    let mut by_hash: std::collections::HashMap<String, Vectored> = store
        .reusable_vectors(embedder.model_id(), &hashes)
        .await?
        .into_iter()
        .map(|(h, v)| (h, Vectored::Vector(v)))
        .collect();
    let mut todo: Vec<String> = Vec::new();
    let mut todo_hashes: Vec<&str> = Vec::new();
    let mut queued: HashSet<&str> = HashSet::new();
    for &(hash, input) in inputs {
        if !by_hash.contains_key(hash) && queued.insert(hash) {
            todo.push(input.to_owned());
            todo_hashes.push(hash);
        }
    }
    let mut out = Vectors {
        by_hash: std::collections::HashMap::new(),
        embedded: 0,
        reused: inputs.len() - todo.len(),
        embed_time: Duration::ZERO,
        unavailable: None,
    };
    if !todo.is_empty() {
        let started = Instant::now();
        let docs = embed_documents(embedder, &todo).await;
        out.embed_time = started.elapsed();
        let mut rejected: std::collections::HashMap<usize, String> =
            docs.rejected.into_iter().collect();
        for (i, (hash, v)) in todo_hashes.into_iter().zip(docs.vectors).enumerate() {
            let value = match (v, rejected.remove(&i)) {
                (Some(v), _) => {
                    out.embedded += 1;
                    Vectored::Vector(v)
                }
                (None, Some(error)) => Vectored::Rejected(error),
                (None, None) => Vectored::Pending,
            };
            by_hash.insert(hash.to_owned(), value);
        }
        out.unavailable = docs.unavailable;
    }
    out.by_hash = by_hash;
    Ok(out)
}

/// What became of one chunk's vector.
#[derive(Debug, Clone)]
pub(crate) enum Vectored {
    Vector(Vec<f32>),
    /// The embedder was unavailable: the backfill embeds it later.
    Pending,
    /// The model refused the input (the error).
    Rejected(String),
}

fn prepare(file: SourceFile, opts: &ChunkOptions) -> Prepared {
    let Analysis {
        language,
        chunks,
        intel,
    } = parse::analyze(&file.rel_path, &file.text, opts);
    let language = language.name(&file.rel_path);
    let inputs = chunks
        .iter()
        .map(|c| {
            let input = embedding_input(&file.rel_path, c);
            let hash = scan::sha256_hex(input.as_bytes());
            (input, hash)
        })
        .collect();
    Prepared {
        file,
        language,
        chunks,
        intel,
        inputs,
    }
}

fn rows_of(p: &Prepared, vectors: Vec<Vectored>) -> Vec<ChunkRow> {
    p.chunks
        .iter()
        .zip(&p.inputs)
        .zip(vectors)
        .enumerate()
        .map(|(i, ((c, (_, hash)), v))| {
            let (lexical, lexical_length) =
                lexical_text(&p.file.rel_path, c.symbol.as_deref(), &c.content);
            let (embedding, embed_error) = match v {
                Vectored::Vector(v) => (Some(v), None),
                Vectored::Pending => (None, None),
                Vectored::Rejected(e) => (None, Some(e)),
            };
            ChunkRow {
                chunk_index: i as i32,
                content: c.content.clone(),
                start_line: c.start_line as i32,
                end_line: c.end_line as i32,
                symbol: c.symbol.clone(),
                kind: c.kind.to_owned(),
                content_hash: hash.clone(),
                embedding,
                embed_error,
                lexical,
                lexical_length,
                defines: {
                    let mut keys: Vec<String> = c
                        .defines
                        .iter()
                        .flat_map(|d| crate::text::definition_keys(d))
                        .collect();
                    keys.sort_unstable();
                    keys.dedup();
                    keys
                },
                symbols: if c.defines.len() > 1 {
                    c.defines.clone()
                } else {
                    Vec::new()
                },
            }
        })
        .collect()
}

/// How often a pass without a progress bar (a daemon's) logs how far it is.
const PROGRESS_LOG_EVERY: Duration = Duration::from_secs(15);

/// Logs how far a pass is every [`PROGRESS_LOG_EVERY`], from the counts `bar` keeps, until
/// dropped: a daemon's first pass over a large repository takes minutes, and said nothing
/// between "watching for changes" and "index pass complete".
fn log_progress(repository: &str, bar: &ProgressBar) -> AbortOnDropHandle<()> {
    let (repository, bar) = (repository.to_owned(), bar.clone());
    AbortOnDropHandle::new(tokio::spawn(async move {
        let started = Instant::now();
        let first = tokio::time::Instant::now() + PROGRESS_LOG_EVERY;
        let mut ticks = tokio::time::interval_at(first, PROGRESS_LOG_EVERY);
        loop {
            ticks.tick().await;
            let (done, files) = (bar.position(), bar.length().unwrap_or(0));
            let elapsed = started.elapsed();
            tracing::info!(
                repository = %repository,
                files_done = done,
                files,
                secs = elapsed.as_secs(),
                eta_secs = eta(done, files, elapsed).map(|d| d.as_secs()),
                "index pass under way"
            );
        }
    }))
}

/// The time left at the rate so far, once there is one.
fn eta(done: u64, total: u64, elapsed: Duration) -> Option<Duration> {
    (done > 0 && total >= done).then(|| elapsed.mul_f64((total - done) as f64 / done as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_follows_the_rate_so_far() {
        let minute = Duration::from_secs(60);
        assert_eq!(eta(100, 400, minute), Some(3 * minute));
        assert_eq!(eta(400, 400, minute), Some(Duration::ZERO));
        assert_eq!(eta(0, 400, minute), None, "no rate yet");
        assert_eq!(eta(5, 3, minute), None, "more done than the walk found");
    }
}
