//! Retrieval: vector kNN, BM25 over chunks and over whole files, definitions by name, each
//! with the request's filters.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;
use sqlx::{Postgres, QueryBuilder, Row};

use super::sessions::SESSION_EF_SEARCH;
use super::upkeep::{Graph, quote_literal};
use super::{BM25_B, BM25_K1, FileStats, Scope, Session, Store, StoreError, pad, q};
use crate::lock;

/// Which rows of the scope a search may return. `None` (or an empty list) means no
/// restriction. The workspace boundary is not a filter: it is the [`Scope`] every query takes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Filters {
    pub file_types: Option<Vec<String>>,
    pub modules: Option<Vec<String>>,
    pub component_types: Option<Vec<String>>,
    pub languages: Option<Vec<String>>,
    /// Repositories of the scope; one outside it matches nothing.
    pub repositories: Option<Vec<String>>,
    /// A POSIX regular expression the relative path must match (see
    /// [`crate::text::glob_to_regex`]).
    pub path_regex: Option<String>,
}

impl Filters {
    /// Whether any filter but the repositories applies (those need the chunks' columns).
    fn on_chunks(&self) -> bool {
        self.on_indexed_columns() || self.path_regex.is_some()
    }

    /// Whether a filter on a chunk column with an index of its own applies: file type,
    /// module, component type, language (not the path, matched by a regular expression).
    fn on_indexed_columns(&self) -> bool {
        let set = |l: &Option<Vec<String>>| l.as_ref().is_some_and(|l| !l.is_empty());
        set(&self.file_types)
            || set(&self.modules)
            || set(&self.component_types)
            || set(&self.languages)
    }

    /// Whether anything narrows the scope.
    pub fn is_empty(&self) -> bool {
        !self.on_chunks() && self.repositories.as_ref().is_none_or(|r| r.is_empty())
    }
}

/// The repository predicate of a read: the filter's repositories that are in the scope, else
/// none (the scope's workspace restricts the rows: [`push_filters`]).
fn repository_filter(scope: &Scope, f: &Filters) -> Option<Vec<String>> {
    f.repositories
        .as_ref()
        .filter(|r| !r.is_empty())
        .map(|wanted| {
            wanted
                .iter()
                .filter(|r| scope.contains(r))
                .cloned()
                .collect()
        })
}

/// A vector query.
#[derive(Debug, Clone)]
pub struct VectorQuery<'a> {
    pub embedding: &'a [f32],
    pub model: &'a str,
    /// The repositories the query may see.
    pub scope: &'a Scope,
    pub filters: &'a Filters,
    pub min_similarity: f64,
    pub limit: i64,
    /// Candidates the HNSW index examines; 0 picks them by the size of the graph walked
    /// ([`ef_search_for`]).
    pub ef_search: u32,
    /// Chunks in the whole table (an estimate is enough) and in the scope: they size the
    /// walk, and tell whether an exact scan of a small workspace is cheaper.
    pub table_chunks: i64,
    pub scope_chunks: i64,
}

/// `hnsw.ef_search` for the graph this version builds, of `vectors` rows, when the
/// configuration leaves it automatic (`configured` 0): see [`ef_search_on`].
pub fn ef_search_for(configured: u32, vectors: i64, filtered: bool) -> u32 {
    ef_search_on(Graph::Denser, configured, vectors, filtered)
}

/// `hnsw.ef_search` for `graph` of `vectors` rows when the configuration leaves it automatic
/// (`configured` 0): the candidate list grows with the graph so that recall@10 against exact
/// search stays at 0.95 or more (docs/BENCHMARKS.md, measured on the hash embedder's vectors,
/// which are harder to index than a model's: the denser graph gave 0.977 at 100k rows with 100
/// candidates, and over a million distinct vectors 0.910 with 100 and 0.966 with 200). A search
/// whose filters discard most of the graph's rows (`filtered`) gets twice as many: the walk
/// finds the remaining rows' nearest less well.
fn ef_search_on(graph: Graph, configured: u32, vectors: i64, filtered: bool) -> u32 {
    let automatic = match graph {
        Graph::Denser if vectors < 500_000 => 100,
        Graph::Denser => 200,
        Graph::PgvectorDefaults if vectors < 50_000 => 100,
        Graph::PgvectorDefaults if vectors < 500_000 => 200,
        Graph::PgvectorDefaults => 400,
    };
    match configured {
        0 if filtered => automatic * 2,
        0 => automatic,
        n => n,
    }
}

/// A lexical query over chunks: the query's terms with their BM25 weights.
#[derive(Debug, Clone)]
pub struct LexicalQuery<'a> {
    pub terms: &'a [TermWeight],
    /// The repositories the query may see.
    pub scope: &'a Scope,
    pub filters: &'a Filters,
    /// BM25's average document length.
    pub avg_length: f64,
    pub limit: i64,
}

/// A query for the chunks that define named identifiers.
#[derive(Debug, Clone)]
pub struct DefinitionQuery<'a> {
    /// Definition keys ([`crate::text::definition_keys`]).
    pub keys: &'a [String],
    /// The repositories the query may see.
    pub scope: &'a Scope,
    pub filters: &'a Filters,
}

/// A lexical query over whole files. The terms and their weights are worked out in the same
/// statement that scores the files: one round trip.
#[derive(Debug, Clone)]
pub struct FileQuery<'a> {
    /// The query's distinct terms (lexemes of its words, [`Store::file_term_counts`]).
    pub terms: &'a [FileTerm],
    pub stats: &'a FileStats,
    /// The repositories the query may see.
    pub scope: &'a Scope,
    pub filters: &'a Filters,
    pub limit: i64,
    /// How many of the best files get their best-matching chunk found (the others are
    /// represented by their first chunk).
    pub best_chunks: i64,
}

/// A term of the file query: a lexeme of the query's words.
#[derive(Debug, Clone, PartialEq)]
pub struct FileTerm {
    pub term: String,
    /// How many of the scope's files hold it.
    pub files: f64,
    /// What its BM25 weight is multiplied by: more than 1 for a term the query repeats.
    pub weight: f64,
}

/// A query term (a lexeme of the `english` configuration) and its inverse document frequency.
#[derive(Debug, Clone, PartialEq)]
pub struct TermWeight {
    pub term: String,
    pub idf: f64,
    /// How many of the scope's chunks hold it (counted up to a cap, estimated beyond).
    pub chunks: f64,
    /// Whether the term is rare enough to generate candidates from.
    pub selective: bool,
}

/// One search hit. `similarity` is the cosine similarity to the query (absent when the chunk
/// has no vector of the query's model yet); `lexical` the BM25 score when it matched lexically.
#[derive(Debug, Clone, Default)]
pub struct Hit {
    pub id: uuid::Uuid,
    pub repository: String,
    pub file_path: String,
    pub chunk_index: i32,
    pub content: String,
    pub similarity: Option<f64>,
    pub lexical: Option<f64>,
    pub module: Option<String>,
    pub component_type: Option<String>,
    pub file_type: Option<String>,
    pub language: Option<String>,
    pub symbol: Option<String>,
    /// The qualified names of the definitions that start in the chunk, in file order, when it
    /// holds several (small definitions merged; `symbol` is the first). Empty otherwise.
    pub symbols: Vec<String>,
    pub start_line: Option<i32>,
    pub end_line: Option<i32>,
}

impl Store {
    /// Cosine kNN over the vectors of one model, with filters: exact while the table is small,
    /// through the HNSW index (iterative scan, re-sorted) once it exists, and exact over the
    /// matching rows when the filters let few through.
    pub async fn vector_search(&self, query: &VectorQuery<'_>) -> Result<Vec<Hit>, StoreError> {
        // The planner cannot tell how many rows a regular expression lets through, so it
        // walks the HNSW graph for a path filter, whose recall suffers when the filter
        // discards most candidates (docs/BENCHMARKS.md); the same holds for a workspace or
        // repository that is a small part of the table. Under a module, language or file type
        // that a few percent of the rows hold, its estimate is right but the walk is the
        // slower plan: it reads some 2,500 candidates to find 40 that pass (35 ms at 100k
        // chunks, against 10 ms for the exact scan). The files' chunk counts tell. An exact
        // scan also makes a small workspace's results independent of the other workspaces'
        // rows.
        let path_regex = query.filters.path_regex.as_deref();
        let workspace = query.scope.workspace_restriction();
        // A path filter's files are listed once: their keys serve the exact scan below.
        let mut path_keys = None;
        // The chunks the filters let through, if any filter applies.
        let mut passing_chunks = None;
        let exact = if query.filters.is_empty() {
            workspace.is_some() && query.scope_chunks <= EXACT_SCAN_CHUNKS
        } else {
            let passing = self.passing(query.scope, query.filters).await?;
            path_keys = passing.keys;
            passing_chunks = Some(passing.chunks);
            scans_exactly(passing.chunks, query.scope_chunks)
        };
        // Whether the filters discard enough of a graph's rows for its walk to need more
        // candidates: one most rows pass does not (under `languages: ["rust"]`, 90 % of the
        // rows at 100k chunks, recall@10 was 0.981 at `ef_search` 200 and 0.992 at 400,
        // which cost 1.8 ms more; docs/BENCHMARKS.md).
        let narrows =
            |graph_rows: i64| passing_chunks.is_some_and(|c| c.saturating_mul(2) < graph_rows);
        // The walk goes through the model's own index (its dimensions, half precision) when
        // it has one, the workspace's own when the database holds several workspaces; the rows
        // it finds are then ordered by the full-precision distance.
        let dim = query.embedding.len();
        let walk = if exact {
            None
        } else if let Some(w) = workspace
            && let Some(graph) = self.ann_graph(query.model, dim, Some(w)).await?
        {
            // Its graph holds the workspace's rows only: sized by them, and not filtered
            // unless the request is.
            Some(ef_search_on(
                graph,
                query.ef_search,
                query.scope_chunks,
                narrows(query.scope_chunks),
            ))
        } else {
            self.ann_graph(query.model, dim, None).await?.map(|graph| {
                ef_search_on(
                    graph,
                    query.ef_search,
                    query.table_chunks,
                    narrows(query.table_chunks) || workspace.is_some(),
                )
            })
        };
        // `relaxed_order` iterative scans may return rows slightly out of order: the outer
        // query puts them back in order (pgvector's documented pattern). The least similarity
        // is checked there too, on the distance computed once: inside, it would cost a second
        // distance per row scanned (5 ms of a 16-ms exact scan of 7,000 rows), and keep an
        // iterative scan walking for rows that cannot pass.
        let vector = pad(query.embedding);
        let mut qb = QueryBuilder::new("WITH ");
        // Without a walk, every passing row is read: their narrow copies (migration 0018), in
        // half precision at the model's dimensions, a quarter of what the chunks' own rows
        // hold. The rows kept are then ordered below by their full-precision distance, with
        // the filters checked again on the chunks themselves (a file key may, in theory,
        // collide).
        let narrow = walk.is_none();
        if narrow {
            qb.push(
                "kept AS MATERIALIZED (SELECT chunk_id FROM chunk_vectors WHERE embedding_model = ",
            )
            .push_bind(query.model.to_owned())
            .push(" AND vector_dims(embedding) = ")
            .push_bind(dim as i32);
            if let Some(keys) = path_keys {
                // Through a subquery, which the planner does not look into: estimating
                // `file_key = ANY('{...}')` element by element took 2 ms of planning for the
                // 1,000 files of `**/tests/**` at 100k chunks, and gave the same plan.
                qb.push(" AND file_key = ANY(ARRAY(SELECT unnest(")
                    .push_bind(keys.to_vec())
                    .push("::int8[])))");
            } else if let Some(re) = path_regex {
                // Too many files to list (no walk yet: the model's index is still to come).
                qb.push(
                    " AND file_key = ANY(ARRAY(SELECT chunk_file_key(repository, file_path)
                       FROM indexed_files WHERE file_path ~ ",
                )
                .push_bind(re.to_owned())
                .push("))");
            }
            let rest = Filters {
                path_regex: None,
                ..query.filters.clone()
            };
            push_filters(&mut qb, query.scope, &rest);
            qb.push(" ORDER BY embedding <=> ")
                .push_bind(pgvector::Vector::from(query.embedding.to_vec()))
                .push("::halfvec LIMIT ")
                .push_bind(query.limit)
                .push("), ");
        }
        qb.push(format!(
            "nearest AS MATERIALIZED (SELECT {HIT_COLUMNS}, embedding <=> "
        ));
        qb.push_bind(vector.clone())
            .push(" AS distance FROM codebase_index WHERE ");
        if narrow {
            qb.push("id IN (SELECT chunk_id FROM kept) AND ");
        }
        // An unfiltered walk has one plan whatever the query, made once per connection: the
        // model and workspace are written into the statement, where they match the partial
        // index's predicate (a bound value would not, in a plan made before the values).
        let one_plan = walk.is_some() && query.filters.is_empty();
        qb.push("embedding IS NOT NULL AND embedding_model = ");
        if one_plan {
            qb.push(quote_literal(query.model));
            if let Some(w) = workspace {
                qb.push(" AND workspace = ").push(quote_literal(w));
            }
        } else {
            qb.push_bind(query.model.to_owned());
            push_filters(&mut qb, query.scope, query.filters);
        }
        match walk {
            // The expression of the indexes `ensure_ann_index` builds, exactly.
            Some(_) => qb
                .push(format!(
                    " ORDER BY subvector(embedding, 1, {dim})::halfvec({dim}) <=> "
                ))
                .push_bind(pgvector::Vector::from(query.embedding.to_vec()))
                .push(format!("::halfvec({dim})")),
            // The full-precision distance of the rows the narrow scan kept.
            None => qb.push(" ORDER BY distance"),
        };
        qb.push(" LIMIT ").push_bind(query.limit).push(
            ")
             SELECT *, 1 - distance AS similarity, NULL::float8 AS lexical
             FROM nearest WHERE 1 - distance >= ",
        );
        qb.push_bind(query.min_similarity)
            .push(" ORDER BY distance");
        // Under filters, a plan for their values: an HNSW scan, or an exact scan of the few
        // rows a selective filter lets through (see `sessions`); even under a path filter alone,
        // whose files' keys the planner cannot see, a generic plan was slower (docs/BENCHMARKS.md).
        // And the walk's length. Connections set that way run the statement alone; without
        // them (a store over a foreign pool, or theirs failing) a transaction sets it.
        let session = Session {
            ef_search: walk.map_or(SESSION_EF_SEARCH, |ef| ef.clamp(1, 1000)),
            custom_plans: !one_plan,
        };
        let conn = match self.session_pool(session) {
            Some(pool) => match pool.acquire().await {
                Ok(conn) => Some(conn),
                Err(e) if session != Session::MAIN => {
                    if let Some(sessions) = &self.sessions {
                        sessions.failed(session, &e);
                    }
                    None
                }
                Err(e) => return Err(q("searching vectors")(e)),
            },
            None => None,
        };
        let rows = if let Some(mut conn) = conn {
            qb.build().fetch_all(&mut *conn).await
        } else {
            let mut tx = self
                .pool
                .begin_with(format!("BEGIN; {}", session.settings(true).join("; ")))
                .await
                .map_err(q("searching vectors"))?;
            let rows = qb.build().fetch_all(&mut *tx).await;
            if rows.is_ok() {
                tx.commit().await.map_err(q("searching vectors"))?;
            }
            rows
        }
        .map_err(q("searching vectors"))?;
        Ok(rows.iter().map(hit).collect())
    }

    /// How many chunks of the scope the filters let through (counted up to one more than
    /// [`EXACT_SCAN_CHUNKS`] for the filters on the chunks' columns), and a path filter's
    /// files' keys when they hold at most that many: what chooses between an exact scan and
    /// a walk of the graph. It depends on the scope's rows and the filters, not on the query,
    /// so it is kept for the scope's fingerprint: an agent's searches under one filter count
    /// once, until the scope's rows change (2.5 ms of listing under `**/tests/**` at 100k
    /// chunks, 0.5 to 1 ms of counting under a language or module; docs/BENCHMARKS.md).
    async fn passing(&self, scope: &Scope, filters: &Filters) -> Result<Passing, StoreError> {
        self.passing
            .get(scope, filters, async {
                let repositories = repository_filter(scope, filters);
                // The files of the repositories asked for, else the scope's.
                let in_files = repositories.as_deref().or_else(|| scope.restriction());
                if let Some(re) = &filters.path_regex {
                    let (chunks, keys) = self.files_matching(re, in_files).await?;
                    return Ok(Passing {
                        chunks,
                        keys: keys.map(Arc::from),
                    });
                }
                let chunks = if repositories.is_some() {
                    self.chunks_in_files(in_files).await?
                } else {
                    // Counted up to one more than an exact scan takes; beyond, the planner's
                    // estimate (from the columns' statistics) tells how many more.
                    let counted = self.chunks_passing(scope, filters).await?;
                    if counted > EXACT_SCAN_CHUNKS {
                        self.chunks_passing_estimate(scope, filters)
                            .await?
                            .max(counted)
                    } else {
                        counted
                    }
                };
                Ok(Passing { chunks, keys: None })
            })
            .await
    }

    /// How many of the scope's files pass the filters, and their ids when there are at most
    /// [`FEW_FILES`] (the store's `few_files`); kept for the scope's fingerprint, as
    /// [`Store::passing`] is. The count reads every file row of the scope once per filter and
    /// fingerprint, as a list of the passing files already did whenever fewer than
    /// [`FEW_FILES`] pass: 13 ms under `languages: ["rust"]` at 1M chunks (66,885 files),
    /// warm, where stopping at 2,001 took 1.6 ms (docs/BENCHMARKS.md).
    async fn files_passing(
        &self,
        scope: &Scope,
        filters: &Filters,
    ) -> Result<FilesPassing, StoreError> {
        self.files_passing
            .get(scope, filters, async {
                let mut qb = QueryBuilder::<Postgres>::new(
                    "SELECT count(*) AS files, CASE WHEN count(*) <= ",
                );
                qb.push_bind(self.few_files).push(
                    " THEN coalesce(array_agg(f.id), '{}') END AS ids
                     FROM indexed_files f WHERE f.error IS NULL",
                );
                if let Some(in_scope) = repository_filter(scope, filters)
                    .as_deref()
                    .or_else(|| scope.restriction())
                {
                    qb.push(" AND f.repository = ANY(")
                        .push_bind(in_scope.to_vec())
                        .push(")");
                }
                push_file_filters(&mut qb, filters);
                let row = qb
                    .build()
                    .fetch_one(&self.pool)
                    .await
                    .map_err(q("listing the files a filter lets through"))?;
                Ok(FilesPassing {
                    files: row.get("files"),
                    ids: row.get::<Option<Vec<i64>>, _>("ids").map(Arc::from),
                })
            })
            .await
    }

    /// Chunks in the files of `repositories` (if given; else all).
    pub(super) async fn chunks_in_files(
        &self,
        repositories: Option<&[String]>,
    ) -> Result<i64, StoreError> {
        // Built per case: with generic plans, `$1 IS NULL OR ...` would never use an index.
        let mut qb = QueryBuilder::<Postgres>::new(
            "SELECT coalesce(sum(chunk_count), 0)::int8 FROM indexed_files",
        );
        if let Some(repositories) = repositories {
            qb.push(" WHERE repository = ANY(")
                .push_bind(repositories.to_vec())
                .push(")");
        }
        qb.build_query_scalar()
            .fetch_one(&self.pool)
            .await
            .map_err(q("counting the chunks a filter lets through"))
    }

    /// The chunks of the files whose path matches `path_regex` (in `repositories`, if given),
    /// and the files' keys in `chunk_vectors` when they hold at most [`EXACT_SCAN_CHUNKS`]:
    /// the regular expression is matched once for both the choice of an exact scan and the
    /// scan.
    async fn files_matching(
        &self,
        path_regex: &str,
        repositories: Option<&[String]>,
    ) -> Result<(i64, Option<Vec<i64>>), StoreError> {
        let mut qb = QueryBuilder::<Postgres>::new(
            "SELECT coalesce(sum(chunk_count), 0)::int8 AS chunks,
                    CASE WHEN coalesce(sum(chunk_count), 0) <= ",
        );
        qb.push_bind(EXACT_SCAN_CHUNKS).push(
            " THEN coalesce(array_agg(chunk_file_key(repository, file_path)), '{}') END AS keys
             FROM indexed_files WHERE file_path ~ ",
        );
        qb.push_bind(path_regex.to_owned());
        if let Some(repositories) = repositories {
            qb.push(" AND repository = ANY(")
                .push_bind(repositories.to_vec())
                .push(")");
        }
        let row = qb
            .build()
            .fetch_one(&self.pool)
            .await
            .map_err(q("listing the files a path filter lets through"))?;
        Ok((row.get("chunks"), row.get("keys")))
    }

    /// The chunks of the scope that pass the filters on the chunks' columns, counted up to one
    /// more than [`EXACT_SCAN_CHUNKS`]: through those columns' indexes, 0.5 to 2 ms at 1M
    /// chunks (counting them on the files' rows instead reads every row: 10 to 30 ms).
    async fn chunks_passing(&self, scope: &Scope, filters: &Filters) -> Result<i64, StoreError> {
        let mut qb = QueryBuilder::<Postgres>::new(
            "SELECT count(*) FROM (SELECT 1 FROM codebase_index WHERE TRUE",
        );
        push_filters(&mut qb, scope, filters);
        qb.push(" LIMIT ")
            .push_bind(EXACT_SCAN_CHUNKS + 1)
            .push(") AS passing");
        qb.build_query_scalar()
            .fetch_one(&self.pool)
            .await
            .map_err(q("counting the chunks a filter lets through"))
    }

    /// The planner's estimate of the chunks of the scope that pass the filters on the chunks'
    /// columns: the row count of the plan's top node, made for these filters' values (0.2 ms;
    /// within 1 % of the count for `languages: ["rust"]` at 100k chunks).
    pub async fn chunks_passing_estimate(
        &self,
        scope: &Scope,
        filters: &Filters,
    ) -> Result<i64, StoreError> {
        let mut qb =
            QueryBuilder::<Postgres>::new("EXPLAIN SELECT 1 FROM codebase_index WHERE TRUE");
        push_filters(&mut qb, scope, filters);
        let plan: Vec<String> = qb
            .build_query_scalar()
            .fetch_all(&self.pool)
            .await
            .map_err(q("estimating the chunks a filter lets through"))?;
        Ok(plan.first().and_then(|top| plan_rows(top)).unwrap_or(0))
    }

    /// BM25 over the chunks' lexemes. Candidates are the chunks matching all selective terms,
    /// then any of them, each capped at [`LEXICAL_CANDIDATES`] rows: what a query costs is
    /// bounded whatever its words. Term frequency comes from `ts_rank_cd` of the single term,
    /// length from `lexical_length`.
    pub async fn lexical_search(&self, query: &LexicalQuery<'_>) -> Result<Vec<Hit>, StoreError> {
        let generating = generating_terms(query.terms);
        let Some((all, any)) = candidate_queries(&generating) else {
            return Ok(Vec::new());
        };
        let mut qb = terms_cte(query.terms);
        if self.reads_passing_rows_first(query, &generating).await? {
            // The rows the filters let through, each checked for the words: the words' index
            // is not read (the fence keeps their condition out of the scan). Those holding all
            // the words come first, as many as both lists below would take.
            qb.push(", cand AS (SELECT id FROM (SELECT id, lexemes FROM codebase_index WHERE TRUE");
            push_filters(&mut qb, query.scope, query.filters);
            qb.push(" OFFSET 0) p WHERE p.lexemes @@ ")
                .push_bind(any)
                .push("::tsquery ORDER BY p.lexemes @@ ")
                .push_bind(all)
                .push("::tsquery DESC LIMIT ")
                .push_bind(2 * LEXICAL_CANDIDATES)
                .push(")");
        } else {
            qb.push(", cand AS ((SELECT id FROM codebase_index WHERE lexemes @@ ")
                .push_bind(all)
                .push("::tsquery");
            push_filters(&mut qb, query.scope, query.filters);
            qb.push(" LIMIT ")
                .push_bind(LEXICAL_CANDIDATES)
                .push(") UNION (SELECT id FROM codebase_index WHERE lexemes @@ ")
                .push_bind(any)
                .push("::tsquery");
            push_filters(&mut qb, query.scope, query.filters);
            qb.push(" LIMIT ").push_bind(LEXICAL_CANDIDATES).push("))");
        }
        qb.push(", scored AS (SELECT ci.id, ");
        push_chunk_bm25(&mut qb, query.avg_length);
        qb.push(" FROM cand JOIN codebase_index ci USING (id)");
        push_chunk_tf(&mut qb);
        qb.push(" WHERE s.tf > 0.5 GROUP BY ci.id ORDER BY score DESC, ci.id LIMIT ")
            .push_bind(query.limit)
            .push(format!(") SELECT {HIT_COLUMNS_CI}, "));
        qb.push(
            "NULL::float8 AS similarity, scored.score AS lexical
             FROM scored JOIN codebase_index ci USING (id) ORDER BY scored.score DESC, ci.id",
        );
        let rows = qb
            .build()
            .fetch_all(&self.pool)
            .await
            .map_err(q("searching lexically"))?;
        Ok(rows.iter().map(hit).collect())
    }

    /// Each of the chunks `ids` that holds one of `terms`: its BM25, as [`Self::lexical_search`]
    /// scores it. Only those chunks are read, by their keys: a few milliseconds for a page's
    /// candidates, whatever the query's words.
    pub async fn chunk_word_scores(
        &self,
        ids: &[uuid::Uuid],
        terms: &[TermWeight],
        avg_length: f64,
    ) -> Result<HashMap<uuid::Uuid, f64>, StoreError> {
        if ids.is_empty() || terms.is_empty() {
            return Ok(HashMap::new());
        }
        let mut qb = terms_cte(terms);
        qb.push(" SELECT ci.id, ");
        push_chunk_bm25(&mut qb, avg_length);
        qb.push(" FROM codebase_index ci");
        push_chunk_tf(&mut qb);
        qb.push(" WHERE ci.id = ANY(")
            .push_bind(ids.to_vec())
            .push(") AND s.tf > 0.5 GROUP BY ci.id");
        let rows: Vec<(uuid::Uuid, f64)> = qb
            .build_query_as()
            .fetch_all(&self.pool)
            .await
            .map_err(q("scoring chunks by the query's words"))?;
        Ok(rows.into_iter().collect())
    }

    /// Whether a lexical query's candidates are better read from the rows its filters let
    /// through than from the words' index: when a filter on an indexed column (repository,
    /// file type, module, component type, language) lets at most [`EXACT_SCAN_CHUNKS`]
    /// chunks through, and the words' postings are many times more. Reading a posting costs
    /// about a quarter of what checking a row does, and the planner, which does not know the
    /// words' counts, intersects the two indexes instead: 36 to 50 ms for 129,000 postings
    /// of `buffer | byte | retri` under a repository of 354 to 7,176 chunks at 1M chunks,
    /// where checking the repository's rows takes 1.4 to 8 ms (docs/BENCHMARKS.md).
    async fn reads_passing_rows_first(
        &self,
        query: &LexicalQuery<'_>,
        generating: &[&TermWeight],
    ) -> Result<bool, StoreError> {
        let f = query.filters;
        let indexed = repository_filter(query.scope, f).is_some() || f.on_indexed_columns();
        // A selective word (held by fewer chunks than the search counts, 5,000) is the only
        // one whose postings are read: a millisecond or two at most.
        let common = generating.iter().all(|t| !t.selective);
        if !indexed || !common {
            return Ok(false);
        }
        let postings: f64 = generating.iter().map(|t| t.chunks).sum();
        let passing = self.passing(query.scope, f).await?.chunks;
        Ok(
            passing <= EXACT_SCAN_CHUNKS
                && ((passing * POSTINGS_PER_ROW_CHECKED) as f64) < postings,
        )
    }

    /// BM25 over whole files, from the postings of `file_terms`. The query's terms and their
    /// file counts come with it ([`Store::file_term_counts`]), the number of files with
    /// `query.stats`. Each term contributes its
    /// [`FILE_POSTINGS_PER_TERM`] best postings, so a query costs the same whatever the size
    /// of the index (a file outside a common term's best postings misses only that term's
    /// small share of its score). Filters apply to the file's chunks.
    ///
    /// Each file found is returned as one chunk with the file's score as `lexical`: for the
    /// first `query.best_chunks` files the chunk matching the query's words best (by the
    /// chunks' own BM25), for the others their first chunk, which is cheaper.
    pub async fn lexical_file_search(&self, query: &FileQuery<'_>) -> Result<Vec<Hit>, StoreError> {
        let repositories = repository_filter(query.scope, query.filters);
        let on_chunks = query.filters.on_chunks();
        // The route to the files, by how many the filters let through:
        // - few (the common case: an agent searching its own repository, its tests, one
        //   language): those files' postings only, a lookup per file and term;
        // - more: each term's best postings as unfiltered, as many as hold about
        //   `FILE_POSTINGS_PER_TERM` of the passing files' (the window a walk checking each
        //   posting reads to find that many), the files ranked, then checked best first until
        //   `limit` pass: about 40 lookups of a file's row where checking every posting took
        //   one per posting (2.4 to 3.6 ms of a 3-term query under `languages: ["rust"]` at
        //   100k chunks, 1 ms this way; 25 to 43 ms under `**/tests/**` at 1M, 8 to 12 ms;
        //   docs/BENCHMARKS.md). When that leaves the page short and a word had more postings
        //   than the window (the passing files' postings rank low), the query runs again
        //   checking each posting as the walk reads it, best first within the scope's
        //   workspace (the index on `file_terms` leads with it).
        let route = if !(repositories.is_some() || on_chunks) {
            FileRoute::Unfiltered
        } else {
            let passing = self.files_passing(query.scope, query.filters).await?;
            match passing.ids {
                Some(ids) => FileRoute::Listed(ids),
                None => FileRoute::CheckRanked {
                    postings: postings_for_share(passing.files, query.stats.files),
                },
            }
        };
        let mut hits = self.files_on(query, &route).await?;
        // Short only because a word's window was full: a word held by fewer files than the
        // window had every posting read, and the files that pass are all there.
        let window_full = |postings: i64| query.terms.iter().any(|t| t.files >= postings as f64);
        if let FileRoute::CheckRanked { postings } = route
            && (hits.len() as i64) < query.limit
            && window_full(postings)
        {
            hits = self.files_on(query, &FileRoute::CheckEach).await?;
        }
        Ok(hits)
    }

    /// The file query's hits, on `route` to the files.
    async fn files_on(
        &self,
        query: &FileQuery<'_>,
        route: &FileRoute,
    ) -> Result<Vec<Hit>, StoreError> {
        let rows = self
            .file_query(query, route)
            .build()
            .fetch_all(&self.pool)
            .await
            .map_err(q("searching files lexically"))?;
        Ok(rows.iter().map(hit).collect())
    }

    /// The file query's statement, on `route` to the files.
    fn file_query<'q>(
        &self,
        query: &'q FileQuery<'_>,
        route: &FileRoute,
    ) -> QueryBuilder<'q, Postgres> {
        let repositories = repository_filter(query.scope, query.filters);
        // q: the query's terms with their idf (Lucene's BM25 variant, positive for any term a
        // file lacks), from the scope's document frequencies the caller read
        // ([`Store::file_term_counts`]): another workspace's files never change a term's weight
        // here. A term counted in more files than there are (a count lagging behind) is left
        // out.
        let terms: Vec<&str> = query.terms.iter().map(|t| t.term.as_str()).collect();
        let files: Vec<f64> = query.terms.iter().map(|t| t.files).collect();
        let weights: Vec<f64> = query.terms.iter().map(|t| t.weight).collect();
        let mut qb = QueryBuilder::new(
            "WITH q AS (SELECT term, quote_literal(term)::tsquery AS tq, weight * ln(1 + (",
        );
        qb.push_bind(query.stats.files.max(1) as f64)
            .push(
                "::float8 - files + 0.5) / (files + 0.5)) AS idf
                 FROM unnest(",
            )
            .push_bind(terms)
            .push("::text[], ")
            .push_bind(files)
            .push("::float8[], ")
            .push_bind(weights)
            .push(
                "::float8[]) AS n(term, files, weight)
                 WHERE files > 0 AND files < ",
            )
            .push_bind(query.stats.files.max(1) as f64)
            .push("::float8 + 0.5)");
        // Any of the terms, to skip the ranking of a best file's chunks that have none.
        qb.push(
            ", any_term AS MATERIALIZED (
               SELECT string_agg(quote_literal(term), ' | ')::tsquery AS tq FROM q)",
        );
        let check_ranked = matches!(route, FileRoute::CheckRanked { .. });
        qb.push(", scored AS (");
        if check_ranked {
            qb.push("SELECT s.file_id, s.score FROM (");
        }
        qb.push("SELECT p.file_id, sum(q.idf * p.impact) AS score FROM q CROSS JOIN LATERAL (");
        let workspace = query.scope.workspace().to_owned();
        match route {
            FileRoute::Listed(files) => {
                qb.push("SELECT p.file_id, p.impact FROM unnest(")
                    .push_bind(files.to_vec())
                    .push(
                        "::int8[]) AS a(id) JOIN file_terms p ON p.file_id = a.id AND p.term = q.term",
                    );
            }
            FileRoute::Unfiltered => push_walk(&mut qb, workspace, FILE_POSTINGS_PER_TERM),
            FileRoute::CheckRanked { postings } => push_walk(&mut qb, workspace, *postings),
            FileRoute::CheckEach => {
                qb.push(
                    "SELECT p.file_id, p.impact FROM file_terms p
                     JOIN indexed_files f ON f.id = p.file_id
                     WHERE p.term = q.term AND p.workspace = ",
                )
                .push_bind(workspace);
                push_passing_file(&mut qb, repositories.as_deref(), query.filters);
                qb.push(" ORDER BY p.impact DESC LIMIT ")
                    .push_bind(FILE_POSTINGS_PER_TERM);
            }
        }
        // Equal scores (copies of one file) are cut at the limit by key, the same way each time.
        qb.push(") p GROUP BY p.file_id ORDER BY score DESC, p.file_id");
        if check_ranked {
            // Each ranked file checked in that order until `limit` pass: a lateral lookup with
            // a limit is never turned into a join of every ranked file.
            qb.push(
                ") s CROSS JOIN LATERAL (
                   SELECT 1 FROM indexed_files f WHERE f.id = s.file_id",
            );
            push_passing_file(&mut qb, repositories.as_deref(), query.filters);
            qb.push(" LIMIT 1) passes ORDER BY s.score DESC, s.file_id");
        }
        qb.push(" LIMIT ").push_bind(query.limit);
        qb.push(
            "), ranked AS (
                   SELECT f.repository, f.file_path, s.score,
                          row_number() OVER (ORDER BY s.score DESC, f.id) AS r
                   FROM scored s JOIN indexed_files f ON f.id = s.file_id),
                 best AS (
                   SELECT ranked.score, b.id FROM ranked CROSS JOIN LATERAL (
                     SELECT x.id FROM codebase_index x
                     WHERE x.repository = ranked.repository AND x.file_path = ranked.file_path",
        );
        push_chunk_filters(&mut qb, query.filters);
        // A chunk with none of the terms ranks after those with some, by position: the order
        // of ranking them all (a rank of 0), at the cost of one match instead of a rank per term.
        qb.push(
            " ORDER BY CASE WHEN x.lexemes @@ (SELECT tq FROM any_term) THEN
                          (SELECT sum(q.idf * ts_rank_cd(x.lexemes, q.tq, 0)) FROM q)
                        END DESC NULLS LAST, x.chunk_index
                     LIMIT 1) b
                   WHERE ranked.r <= ",
        )
        .push_bind(query.best_chunks)
        .push(
            " UNION ALL
                   SELECT ranked.score, b.id FROM ranked CROSS JOIN LATERAL (
                     SELECT x.id FROM codebase_index x
                     WHERE x.repository = ranked.repository AND x.file_path = ranked.file_path",
        );
        push_chunk_filters(&mut qb, query.filters);
        qb.push(" ORDER BY x.chunk_index LIMIT 1) b WHERE ranked.r > ")
            .push_bind(query.best_chunks)
            .push(")")
            .push(format!(" SELECT {HIT_COLUMNS_CI}, "));
        qb.push(
            "NULL::float8 AS similarity, best.score AS lexical
             FROM best JOIN codebase_index ci USING (id) ORDER BY best.score DESC, ci.id",
        );
        qb
    }

    /// The chunks that define any of the keys, each with the keys it defines. A key defined
    /// by more than [`DEFINITIONS_PER_KEY`] chunks (within the filters) names no particular
    /// definition (`new`, `__init__`) and is left out.
    pub async fn definition_search(
        &self,
        query: &DefinitionQuery<'_>,
    ) -> Result<Vec<(Hit, Vec<String>)>, StoreError> {
        if query.keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut qb = QueryBuilder::new("WITH k AS (SELECT DISTINCT unnest(");
        qb.push_bind(query.keys.to_vec()).push(
            "::text[]) AS key),
             m AS (SELECT k.key, x.id FROM k CROSS JOIN LATERAL (
                     SELECT id FROM codebase_index WHERE defines @> ARRAY[k.key]",
        );
        push_filters(&mut qb, query.scope, query.filters);
        qb.push(" LIMIT ")
            .push_bind(DEFINITIONS_PER_KEY + 1)
            .push(
                ") x),
             ok AS (SELECT key FROM m GROUP BY key HAVING count(*) <= ",
            )
            .push_bind(DEFINITIONS_PER_KEY)
            .push(format!(") SELECT {HIT_COLUMNS_CI}, "));
        qb.push(
            "NULL::float8 AS similarity, NULL::float8 AS lexical,
               ARRAY(SELECT key FROM ok WHERE ok.key = ANY(ci.defines)) AS matched
             FROM codebase_index ci
             WHERE ci.id IN (SELECT id FROM m WHERE key IN (SELECT key FROM ok))
             ORDER BY ci.id",
        );
        let rows = qb
            .build()
            .fetch_all(&self.pool)
            .await
            .map_err(q("searching definitions"))?;
        Ok(rows.iter().map(|r| (hit(r), r.get("matched"))).collect())
    }

    /// The cosine similarity to `embedding` of each of the chunks `ids` that has a vector of
    /// `model`. The lexical and definition lists run while the query is being embedded, so
    /// their hits get their similarities here, afterwards.
    pub async fn similarities(
        &self,
        ids: &[uuid::Uuid],
        embedding: &[f32],
        model: &str,
    ) -> Result<HashMap<uuid::Uuid, f64>, StoreError> {
        let rows: Vec<(uuid::Uuid, f64)> = sqlx::query_as(
            "SELECT id, 1 - (embedding <=> $1) FROM codebase_index
             WHERE id = ANY($2) AND embedding_model = $3 AND embedding IS NOT NULL",
        )
        .bind(pad(embedding))
        .bind(ids)
        .bind(model)
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading similarities"))?;
        Ok(rows.into_iter().collect())
    }

    /// How many recent commits changed each file of `workspace` that any did (see
    /// [`crate::scan::history`]), or `None` when more than `max` files did: those rows only
    /// (through the partial index of migration 0022), for search to keep while the workspace
    /// is unchanged.
    pub async fn workspace_changes(
        &self,
        workspace: &str,
        max: usize,
    ) -> Result<Option<HashMap<(String, String), f64>>, StoreError> {
        let rows: Vec<(String, String, f32)> = sqlx::query_as(
            "SELECT f.repository, f.file_path, f.changes
               FROM indexed_files f JOIN repositories r ON r.name = f.repository
              WHERE r.workspace = $1 AND f.changes > 0
              LIMIT $2",
        )
        .bind(workspace)
        .bind(i64::try_from(max).unwrap_or(i64::MAX).saturating_add(1))
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading the workspace's changes"))?;
        if rows.len() > max {
            return Ok(None);
        }
        Ok(Some(
            rows.into_iter()
                .map(|(r, p, c)| ((r, p), f64::from(c)))
                .collect(),
        ))
    }

    /// How many recent commits changed each of `files` (repository, path), for those that any
    /// did (see [`crate::scan::history`]): one lookup by the files' primary key.
    pub async fn file_changes(
        &self,
        files: &[(String, String)],
    ) -> Result<HashMap<(String, String), f64>, StoreError> {
        if files.is_empty() {
            return Ok(HashMap::new());
        }
        let (repositories, paths): (Vec<&str>, Vec<&str>) =
            files.iter().map(|(r, p)| (r.as_str(), p.as_str())).unzip();
        let rows: Vec<(String, String, f32)> = sqlx::query_as(
            "SELECT f.repository, f.file_path, f.changes
               FROM unnest($1::text[], $2::text[]) AS k(r, p)
               JOIN indexed_files f ON f.repository = k.r AND f.file_path = k.p
              WHERE f.changes > 0",
        )
        .bind(&repositories)
        .bind(&paths)
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading the files' changes"))?;
        Ok(rows
            .into_iter()
            .map(|(r, p, c)| ((r, p), f64::from(c)))
            .collect())
    }

    /// Each of `files`' vector score against `embedding`, from its chunks' cosine
    /// similarities (vectors of `model` passing the filters) on the narrow copies (migration
    /// 0018), in half precision: the nearest's with `temperature` 0, else [`pooled`]. A file's
    /// own score, whichever of its chunks a list found. A file's copies sit together, under
    /// one key: about 0.5 ms for 40 files of 500 chunks in all (docs/BENCHMARKS.md). Each
    /// similarity is computed once and pooled here: a window over them in SQL evaluated the
    /// distance again for its sort, three times the cost.
    pub async fn file_similarities(
        &self,
        files: &[(String, String)],
        embedding: &[f32],
        model: &str,
        scope: &Scope,
        filters: &Filters,
        temperature: f64,
    ) -> Result<HashMap<(String, String), f64>, StoreError> {
        if files.is_empty() {
            return Ok(HashMap::new());
        }
        let (repositories, paths): (Vec<&str>, Vec<&str>) =
            files.iter().map(|(r, p)| (r.as_str(), p.as_str())).unzip();
        let mut qb = QueryBuilder::new("SELECT f.i, array_agg(1 - (v.embedding <=> ");
        qb.push_bind(pgvector::Vector::from(embedding.to_vec()))
            .push("::halfvec)) FROM unnest(")
            .push_bind(repositories)
            .push("::text[], ")
            .push_bind(paths)
            .push(
                "::text[]) WITH ORDINALITY AS f(r, p, i)
                 JOIN chunk_vectors v ON v.file_key = chunk_file_key(f.r, f.p)
                 WHERE v.embedding_model = ",
            )
            .push_bind(model.to_owned())
            .push(" AND vector_dims(v.embedding) = ")
            .push_bind(embedding.len() as i32);
        // The files passed the path filter already; the rest are the copies' own columns.
        let rest = Filters {
            path_regex: None,
            ..filters.clone()
        };
        push_filters(&mut qb, scope, &rest);
        qb.push(" GROUP BY f.i");
        let rows: Vec<(i64, Vec<f64>)> = qb
            .build_query_as()
            .fetch_all(&self.pool)
            .await
            .map_err(q("reading the files' similarities"))?;
        Ok(rows
            .into_iter()
            .filter_map(|(i, similarities)| {
                Some((
                    files.get(usize::try_from(i).ok()?.checked_sub(1)?)?.clone(),
                    pooled(similarities, temperature)?,
                ))
            })
            .collect())
    }
}

/// A file's vector score from its chunks' similarities: with `temperature` t above 0,
/// `t × ln Σ exp(similarity / t)` over its [`POOLED_CHUNKS`] nearest (computed from the
/// nearest, so that no exponential overflows), else the nearest's. None for no chunk.
pub fn pooled(mut similarities: Vec<f64>, temperature: f64) -> Option<f64> {
    similarities.sort_by(|a, b| b.total_cmp(a));
    let nearest = *similarities.first()?;
    if temperature <= 0.0 {
        return Some(nearest);
    }
    let sum: f64 = similarities
        .iter()
        .take(POOLED_CHUNKS)
        .map(|s| ((s - nearest) / temperature).exp())
        .sum();
    Some(nearest + temperature * sum.ln())
}

/// How many of a file's nearest chunks its pooled vector score counts
/// ([`Store::file_similarities`]). A test file or a long guide holds dozens of chunks alike
/// (one test after another about the same function): pooled all together they outweighed a
/// file with a few passages about the question. With the ten nearest, vector-only MRR over the
/// training set's repositories, tests ranked too, was 0.535 against 0.523 for all of them and
/// 0.518 for the nearest alone (docs/BENCHMARKS.md).
pub const POOLED_CHUNKS: usize = 10;

/// How the file query reaches the files, by how many of the scope's the filters let through.
enum FileRoute {
    /// No filter: each term's best postings in the workspace.
    Unfiltered,
    /// Few pass ([`FEW_FILES`] at most): their own postings.
    Listed(Arc<[i64]>),
    /// More pass: each term's best `postings` as unfiltered, the files ranked, then checked
    /// best first until the page is full.
    CheckRanked { postings: i64 },
    /// Each posting checked as the walk reads it: when the ranked route left the page short.
    CheckEach,
}

/// Postings per term for a filter that lets `passing` of the scope's `files` through: as many
/// more than [`FILE_POSTINGS_PER_TERM`] as the filter drops, the window in which a walk that
/// checks each posting finds that many that pass (when the passing files' postings are spread
/// like the others'). A term has at most one posting per file: beyond `files` it reads them
/// all.
fn postings_for_share(passing: i64, files: i64) -> i64 {
    if passing <= 0 || files <= passing {
        return FILE_POSTINGS_PER_TERM;
    }
    let wanted = (FILE_POSTINGS_PER_TERM as f64 * files as f64 / passing as f64).ceil() as i64;
    wanted.min(files.max(FILE_POSTINGS_PER_TERM))
}

/// Appends a walk of each term's best `postings` in `workspace`, unfiltered.
fn push_walk(qb: &mut QueryBuilder<'_, Postgres>, workspace: String, postings: i64) {
    qb.push(
        "SELECT p.file_id, p.impact FROM file_terms p
         WHERE p.term = q.term AND p.workspace = ",
    )
    .push_bind(workspace)
    .push(" ORDER BY p.impact DESC LIMIT ")
    .push_bind(postings);
}

/// Appends ` AND ...` for the repositories and the filters, on the `indexed_files` row `f`.
fn push_passing_file(
    qb: &mut QueryBuilder<'_, Postgres>,
    repositories: Option<&[String]>,
    f: &Filters,
) {
    if let Some(repositories) = repositories {
        qb.push(" AND f.repository = ANY(")
            .push_bind(repositories.to_vec())
            .push(")");
    }
    push_file_filters(qb, f);
}

/// The `rows=` estimate of a line of `EXPLAIN`'s text output:
/// `Seq Scan on t  (cost=0.00..9.99 rows=90908 width=4)`.
fn plan_rows(line: &str) -> Option<i64> {
    let rest = &line[line.find(" rows=")? + " rows=".len()..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// What a filter lets through in a scope ([`Store::passing`]).
#[derive(Debug, Clone)]
pub(super) struct Passing {
    /// Counted, or beyond [`EXACT_SCAN_CHUNKS`] under filters on the chunks' columns,
    /// estimated.
    chunks: i64,
    /// A path filter's files' keys in `chunk_vectors`, when they hold at most
    /// [`EXACT_SCAN_CHUNKS`].
    keys: Option<Arc<[i64]>>,
}

/// The scope's files a filter lets through ([`Store::files_passing`]).
#[derive(Debug, Clone)]
pub(super) struct FilesPassing {
    files: i64,
    /// Their ids, when they are at most [`FEW_FILES`].
    ids: Option<Arc<[i64]>>,
}

/// What recently used filters let through, per scope: a scope's fingerprint changes with its
/// rows, so an entry is never stale, only unused. [`FILTERS_CACHED`] entries of at most
/// 10,000 file keys or ids each: 5 MB at most.
#[derive(Clone)]
pub(super) struct FilterCache<V>(Arc<Mutex<LruCache<(Scope, Filters), V>>>);

const FILTERS_CACHED: usize = 64;

impl<V: Clone> FilterCache<V> {
    pub(super) fn new() -> Self {
        Self(Arc::new(Mutex::new(LruCache::new(
            NonZeroUsize::new(FILTERS_CACHED).unwrap_or(NonZeroUsize::MIN),
        ))))
    }

    /// The value kept for the filters in the scope, else `load`'s, kept.
    async fn get<F>(&self, scope: &Scope, filters: &Filters, load: F) -> Result<V, StoreError>
    where
        F: std::future::Future<Output = Result<V, StoreError>>,
    {
        let key = (scope.clone(), filters.clone());
        if let Some(known) = lock(&self.0).get(&key) {
            return Ok(known.clone());
        }
        let value = load.await?;
        lock(&self.0).put(key, value.clone());
        Ok(value)
    }
}

/// Rows each candidate query of a lexical search of chunks may return.
pub const LEXICAL_CANDIDATES: i64 = 2000;

/// How many postings of the words' index cost as much to read as one row does to check for
/// the words ([`Store::reads_passing_rows_first`]): 0.27 µs a posting (129,000 in 35 ms) and
/// about 1 µs a row (7,176 in 7.5 ms), measured at 1M chunks.
const POSTINGS_PER_ROW_CHECKED: i64 = 4;
/// Postings each query term contributes to a lexical search of files, best first.
pub const FILE_POSTINGS_PER_TERM: i64 = 2000;
/// A filtered file query reads the postings of the files that pass directly when they are at
/// most this many (a lookup per file and term).
pub(super) const FEW_FILES: i64 = 2000;
/// A definition key found in more chunks than this names nothing in particular.
pub const DEFINITIONS_PER_KEY: i64 = 10;
/// A filtered vector search, or an unfiltered one in a workspace of the database, scans the
/// chunks it may return exactly, instead of walking the HNSW graph, when they are at most this
/// many (4 to 5 ms for the 7,719 narrow rows of `**/tests/**` at 100k chunks); a filtered one
/// also up to [`EXACT_SCAN_MAX_CHUNKS`] when they are a small share of the scope
/// ([`scans_exactly`]).
pub(super) const EXACT_SCAN_CHUNKS: i64 = 10_000;
/// The most chunks a filtered vector search scans exactly: about 22 ms for the 35,245 narrow
/// rows of `languages: ["c"]` at 1M chunks, where the walk took 46 to 52 ms p50 and 90 to
/// 103 ms p95 (docs/BENCHMARKS.md).
const EXACT_SCAN_MAX_CHUNKS: i64 = 40_000;

/// Whether a vector search whose filters let `passing` of the scope's `scope` chunks through
/// scans them exactly. A walk of the graph reads about `limit / share` candidates to find
/// `limit` that pass, so it slows down, and loses recall, as the share falls: under 5 % it
/// costs more than scanning up to [`EXACT_SCAN_MAX_CHUNKS`] rows (recall@10 of walks under path
/// filters of 1 to 8 % was 0.92 to 0.97; docs/BENCHMARKS.md).
fn scans_exactly(passing: i64, scope: i64) -> bool {
    passing <= EXACT_SCAN_CHUNKS
        || (passing <= EXACT_SCAN_MAX_CHUNKS && passing.saturating_mul(20) <= scope)
}
/// `ts_rank_cd` (cover density, no normalization) of a single unweighted term is 0.1 per
/// occurrence (each occurrence is a cover of weight 0.1): this factor makes it the term
/// frequency.
const TS_RANK_CD_TO_TF: f64 = 10.0;

const HIT_COLUMNS: &str = "id, repository, file_path, chunk_index, chunk_content, module, \
     component_type, file_type, language, symbol, symbols, start_line, end_line";
const HIT_COLUMNS_CI: &str = "ci.id, ci.repository, ci.file_path, ci.chunk_index, \
     ci.chunk_content, ci.module, ci.component_type, ci.file_type, ci.language, ci.symbol, \
     ci.symbols, ci.start_line, ci.end_line";

fn hit(r: &sqlx::postgres::PgRow) -> Hit {
    Hit {
        id: r.get("id"),
        repository: r.get("repository"),
        file_path: r.get("file_path"),
        chunk_index: r.get("chunk_index"),
        content: r.get("chunk_content"),
        similarity: r.get("similarity"),
        lexical: r.get("lexical"),
        module: r.get("module"),
        component_type: r.get("component_type"),
        file_type: r.get("file_type"),
        language: r.get("language"),
        symbol: r.get("symbol"),
        symbols: r
            .get::<Option<Vec<String>>, _>("symbols")
            .unwrap_or_default(),
        start_line: r.get("start_line"),
        end_line: r.get("end_line"),
    }
}

/// `sum(…) AS score`: a chunk's BM25 over the query terms `qt` (`idf`), from its term
/// frequencies `s.tf` and its `ci.lexical_length` against `avg_length`.
fn push_chunk_bm25(qb: &mut QueryBuilder<'_, Postgres>, avg_length: f64) {
    qb.push(format!(
        "sum(qt.idf * s.tf * ({BM25_K1} + 1)
           / (s.tf + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * coalesce(ci.lexical_length, 0) / "
    ))
    .push_bind(avg_length.max(1.0))
    .push("))) AS score");
}

/// ` CROSS JOIN qt CROSS JOIN LATERAL (…) s`: each query term's frequency `s.tf` in the chunk
/// `ci`, from `ts_rank_cd` of the single term; the BM25 above reads it.
fn push_chunk_tf(qb: &mut QueryBuilder<'_, Postgres>) {
    qb.push(" CROSS JOIN qt CROSS JOIN LATERAL (SELECT ")
        .push(TS_RANK_CD_TO_TF)
        .push(" * ts_rank_cd(ci.lexemes, qt.tq, 0) AS tf) s");
}

/// `WITH qt AS (...)`: the query's terms as single-term `tsquery`s with their idf.
fn terms_cte(terms: &[TermWeight]) -> QueryBuilder<'static, Postgres> {
    let mut qb = QueryBuilder::new(
        "WITH qt AS (SELECT quote_literal(term)::tsquery AS tq, idf FROM unnest(",
    );
    qb.push_bind(terms.iter().map(|t| t.term.clone()).collect::<Vec<_>>())
        .push("::text[], ")
        .push_bind(terms.iter().map(|t| t.idf).collect::<Vec<_>>())
        .push("::float8[]) AS q(term, idf))");
    qb
}

/// The terms that select lexical candidates: the selective ones, every term when none is.
fn generating_terms(terms: &[TermWeight]) -> Vec<&TermWeight> {
    let selective: Vec<&TermWeight> = terms.iter().filter(|t| t.selective).collect();
    if selective.is_empty() {
        terms.iter().collect()
    } else {
        selective
    }
}

/// The `tsquery` texts that select lexical candidates: all the generating terms
/// ([`generating_terms`]), and any of them. `None` when the query has no terms.
fn candidate_queries(generating: &[&TermWeight]) -> Option<(String, String)> {
    if generating.is_empty() {
        return None;
    }
    let quoted: Vec<String> = generating
        .iter()
        .map(|t| format!("'{}'", t.term.replace('\\', "\\\\").replace('\'', "''")))
        .collect();
    Some((quoted.join(" & "), quoted.join(" | ")))
}

/// Appends ` AND ...` for the scope and each filter that restricts something.
fn push_filters(qb: &mut QueryBuilder<'_, Postgres>, scope: &Scope, f: &Filters) {
    push_chunk_filters(qb, f);
    if let Some(workspace) = scope.workspace_restriction() {
        qb.push(" AND workspace = ").push_bind(workspace.to_owned());
    }
    if let Some(repositories) = repository_filter(scope, f) {
        qb.push(" AND repository = ANY(")
            .push_bind(repositories)
            .push(")");
    }
}

/// Appends ` AND ...` for each filter on the chunks' own columns (all but the repository).
fn push_chunk_filters(qb: &mut QueryBuilder<'_, Postgres>, f: &Filters) {
    let lists = [
        ("file_type", &f.file_types),
        ("module", &f.modules),
        ("component_type", &f.component_types),
        ("language", &f.languages),
    ];
    for (column, list) in lists {
        if let Some(list) = list.as_ref().filter(|l| !l.is_empty()) {
            qb.push(format!(" AND {column} = ANY("))
                .push_bind(list.clone())
                .push(")");
        }
    }
    if let Some(re) = &f.path_regex {
        qb.push(" AND file_path ~ ").push_bind(re.clone());
    }
}

/// The chunk filters as conditions on the `indexed_files` row `f` of a file: true when some
/// chunk of the file passes them. A file's language, file type (its path's extension), path,
/// module and component type are its chunks' (all functions of its path), so they are checked
/// on the row itself. A row that does not record its language, module and component type
/// (files indexed before migration 0017, without chunks to copy them from) is checked through
/// its chunks. Checking a file's chunks costs an index probe and a read of its rows for every
/// posting a filtered file query walks: 120 ms a search under `fileTypes: ["md"]` at 100k
/// chunks, against 2 ms unfiltered (docs/BENCHMARKS.md).
fn push_file_filters(qb: &mut QueryBuilder<'_, Postgres>, f: &Filters) {
    let listed = |l: &Option<Vec<String>>| l.clone().filter(|l| !l.is_empty());
    // Whether a chunk of the file has `column` in `list`.
    let chunks_have = |qb: &mut QueryBuilder<'_, Postgres>, column: &str, list: Vec<String>| {
        qb.push(format!(
            "EXISTS (SELECT 1 FROM codebase_index x
               WHERE x.repository = f.repository AND x.file_path = f.file_path
                 AND x.{column} = ANY("
        ))
        .push_bind(list)
        .push("))");
    };
    let on_row = [
        ("language", listed(&f.languages), "f.language IS NULL"),
        ("module", listed(&f.modules), "NOT f.attributes_recorded"),
        (
            "component_type",
            listed(&f.component_types),
            "NOT f.attributes_recorded",
        ),
    ];
    for (column, list, unrecorded) in on_row {
        let Some(list) = list else {
            continue;
        };
        qb.push(format!(" AND (f.{column} = ANY("))
            .push_bind(list.clone())
            .push(format!(") OR {unrecorded} AND "));
        chunks_have(qb, column, list);
        qb.push(")");
    }
    if let Some(types) = listed(&f.file_types) {
        match extension_regex(&types) {
            Some(re) => {
                qb.push(" AND f.file_path ~ ").push_bind(re);
            }
            None => {
                qb.push(" AND ");
                chunks_have(qb, "file_type", types);
            }
        }
    }
    if let Some(re) = &f.path_regex {
        qb.push(" AND f.file_path ~ ").push_bind(re.clone());
    }
}

/// A regular expression a path matches when its file type ([`crate::scan::file_type_of`]: the
/// extension after a non-empty stem, in ASCII lower case) is one of `types`; `None` when a
/// type is not a plain extension (empty, or other than letters, digits, `_`, `-` and `+`),
/// left to the chunks' own column.
fn extension_regex(types: &[String]) -> Option<String> {
    let plain = |t: &String| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+'))
    };
    if !types.iter().all(plain) {
        return None;
    }
    // Stored types are lower case: an upper-case one matches no chunk.
    let alternatives: Vec<String> = types
        .iter()
        .filter(|t| !t.chars().any(|c| c.is_ascii_uppercase()))
        .map(|t| {
            t.chars()
                .map(|c| {
                    if c.is_ascii_alphabetic() {
                        format!("[{c}{}]", c.to_ascii_uppercase())
                    } else if c == '+' {
                        "\\+".to_owned()
                    } else {
                        c.to_string()
                    }
                })
                .collect()
        })
        .collect();
    if alternatives.is_empty() {
        return Some("$^".to_owned());
    }
    Some(format!("[^/]\\.({})$", alternatives.join("|")))
}

/// An indexed file, as the file-context reader needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedFile {
    pub repository: String,
    /// The repository's root on disk.
    pub root: String,
    pub file_path: String,
    /// sha256 of the bytes indexed.
    pub file_hash: String,
    pub language: Option<String>,
}

impl Store {
    /// The indexed (not skipped) files at `path` in the scope's repositories, or in the one
    /// named, by repository name.
    pub async fn indexed_file(
        &self,
        scope: &Scope,
        repository: Option<&str>,
        path: &str,
    ) -> Result<Vec<IndexedFile>, StoreError> {
        let names: Vec<String> = match repository {
            Some(r) => vec![r.to_owned()],
            None => scope.repositories().to_vec(),
        };
        let rows = sqlx::query(
            "SELECT f.repository, r.root_path, f.file_path, f.file_hash, f.language
             FROM indexed_files f JOIN repositories r ON r.name = f.repository
             WHERE f.repository = ANY($1) AND r.workspace = $2 AND f.file_path = $3
               AND f.error IS NULL
             ORDER BY f.repository",
        )
        .bind(&names)
        .bind(scope.workspace())
        .bind(path)
        .fetch_all(&self.pool)
        .await
        .map_err(q("looking up an indexed file"))?;
        Ok(rows
            .iter()
            .map(|r| IndexedFile {
                repository: r.get("repository"),
                root: r.get("root_path"),
                file_path: r.get("file_path"),
                file_hash: r.get("file_hash"),
                language: r.get("language"),
            })
            .collect())
    }
}

/// A chunk's place and text, for rebuilding a definition the chunker split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkLines {
    pub repository: String,
    pub file_path: String,
    pub symbol: String,
    pub start_line: i32,
    pub end_line: i32,
    pub content: String,
}

impl Store {
    /// Every chunk of the given (repository, file, symbol)s in the scope, in file order: the
    /// pieces of definitions too large for one chunk.
    pub async fn chunks_of_symbols(
        &self,
        scope: &Scope,
        keys: &[(String, String, String)],
    ) -> Result<Vec<ChunkLines>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let (mut repos, mut paths, mut symbols) = (Vec::new(), Vec::new(), Vec::new());
        for (r, p, s) in keys {
            if scope.contains(r) {
                repos.push(r.as_str());
                paths.push(p.as_str());
                symbols.push(s.as_str());
            }
        }
        let rows = sqlx::query(
            "SELECT c.repository, c.file_path, c.symbol, c.start_line, c.end_line,
                    c.chunk_content
             FROM unnest($1::text[], $2::text[], $3::text[]) AS k(repository, file_path, symbol)
             JOIN codebase_index c ON c.repository = k.repository
               AND c.file_path = k.file_path AND c.symbol = k.symbol
             WHERE c.start_line IS NOT NULL
             ORDER BY c.repository, c.file_path, c.start_line",
        )
        .bind(&repos)
        .bind(&paths)
        .bind(&symbols)
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading the pieces of split definitions"))?;
        Ok(rows
            .iter()
            .map(|r| ChunkLines {
                repository: r.get("repository"),
                file_path: r.get("file_path"),
                symbol: r.get("symbol"),
                start_line: r.get("start_line"),
                end_line: r.get("end_line"),
                content: r.get("chunk_content"),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_pooled_score_counts_its_nearest_chunks_only() {
        assert_eq!(pooled(Vec::new(), 0.05), None);
        assert_eq!(pooled(vec![0.2, 0.7, 0.5], 0.0), Some(0.7));
        let t = 0.05;
        let direct = |s: &[f64]| t * s.iter().map(|s| (s / t).exp()).sum::<f64>().ln();
        let one = pooled(vec![0.6], t).expect("one chunk");
        assert!((one - 0.6).abs() < 1e-12, "one chunk is its own score");
        let near = [0.7, 0.69, 0.68];
        let got = pooled(vec![0.68, 0.7, 0.69], t).expect("three");
        assert!((got - direct(&near)).abs() < 1e-12, "{got}");
        assert!(got > 0.7, "near chunks add up");
        // Chunks beyond the nearest POOLED_CHUNKS do not count, whatever their order.
        let many: Vec<f64> = (0..POOLED_CHUNKS + 5)
            .map(|i| 0.5 - i as f64 * 1e-3)
            .collect();
        let mut shuffled = many.clone();
        shuffled.reverse();
        let got = pooled(shuffled, t).expect("many");
        assert!(
            (got - direct(&many[..POOLED_CHUNKS])).abs() < 1e-12,
            "{got}"
        );
        // No overflow at the smallest temperature allowed.
        assert!(pooled(vec![1.0, 0.99], 0.005).is_some_and(f64::is_finite));
    }

    #[test]
    fn the_denser_graph_walks_fewer_candidates_and_the_old_one_keeps_its_own() {
        assert_eq!(ef_search_on(Graph::Denser, 0, 100_548, false), 100);
        assert_eq!(
            ef_search_on(Graph::PgvectorDefaults, 0, 100_548, false),
            200
        );
        assert_eq!(ef_search_on(Graph::PgvectorDefaults, 0, 20_000, false), 100);
        assert_eq!(ef_search_on(Graph::Denser, 0, 100_548, true), 200);
        assert_eq!(ef_search_on(Graph::Denser, 0, 499_999, false), 100);
        assert_eq!(ef_search_on(Graph::Denser, 0, 1_001_584, false), 200);
        assert_eq!(
            ef_search_on(Graph::PgvectorDefaults, 0, 1_001_584, false),
            400
        );
        // A configured value is kept, whichever the graph.
        assert_eq!(
            ef_search_on(Graph::PgvectorDefaults, 150, 100_548, true),
            150
        );
        assert_eq!(ef_search_for(0, 100_548, false), 100);
        // Most searches walk with the connections' own setting, without a transaction.
        assert_eq!(ef_search_for(0, 100_548, false), SESSION_EF_SEARCH);
    }

    #[test]
    fn a_filter_passing_few_chunks_or_a_small_share_of_many_is_scanned_exactly() {
        assert!(scans_exactly(7_719, 100_548));
        assert!(scans_exactly(10_000, 10_000));
        // `languages: ["c"]` and `fileTypes: ["md"]` at 1M chunks.
        assert!(scans_exactly(35_245, 1_001_584));
        assert!(scans_exactly(32_905, 1_001_584));
        // `modules: ["tests"]` at 1M: too many rows; 30 % of 100k: the walk finds them fast.
        assert!(!scans_exactly(97_700, 1_001_584));
        assert!(!scans_exactly(30_000, 100_548));
        assert!(!scans_exactly(40_001, 10_000_000));
    }

    #[test]
    fn a_filter_reads_as_many_more_postings_as_it_drops_up_to_all_of_them() {
        assert_eq!(postings_for_share(6653, 6653), FILE_POSTINGS_PER_TERM);
        assert_eq!(postings_for_share(9000, 6653), FILE_POSTINGS_PER_TERM);
        // 5,544 of 6,653 files: `languages: ["rust"]` at 100k chunks.
        assert_eq!(postings_for_share(5544, 6653), 2401);
        // 11,673 of 66,885: `**/tests/**` at 1M chunks.
        assert_eq!(postings_for_share(11_673, 66_885), 11_460);
        // A term has at most one posting per file.
        assert_eq!(postings_for_share(2001, 66_885), 66_852);
        assert_eq!(postings_for_share(1000, 66_885), 66_885);
        assert_eq!(postings_for_share(1, 1500), FILE_POSTINGS_PER_TERM);
        assert_eq!(postings_for_share(0, 6000), FILE_POSTINGS_PER_TERM);
    }

    #[test]
    fn a_plans_row_estimate_is_read_from_its_top_line() {
        assert_eq!(
            plan_rows("Seq Scan on codebase_index  (cost=0.00..23650.85 rows=90908 width=4)"),
            Some(90908)
        );
        assert_eq!(
            plan_rows("Bitmap Heap Scan on codebase_index  (cost=8.4..9 rows=7 width=4)"),
            Some(7)
        );
        assert_eq!(plan_rows("  Filter: (language = ANY ($1))"), None);
    }

    /// The file-type condition on a file's path agrees with the type its chunks record.
    #[test]
    fn file_types_are_checked_on_the_path_as_the_scanner_names_them() {
        let paths = [
            "README.md",
            "docs/Guide.MD",
            "src/a.rs",
            "lib/x.test.md",
            ".md",
            "docs/.md",
            "Makefile",
            "notes.",
            "a.md/b.rs",
            "c++/x.c++",
            "md",
        ];
        for types in [
            vec!["md"],
            vec!["md", "rs"],
            vec!["c++"],
            vec!["MD"],
            vec!["x-y"],
        ] {
            let types: Vec<String> = types.into_iter().map(str::to_owned).collect();
            let re =
                regex::Regex::new(&extension_regex(&types).expect("plain types")).expect("valid");
            for path in paths {
                let want = types.contains(&crate::scan::file_type_of(path));
                assert_eq!(re.is_match(path), want, "{types:?} on {path}");
            }
        }
        assert_eq!(extension_regex(&[String::new()]), None);
        assert_eq!(extension_regex(&["d.ts".to_owned()]), None);
    }
}
