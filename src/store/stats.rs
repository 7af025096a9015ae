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
    /// How many of the text's words gave it.
    pub occurrences: i32,
}

/// Chunks whose lengths [`Store::collection_stats`] averages: samples of 3,000 at 100k chunks
/// were within 2.5 % of the whole's average.
const LENGTH_SAMPLE_ROWS: i64 = 3000;

/// The percentage of the table's pages to sample for the average length of a scope of
/// `chunks` in a table of about `table_rows`: the share that holds [`LENGTH_SAMPLE_ROWS`] of
/// the scope's chunks. `None` when that would read more rows than the scope has, which are
/// then read themselves.
fn length_sample_percent(chunks: i64, table_rows: i64) -> Option<f64> {
    let table_rows = table_rows.max(chunks);
    let read = LENGTH_SAMPLE_ROWS.saturating_mul(table_rows) / chunks.max(1);
    (read < chunks).then(|| (100.0 * LENGTH_SAMPLE_ROWS as f64 / chunks as f64).min(100.0))
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
            "WITH t AS (SELECT lexeme AS term, cardinality(positions) AS occurrences
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
                 SELECT t.term, t.occurrences, mce.freq::float4 AS freq,
                   CASE WHEN mce.freq IS NULL THEN
                     (SELECT count(*) FROM (SELECT 1 FROM codebase_index c
                        WHERE c.lexemes @@ quote_literal(t.term)::tsquery LIMIT ",
            )
            .push_bind(cap)
            .push(") s) END AS df FROM t LEFT JOIN mce USING (term) ORDER BY t.term");
        } else {
            qb.push(
                " SELECT t.term, t.occurrences, NULL::float4 AS freq,
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
                occurrences: r.get("occurrences"),
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

    /// The scope's chunk count (from the files' `chunk_count`) and average lexical length.
    /// BM25 needs only a fair estimate of the average: it is taken from a sample of the
    /// table's pages sized to hold about [`LENGTH_SAMPLE_ROWS`] of the scope's chunks, unless
    /// reading the scope's own rows (through the repository index) is cheaper, or the sample
    /// holds fewer than 1,000 of them. A full scan took 0.8 to 8 s at 1M chunks, and a fixed
    /// 1 % sample 55 ms at 1M, while at 100k it held fewer than 1,000 rows about half the time
    /// and fell back to a scan of every row: 90 to 840 ms (docs/BENCHMARKS.md).
    pub async fn collection_stats(&self, scope: &Scope) -> Result<CollectionStats, StoreError> {
        let restriction = scope.restriction();
        let chunks = self.chunks_in_files(restriction).await?;
        let table_rows = self.chunk_count_estimate().await?;
        let mut avg_length = None;
        if let Some(percent) = length_sample_percent(chunks, table_rows) {
            let mut qb = QueryBuilder::<Postgres>::new(
                "SELECT avg(lexical_length)::float8 AS avg_length, count(*) AS n
                 FROM codebase_index TABLESAMPLE SYSTEM (",
            );
            qb.push_bind(percent).push(") WHERE lexemes IS NOT NULL");
            if let Some(w) = scope.workspace_restriction() {
                qb.push(" AND workspace = ").push_bind(w.to_owned());
            }
            let row = qb
                .build()
                .fetch_one(&self.pool)
                .await
                .map_err(q("sampling the chunks' lengths"))?;
            if row.get::<i64, _>("n") >= 1000 {
                avg_length = row.get::<Option<f64>, _>("avg_length");
            }
        }
        let avg_length = match avg_length {
            Some(a) => a,
            None => {
                // Built per case: with generic plans, `$1 IS NULL OR ...` would never use an
                // index.
                let mut qb = QueryBuilder::<Postgres>::new(
                    "SELECT coalesce(avg(lexical_length), 0)::float8 FROM codebase_index
                     WHERE lexemes IS NOT NULL",
                );
                if let Some(r) = restriction {
                    qb.push(" AND repository = ANY(")
                        .push_bind(r.to_vec())
                        .push(")");
                }
                qb.build_query_scalar()
                    .fetch_one(&self.pool)
                    .await
                    .map_err(q("reading the chunks' lengths"))?
            }
        };
        Ok(CollectionStats { chunks, avg_length })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_sampled_only_where_the_sample_reads_fewer_rows_than_the_scope_has() {
        // The whole table: 3,000 of 100,000 rows, 3 %; of 1M, 0.3 %.
        let p = length_sample_percent(100_000, 100_000).expect("sampled");
        assert!((p - 3.0).abs() < 1e-9, "{p}");
        let p = length_sample_percent(1_000_000, 1_000_000).expect("sampled");
        assert!((p - 0.3).abs() < 1e-9, "{p}");
        // A small table, and a workspace of 10,000 of 1M rows (a 30 % sample would read
        // 300,000 rows): their own rows.
        assert_eq!(length_sample_percent(2_000, 2_000), None);
        assert_eq!(length_sample_percent(10_000, 1_000_000), None);
        // Half of 1M rows: 0.6 % of the table holds 3,000 of them.
        let p = length_sample_percent(500_000, 1_000_000).expect("sampled");
        assert!((p - 0.6).abs() < 1e-9, "{p}");
        // Statistics not gathered yet (an estimate of 0), and an empty scope.
        assert!(length_sample_percent(100_000, 0).is_some());
        assert_eq!(length_sample_percent(0, 0), None);
    }
}
