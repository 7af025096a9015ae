//! Collection statistics for BM25 (term and file counts, average lengths) and the index
//! generation that cached figures are checked against.

use std::collections::BTreeMap;

use sqlx::Row;

use super::{Store, StoreError, TEXT_SEARCH_CONFIG, q};

/// How common one query term is among chunks.
#[derive(Debug, Clone, PartialEq)]
pub struct TermStat {
    pub term: String,
    /// Share of chunks containing it, when the planner's statistics know it as common.
    pub frequency: Option<f32>,
    /// Chunks containing it, counted up to the cap given, when `frequency` is unknown.
    pub count: Option<i64>,
}

/// The figures chunk-level BM25 needs about the whole collection.
#[derive(Debug, Clone, Copy)]
pub struct CollectionStats {
    pub chunks: i64,
    pub avg_length: f64,
}

/// The figures file-level BM25 needs about the whole collection: the number of files, and
/// how many files hold each of the most common terms, from the planner's statistics (a file
/// query counts the others' postings itself).
#[derive(Debug, Clone, Default)]
pub struct FileStats {
    pub files: i64,
    /// Common term -> files holding it.
    pub common: BTreeMap<String, i64>,
}

impl FileStats {
    /// The common terms a query of `words` may contain, with their file counts: those that
    /// start with one of the words' first three letters (a stem does, but for a few irregular
    /// words such as "dying" -> "die", whose terms the query then counts itself). A query
    /// passes a handful of terms to PostgreSQL instead of all 1,000.
    pub(super) fn common_for(&self, words: &str) -> (Vec<String>, Vec<i64>) {
        let mut found: BTreeMap<&str, i64> = BTreeMap::new();
        for word in words.split_whitespace() {
            let prefix: String = word.to_lowercase().chars().take(3).collect();
            let matching = self
                .common
                .range(prefix.clone()..)
                .take_while(|(term, _)| term.starts_with(&prefix));
            found.extend(matching.map(|(term, files)| (term.as_str(), *files)));
        }
        found
            .into_iter()
            .map(|(term, files)| (term.to_owned(), files))
            .unzip()
    }
}

impl Store {
    /// The distinct lexemes of `text` under the `english` configuration, with how many chunks
    /// hold each: the planner's estimate for lexemes common enough to be in `pg_stats` (kept by
    /// ANALYZE), otherwise a count of the chunks containing it, stopped at `cap`. A common word
    /// costs no more than a rare one.
    pub async fn term_stats(&self, text: &str, cap: i64) -> Result<Vec<TermStat>, StoreError> {
        let sql = format!(
            "WITH t AS (SELECT DISTINCT lexeme AS term
                        FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', $1))),
             mce AS (
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
                    WHERE c.lexemes @@ quote_literal(t.term)::tsquery LIMIT $2) s)
               END AS df
             FROM t LEFT JOIN mce USING (term) ORDER BY t.term"
        );
        let rows = sqlx::query(&sql)
            .bind(text)
            .bind(cap)
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

    /// The planner's estimate of the chunk count (kept by VACUUM and ANALYZE): instant.
    pub async fn chunk_count_estimate(&self) -> Result<i64, StoreError> {
        sqlx::query_scalar(
            "SELECT greatest(reltuples, 0)::int8 FROM pg_class
             WHERE oid = 'codebase_index'::regclass",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(q("estimating the chunk count"))
    }

    /// Chunk count (from the files' `chunk_count`) and average lexical length: from a 1 %
    /// sample of the table's pages once that holds 1,000 chunks, else from every chunk. A
    /// full scan took 0.8 to 8 s at 1M chunks; BM25 needs only a fair estimate of the average.
    pub async fn collection_stats(&self) -> Result<CollectionStats, StoreError> {
        let row = sqlx::query(
            "WITH s AS (SELECT avg(lexical_length) AS avg_length, count(*) AS n
                        FROM codebase_index TABLESAMPLE SYSTEM (1) WHERE lexemes IS NOT NULL)
             SELECT (SELECT coalesce(sum(chunk_count), 0) FROM indexed_files)::int8 AS chunks,
                    coalesce(CASE WHEN s.n >= 1000 THEN s.avg_length
                                  ELSE (SELECT avg(lexical_length) FROM codebase_index
                                        WHERE lexemes IS NOT NULL) END, 0)::float8 AS avg_length
             FROM s",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(q("reading collection statistics"))?;
        Ok(CollectionStats {
            chunks: row.get("chunks"),
            avg_length: row.get("avg_length"),
        })
    }

    /// File count and the most common terms' file counts (a full scan of `indexed_files`:
    /// callers cache it). A file has one posting per term, so a common term's share of the
    /// postings times their number is its file count.
    pub async fn file_stats(&self) -> Result<FileStats, StoreError> {
        let files: i64 =
            sqlx::query_scalar("SELECT count(*) FROM indexed_files WHERE error IS NULL")
                .fetch_one(&self.pool)
                .await
                .map_err(q("counting files"))?;
        let common: Vec<(String, i64)> = sqlx::query_as(
            "SELECT v.term, (v.freq * c.reltuples)::int8
             FROM pg_stats s JOIN pg_class c ON c.oid = 'file_terms'::regclass,
                  unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS v(term, freq)
             WHERE s.schemaname = current_schema() AND s.tablename = 'file_terms'
               AND s.attname = 'term' AND c.reltuples > 0",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading the common terms"))?;
        Ok(FileStats {
            files,
            common: common.into_iter().collect(),
        })
    }

    /// The index generation: it changes whenever any file's rows change.
    pub async fn generation(&self) -> Result<i64, StoreError> {
        sqlx::query_scalar("SELECT generation FROM index_generation")
            .fetch_one(&self.pool)
            .await
            .map_err(q("reading the index generation"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_passes_only_the_common_terms_its_words_may_stem_to() {
        let stats = FileStats {
            files: 100,
            common: [
                ("connect", 40),
                ("connector", 30),
                ("retri", 20),
                ("use", 90),
            ]
            .into_iter()
            .map(|(t, n)| (t.to_owned(), n))
            .collect(),
        };
        // "Retrying" stems to "retri"; "con" prefixes two terms, each passed once.
        let (terms, counts) = stats.common_for("Retrying connection conn");
        assert_eq!(terms, ["connect", "connector", "retri"]);
        assert_eq!(counts, [40, 30, 20]);
        assert_eq!(stats.common_for("zebra"), (Vec::new(), Vec::new()));
    }
}
