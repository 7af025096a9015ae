//! Query to ranked results.
//!
//! In: a validated [`SearchRequest`]. Out: hits with their scores, and how long the query
//! embedding and the search took. The adapters (NATS, CLI) go through [`SearchService`] only.
//!
//! Two retrievers, fused:
//! - **vector**: cosine kNN over the chunks' embeddings (pgvector; HNSW once the table is big);
//!   a long query is embedded by its title (`title`);
//! - **lexical**: BM25 over the chunks' words as code search sees them ([`crate::text::words`]:
//!   identifiers split and kept whole, path and symbol counted twice, English stemming), and
//!   over whole files;
//! - **hybrid** (the default) fuses the vector list, the file-level BM25 list and the
//!   definitions the query names (`search.fusion`: scores by default, or reciprocal ranks).
//!
//! Then one file's chunks beyond `max_per_file` are moved below every other file's, so a long
//! file cannot crowd the top results.
//!
//! Every search reads one workspace: the request's, else the service's default. Its
//! [`Scope`] (the workspace's repositories) bounds every statement, and its fingerprint keys the
//! result cache and the BM25 statistics, so writes in one workspace neither invalidate nor
//! re-rank another's results.
//! Errors say whose fault they are: [`SearchError::Invalid`] is the caller's; embedder and
//! database errors are passing faults when their source says so.

mod request;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lru::LruCache;
use thiserror::Error;
use tokio_util::task::AbortOnDropHandle;

pub use self::request::{MAX_DEPTH, RawSearch, SearchRequest, with_language_aliases};
use crate::config::{Fusion, SearchConfig, SearchMode};
use crate::embed::{EmbedError, Embedder, InputKind};
use crate::lock;
use crate::store::{
    CollectionStats, DefinitionQuery, FileQuery, FileStats, FileTerm, Hit, LexicalQuery, Scope,
    Store, StoreError, TermWeight, VectorQuery, pooled,
};
use crate::text::{named_keys, words};

/// Query terms found in more chunks than this are "common": they are still scored, but do not
/// generate candidates, and their count stops here.
pub const TERM_COUNT_CAP: i64 = 5000;
/// How long collection statistics (counts, average length, common terms) are reused while the
/// workspace changes.
const COLLECTION_STATS_TTL: Duration = Duration::from_secs(30);

#[derive(Debug, Error)]
pub enum SearchError {
    #[error("{0}")]
    Invalid(String),
    /// The request asked for something its caller may not see (another workspace).
    #[error("{0}")]
    Forbidden(String),
    #[error("query embedding failed: {0}")]
    Embedding(#[from] EmbedError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One result and how it was ranked.
#[derive(Debug, Clone)]
pub struct ScoredHit {
    pub hit: Hit,
    /// The score results are ordered by: the fused score in hybrid mode, the cosine similarity
    /// in vector mode, the BM25 score in lexical mode.
    pub score: f64,
    /// 1-based rank in the vector list, when the vector retriever found it.
    pub vector_rank: Option<usize>,
    /// 1-based rank in the lexical list of chunks, when it found this chunk.
    pub lexical_rank: Option<usize>,
    /// BM25 score of the chunk's file, when the file-level lexical list found the file.
    pub file_lexical: Option<f64>,
    /// 1-based rank of the chunk's file in the file-level lexical list.
    pub file_lexical_rank: Option<usize>,
    /// When the chunk defines an identifier the query names: 1 for the name as written, less
    /// for a part of a qualified name ([`crate::text::NamedKey::weight`]).
    pub definition: Option<f64>,
    /// 1-based rank in the list of definitions (best match first).
    pub definition_rank: Option<usize>,
}

impl ScoredHit {
    /// A hit no list has ranked yet.
    fn new(hit: Hit) -> Self {
        Self {
            hit,
            score: 0.0,
            vector_rank: None,
            lexical_rank: None,
            file_lexical: None,
            file_lexical_rank: None,
            definition: None,
            definition_rank: None,
        }
    }
}

/// Results and timings of one search.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    pub hits: Vec<ScoredHit>,
    /// The mode that produced the results (hybrid falls back to lexical while the embedder is
    /// unavailable).
    pub mode: SearchMode,
    /// Why the results are not what was asked for, if they are not.
    pub warning: Option<String>,
    pub query_embedding_ms: u64,
    pub search_ms: u64,
    /// Whether the result came from the result cache.
    pub cached: bool,
    /// The workspace searched.
    pub workspace: String,
}

/// The search service shared by every front end. Cheap to clone.
#[derive(Clone)]
pub struct SearchService {
    inner: Arc<Inner>,
    /// The workspace of requests that name none.
    default_workspace: Arc<str>,
}

struct Inner {
    store: Store,
    embedder: Arc<dyn Embedder>,
    cfg: SearchConfig,
    /// How long a search waits for its query embedding.
    query_deadline: Duration,
    results: Option<Mutex<LruCache<String, Cached>>>,
    queries: Option<Mutex<LruCache<String, Arc<Vec<f32>>>>>,
    chunk_stats: IndexFigure<CollectionStats>,
    chunk_estimate: IndexFigure<i64>,
    scope_chunks: IndexFigure<i64>,
    file_stats: IndexFigure<Arc<FileStats>>,
    /// Per workspace, each file's change count (`search.history_weight`), or `None` when more
    /// than [`CHANGES_CACHED`] files have one: those workspaces look their candidates up. Read
    /// again after any write to the workspace (an index scan of the files that have one).
    changes: IndexFigure<Option<Arc<HashMap<FileKey, f64>>>>,
    /// Per workspace, each query word's lexemes and their file counts.
    file_terms: Mutex<HashMap<String, WordTerms>>,
}

/// At most this many files' change counts are kept per workspace (about 100 bytes each): the
/// files the last 1,000 commits of each of its repositories changed. A workspace with more
/// reads its candidates' counts in each search instead (about 0.5 ms for 80 files).
const CHANGES_CACHED: usize = 200_000;

/// How many query words' file counts are kept per workspace.
const WORD_TERMS_CACHED: usize = 20_000;

/// Query words' lexemes with their file counts in one workspace, reused like an
/// [`IndexFigure`]: while the workspace is unchanged, and once it changed, for up to
/// [`COLLECTION_STATS_TTL`] after the first was read. At 1M chunks a common term's count is
/// a sum over 2,000 repositories' rows (about 1 ms); agents' queries share most of their words.
struct WordTerms {
    fingerprint: u64,
    since: Instant,
    words: LruCache<String, Arc<[(String, i64)]>>,
}

impl WordTerms {
    fn new(fingerprint: u64) -> Self {
        Self {
            fingerprint,
            since: Instant::now(),
            words: LruCache::new(NonZeroUsize::new(WORD_TERMS_CACHED).unwrap_or(NonZeroUsize::MIN)),
        }
    }
}

/// A figure about one workspace, reused while the workspace is unchanged and, once it
/// changed, for up to [`COLLECTION_STATS_TTL`]: BM25 weights drift slowly, and recomputing them
/// is a scan. Kept per workspace, so one workspace's writes never refresh another's figures.
struct IndexFigure<T>(Mutex<HashMap<String, (u64, Instant, T)>>);

impl<T: Clone> IndexFigure<T> {
    fn new() -> Self {
        Self(Mutex::new(HashMap::new()))
    }

    async fn get<F>(&self, workspace: &str, fingerprint: u64, load: F) -> Result<T, StoreError>
    where
        F: std::future::Future<Output = Result<T, StoreError>>,
    {
        if let Some((f, at, value)) = lock(&self.0).get(workspace)
            && (*f == fingerprint || at.elapsed() < COLLECTION_STATS_TTL)
        {
            return Ok(value.clone());
        }
        self.load(workspace, fingerprint, load).await
    }

    /// The figure, reused only while the workspace is unchanged: for one that must follow
    /// every write and is cheap to read again.
    async fn get_exact<F>(
        &self,
        workspace: &str,
        fingerprint: u64,
        load: F,
    ) -> Result<T, StoreError>
    where
        F: std::future::Future<Output = Result<T, StoreError>>,
    {
        if let Some((f, _, value)) = lock(&self.0).get(workspace)
            && *f == fingerprint
        {
            return Ok(value.clone());
        }
        self.load(workspace, fingerprint, load).await
    }

    async fn load<F>(&self, workspace: &str, fingerprint: u64, load: F) -> Result<T, StoreError>
    where
        F: std::future::Future<Output = Result<T, StoreError>>,
    {
        let value = load.await?;
        lock(&self.0).insert(
            workspace.to_owned(),
            (fingerprint, Instant::now(), value.clone()),
        );
        Ok(value)
    }
}

/// A query's vector, or why there is none.
type QueryVector = Result<Arc<Vec<f32>>, EmbedError>;

#[derive(Clone)]
struct Cached {
    fingerprint: u64,
    outcome: SearchOutcome,
}

impl SearchService {
    pub fn new(store: Store, embedder: Arc<dyn Embedder>, cfg: SearchConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                results: cache(cfg.result_cache_entries),
                queries: cache(cfg.query_cache_entries),
                query_deadline: query_deadline(&cfg, embedder.model_id()),
                store,
                embedder,
                cfg,
                chunk_stats: IndexFigure::new(),
                chunk_estimate: IndexFigure::new(),
                scope_chunks: IndexFigure::new(),
                file_stats: IndexFigure::new(),
                changes: IndexFigure::new(),
                file_terms: Mutex::new(HashMap::new()),
            }),
            default_workspace: Arc::from(crate::config::DEFAULT_WORKSPACE),
        }
    }

    /// The same service answering requests that name no workspace from `workspace`.
    pub fn with_default_workspace(mut self, workspace: &str) -> Self {
        self.default_workspace = Arc::from(workspace);
        self
    }

    pub fn config(&self) -> &SearchConfig {
        &self.inner.cfg
    }

    /// The workspace of requests that name none.
    pub fn default_workspace(&self) -> &str {
        &self.default_workspace
    }

    /// The scope a request reads: its workspace's repositories. A repository filter naming a
    /// repository outside the workspace is the caller's error, and says which exist.
    pub async fn scope(&self, req: &SearchRequest) -> Result<Scope, SearchError> {
        let workspace = req.workspace.as_deref().unwrap_or(&self.default_workspace);
        let scope = self.inner.store.scope(workspace).await?;
        if let Some(wanted) = &req.filters.repositories {
            for name in wanted {
                if !scope.contains(name) {
                    let known = if scope.is_empty() {
                        format!("workspace `{workspace}` has no repositories")
                    } else {
                        repositories_named_like(name, scope.repositories(), workspace)
                    };
                    return Err(SearchError::Invalid(format!(
                        "repository: no repository `{name}`; {known}"
                    )));
                }
            }
        }
        Ok(scope)
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub async fn search(&self, req: &SearchRequest) -> Result<SearchOutcome, SearchError> {
        let inner = &self.inner;
        let started = Instant::now();
        let wants_vector = match req.mode {
            SearchMode::Hybrid | SearchMode::Vector => true,
            SearchMode::Lexical => req.min_similarity.is_some(),
        };
        let key = format!(
            "{}\u{0}{req:?}",
            req.workspace.as_deref().unwrap_or(&self.default_workspace)
        );
        // The query's vector does not depend on the scope: unless the result is likely cached,
        // it is computed while the scope is read (and dropped with the search if not needed).
        let likely_cached = inner
            .results
            .as_ref()
            .is_some_and(|cache| lock(cache).contains(&key));
        let early_embedding =
            (wants_vector && !likely_cached).then(|| self.spawn_query_embedding(&req.query));
        let scope = self.scope(req).await?;
        let workspace = scope.workspace();
        let fingerprint = scope.fingerprint();
        if scope.is_empty() {
            return Ok(SearchOutcome {
                hits: Vec::new(),
                mode: req.mode,
                warning: Some(format!(
                    "workspace `{workspace}` has no repositories indexed yet"
                )),
                query_embedding_ms: 0,
                search_ms: started.elapsed().as_millis() as u64,
                cached: false,
                workspace: workspace.to_owned(),
            });
        }
        if let Some(cache) = &inner.results
            && let Some(hit) = lock(cache).get(&key).cloned()
            && hit.fingerprint == fingerprint
        {
            let mut outcome = hit.outcome;
            outcome.cached = true;
            outcome.query_embedding_ms = 0;
            outcome.search_ms = started.elapsed().as_millis() as u64;
            return Ok(outcome);
        }

        // The lexical lists and the definitions do not need the query's vector: they run while
        // it is computed, and their hits' similarities are looked up once it is there.
        let search_started = Instant::now();
        let embedding = async {
            if !wants_vector {
                return (None, 0);
            }
            let task = early_embedding.unwrap_or_else(|| self.spawn_query_embedding(&req.query));
            match task.await {
                Ok((v, ms)) => (Some(v), ms),
                Err(e) => (
                    Some(Err(EmbedError::Inference(format!(
                        "the query embedding task failed: {e}"
                    )))),
                    0,
                ),
            }
        };
        let depth = ((req.offset + req.limit) * 4).clamp(40, MAX_DEPTH) as i64;
        let model = inner.embedder.model_id();
        let query_words = words(&req.query).collect::<Vec<_>>();
        let words = query_words.join(" ");
        let chunk_list = || async {
            let (terms, avg_length) = self.chunk_term_weights(&words, &scope).await?;
            inner
                .store
                .lexical_search(&LexicalQuery {
                    terms: &terms,
                    scope: &scope,
                    filters: &req.filters,
                    avg_length,
                    limit: depth,
                })
                .await
        };
        let file_list = async {
            let stats = self.file_stats(&scope).await?;
            let terms = most_selective(self.file_term_counts(&query_words, &scope).await?, |t| {
                bm25_idf(stats.files.max(1) as f64, t.files) * t.weight
            });
            inner
                .store
                .lexical_file_search(&FileQuery {
                    terms: &terms,
                    stats: &stats,
                    scope: &scope,
                    filters: &req.filters,
                    limit: depth,
                    best_chunks: (req.offset + req.limit) as i64,
                })
                .await
        };
        // The chunk list is needed in hybrid mode with a weight above 0, and in lexical mode
        // when a file may show more than one chunk or too few files match to fill the page.
        let needs_chunks = |mode: SearchMode, files: usize| match mode {
            SearchMode::Vector => false,
            SearchMode::Hybrid => inner.cfg.lexical_weight > 0.0,
            SearchMode::Lexical => req.max_per_file > 1 || files < req.offset + req.limit,
        };
        let lexical = async {
            match req.mode {
                SearchMode::Vector => Ok((Vec::new(), Vec::new())),
                SearchMode::Hybrid if needs_chunks(SearchMode::Hybrid, 0) => {
                    tokio::try_join!(chunk_list(), file_list)
                }
                SearchMode::Hybrid => Ok((Vec::new(), file_list.await?)),
                SearchMode::Lexical => {
                    let files = file_list.await?;
                    let chunks = if needs_chunks(SearchMode::Lexical, files.len()) {
                        chunk_list().await?
                    } else {
                        Vec::new()
                    };
                    Ok((chunks, files))
                }
            }
        };
        let convex = req.mode == SearchMode::Hybrid && inner.cfg.fusion == Fusion::Convex;
        // Pooling a file's chunks on the vector side reads the vector list twice as deep (up
        // to the deepest page's depth, which `depth` never exceeds): the files it finds are
        // pooled over more of their chunks, and the list fused stays `depth` long (see
        // `pool_vector_files`).
        let pools = convex && inner.cfg.file_vector_temperature > 0.0;
        let vector_depth = if pools {
            (depth * POOLING_DEPTH_FACTOR).min(MAX_DEPTH as i64)
        } else {
            depth
        };
        let named = named_keys(&req.query);
        let definitions = async {
            if req.mode == SearchMode::Vector
                || named.is_empty()
                || inner.cfg.definition_weight <= 0.0
            {
                return Ok(Vec::new());
            }
            let keys: Vec<String> = named.iter().map(|k| k.key.clone()).collect();
            let found = inner
                .store
                .definition_search(&DefinitionQuery {
                    keys: &keys,
                    scope: &scope,
                    filters: &req.filters,
                })
                .await?;
            Ok::<_, StoreError>(
                found
                    .into_iter()
                    .map(|(hit, matched)| {
                        let weight = named
                            .iter()
                            .filter(|k| matched.contains(&k.key))
                            .map(|k| k.weight)
                            .fold(0.0, f64::max);
                        (hit, weight)
                    })
                    .collect(),
            )
        };
        // The vector search starts as soon as the query's vector is there, while the lexical
        // lists may still run; their hits' similarities are read once both are there.
        let (vector_ready, mut vector_wait) = tokio::sync::watch::channel(None);
        let vector_side = async {
            let (embedding, query_embedding_ms) = embedding.await;
            let usable = match &embedding {
                Some(Ok(v)) => Some(Arc::clone(v)),
                _ => None,
            };
            let _ = vector_ready.send(Some(usable.clone()));
            let vector = match usable {
                Some(e) if matches!(req.mode, SearchMode::Hybrid | SearchMode::Vector) => {
                    async {
                        let table_chunks = inner
                            .chunk_estimate
                            .get("", fingerprint, inner.store.chunk_count_estimate())
                            .await?;
                        let scope_chunks = if scope.is_whole() {
                            table_chunks
                        } else {
                            inner
                                .scope_chunks
                                .get(
                                    scope.workspace(),
                                    scope.fingerprint(),
                                    inner.store.scope_chunks(&scope),
                                )
                                .await?
                        };
                        inner
                            .store
                            .vector_search(&VectorQuery {
                                embedding: &e,
                                model,
                                scope: &scope,
                                filters: &req.filters,
                                min_similarity: req.min_similarity.unwrap_or(-1.0),
                                limit: vector_depth,
                                ef_search: inner.cfg.hnsw_ef_search,
                                table_chunks,
                                scope_chunks,
                            })
                            .await
                    }
                    .await
                }
                _ => Ok(Vec::new()),
            };
            (embedding, query_embedding_ms, vector)
        };
        let lexical_side = async {
            let (lexical, definitions) = tokio::join!(lexical, definitions);
            let (chunks, files) = lexical?;
            let definitions = definitions?;
            let found: Vec<uuid::Uuid> = chunks
                .iter()
                .chain(&files)
                .chain(definitions.iter().map(|(h, _)| h))
                .map(|h| h.id)
                .collect::<std::collections::HashSet<_>>()
                .into_iter()
                .collect();
            let vector = match vector_wait.wait_for(Option::is_some).await {
                Ok(v) => v.clone().flatten(),
                Err(_) => None,
            };
            // A file the file-level list could put on the page is scored over its chunks,
            // whichever chunk it is shown by (convex fusion; see `Convex::score`).
            let file_keys = if convex {
                files_that_could_make_the_page(&files, 2 * (req.offset + req.limit))
            } else {
                Vec::new()
            };
            let (similarities, file_similarities) = match vector {
                Some(e) if !found.is_empty() => tokio::try_join!(
                    inner.store.similarities(&found, &e, model),
                    inner.store.file_similarities(
                        &file_keys,
                        &e,
                        model,
                        &scope,
                        &req.filters,
                        inner.cfg.file_vector_temperature,
                    )
                )?,
                _ => (HashMap::new(), HashMap::new()),
            };
            Ok::<_, StoreError>((chunks, files, definitions, similarities, file_similarities))
        };
        let ((embedding, query_embedding_ms, vector), lexical) =
            tokio::join!(vector_side, lexical_side);
        let (mut chunks, mut files, mut definitions, similarities, mut file_similarities) =
            lexical?;
        let mut mode = req.mode;
        let mut warning = None;
        match embedding {
            None | Some(Ok(_)) => {}
            Some(Err(e)) if req.mode == SearchMode::Hybrid => {
                tracing::warn!(error = %e, "query embedding failed; answering lexically");
                warning = Some(format!(
                    "the embedding model is unavailable ({e}); results are lexical only"
                ));
                mode = SearchMode::Lexical;
                if chunks.is_empty() && needs_chunks(SearchMode::Lexical, files.len()) {
                    chunks = chunk_list().await?;
                }
            }
            Some(Err(e)) => return Err(e.into()),
        }
        let mut vector = vector?;
        if pools {
            pool_vector_files(
                &mut vector,
                depth as usize,
                &mut file_similarities,
                inner.cfg.file_vector_temperature,
            );
        }
        for h in chunks
            .iter_mut()
            .chain(files.iter_mut())
            .chain(definitions.iter_mut().map(|(h, _)| h))
        {
            h.similarity = similarities.get(&h.id).copied();
        }
        let history_weight = req.history_weight.unwrap_or(inner.cfg.history_weight);
        let changes = if convex && mode == SearchMode::Hybrid && history_weight > 0.0 {
            let candidates = vector
                .iter()
                .chain(&chunks)
                .chain(&files)
                .chain(definitions.iter().map(|(h, _)| h));
            self.changes_of(&scope, candidates).await?
        } else {
            HashMap::new()
        };
        let lists = Lists {
            vector,
            chunks,
            files,
            definitions,
            file_similarities,
            changes,
            history_weight,
        };
        let mut hits = fuse(lists, mode, &inner.cfg);
        if mode != SearchMode::Vector {
            let kinds = KindWeights::for_query(&inner.cfg, &words);
            weigh_kinds(&mut hits, &kinds, &words);
        }
        if mode == SearchMode::Hybrid && req.chunks_by_words {
            let ids = chunks_to_pick(&hits, req.offset + req.limit);
            if !ids.is_empty() {
                let (terms, avg_length) = self.word_weights_of_files(&query_words, &scope).await?;
                let scores = inner
                    .store
                    .chunk_word_scores(&ids, &terms, avg_length)
                    .await?;
                pick_chunks_by_words(&mut hits, &scores);
            }
        }
        if let Some(min) = req.min_similarity {
            hits.retain(|h| h.hit.similarity.is_some_and(|s| s >= min));
        }
        let hits: Vec<ScoredHit> = spread(hits, req.max_per_file)
            .into_iter()
            .skip(req.offset)
            .take(req.limit)
            .collect();
        if hits.is_empty() && warning.is_none() {
            warning = self.unmatched_languages(req, &scope).await?;
        }
        let outcome = SearchOutcome {
            hits,
            mode,
            warning,
            query_embedding_ms,
            search_ms: search_started.elapsed().as_millis() as u64,
            cached: false,
            workspace: workspace.to_owned(),
        };
        // A degraded answer is not cached: the next search should try the embedder again.
        if let Some(cache) = &inner.results
            && outcome.warning.is_none()
        {
            lock(cache).put(
                key,
                Cached {
                    fingerprint,
                    outcome: outcome.clone(),
                },
            );
        }
        Ok(outcome)
    }

    /// For a search with a language filter that found nothing: whether no file of the scope
    /// is in any of those languages, said with the languages it has. `--language 2` (meant as
    /// a limit) or `golang` would otherwise read as "nothing in the index matches". Only run
    /// on an empty page: it reads the workspace's summary.
    async fn unmatched_languages(
        &self,
        req: &SearchRequest,
        scope: &Scope,
    ) -> Result<Option<String>, StoreError> {
        let Some(wanted) = &req.filters.languages else {
            return Ok(None);
        };
        let summary = self
            .inner
            .store
            .workspace_summary(scope.workspace())
            .await?;
        let mut indexed: BTreeMap<&str, i64> = BTreeMap::new();
        // The summary is the workspace's; a repository filter narrows it (its names were
        // checked against the scope already).
        let searched = summary.repositories.iter().filter(|repo| {
            req.filters
                .repositories
                .as_ref()
                .is_none_or(|names| names.contains(&repo.name))
        });
        for repo in searched {
            for (language, files) in &repo.languages {
                *indexed.entry(language).or_default() += files;
            }
        }
        if wanted.iter().any(|l| indexed.contains_key(l.as_str())) {
            return Ok(None);
        }
        let have = if indexed.is_empty() {
            "none".to_owned()
        } else {
            indexed
                .iter()
                .map(|(l, n)| format!("{l} ({n} file{})", if *n == 1 { "" } else { "s" }))
                .collect::<Vec<_>>()
                .join(", ")
        };
        Ok(Some(format!(
            "no indexed file is in language {}: the repositories searched hold {have}",
            wanted
                .iter()
                .map(|l| format!("`{l}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        )))
    }

    /// [`Self::query_embedding`] on a task of its own, with how long it took in milliseconds;
    /// dropping the handle abandons it.
    fn spawn_query_embedding(&self, query: &str) -> AbortOnDropHandle<(QueryVector, u64)> {
        let service = self.clone();
        let query = query.to_owned();
        AbortOnDropHandle::new(tokio::spawn(async move {
            let started = Instant::now();
            let v = service.query_embedding(&query).await;
            (v, started.elapsed().as_millis() as u64)
        }))
    }

    /// The query's vector, from the cache when the same text was embedded before (a long
    /// query's [`title`]: two tickets with one title share it).
    async fn query_embedding(&self, query: &str) -> QueryVector {
        let text = title(query);
        if let Some(cache) = &self.inner.queries
            && let Some(v) = lock(cache).get(text)
        {
            return Ok(v.clone());
        }
        let deadline = self.inner.query_deadline;
        let input = [text.to_owned()];
        let embedding = self.inner.embedder.embed(&input, InputKind::Query);
        let mut vectors = tokio::time::timeout(deadline, embedding)
            .await
            .map_err(|_| EmbedError::QueryDeadline {
                ms: deadline.as_millis() as u64,
            })??;
        let v = Arc::new(
            vectors
                .pop()
                .ok_or_else(|| EmbedError::Inference("no vector for the query".into()))?,
        );
        if let Some(cache) = &self.inner.queries {
            lock(cache).put(text.to_owned(), v.clone());
        }
        Ok(v)
    }

    /// The distinct lexemes of the query's words with the number of the scope's files holding
    /// each, the words read before from the cache ([`WordTerms`]), and each weighted by how
    /// often the query repeats it ([`repeat_weight`]).
    async fn file_term_counts(
        &self,
        words: &[String],
        scope: &Scope,
    ) -> Result<Vec<FileTerm>, StoreError> {
        let (workspace, fingerprint) = (scope.workspace(), scope.fingerprint());
        let mut known: HashMap<&str, Arc<[(String, i64)]>> = HashMap::new();
        let mut missing: Vec<String> = Vec::new();
        {
            let mut cache = lock(&self.inner.file_terms);
            let entry = cache
                .entry(workspace.to_owned())
                .or_insert_with(|| WordTerms::new(fingerprint));
            if entry.fingerprint != fingerprint && entry.since.elapsed() >= COLLECTION_STATS_TTL {
                *entry = WordTerms::new(fingerprint);
            }
            for w in words {
                match entry.words.get(w) {
                    Some(terms) => {
                        known.insert(w, terms.clone());
                    }
                    None if !missing.contains(w) => missing.push(w.clone()),
                    None => {}
                }
            }
        }
        if !missing.is_empty() {
            let rows = self.inner.store.file_term_counts(&missing, scope).await?;
            let mut read: HashMap<&str, Vec<(String, i64)>> =
                missing.iter().map(|w| (w.as_str(), Vec::new())).collect();
            for (word, lexeme, files) in rows {
                if let Some(terms) = read.get_mut(word.as_str()) {
                    terms.push((lexeme, files));
                }
            }
            let mut cache = lock(&self.inner.file_terms);
            let entry = cache
                .entry(workspace.to_owned())
                .or_insert_with(|| WordTerms::new(fingerprint));
            for (word, terms) in read {
                let terms: Arc<[(String, i64)]> = terms.into();
                entry.words.put(word.to_owned(), terms.clone());
                if let Some(w) = words.iter().find(|w| *w == word) {
                    known.insert(w, terms);
                }
            }
        }
        // In the query's order; a lexeme as often as the query's words give it.
        let mut terms: Vec<FileTerm> = Vec::new();
        let mut repeats: Vec<u32> = Vec::new();
        let mut at: HashMap<&str, usize> = HashMap::new();
        for (lexeme, files) in words
            .iter()
            .filter_map(|w| known.get(w.as_str()))
            .flat_map(|t| t.iter())
        {
            match at.get(lexeme.as_str()) {
                Some(&i) => repeats[i] += 1,
                None => {
                    at.insert(lexeme, terms.len());
                    terms.push(FileTerm {
                        term: lexeme.clone(),
                        files: *files as f64,
                        weight: 1.0,
                    });
                    repeats.push(1);
                }
            }
        }
        for (t, n) in terms.iter_mut().zip(repeats) {
            t.weight = repeat_weight(n);
        }
        Ok(terms)
    }

    /// Each candidate file's change count, for those that have one (see
    /// `Convex::with_history`): from the workspace's counts, kept until it changes, or, in a
    /// workspace with more than [`CHANGES_CACHED`] files that have one, read for the candidates.
    async fn changes_of<'h>(
        &self,
        scope: &Scope,
        candidates: impl Iterator<Item = &'h Hit>,
    ) -> Result<HashMap<FileKey, f64>, StoreError> {
        let inner = &self.inner;
        let kept = inner
            .changes
            .get_exact(scope.workspace(), scope.fingerprint(), async {
                Ok(inner
                    .store
                    .workspace_changes(scope.workspace(), CHANGES_CACHED)
                    .await?
                    .map(Arc::new))
            })
            .await?;
        let keys: HashSet<FileKey> = candidates
            .map(|h| (h.repository.clone(), h.file_path.clone()))
            .collect();
        match kept {
            Some(kept) => Ok(keys
                .into_iter()
                .filter_map(|k| kept.get(&k).map(|c| (k, *c)))
                .collect()),
            None => {
                let keys: Vec<FileKey> = keys.into_iter().collect();
                inner.store.file_changes(&keys).await
            }
        }
    }

    /// The scope's file counts for BM25, cached per workspace until the index changes.
    async fn file_stats(&self, scope: &Scope) -> Result<Arc<FileStats>, StoreError> {
        let inner = &self.inner;
        inner
            .file_stats
            .get(scope.workspace(), scope.fingerprint(), async {
                Ok(Arc::new(inner.store.file_stats(scope).await?))
            })
            .await
    }

    /// The query's terms weighted by the files that hold them, as the file-level list weighs
    /// them (from its caches, filled by that list), and the chunks' mean length: enough to
    /// rank a file's chunks against one another without counting each term's chunks, which
    /// costs tens of milliseconds for a long query's words.
    async fn word_weights_of_files(
        &self,
        words: &[String],
        scope: &Scope,
    ) -> Result<(Vec<TermWeight>, f64), StoreError> {
        let inner = &self.inner;
        let (workspace, fingerprint) = (scope.workspace(), scope.fingerprint());
        let n = self.file_stats(scope).await?.files.max(1) as f64;
        let terms = self
            .file_term_counts(words, scope)
            .await?
            .into_iter()
            .map(|t| TermWeight {
                idf: bm25_idf(n, t.files).max(0.0) * t.weight,
                chunks: t.files,
                selective: false,
                term: t.term,
            })
            .filter(|t| t.idf > 0.0)
            .collect();
        // As many terms as the BM25 lists read: each costs a rank per chunk scored.
        let terms = most_selective(terms, |t| t.idf);
        let collection = inner
            .chunk_stats
            .get(workspace, fingerprint, inner.store.collection_stats(scope))
            .await?;
        Ok((terms, collection.avg_length))
    }

    /// BM25 weights of the query's terms over chunks, and the chunks' average length.
    async fn chunk_term_weights(
        &self,
        words: &str,
        scope: &Scope,
    ) -> Result<(Vec<TermWeight>, f64), StoreError> {
        let store = &self.inner.store;
        let stats = store.term_stats(words, TERM_COUNT_CAP, scope).await?;
        let collection = self
            .inner
            .chunk_stats
            .get(
                scope.workspace(),
                scope.fingerprint(),
                store.collection_stats(scope),
            )
            .await?;
        let n = collection.chunks.max(1) as f64;
        let terms = stats
            .into_iter()
            .map(|t| {
                let count = t.count.unwrap_or(TERM_COUNT_CAP);
                let df = match t.frequency {
                    Some(f) => (f64::from(f) * n).max(1.0),
                    None => count as f64,
                };
                TermWeight {
                    idf: bm25_idf(n, df).max(0.0)
                        * repeat_weight(t.occurrences.max(1).unsigned_abs()),
                    chunks: df,
                    selective: t.frequency.is_none() && count < TERM_COUNT_CAP,
                    term: t.term,
                }
            })
            .filter(|t| t.idf > 0.0)
            .collect();
        Ok((most_selective(terms, |t| t.idf), collection.avg_length))
    }
}

/// What an error about an unknown repository `name` lists of the workspace's `repositories`:
/// all of them when there are few, else those whose names share the wanted one's first
/// letters, and how many there are in all (a workspace may hold hundreds).
fn repositories_named_like(name: &str, repositories: &[String], workspace: &str) -> String {
    const LISTED: usize = 12;
    if repositories.len() <= LISTED {
        return format!(
            "repositories of workspace `{workspace}`: {}",
            repositories.join(", ")
        );
    }
    let wanted = name.to_lowercase();
    let stem: String = wanted.chars().take(3).collect();
    let like: Vec<&str> = repositories
        .iter()
        .filter(|r| {
            let r = r.to_lowercase();
            r.contains(&wanted) || wanted.contains(&r) || r.starts_with(&stem)
        })
        .take(LISTED)
        .map(String::as_str)
        .collect();
    let named = if like.is_empty() {
        String::new()
    } else {
        format!("; named like it: {}", like.join(", "))
    };
    format!(
        "workspace `{workspace}` has {} repositories{named} (`codesearch repo list` lists them)",
        repositories.len()
    )
}

/// The [`MAX_QUERY_TERMS`] terms of highest `weight` (all of them for a shorter query), in
/// their order: a long description's commonest words are left out of the BM25 lists, where
/// each term costs a walk of its postings and a rank per candidate chunk, and adds little.
fn most_selective<T>(mut terms: Vec<T>, weight: impl Fn(&T) -> f64) -> Vec<T> {
    if terms.len() <= MAX_QUERY_TERMS {
        return terms;
    }
    let mut order: Vec<usize> = (0..terms.len()).collect();
    order.sort_by(|&a, &b| {
        weight(&terms[b])
            .total_cmp(&weight(&terms[a]))
            .then(a.cmp(&b))
    });
    let mut keep = vec![false; terms.len()];
    for &i in &order[..MAX_QUERY_TERMS] {
        keep[i] = true;
    }
    let mut i = 0;
    terms.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    terms
}

/// What of a query the vector side embeds: the whole of a short one; of a long one
/// ([`LONG_QUERY_WORDS`] words or more, a ticket or a commit message), its title, the first
/// sentence of at least three words in its first paragraph. The lexical side still reads every
/// word. A sentence-embedding model reads a paragraph as the average of its sentences, and a
/// ticket's body dilutes what its title says (docs/BENCHMARKS.md, "A long query's title").
fn title(query: &str) -> &str {
    let query = query.trim();
    let words = |s: &str| s.split_whitespace().count();
    if words(query) < LONG_QUERY_WORDS {
        return query;
    }
    // The first paragraph: the lines up to the first blank one.
    let mut end = 0;
    for line in query.split_inclusive('\n') {
        if end > 0 && line.trim().is_empty() {
            break;
        }
        end += line.len();
    }
    let paragraph = &query[..end];
    let mut chars = paragraph.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends_sentence = matches!(c, '.' | '!' | '?')
            && chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        if ends_sentence && words(&paragraph[..i]) >= 3 {
            return &paragraph[..=i];
        }
    }
    if words(paragraph) >= 3 {
        paragraph.trim_end()
    } else {
        query
    }
}

/// A query of this many words or more is embedded by its title alone ([`title`]).
const LONG_QUERY_WORDS: usize = 20;

/// Terms a query's BM25 lists read at most ([`most_selective`]). A 580-word query read all
/// its 421 terms in 220–300 ms at 100k chunks, 6–14 ms with 64; on the long queries of the
/// relevance benchmark 64 changed R@10 by nothing and MRR by 0.004 at most (32 cost 0.006
/// R@10; docs/BENCHMARKS.md, "Long queries").
const MAX_QUERY_TERMS: usize = 64;

/// BM25's idf (Lucene's variant) of a term held by `df` of `n` documents: chunks for the
/// chunk list, files for the file list (whose statement computes the same in SQL).
fn bm25_idf(n: f64, df: f64) -> f64 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// What a query term's BM25 weight is multiplied by when the query holds it `n` times:
/// Robertson's query-term saturation, `(k3 + 1) n / (k3 + n)`. 1 for a term said once; a long
/// description (a ticket, a commit message) that keeps coming back to a word is about it,
/// without letting one word outweigh the rest.
fn repeat_weight(n: u32) -> f64 {
    let n = f64::from(n);
    (REPEAT_K3 + 1.0) * n / (REPEAT_K3 + n)
}

/// [`repeat_weight`]'s saturation: 8, the common choice in the BM25 literature (a word said
/// twice weighs 1.8, four times 3, at most 9). On long queries (docs/BENCHMARKS.md, "Long
/// queries") 2 gained about half as much and a linear weight no more.
const REPEAT_K3: f64 = 8.0;

/// The query embedding's deadline: the configured one, else 3 s for Ollama and 750 ms for an
/// in-process model.
fn query_deadline(cfg: &SearchConfig, model_id: &str) -> Duration {
    let ms = match cfg.query_embedding_timeout_ms {
        0 if model_id.starts_with("ollama/") => 3000,
        0 => 750,
        ms => ms,
    };
    Duration::from_millis(ms)
}

fn cache<K: std::hash::Hash + Eq, V>(entries: usize) -> Option<Mutex<LruCache<K, V>>> {
    NonZeroUsize::new(entries).map(|n| Mutex::new(LruCache::new(n)))
}

/// The ranked lists a search fuses, best first in each.
#[derive(Debug, Default)]
struct Lists {
    /// Chunks by cosine similarity.
    vector: Vec<Hit>,
    /// Chunks by BM25.
    chunks: Vec<Hit>,
    /// Each file's representative chunk, by the file's BM25.
    files: Vec<Hit>,
    /// Chunks defining identifiers the query names, with how well they match.
    definitions: Vec<(Hit, f64)>,
    /// Each candidate file's vector score over its chunks (convex fusion only; see
    /// `Store::file_similarities`).
    file_similarities: HashMap<FileKey, f64>,
    /// How many recent commits changed each candidate file that any did (hybrid mode, convex
    /// fusion, `search.history_weight` above 0; see `Store::file_changes`).
    changes: HashMap<FileKey, f64>,
    /// What the counts add at most (the request's, or `search.history_weight`).
    history_weight: f64,
}

/// A file: its repository and path.
type FileKey = (String, String);

/// The files of the file-level list whose nearest chunk is looked up: the first `cap`, which
/// ranked as well on the relevance benchmark as all of them at 2 × (offset + limit)
/// (docs/BENCHMARKS.md), and any tied with the last of those. Which of equal files the list
/// puts first is up to the plan, and must not decide which of them is looked up; their BM25
/// sums may differ in the last bits, added in another order, so a tie is within 1e-9.
fn files_that_could_make_the_page(files: &[Hit], cap: usize) -> Vec<FileKey> {
    let last = files.get(cap.saturating_sub(1)).and_then(|h| h.lexical);
    let tied = |score: Option<f64>| match (score, last) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        _ => false,
    };
    files
        .iter()
        .enumerate()
        .take_while(|(i, h)| *i < cap || tied(h.lexical))
        .map(|(_, h)| (h.repository.clone(), h.file_path.clone()))
        .collect()
}

/// How many times deeper than the lists fused the vector list is read when files are pooled
/// on the vector side (`search.file_vector_temperature` above 0): its hits beyond the fused
/// depth count toward their files' scores only. At 100k chunks, 80 hits instead of 40 cost
/// about 0.2 ms, within the walk's candidate list (docs/BENCHMARKS.md).
const POOLING_DEPTH_FACTOR: i64 = 2;

/// Gives each file the vector list found that has no score in `scores` (the file query reads
/// every chunk of the files the lexical side could put on the page) its chunks' similarities
/// in that list, pooled ([`pooled`]): the list read [`POOLING_DEPTH_FACTOR`] times as deep as
/// the one fused. A file's chunks there are its nearest ones, as far as the list reaches.
/// Reading every chunk of these files too cost 2 to 4 ms more per search at 100k chunks, and
/// 1 to 1.5 ms in the vector search's own statement (docs/BENCHMARKS.md). Then only the
/// first `fused` hits stay in `vector`, for fusion.
fn pool_vector_files(
    vector: &mut Vec<Hit>,
    fused: usize,
    scores: &mut HashMap<FileKey, f64>,
    temperature: f64,
) {
    let mut found: HashMap<FileKey, Vec<f64>> = HashMap::new();
    for h in vector.iter() {
        if let Some(s) = h.similarity {
            found
                .entry((h.repository.clone(), h.file_path.clone()))
                .or_default()
                .push(s);
        }
    }
    for (key, similarities) in found {
        if let std::collections::hash_map::Entry::Vacant(e) = scores.entry(key)
            && let Some(score) = pooled(similarities, temperature)
        {
            e.insert(score);
        }
    }
    vector.truncate(fused);
}

/// Merges the ranked lists into one, best first.
///
/// Vector mode: the cosine similarity. Otherwise (with `fusion = "rrf"`) reciprocal rank
/// fusion at two levels: a chunk scores `Σ weight / (k + rank)` over the lists that found it,
/// plus the same sum over its *file's* best rank in each list, so that evidence spread over a
/// file (many chunks found, or the file-level BM25 list) lifts the file's best chunk. Lists:
/// vector chunks (`vector_weight`), lexical chunks (`lexical_weight`), lexical files
/// (`file_weight`) and definitions (`definition_weight`). Convex fusion: see [`Convex`].
fn fuse(lists: Lists, mode: SearchMode, cfg: &SearchConfig) -> Vec<ScoredHit> {
    let key = |h: &Hit| (h.repository.clone(), h.file_path.clone());
    let mut merged: Vec<ScoredHit> = Vec::new();
    let mut by_id: HashMap<uuid::Uuid, usize> = HashMap::new();
    // Per list, each file's first (best) rank.
    let mut file_ranks: [HashMap<FileKey, usize>; 4] = Default::default();
    let mut definitions = lists.definitions;
    definitions.sort_by(|a, b| b.1.total_cmp(&a.1));
    let definition_weights: HashMap<uuid::Uuid, f64> =
        definitions.iter().map(|(h, w)| (h.id, *w)).collect();
    let ordered = [
        lists.vector,
        lists.chunks,
        lists.files,
        definitions.into_iter().map(|(h, _)| h).collect(),
    ];
    for (list, hits) in ordered.into_iter().enumerate() {
        let mut files_seen = 0;
        for (rank, hit) in hits.into_iter().enumerate() {
            let rank = rank + 1;
            if let std::collections::hash_map::Entry::Vacant(e) = file_ranks[list].entry(key(&hit))
            {
                files_seen += 1;
                e.insert(files_seen);
            }
            let i = *by_id.entry(hit.id).or_insert_with(|| {
                merged.push(ScoredHit::new(hit.clone()));
                merged.len() - 1
            });
            let m = &mut merged[i];
            match list {
                0 => m.vector_rank = Some(rank),
                1 => {
                    m.lexical_rank = Some(rank);
                    m.hit.lexical = hit.lexical;
                }
                2 => {
                    m.file_lexical_rank = Some(rank);
                    m.file_lexical = hit.lexical;
                }
                _ => {
                    m.definition_rank = Some(rank);
                    m.definition = definition_weights.get(&hit.id).copied();
                }
            }
            if m.hit.similarity.is_none() {
                m.hit.similarity = hit.similarity;
            }
        }
    }
    // Lexical mode has no vector list and always ranks chunks too (else each file would
    // only ever show its one best chunk).
    let weights = match mode {
        SearchMode::Lexical => [0.0, 1.0, cfg.file_weight, cfg.definition_weight],
        _ => [
            cfg.vector_weight,
            cfg.lexical_weight,
            cfg.file_weight,
            cfg.definition_weight,
        ],
    };
    let rrf = |rank: Option<usize>, w: f64| rank.map_or(0.0, |r| w / (cfg.rrf_k + r as f64));
    let convex = Convex::new(
        &merged,
        lists.file_similarities,
        cfg.file_vector_temperature > 0.0,
    )
    .with_history(lists.changes, lists.history_weight);
    for h in &mut merged {
        if mode == SearchMode::Vector {
            h.score = h.hit.similarity.unwrap_or(-1.0);
            continue;
        }
        if cfg.fusion == Fusion::Convex {
            h.score = convex.score(h, weights);
            continue;
        }
        // The file-level list only ever holds one chunk per file: its rank is the file's.
        let own = [
            h.vector_rank,
            h.lexical_rank,
            h.file_lexical_rank,
            h.definition_rank,
        ];
        let k = key(&h.hit);
        let chunk: f64 = own.iter().zip(weights).map(|(r, w)| rrf(*r, w)).sum();
        let file: f64 = file_ranks
            .iter()
            .zip(weights)
            .map(|(ranks, w)| rrf(ranks.get(&k).copied(), w))
            .sum();
        h.score = chunk + file;
    }
    merged.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            // A tie inside one file (its best vector chunk against the chunk that matched the
            // query's words, each ranked first in its list) goes to the words: for a query
            // naming an identifier, that chunk is the one asked for. Then (chunks scored by
            // their file's vector score) to the chunk nearest the query.
            .then_with(|| {
                b.file_lexical_rank
                    .is_some()
                    .cmp(&a.file_lexical_rank.is_some())
            })
            .then_with(|| {
                let own = |h: &ScoredHit| h.hit.similarity.unwrap_or(-1.0);
                own(b).total_cmp(&own(a))
            })
            .then_with(|| a.hit.file_path.cmp(&b.hit.file_path))
            .then_with(|| a.hit.chunk_index.cmp(&b.hit.chunk_index))
    });
    merged
}

/// Whether a query (its [`words`]) is about tests: then tests are ranked like other code.
fn asks_for_tests(words: &str) -> bool {
    words.split(' ').any(|w| {
        w.starts_with("test")
            || w.starts_with("spec")
            || w.starts_with("mock")
            || w.starts_with("fixture")
    })
}

/// Whether a query (its [`words`]) asks about releases or changes: then changelogs are ranked
/// like other files.
fn asks_for_changes(words: &str) -> bool {
    words.split(' ').any(|w| {
        w.starts_with("changelog")
            || w.starts_with("release")
            || w == "changes"
            || w == "history"
            || w == "news"
    })
}

/// Whether a query (its [`words`]) asks about documentation: then prose files are ranked like
/// code.
fn asks_for_docs(words: &str) -> bool {
    words.split(' ').any(|w| {
        w.starts_with("doc")
            || w.starts_with("readme")
            || w.starts_with("guide")
            || w.starts_with("tutorial")
            || w.starts_with("manual")
            || w.starts_with("explain")
            || w.starts_with("clarif")
            || w == "faq"
            || w == "wording"
    })
}

/// Whether a query (its [`words`]) is written in another language than English (letters
/// outside ASCII, `카드`, `Größe`, or a common word of German, French, Spanish, Italian,
/// Portuguese or Dutch: [`FOREIGN_WORDS`]), or asks about translations: then translated pages
/// rank like the others.
fn asks_for_translations(words: &str) -> bool {
    words.chars().any(|c| c.is_alphabetic() && !c.is_ascii())
        || words.split(' ').any(|w| {
            w.starts_with("translat")
                || w.starts_with("locali")
                || matches!(
                    w,
                    "i18n" | "l10n" | "locale" | "locales" | "language" | "languages"
                )
                || FOREIGN_WORDS.contains(&w)
        })
}

/// Words common in questions asked in German, French, Spanish, Italian, Portuguese and Dutch,
/// and not in English ones or in code (`mit`, `der`, `del`, `sin`, `os`, `per`, `non` are left
/// out).
#[rustfmt::skip]
const FOREIGN_WORDS: &[&str] = &[
    // German
    "das", "und", "nicht", "ein", "eine", "einen", "einem", "einer", "ist", "wie", "ich", "wird",
    "werden", "auf", "oder", "auch", "sich", "kann", "zum", "zur", "beim", "vom", "ohne", "wenn",
    "warum", "welche",
    // French
    "le", "les", "une", "et", "avec", "pour", "dans", "sur", "je", "qui", "vos", "votre", "sans",
    "peut",
    // Spanish
    "los", "las", "una", "como", "para", "por", "puedo", "cuando",
    // Italian
    "il", "gli", "della", "delle", "degli", "sono", "nel", "nella", "che",
    // Portuguese
    "uma", "meu", "seu",
    // Dutch
    "het", "een", "niet", "hoe", "wordt",
];

/// The locales documentation sites translate into, as their directories and file names spell
/// them (lower case, without a region): English is the default's, and is not here.
const LOCALES: &[&str] = &[
    "ar", "bg", "bn", "ca", "cs", "da", "de", "el", "es", "et", "fa", "fi", "fr", "gl", "he", "hi",
    "hr", "hu", "id", "it", "ja", "ko", "lt", "lv", "ms", "nb", "nl", "pl", "pt", "ro", "ru", "sk",
    "sl", "sr", "sv", "th", "tr", "uk", "ur", "vi", "zh",
];

/// `ko`, `zh-cn`, `pt_BR`, `zh-Hans`: a locale of [`LOCALES`], with a region or script.
fn is_locale(s: &str) -> bool {
    let (lang, region) = match s.split_once(['-', '_']) {
        Some((l, r)) => (l, Some(r)),
        None => (s, None),
    };
    LOCALES.contains(&lang.to_ascii_lowercase().as_str())
        && region.is_none_or(|r| {
            (2..=4).contains(&r.len()) && r.chars().all(|c| c.is_ascii_alphanumeric())
        })
}

/// Whether a path is a page of documentation translated from the default language: prose in a
/// locale's directory under a documentation tree (`docs/ko/guide.md`,
/// `docs/src/content/docs/zh-cn/…`, Docusaurus' `i18n/pt-BR/…`), or named for a locale
/// (`README.zh-CN.md`, mkdocs' `index.fr.md`, `README_ja.md`).
fn is_translation(path: &str) -> bool {
    if !is_prose(path) {
        return false;
    }
    let mut segments: Vec<&str> = path.split('/').collect();
    let file = segments.pop().unwrap_or_default();
    let docs_tree = |s: &&str| {
        matches!(
            s.to_ascii_lowercase().as_str(),
            "docs"
                | "doc"
                | "documentation"
                | "content"
                | "website"
                | "site"
                | "i18n"
                | "l10n"
                | "locales"
                | "translations"
        )
    };
    if let Some(tree) = segments.iter().position(docs_tree)
        && segments[tree + 1..].iter().any(|s| is_locale(s))
    {
        return true;
    }
    let parts: Vec<&str> = file.split('.').collect();
    if parts.len() >= 3 && is_locale(parts[parts.len() - 2]) {
        return true;
    }
    let stem = parts[0];
    // Byte by byte: a name may start with any letters (`CCTV大赛`).
    let b = stem.as_bytes();
    b.len() > 7
        && b[..6].eq_ignore_ascii_case(b"readme")
        && matches!(b[6], b'_' | b'-')
        && is_locale(&stem[7..])
}

/// Whether a path is prose: Markdown, reStructuredText, AsciiDoc, Org or plain text.
fn is_prose(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| is_prose_extension(ext))
}

/// The extensions of prose files (lower case, without the dot).
fn is_prose_extension(ext: &str) -> bool {
    matches!(
        ext,
        "md" | "markdown" | "mdx" | "rst" | "txt" | "adoc" | "org"
    )
}

/// Whether a path is a project's changelog (`CHANGELOG.md`, `CHANGES.rst`, `HISTORY.md`,
/// `NEWS`, `RELEASE_NOTES.md`...): a prose file (or one without an extension) by one of those
/// names, whatever the case. `src/changes.rs` is code.
pub fn is_changelog(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let (stem, ext) = name.split_once('.').unwrap_or((&name, ""));
    matches!(
        stem,
        "changelog"
            | "changes"
            | "history"
            | "news"
            | "releases"
            | "release-notes"
            | "release_notes"
    ) && (ext.is_empty() || is_prose_extension(ext))
}

/// Whether a path is one of the project's process files: anything under `.github/`,
/// `.gitlab/` or `.circleci/`, or a community file (CODE_OF_CONDUCT, SECURITY, SUPPORT,
/// GOVERNANCE, MAINTAINERS, FUNDING, AI_POLICY) in prose or without an extension, at any
/// depth, whatever the case. `src/security.rs` is code. CONTRIBUTING is not one, wherever it
/// is: it says how to build, test and change the code, which questions about the code ask.
pub fn is_project_file(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let mut segments = lower.split('/');
    let name = segments.next_back().unwrap_or_default();
    let (stem, ext) = name.split_once('.').unwrap_or((name, ""));
    let stem = stem.replace('-', "_");
    if stem == "contributing" {
        return false;
    }
    if segments.any(|d| matches!(d, ".github" | ".gitlab" | ".circleci")) {
        return true;
    }
    matches!(
        stem.as_str(),
        "code_of_conduct"
            | "conduct"
            | "security"
            | "support"
            | "governance"
            | "maintainers"
            | "funding"
            | "ai_policy"
    ) && (ext.is_empty() || is_prose_extension(ext))
}

/// Whether a query (its [`words`]) names a file: shares a word with the file's name, less its
/// extensions (`.github/workflows/ci.yml` is named by "ci", `SECURITY.md` by "secure").
/// Words of five letters or more match on their first five.
fn names_file(words: &str, path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').find(|s| !s.is_empty()).unwrap_or(name);
    let same = |a: &str, b: &str| {
        if a.len() >= 5 && b.len() >= 5 {
            a.as_bytes()[..5] == b.as_bytes()[..5]
        } else {
            a == b
        }
    };
    crate::text::words(stem).any(|f| words.split(' ').any(|w| same(w, &f.to_lowercase())))
}

/// What [`weigh_kinds`] multiplies each kind of result's fused score by.
struct KindWeights {
    /// Tests (`component_type` "test").
    test: f64,
    /// Changelogs ([`is_changelog`]).
    changelog: f64,
    /// Process files ([`is_project_file`]) the query does not name ([`names_file`]).
    project_file: f64,
    /// Other prose ([`is_prose`]: not changelogs or process files, which have their own).
    docs: f64,
    /// Translated documentation ([`is_translation`]), on top of `docs`.
    translation: f64,
}

impl KindWeights {
    /// The configured weights, less those the query asks for: a query about tests ranks
    /// tests like other code, and so on for changes and documentation.
    fn for_query(cfg: &SearchConfig, words: &str) -> Self {
        let unless = |asked: bool, weight: f64| if asked { 1.0 } else { weight };
        Self {
            test: unless(asks_for_tests(words), cfg.test_weight),
            changelog: unless(asks_for_changes(words), cfg.changelog_weight),
            project_file: cfg.project_file_weight,
            docs: unless(asks_for_docs(words), cfg.docs_weight),
            translation: unless(asks_for_translations(words), cfg.translation_weight),
        }
    }
}

/// Multiplies the fused score of tests, changelogs, process files, other prose and translated
/// pages by their [`KindWeights`], and re-sorts, keeping the order among equals.
fn weigh_kinds(hits: &mut [ScoredHit], kinds: &KindWeights, words: &str) {
    let mut changed = false;
    for h in hits.iter_mut() {
        let mut w = 1.0;
        if h.hit.component_type.as_deref() == Some("test") {
            w *= kinds.test;
        }
        let path = &h.hit.file_path;
        let changelog = is_changelog(path);
        if changelog {
            w *= kinds.changelog;
        }
        let project_file = is_project_file(path);
        if kinds.project_file != 1.0 && project_file && !names_file(words, path) {
            w *= kinds.project_file;
        }
        if kinds.docs != 1.0 && !project_file && !changelog && is_prose(path) {
            w *= kinds.docs;
        }
        if kinds.translation != 1.0 && is_translation(path) {
            w *= kinds.translation;
        }
        if w != 1.0 {
            h.score *= w;
            changed = true;
        }
    }
    if changed {
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    }
}

/// The scales of convex fusion: each list's scores mapped to [0, 1] within the candidates.
struct Convex {
    /// Lowest and highest vector score among the candidates (and the files' scores).
    similarity: (f64, f64),
    /// Each candidate file's vector score over its chunks.
    file_similarities: HashMap<FileKey, f64>,
    /// Whether every chunk takes its file's pooled vector score
    /// (`search.file_vector_temperature` above 0), not only the chunk that represents the file
    /// in the file-level list.
    by_file: bool,
    /// Highest chunk BM25.
    chunk_lexical: f64,
    /// Each file's BM25, and the highest.
    files: HashMap<(String, String), f64>,
    file_lexical: f64,
    /// Each candidate file's `ln(1 + changes)` (see [`Convex::with_history`]), the highest,
    /// and the weight of their ratio.
    history: HashMap<FileKey, f64>,
    history_max: f64,
    history_weight: f64,
}

impl Convex {
    fn new(hits: &[ScoredHit], file_similarities: HashMap<FileKey, f64>, by_file: bool) -> Self {
        let (mut chunk_lexical, mut file_lexical) = (0.0f64, 0.0f64);
        let mut files = HashMap::new();
        for h in hits {
            if h.lexical_rank.is_some() {
                chunk_lexical = chunk_lexical.max(h.hit.lexical.unwrap_or(0.0));
            }
            if let Some(f) = h.file_lexical {
                file_lexical = file_lexical.max(f);
                files.insert((h.hit.repository.clone(), h.hit.file_path.clone()), f);
            }
        }
        let mut convex = Self {
            similarity: (0.0, 0.0),
            file_similarities,
            by_file,
            chunk_lexical,
            files,
            file_lexical,
            history: HashMap::new(),
            history_max: 0.0,
            history_weight: 0.0,
        };
        let range = |values: &mut dyn Iterator<Item = f64>| {
            values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| {
                (lo.min(s), hi.max(s))
            })
        };
        convex.similarity = if by_file {
            // Over the scores the candidates are ranked by.
            range(&mut hits.iter().filter_map(|h| convex.vector_score(h)))
        } else {
            // Over the candidates' own similarities and the files' nearest chunks'.
            range(
                &mut convex
                    .file_similarities
                    .values()
                    .copied()
                    .chain(hits.iter().filter_map(|h| h.hit.similarity)),
            )
        };
        convex
    }

    /// Adds each file's change history to its score: `weight × ln(1 + c) / ln(1 + c_max)`, c
    /// the recent commits that changed the file (`changes`, by file) and c_max the most any
    /// candidate has. Files no commit changed, and every file when none did, add nothing.
    fn with_history(mut self, changes: HashMap<FileKey, f64>, weight: f64) -> Self {
        self.history = changes
            .into_iter()
            .map(|(k, c)| (k, c.max(0.0).ln_1p()))
            .collect();
        self.history_max = self.history.values().copied().fold(0.0, f64::max);
        self.history_weight = weight;
        self
    }

    /// A candidate's vector score, before scaling. With `by_file`, its file's pooled score
    /// (its own similarity if the file was not scored). Else its own
    /// similarity, and for the chunk that represents a file in the file-level list the file's
    /// nearest chunk's when that is higher: the file is ranked by the chunk most like the
    /// query and by its words, and shown by the chunk that matched the words (which wins a
    /// tie inside the file). A long document whose best-matching section is not the one most
    /// like the question would otherwise rank on the weaker of the two.
    fn vector_score(&self, h: &ScoredHit) -> Option<f64> {
        let key = (h.hit.repository.clone(), h.hit.file_path.clone());
        let own = h.hit.similarity;
        if self.by_file {
            return self.file_similarities.get(&key).copied().or(own);
        }
        let file = h
            .file_lexical_rank
            .and_then(|_| self.file_similarities.get(&key))
            .copied();
        match (own, file) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// `Σ weight × scaled score` over the vector (see [`Convex::vector_score`]), chunk BM25
    /// and file BM25 scores, plus the definition match (already in [0, 1]); a score the chunk
    /// does not have counts 0.
    fn score(&self, h: &ScoredHit, [w_vector, w_chunk, w_file, w_definition]: [f64; 4]) -> f64 {
        let (lo, hi) = self.similarity;
        let key = (h.hit.repository.clone(), h.hit.file_path.clone());
        let similarity = self
            .vector_score(h)
            .map_or(0.0, |s| if hi > lo { (s - lo) / (hi - lo) } else { 1.0 });
        let scaled = |score: Option<f64>, best: f64| match score {
            Some(s) if best > 0.0 => s / best,
            _ => 0.0,
        };
        let chunk = scaled(h.lexical_rank.and(h.hit.lexical), self.chunk_lexical);
        let file = scaled(self.files.get(&key).copied(), self.file_lexical);
        let history = scaled(self.history.get(&key).copied(), self.history_max);
        w_vector * similarity
            + w_chunk * chunk
            + w_file * file
            + w_definition * h.definition.unwrap_or(0.0)
            + self.history_weight * history
    }
}

/// Within each file, gives the places its chunks hold (best first) to its chunks ordered by
/// their fused score plus their chunk BM25 (`scores`, by id) scaled by the best among them:
/// words and vector weigh the same there, as the file's own BM25 is the same for all its
/// chunks. The files' places, and so every file-level figure, are unchanged; which of a file's
/// chunks comes first is not. A task names the functions it is about (`fix the timeout in
/// retry_request`), and the vector side alone picks a file's chunk most like the task's gist.
fn pick_chunks_by_words(hits: &mut [ScoredHit], scores: &HashMap<uuid::Uuid, f64>) {
    let words = |h: &ScoredHit| scores.get(&h.hit.id).copied().unwrap_or(0.0);
    let best = hits.iter().map(words).fold(0.0f64, f64::max);
    if best <= 0.0 {
        return;
    }
    let mut places: HashMap<FileKey, Vec<usize>> = HashMap::new();
    for (i, h) in hits.iter().enumerate() {
        places
            .entry((h.hit.repository.clone(), h.hit.file_path.clone()))
            .or_default()
            .push(i);
    }
    let key = |h: &ScoredHit| h.score + words(h) / best;
    for slots in places.values().filter(|p| p.len() > 1) {
        let mut chunks: Vec<ScoredHit> = slots.iter().map(|&i| hits[i].clone()).collect();
        chunks.sort_by(|a, b| key(b).total_cmp(&key(a)));
        for (&i, mut chunk) in slots.iter().zip(chunks) {
            chunk.score = hits[i].score;
            hits[i] = chunk;
        }
    }
}

/// The chunks [`pick_chunks_by_words`] may reorder where a page can show them: those of the
/// first `files` files (in the order of their best chunk) that hold more than one candidate.
/// A page of `n` results shows at most `n` files, the first ones (but for a result [`spread`]
/// moves down for repeating an earlier one's text).
fn chunks_to_pick(hits: &[ScoredHit], files: usize) -> Vec<uuid::Uuid> {
    let mut order: HashMap<FileKey, usize> = HashMap::new();
    let mut counts: Vec<usize> = Vec::new();
    let file_of: Vec<usize> = hits
        .iter()
        .map(|h| {
            let next = order.len();
            let i = *order
                .entry((h.hit.repository.clone(), h.hit.file_path.clone()))
                .or_insert(next);
            if i == counts.len() {
                counts.push(0);
            }
            counts[i] += 1;
            i
        })
        .collect();
    hits.iter()
        .zip(file_of)
        .filter(|&(_, f)| f < files && counts[f] > 1)
        .map(|(h, _)| h.hit.id)
        .collect()
}

/// Keeps the order, except that a file's chunks beyond the first `max_per_file` (and chunks
/// whose text repeats an earlier result's) move below all others, in their order.
fn spread(hits: Vec<ScoredHit>, max_per_file: usize) -> Vec<ScoredHit> {
    let mut per_file: HashMap<(String, String), usize> = HashMap::new();
    let mut seen_text: std::collections::HashSet<String> = std::collections::HashSet::new();
    let (mut top, mut rest) = (Vec::with_capacity(hits.len()), Vec::new());
    for h in hits {
        let n = per_file
            .entry((h.hit.repository.clone(), h.hit.file_path.clone()))
            .or_default();
        *n += 1;
        let repeat = !seen_text.insert(h.hit.content.clone());
        if *n > max_per_file || repeat {
            rest.push(h);
        } else {
            top.push(h);
        }
    }
    top.extend(rest);
    top
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn hit(path: &str, chunk: i32, content: &str) -> Hit {
        Hit {
            id: uuid::Uuid::new_v4(),
            repository: "r".into(),
            file_path: path.into(),
            chunk_index: chunk,
            content: content.into(),
            similarity: Some(0.5),
            ..Hit::default()
        }
    }

    #[test]
    fn a_long_query_is_embedded_by_its_title() {
        let short = "retry a request. with backoff";
        assert_eq!(title(short), short);
        let body = "The client gave up after the first failure, so a flaky proxy failed every \
                    call that went through it during a deploy; it now waits and retries.";
        // A commit message as one line: its subject is the first sentence.
        let message = format!("Retry idle connections on reset. {body}");
        assert_eq!(title(&message), "Retry idle connections on reset.");
        // A ticket: its first paragraph's first sentence, a period or not.
        let ticket = format!("Retry on reset\n\n{body}");
        assert_eq!(title(&ticket), "Retry on reset");
        let typed_elsewhere = format!("Retry on reset\r\n  \r\n{body}");
        assert_eq!(title(&typed_elsewhere), "Retry on reset");
        // A first sentence of fewer than three words is not a title ("e.g.").
        let hedged = format!("E.g. retry. Retry idle connections on reset. {body}");
        assert_eq!(
            title(&hedged),
            "E.g. retry. Retry idle connections on reset."
        );
        // No sentence to take: the whole query.
        let run_on = body.replace([',', '.', ';'], "");
        assert_eq!(title(&run_on), run_on);
    }

    #[test]
    fn tests_rank_below_the_code_they_test_unless_asked_for() {
        let scored = |path: &str, component: Option<&str>, score: f64| ScoredHit {
            score,
            ..ScoredHit::new(Hit {
                component_type: component.map(str::to_owned),
                ..hit(path, 0, path)
            })
        };
        let mut hits = vec![
            scored("tests/abort.rs", Some("test"), 1.96),
            scored("src/pool.rs", None, 1.92),
            scored("src/abort.rs", None, 1.80),
            scored("tests/pool.rs", Some("test"), 1.00),
        ];
        let kinds = KindWeights {
            test: 0.9,
            changelog: 1.0,
            project_file: 1.0,
            docs: 1.0,
            translation: 1.0,
        };
        weigh_kinds(&mut hits, &kinds, "abort");
        let order: Vec<&str> = hits.iter().map(|h| h.hit.file_path.as_str()).collect();
        assert_eq!(
            order,
            [
                "src/pool.rs",
                "src/abort.rs",
                "tests/abort.rs",
                "tests/pool.rs"
            ]
        );
        assert!((hits[2].score - 1.764).abs() < 1e-9);
        let asks = |q: &str| asks_for_tests(&words(q).collect::<Vec<_>>().join(" "));
        assert!(asks("tests for the abort handle"));
        assert!(asks("where is the TestServer mocked"));
        assert!(!asks("abort the task when its handle is dropped"));
    }

    #[test]
    fn changelogs_rank_below_the_code_unless_changes_are_asked_for() {
        for name in [
            "CHANGELOG.md",
            "docs/CHANGES.rst",
            "History.md",
            "NEWS",
            "release-notes.md",
        ] {
            assert!(is_changelog(name), "{name}");
        }
        for name in [
            "src/changes.rs",
            "src/history.py",
            "src/history_test.go",
            "docs/changelog/x.md",
        ] {
            assert!(!is_changelog(name), "{name}");
        }
        let mut hits = vec![
            ScoredHit {
                score: 1.5,
                ..ScoredHit::new(hit("CHANGELOG.md", 3, "- Add --min-depth"))
            },
            ScoredHit {
                score: 1.0,
                ..ScoredHit::new(hit("src/cli.rs", 0, "min_depth"))
            },
        ];
        let kinds = KindWeights {
            test: 0.8,
            changelog: 0.6,
            project_file: 0.6,
            docs: 1.0,
            translation: 1.0,
        };
        weigh_kinds(&mut hits, &kinds, "min depth");
        assert_eq!(hits[0].hit.file_path, "src/cli.rs");
        assert!((hits[1].score - 0.9).abs() < 1e-9);
        let asks = |q: &str| asks_for_changes(&words(q).collect::<Vec<_>>().join(" "));
        assert!(asks("what changed in the 2.0 release"));
        assert!(asks("changelog entry for min depth"));
        assert!(!asks("change the default depth"));
    }

    #[test]
    fn process_files_rank_below_the_code_unless_the_query_names_them() {
        for name in [
            ".github/workflows/ci.yml",
            ".github/ISSUE_TEMPLATE/bug_report.yaml",
            ".github/AI_POLICY.md",
            "CODE_OF_CONDUCT.md",
            "code-of-conduct.md",
            "SECURITY",
        ] {
            assert!(is_project_file(name), "{name}");
        }
        for name in [
            "CONTRIBUTING.md",
            ".github/CONTRIBUTING.md",
            "docs/dev/contributing.rst",
            "src/security.rs",
            "lib/support.js",
            "docs/api.md",
            "README.md",
            "github/client.py",
        ] {
            assert!(!is_project_file(name), "{name}");
        }
        let names = |q: &str, path: &str| names_file(&words(q).collect::<Vec<_>>().join(" "), path);
        assert!(names("how do I report a security issue", "SECURITY.md"));
        assert!(names("security policy", ".github/SECURITY.md"));
        assert!(names(
            "run the CI workflow on macOS",
            ".github/workflows/ci.yml"
        ));
        assert!(!names("docs: update the md guide", "docs/SECURITY.md"));
        assert!(!names(
            "add tests for the pool limits",
            ".github/workflows/ci.yml"
        ));

        let kinds = KindWeights {
            test: 1.0,
            changelog: 1.0,
            project_file: 0.6,
            docs: 1.0,
            translation: 1.0,
        };
        let ranked = |query: &str| {
            let mut hits = vec![
                ScoredHit {
                    score: 1.5,
                    ..ScoredHit::new(hit(".github/workflows/tests.yml", 0, "run the tests"))
                },
                ScoredHit {
                    score: 1.0,
                    ..ScoredHit::new(hit("src/pool.rs", 0, "limits"))
                },
            ];
            weigh_kinds(
                &mut hits,
                &kinds,
                &words(query).collect::<Vec<_>>().join(" "),
            );
            hits[0].hit.file_path.clone()
        };
        assert_eq!(ranked("add limits to the pool"), "src/pool.rs");
        assert_eq!(
            ranked("the workflow that runs the tests"),
            ".github/workflows/tests.yml"
        );
    }

    #[test]
    fn translated_pages_rank_below_the_default_languages_unless_the_query_is_in_another() {
        for page in [
            "docs/src/content/docs/ko/components/card-grids.mdx",
            "docs/zh-cn/guide/index.md",
            "website/i18n/pt-BR/docusaurus-plugin-content-docs/current/intro.md",
            "docs/index.fr.md",
            "README.zh-CN.md",
            "README_ja.md",
        ] {
            assert!(is_translation(page), "{page}");
        }
        // Names in any script, cut nowhere inside a character.
        for page in [
            "docs/CCTV大赛上海分赛区.md",
            "docs/README大赛.md",
            "README_",
            "docs/ä.md",
        ] {
            assert!(!is_translation(page), "{page}");
        }
        for page in [
            "docs/src/content/docs/components/card-grids.mdx",
            "docs/en/guide.md",
            "docs/content/en/urls.md",
            // A locale's name that is no locale's directory under a docs tree.
            "lib/es/README.md",
            "tests/it/README.md",
            "docs/it.md",
            "src/ko/strings.ts",
            "README.md",
            "README-dev.md",
        ] {
            assert!(!is_translation(page), "{page}");
        }
        let kinds = |q: &str| {
            KindWeights::for_query(
                &Config::defaults().expect("defaults").search,
                &words(q).collect::<Vec<_>>().join(" "),
            )
            .translation
        };
        assert_eq!(kinds("card grid component"), 0.5);
        assert_eq!(kinds("카드 그리드 컴포넌트"), 1.0);
        assert_eq!(kinds("Größe der Karten"), 1.0);
        assert_eq!(kinds("translations of the card page"), 1.0);
        assert_eq!(kinds("Wie ordne ich Karten in einem Raster an"), 1.0);
        assert_eq!(kinds("ajouter une grille de cartes"), 1.0);
        assert_eq!(kinds("del os per mit non"), 0.5);
    }

    #[test]
    fn prose_ranks_below_code_when_weighted_unless_the_query_asks_about_docs() {
        for prose in [
            "docs/content/en/urls.md",
            "README.rst",
            "guide.mdx",
            "notes.txt",
        ] {
            assert!(is_prose(prose), "{prose}");
        }
        for code in ["src/markdown.rs", "docs/conf.py", "Makefile", "md"] {
            assert!(!is_prose(code), "{code}");
        }
        let mut cfg = Config::defaults().expect("defaults").search;
        (cfg.test_weight, cfg.docs_weight) = (1.0, 0.8);
        let ranked = |query: &str| {
            let mut hits = vec![
                ScoredHit {
                    score: 1.1,
                    ..ScoredHit::new(hit("docs/content/en/urls.md", 0, "ugly urls"))
                },
                ScoredHit {
                    score: 1.0,
                    ..ScoredHit::new(hit("hugolib/site.go", 0, "uglyURLs"))
                },
                // A changelog has its own weight, not the docs' too.
                ScoredHit {
                    score: 1.5,
                    ..ScoredHit::new(hit("CHANGELOG.md", 0, "ugly urls"))
                },
            ];
            let words = words(query).collect::<Vec<_>>().join(" ");
            weigh_kinds(&mut hits, &KindWeights::for_query(&cfg, &words), &words);
            hits.iter()
                .map(|h| (h.hit.file_path.clone(), h.score))
                .collect::<Vec<_>>()
        };
        let code_first = ranked("fix uglyURLs from the command line");
        assert_eq!(code_first[0].0, "hugolib/site.go");
        assert!((code_first[1].1 - 0.9).abs() < 1e-9, "{code_first:?}");
        assert!((code_first[2].1 - 0.88).abs() < 1e-9, "{code_first:?}");
        assert_eq!(
            ranked("document the uglyURLs flag")[0].0,
            "docs/content/en/urls.md"
        );
    }

    #[test]
    fn an_unknown_repository_is_answered_with_the_names_like_it_not_hundreds() {
        let few: Vec<String> = ["api", "web"].map(String::from).to_vec();
        assert_eq!(
            repositories_named_like("ap", &few, "default"),
            "repositories of workspace `default`: api, web"
        );
        let many: Vec<String> = (0..300)
            .map(|i| format!("crate-{i}"))
            .chain(["serde-1.0.228".to_owned(), "serde_json-1.0.145".to_owned()])
            .collect();
        let said = repositories_named_like("serde_json", &many, "default");
        assert_eq!(
            said,
            "workspace `default` has 302 repositories; named like it: serde-1.0.228, \
             serde_json-1.0.145 (`codesearch repo list` lists them)"
        );
        assert!(!repositories_named_like("zzz", &many, "default").contains("crate-1"));
    }

    #[test]
    fn a_long_query_keeps_its_most_selective_terms_in_their_order() {
        let short: Vec<(usize, f64)> = (0..MAX_QUERY_TERMS).map(|i| (i, 0.1)).collect();
        assert_eq!(most_selective(short.clone(), |t| t.1), short);
        // Every third term is rare; the first of the common ones ties with the rest.
        let long: Vec<(usize, f64)> = (0..3 * MAX_QUERY_TERMS)
            .map(|i| (i, if i % 3 == 0 { 5.0 } else { 0.1 }))
            .collect();
        let kept = most_selective(long, |t| t.1);
        assert_eq!(kept.len(), MAX_QUERY_TERMS);
        assert!(kept.windows(2).all(|w| w[0].0 < w[1].0), "order kept");
        assert!(kept.iter().all(|t| t.1 == 5.0), "the rare ones kept");
    }

    #[test]
    fn a_repeated_query_word_weighs_more_and_saturates() {
        assert_eq!(repeat_weight(1), 1.0);
        assert!((repeat_weight(2) - 1.8).abs() < 1e-9);
        assert!((repeat_weight(4) - 3.0).abs() < 1e-9);
        assert!(repeat_weight(1000) < REPEAT_K3 + 1.0);
    }

    #[test]
    fn rank_fusion_rewards_agreement() {
        let mut cfg = Config::defaults().expect("defaults").search;
        cfg.fusion = Fusion::Rrf;
        cfg.lexical_weight = 1.0;
        let a = hit("a", 0, "a");
        let b = hit("b", 0, "b");
        let c = hit("c", 0, "c");
        // a is first in vector only, c first in lexical only, b second in both.
        let lists = Lists {
            vector: vec![a.clone(), b.clone()],
            chunks: vec![c.clone(), b.clone()],
            ..Lists::default()
        };
        let fused = fuse(lists, SearchMode::Hybrid, &cfg);
        let order: Vec<&str> = fused.iter().map(|h| h.hit.file_path.as_str()).collect();
        assert_eq!(order, ["b", "a", "c"]);
        assert_eq!(fused[0].vector_rank, Some(2));
        assert_eq!(fused[0].lexical_rank, Some(2));
    }

    #[test]
    fn convex_fusion_weighs_scores_scaled_within_the_candidates() {
        let cfg = Config::defaults().expect("defaults").search;
        assert_eq!(cfg.fusion, Fusion::Convex);
        let with = |path: &str, similarity: f64, lexical: Option<f64>| Hit {
            similarity: Some(similarity),
            lexical,
            ..hit(path, 0, path)
        };
        // a is the nearest by meaning; b is almost as near and the file BM25's clear first;
        // c matches a few words and little meaning.
        let a = with("a", 0.90, None);
        let b = with("b", 0.88, None);
        let b_file = Hit {
            id: b.id,
            ..with("b", 0.88, Some(10.0))
        };
        let c = with("c", 0.30, Some(2.0));
        let lists = Lists {
            vector: vec![a, b],
            files: vec![b_file, c],
            ..Lists::default()
        };
        let fused = fuse(lists, SearchMode::Hybrid, &cfg);
        let scores: Vec<(&str, f64)> = fused
            .iter()
            .map(|h| (h.hit.file_path.as_str(), h.score))
            .collect();
        // Similarity scaled over [0.30, 0.90], BM25 divided by 10; weights 1 and 1.
        let expected = [("b", 0.58 / 0.60 + 1.0), ("a", 1.0), ("c", 0.2)];
        assert_eq!(scores.len(), 3);
        for ((path, score), (want_path, want)) in scores.iter().zip(expected) {
            assert_eq!(*path, want_path);
            assert!((score - want).abs() < 1e-9, "{path}: {score} != {want}");
        }
    }

    #[test]
    fn a_file_found_by_its_words_is_scored_by_its_nearest_chunk_and_shown_by_its_words() {
        let cfg = Config::defaults().expect("defaults").search;
        let with = |path: &str, chunk: i32, similarity: f64, lexical: Option<f64>| Hit {
            similarity: Some(similarity),
            lexical,
            ..hit(path, chunk, &format!("{path}#{chunk}"))
        };
        // The guide matches the words a little better than the module, through a section
        // unlike the question; its section most like the question (chunk 9) is nearer than
        // anything the vector list found.
        let lists = || Lists {
            vector: vec![
                with("module.py", 0, 0.70, None),
                with("other.py", 0, 0.40, None),
            ],
            files: vec![
                with("docs/guide.rst", 2, 0.35, Some(10.0)),
                with("module.py", 0, 0.70, Some(9.0)),
            ],
            ..Lists::default()
        };
        let order = |lists: Lists| {
            fuse(lists, SearchMode::Hybrid, &cfg)
                .iter()
                .map(|h| h.hit.content.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            order(lists())[0],
            "module.py#0",
            "without the guide's nearest chunk"
        );
        let nearest = Lists {
            file_similarities: HashMap::from([(("r".into(), "docs/guide.rst".into()), 0.72)]),
            ..lists()
        };
        let fused = order(nearest);
        assert_eq!(
            fused[0], "docs/guide.rst#2",
            "shown by the chunk that matched the words"
        );
        assert_eq!(fused[1], "module.py#0");
    }

    #[test]
    fn with_a_temperature_a_file_ranks_by_all_its_chunks_and_shows_its_nearest() {
        let mut cfg = Config::defaults().expect("defaults").search;
        assert!(cfg.file_vector_temperature > 0.0);
        let with = |path: &str, chunk: i32, similarity: f64| Hit {
            similarity: Some(similarity),
            ..hit(path, chunk, &format!("{path}#{chunk}"))
        };
        // One passage in single.rs is the nearest; many.rs has two nearly as near, and its
        // pooled score (read from the store) is above single.rs's.
        let lists = || Lists {
            vector: vec![
                with("single.rs", 0, 0.80),
                with("many.rs", 1, 0.78),
                with("many.rs", 0, 0.77),
                with("far.rs", 0, 0.30),
            ],
            file_similarities: HashMap::from([
                (("r".into(), "single.rs".into()), 0.80),
                (("r".into(), "many.rs".into()), 0.83),
                (("r".into(), "far.rs".into()), 0.31),
            ]),
            ..Lists::default()
        };
        let order = |cfg: &SearchConfig| {
            fuse(lists(), SearchMode::Hybrid, cfg)
                .iter()
                .map(|h| h.hit.content.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            order(&cfg),
            ["many.rs#1", "many.rs#0", "single.rs#0", "far.rs#0"],
            "the file by its pooled score, its chunks nearest first"
        );
        cfg.file_vector_temperature = 0.0;
        assert_eq!(
            order(&cfg),
            ["single.rs#0", "many.rs#1", "many.rs#0", "far.rs#0"],
            "each chunk by its own similarity"
        );
    }

    #[test]
    fn a_file_only_the_vector_list_found_is_pooled_over_its_chunks_there() {
        let with = |path: &str, chunk: i32, similarity: f64| Hit {
            similarity: Some(similarity),
            ..hit(path, chunk, path)
        };
        let mut vector = vec![
            with("a.rs", 0, 0.80),
            with("b.rs", 0, 0.78),
            with("b.rs", 1, 0.77),
            with("c.rs", 0, 0.60),
        ];
        let key = |p: &str| ("r".to_owned(), p.to_owned());
        // c.rs was read whole by the file query: its score stays.
        let mut scores = HashMap::from([(key("c.rs"), 0.65)]);
        // Two hits are fused; the list was read deeper for the pooling.
        pool_vector_files(&mut vector, 2, &mut scores, 0.05);
        let kept: Vec<(&str, i32)> = vector
            .iter()
            .map(|h| (h.file_path.as_str(), h.chunk_index))
            .collect();
        assert_eq!(kept, [("a.rs", 0), ("b.rs", 0)]);
        assert_eq!(scores.len(), 3);
        assert!((scores[&key("a.rs")] - 0.80).abs() < 1e-12);
        let b = 0.05 * ((0.78f64 / 0.05).exp() + (0.77f64 / 0.05).exp()).ln();
        assert!((scores[&key("b.rs")] - b).abs() < 1e-12);
        assert!(
            scores[&key("b.rs")] > scores[&key("a.rs")],
            "two near chunks add up"
        );
        assert_eq!(scores[&key("c.rs")], 0.65);
    }

    #[test]
    fn the_lookup_cap_does_not_split_tied_files() {
        let scored = |path: &str, bm25: f64| Hit {
            lexical: Some(bm25),
            ..hit(path, 0, path)
        };
        // b, c and d are equal files; d's sum differs in the last bits.
        let files = [
            scored("a", 3.0),
            scored("b", 2.0),
            scored("c", 2.0),
            scored("d", 2.0 + 4e-16),
            scored("e", 1.0),
        ];
        let paths = |cap| {
            files_that_could_make_the_page(&files, cap)
                .into_iter()
                .map(|(_, p)| p)
                .collect::<Vec<_>>()
        };
        assert_eq!(paths(1), ["a"]);
        assert_eq!(paths(2), ["a", "b", "c", "d"]);
        assert_eq!(paths(5), ["a", "b", "c", "d", "e"]);
        assert_eq!(paths(9), ["a", "b", "c", "d", "e"]);
    }

    #[test]
    fn inside_a_file_the_chunk_matching_the_words_wins_a_tie() {
        let cfg = Config::defaults().expect("defaults").search;
        // The file is first in both lists, through different chunks: the vector list's best
        // is chunk 0, the lexical file list's representative is chunk 7 (the new function).
        let by_meaning = hit("f.py", 0, "def old(): ...");
        let by_words = hit("f.py", 7, "def saveprobe_handler(): ...");
        let lists = Lists {
            vector: vec![by_meaning.clone()],
            files: vec![by_words.clone()],
            ..Lists::default()
        };
        let hits = fuse(lists, SearchMode::Hybrid, &cfg);
        assert_eq!(hits[0].score, hits[1].score);
        assert_eq!(hits[0].hit.id, by_words.id);
    }

    #[test]
    fn one_file_does_not_crowd_the_top() {
        let mk = |p: &str, i: i32, c: &str| ScoredHit::new(hit(p, i, c));
        let hits = vec![
            mk("a", 0, "x"),
            mk("a", 1, "y"),
            mk("b", 0, "x"),
            mk("c", 0, "z"),
        ];
        let order: Vec<(String, i32)> = spread(hits, 1)
            .into_iter()
            .map(|h| (h.hit.file_path, h.hit.chunk_index))
            .collect();
        assert_eq!(
            order,
            [
                ("a".into(), 0),
                ("c".into(), 0),
                ("a".into(), 1),
                ("b".into(), 0)
            ]
        );
    }

    #[test]
    fn a_files_chunks_are_ordered_by_words_too_and_files_keep_their_places() {
        let mut words = HashMap::new();
        let mut mk = |p: &str, i: i32, score: f64, bm25: Option<f64>| {
            let mut h = ScoredHit::new(hit(p, i, &format!("{p}{i}")));
            h.score = score;
            if let Some(b) = bm25 {
                words.insert(h.hit.id, b);
            }
            h
        };
        // a#0 is most like the task; a#2 holds the words it names.
        let mut hits = vec![
            mk("a", 0, 1.0, None),
            mk("b", 0, 0.9, Some(2.0)),
            mk("a", 1, 0.8, Some(1.0)),
            mk("a", 2, 0.7, Some(10.0)),
            mk("b", 1, 0.6, None),
        ];
        let mut plain = vec![mk("c", 0, 1.0, None), mk("c", 1, 0.8, None)];
        pick_chunks_by_words(&mut hits, &words);
        let got: Vec<(String, i32, f64)> = hits
            .iter()
            .map(|h| (h.hit.file_path.clone(), h.hit.chunk_index, h.score))
            .collect();
        assert_eq!(
            got,
            [
                ("a".into(), 2, 1.0),
                ("b".into(), 0, 0.9),
                ("a".into(), 0, 0.8),
                ("a".into(), 1, 0.7),
                ("b".into(), 1, 0.6),
            ]
        );
        // Without the query's words in any chunk, nothing moves.
        pick_chunks_by_words(&mut plain, &words);
        assert_eq!(plain[0].hit.chunk_index, 0);
    }

    #[test]
    fn only_the_pages_files_with_several_candidates_are_scored_by_words() {
        let hits: Vec<ScoredHit> = [("a", 0), ("b", 0), ("a", 1), ("c", 0), ("c", 1), ("d", 0)]
            .into_iter()
            .map(|(p, i)| ScoredHit::new(hit(p, i, &format!("{p}{i}"))))
            .collect();
        let id = |i: usize| hits[i].hit.id;
        // A page of two shows a and b: b has one candidate, nothing to pick from.
        assert_eq!(chunks_to_pick(&hits, 2), [id(0), id(2)]);
        // A page of four reaches c too; d, with one candidate, never needs scoring.
        assert_eq!(chunks_to_pick(&hits, 4), [id(0), id(2), id(3), id(4)]);
        assert!(chunks_to_pick(&hits, 0).is_empty());
    }
}
