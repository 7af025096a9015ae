//! Collection statistics for BM25 (term and file counts, average lengths), each over one
//! [`Scope`]: a workspace's statistics never include another workspace's rows.

use sqlx::{Postgres, QueryBuilder, Row};

use super::{FILE_TEXT_SEARCH_CONFIG, Scope, Store, StoreError, TEXT_SEARCH_CONFIG, q};

/// How common one query term is among chunks.
#[derive(Debug, Clone, PartialEq)]
pub struct TermStat {
    pub term: String,
    /// Share of chunks containing it, when the planner's statistics know it as common (only
    /// for a scope that is the whole database: they cover every row).
    pub frequency: Option<f32>,
    /// Chunks containing it, counted up to the cap given, when `frequency` is unknown.
    pub count: Option<i64>,
}

/// The figures chunk-level BM25 needs about the scope.
#[derive(Debug, Clone, Copy)]
pub struct CollectionStats {
    pub chunks: i64,
    pub avg_length: f64,
}

/// The figure file-level BM25 needs about the scope besides each term's file count
/// ([`Store::file_term_counts`]): the number of files.
#[derive(Debug, Clone, Default)]
pub struct FileStats {
    pub files: i64,
}

impl Store {
    /// The distinct lexemes of `text` under the `english` configuration, with how many of the
    /// scope's chunks hold each: a count stopped at `cap`, or, when the scope is the whole
    /// database, the planner's estimate for lexemes common enough to be in `pg_stats` (kept by
    /// ANALYZE), so a common word costs no more than a rare one.
    pub async fn term_stats(
        &self,
        text: &str,
        cap: i64,
        scope: &Scope,
    ) -> Result<Vec<TermStat>, StoreError> {
        let mut qb = QueryBuilder::<Postgres>::new(format!(
            "WITH t AS (SELECT DISTINCT lexeme AS term
                        FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', "
        ));
        qb.push_bind(text.to_owned()).push(")))");
        if scope.workspace_restriction().is_none() {
            qb.push(
                ", mce AS (
                   SELECT e.term, e.freq::float8 AS freq
                   FROM pg_stats s,
                        unnest(s.most_common_elems::text::text[],
                               s.most_common_elem_freqs[1:cardinality(s.most_common_elems::text::text[])])
                          AS e(term, freq)
                   WHERE s.schemaname = current_schema() AND s.tablename = 'codebase_index'
                     AND s.attname = 'lexemes')
                 SELECT t.term, mce.freq::float4 AS freq,
                   CASE WHEN mce.freq IS NULL THEN
                     (SELECT count(*) FROM (SELECT 1 FROM codebase_index c
                        WHERE c.lexemes @@ quote_literal(t.term)::tsquery LIMIT ",
            )
            .push_bind(cap)
            .push(") s) END AS df FROM t LEFT JOIN mce USING (term) ORDER BY t.term");
        } else {
            qb.push(
                " SELECT t.term, NULL::float4 AS freq,
                   (SELECT count(*) FROM (SELECT 1 FROM codebase_index c
                      WHERE c.lexemes @@ quote_literal(t.term)::tsquery
                        AND c.workspace = ",
            )
            .push_bind(scope.workspace().to_owned())
            .push(" LIMIT ")
            .push_bind(cap)
            .push(") s) AS df FROM t ORDER BY t.term");
        }
        let rows = qb
            .build()
            .fetch_all(&self.pool)
            .await
            .map_err(q("reading term statistics"))?;
        Ok(rows
            .iter()
            .map(|r| TermStat {
                term: r.get("term"),
                frequency: r.get("freq"),
                count: r.get("df"),
            })
            .collect())
    }

    /// The planner's estimate of the chunk count of the whole table (kept by VACUUM and
    /// ANALYZE): instant. Sizes the HNSW walk, which is over the whole table.
    pub async fn chunk_count_estimate(&self) -> Result<i64, StoreError> {
        sqlx::query_scalar(
            "SELECT greatest(reltuples, 0)::int8 FROM pg_class
             WHERE oid = 'codebase_index'::regclass",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(q("estimating the chunk count"))
    }

    /// The scope's chunk count (from the files' `chunk_count`) and average lexical length:
    /// from a 1 % sample of the table's pages once that holds 1,000 of the scope's chunks,
    /// else from all of them. A full scan took 0.8 to 8 s at 1M chunks; BM25 needs only a fair
    /// estimate of the average.
    pub async fn collection_stats(&self, scope: &Scope) -> Result<CollectionStats, StoreError> {
        // Built per case: with generic plans, `$1 IS NULL OR ...` would never use an index.
        let in_workspace = |qb: &mut QueryBuilder<'_, Postgres>| {
            if let Some(w) = scope.workspace_restriction() {
                qb.push(" AND workspace = ").push_bind(w.to_owned());
            }
        };
        let mut qb = QueryBuilder::<Postgres>::new(
            "WITH s AS (SELECT avg(lexical_length) AS avg_length, count(*) AS n
                        FROM codebase_index TABLESAMPLE SYSTEM (1) WHERE lexemes IS NOT NULL",
        );
        in_workspace(&mut qb);
        qb.push(") SELECT (SELECT coalesce(sum(chunk_count), 0) FROM indexed_files WHERE TRUE");
        if let Some(r) = scope.restriction() {
            qb.push(" AND repository = ANY(")
                .push_bind(r.to_vec())
                .push(")");
        }
        qb.push(
            ")::int8 AS chunks,
                    coalesce(CASE WHEN s.n >= 1000 THEN s.avg_length
                                  ELSE (SELECT avg(lexical_length) FROM codebase_index
                                        WHERE lexemes IS NOT NULL",
        );
        in_workspace(&mut qb);
        qb.push(") END, 0)::float8 AS avg_length FROM s");
        let row = qb
            .build()
            .fetch_one(&self.pool)
            .await
            .map_err(q("reading collection statistics"))?;
        Ok(CollectionStats {
            chunks: row.get("chunks"),
            avg_length: row.get("avg_length"),
        })
    }

    /// The scope's chunk count, from the files' `chunk_count` (callers cache it per scope
    /// fingerprint).
    pub async fn scope_chunks(&self, scope: &Scope) -> Result<i64, StoreError> {
        self.chunks_in_files(scope.restriction()).await
    }

    /// The lexemes of each of `words` under the file postings' configuration (each word
    /// separately, as files' words are: a stop word has none), each with the number of the
    /// scope's files holding it: the sum of its repositories' counts in `repo_terms`, an
    /// index-only scan of the primary key (migration 0015). Rows: (word, lexeme, files); a
    /// word with no lexeme is left out.
    pub async fn file_term_counts(
        &self,
        words: &[String],
        scope: &Scope,
    ) -> Result<Vec<(String, String, i64)>, StoreError> {
        let mut qb = QueryBuilder::<Postgres>::new(
            "SELECT w.word, t.lexeme,
               (SELECT coalesce(sum(r.files), 0) FROM repo_terms r WHERE r.term = t.lexeme",
        );
        if let Some(repositories) = scope.restriction() {
            qb.push(" AND r.repository = ANY(")
                .push_bind(repositories.to_vec())
                .push(")");
        }
        qb.push(")::int8 AS files FROM unnest(")
            .push_bind(words.to_vec())
            .push(format!(
                "::text[]) AS w(word)
                 CROSS JOIN LATERAL unnest(to_tsvector('{FILE_TEXT_SEARCH_CONFIG}', w.word)) t"
            ));
        let rows = qb
            .build()
            .fetch_all(&self.pool)
            .await
            .map_err(q("counting the query terms' files"))?;
        Ok(rows
            .iter()
            .map(|r| (r.get("word"), r.get("lexeme"), r.get("files")))
            .collect())
    }

    /// The scope's file count (callers cache it per scope fingerprint).
    pub async fn file_stats(&self, scope: &Scope) -> Result<FileStats, StoreError> {
        let mut qb =
            QueryBuilder::<Postgres>::new("SELECT count(*) FROM indexed_files WHERE error IS NULL");
        if let Some(r) = scope.restriction() {
            qb.push(" AND repository = ANY(")
                .push_bind(r.to_vec())
                .push(")");
        }
        let files: i64 = qb
            .build_query_scalar()
            .fetch_one(&self.pool)
            .await
            .map_err(q("counting files"))?;
        Ok(FileStats { files })
    }
}
