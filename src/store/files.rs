//! The write path: a file's chunks, its state and its postings, replaced in one transaction;
//! vanished files swept; vectors reused by embedding input.

use std::collections::HashMap;

use pgvector::Vector;

use crate::intel::Extraction;
use crate::text::FileTerms;
use sqlx::Row;

use super::{
    FILE_TEXT_SEARCH_CONFIG, Store, StoreError, TEXT_SEARCH_CONFIG, VECTOR_WIDTH, bump_generation,
    impact_sql, pad, q,
};

/// What a delete of chunks returns for [`CACHE_EVICTED`].
const EVICTED: &str = "embedding_model, content_hash, embedding, embedding_dim";

/// Keeps the vectors of the deleted chunks (`gone`, returning [`EVICTED`]) in `vector_cache`
/// at the model's own dimensions, once per input; ends in a `WHERE` that more conditions may
/// follow, then [`CACHE_CONFLICT`].
const CACHE_EVICTED: &str = "INSERT INTO vector_cache (embedding_model, content_hash, embedding)
     SELECT DISTINCT ON (embedding_model, content_hash) embedding_model, content_hash,
            subvector(embedding, 1, coalesce(nullif(embedding_dim, 0), vector_dims(embedding)))
       FROM gone
      WHERE embedding IS NOT NULL AND embedding_model IS NOT NULL AND content_hash IS NOT NULL";

/// A vector evicted again is kept longer, but rewritten at most once a day: a branch switched
/// back and forth would otherwise write every one of its rows anew at each switch.
const CACHE_CONFLICT: &str = "ON CONFLICT (embedding_model, content_hash)
     DO UPDATE SET evicted_at = now() WHERE vector_cache.evicted_at < now() - interval '1 day'";

fn file_state(r: sqlx::postgres::PgRow) -> (String, FileState) {
    (
        r.get("file_path"),
        FileState {
            file_hash: r.get("file_hash"),
            chunker_version: r.get("chunker_version"),
            embedding_model: r.get("embedding_model"),
            error: r.get("error"),
            module: r.get("module"),
            component_type: r.get("component_type"),
        },
    )
}

/// The recorded state of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    pub file_hash: String,
    pub chunker_version: i32,
    pub embedding_model: String,
    pub error: Option<String>,
    /// What `index.module_rules` and `index.component_rules` said of its path when it was
    /// written.
    pub module: Option<String>,
    pub component_type: Option<String>,
}

/// One chunk as stored.
#[derive(Debug, Clone)]
pub struct ChunkRow {
    pub chunk_index: i32,
    pub content: String,
    pub start_line: i32,
    pub end_line: i32,
    pub symbol: Option<String>,
    pub kind: String,
    pub content_hash: String,
    /// `None` while the vector is pending (the embedder was unavailable).
    pub embedding: Option<Vec<f32>>,
    /// Why the model refused this chunk's input, when it did.
    pub embed_error: Option<String>,
    /// The chunk's words for lexical search (see [`crate::text::lexical_text`]).
    pub lexical: String,
    /// How many words `lexical` has: BM25's document length.
    pub lexical_length: i32,
    /// Keys of the definitions that start in the chunk ([`crate::text::definition_keys`]).
    pub defines: Vec<String>,
    /// The qualified names of the definitions that start in the chunk, in file order, when
    /// there are several (small definitions merged); empty otherwise.
    pub symbols: Vec<String>,
}

/// A file and its chunks, to be written in one transaction.
#[derive(Debug, Clone)]
pub struct FileWrite<'a> {
    pub repository: &'a str,
    pub file_path: &'a str,
    pub file_hash: &'a str,
    pub file_type: &'a str,
    pub language: &'a str,
    pub module: Option<&'a str>,
    pub component_type: Option<&'a str>,
    pub size_bytes: i64,
    /// Lines in the file.
    pub line_count: i32,
    pub chunker_version: i32,
    pub embedding_model: &'a str,
    pub embedding_dim: i32,
    pub chunks: &'a [ChunkRow],
    /// The whole file's words for file-level lexical search, counted.
    pub terms: &'a FileTerms,
    /// What the file's code defines, calls and imports.
    pub intel: &'a Extraction,
}

/// No words: a skipped file's record.
/// The workspace of the repository named by the statement's parameter `param`, as the rows'
/// `workspace` column records it (migration 0013); `default` for a repository not recorded.
fn workspace_of(param: &str) -> String {
    format!("coalesce((SELECT workspace FROM repositories WHERE name = {param}), 'default')")
}

const NO_TERMS: FileTerms = FileTerms {
    words: Vec::new(),
    counts: Vec::new(),
    length: 0,
};

/// Nothing extracted: a skipped file's record.
const NO_INTEL: &Extraction = &Extraction {
    definitions: Vec::new(),
    references: Vec::new(),
    imports: Vec::new(),
    members: Vec::new(),
};

impl Store {
    /// The state of every file recorded for `repository`.
    pub async fn file_states(
        &self,
        repository: &str,
    ) -> Result<HashMap<String, FileState>, StoreError> {
        let rows = sqlx::query(
            "SELECT file_path, file_hash, chunker_version, embedding_model, error, module,
                    component_type
             FROM indexed_files WHERE repository = $1",
        )
        .bind(repository)
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading file states"))?;
        Ok(rows.into_iter().map(file_state).collect())
    }

    /// The recorded state of the given files and of every file under the given directories.
    pub async fn file_states_under(
        &self,
        repository: &str,
        paths: &[String],
    ) -> Result<HashMap<String, FileState>, StoreError> {
        let prefixes: Vec<String> = paths.iter().map(|p| format!("{p}/")).collect();
        let rows = sqlx::query(
            "SELECT file_path, file_hash, chunker_version, embedding_model, error, module,
                    component_type
             FROM indexed_files
             WHERE repository = $1
               AND (file_path = ANY($2)
                    OR EXISTS (SELECT 1 FROM unnest($3::text[]) p WHERE starts_with(file_path, p)))",
        )
        .bind(repository)
        .bind(paths)
        .bind(&prefixes)
        .fetch_all(&self.pool)
        .await
        .map_err(q("reading file states"))?;
        Ok(rows.into_iter().map(file_state).collect())
    }

    /// `delete` (of `codebase_index` rows), keeping the deleted vectors in `vector_cache` unless
    /// it is off; `keep` adds conditions on which (`AND content_hash <> ALL($3) ...`).
    fn evicting(&self, delete: &str, keep: &str) -> String {
        if self.vector_cache_chunks == 0 {
            return delete.to_owned();
        }
        format!(
            "WITH gone AS ({delete} RETURNING {EVICTED}) {CACHE_EVICTED} {keep} {CACHE_CONFLICT}"
        )
    }

    /// Vectors already computed by `model` for these embedding-input hashes.
    pub async fn reusable_vectors(
        &self,
        model: &str,
        content_hashes: &[String],
    ) -> Result<HashMap<String, Vec<f32>>, StoreError> {
        if content_hashes.is_empty() {
            return Ok(HashMap::new());
        }
        // The index first, then vectors of chunks that left it ([`Store::trim_vector_cache`]).
        let rows = sqlx::query(
            "SELECT DISTINCT ON (content_hash) content_hash, embedding, embedding_dim
             FROM (SELECT content_hash, embedding, embedding_dim, 0 AS source
                     FROM codebase_index
                    WHERE embedding_model = $1 AND content_hash = ANY($2)
                      AND embedding IS NOT NULL
                   UNION ALL
                   SELECT content_hash, embedding, vector_dims(embedding), 1
                     FROM vector_cache
                    WHERE embedding_model = $1 AND content_hash = ANY($2)) v
             ORDER BY content_hash, source",
        )
        .bind(model)
        .bind(content_hashes)
        .fetch_all(&self.pool)
        .await
        .map_err(q("looking up reusable vectors"))?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let dim: Option<i32> = r.get("embedding_dim");
                let v: Vector = r.get("embedding");
                let mut v = v.to_vec();
                v.truncate(dim.map_or(VECTOR_WIDTH, |d| d as usize));
                (r.get("content_hash"), v)
            })
            .collect())
    }

    /// Replaces all chunks of one file and records its state, in one transaction.
    pub async fn replace_file(&self, f: &FileWrite<'_>) -> Result<(), StoreError> {
        if f.embedding_dim as usize > VECTOR_WIDTH {
            return Err(StoreError::TooWide {
                model: f.embedding_model.to_owned(),
                dimension: f.embedding_dim as usize,
            });
        }
        self.write_file(f, None).await?;
        self.trim_vector_cache_if_due().await;
        Ok(())
    }

    /// Records files' modules and component types anew, their content unchanged: the rules
    /// (`index.module_rules`, `index.component_rules`) now say otherwise of their paths.
    /// `(path, module, component type)` each. Their chunks (and their narrow copies, by
    /// trigger) and their recorded states change together, in one transaction (a rule change
    /// over a large repository was a transaction per file), and cached results of the
    /// repository are dropped.
    pub async fn reclassify_files(
        &self,
        repository: &str,
        files: &[(String, Option<String>, Option<String>)],
    ) -> Result<(), StoreError> {
        if files.is_empty() {
            return Ok(());
        }
        let paths: Vec<&str> = files.iter().map(|(p, ..)| p.as_str()).collect();
        let modules: Vec<Option<&str>> = files.iter().map(|(_, m, _)| m.as_deref()).collect();
        let types: Vec<Option<&str>> = files.iter().map(|(.., t)| t.as_deref()).collect();
        let mut tx = self.begin_derived().await?;
        for table in ["codebase_index", "indexed_files"] {
            let recorded = if table == "indexed_files" {
                ", attributes_recorded = true"
            } else {
                ""
            };
            sqlx::query(&format!(
                "UPDATE {table} t SET module = u.module, component_type = u.component_type{recorded}
                 FROM unnest($2::text[], $3::text[], $4::text[]) AS u(file_path, module, component_type)
                 WHERE t.repository = $1 AND t.file_path = u.file_path"
            ))
            .bind(repository)
            .bind(&paths)
            .bind(&modules)
            .bind(&types)
            .execute(&mut *tx)
            .await
            .map_err(q("recording files' modules and component types"))?;
        }
        bump_generation(&mut tx, repository).await?;
        tx.commit()
            .await
            .map_err(q("committing files' modules and component types"))
    }

    /// Records that a file cannot be indexed (binary, too large, ...) and drops its chunks,
    /// so a stale version is not served.
    ///
    /// `file_hash` is the content's hash when the failure is the content's own (the database
    /// refused its rows): the file is then unchanged for later passes, and skipped until it
    /// changes. Empty for reasons checked again at every pass (binary, too large, ...).
    pub async fn record_skip(
        &self,
        repository: &str,
        file_path: &str,
        file_hash: &str,
        chunker_version: i32,
        embedding_model: &str,
        error: &str,
    ) -> Result<(), StoreError> {
        let skipped = FileWrite {
            repository,
            file_path,
            file_hash,
            file_type: "",
            language: "",
            module: None,
            component_type: None,
            size_bytes: 0,
            line_count: 0,
            chunker_version,
            embedding_model,
            embedding_dim: 0,
            chunks: &[],
            terms: &NO_TERMS,
            intel: NO_INTEL,
        };
        self.write_file(&skipped, Some(error)).await
    }

    /// A transaction for rows derived from a file on disk. A crash may lose the last few
    /// commits whole (never part of one): the file's recorded state is then the previous one,
    /// and the next reconcile does its work again. Not waiting for the WAL flush makes a cold
    /// index markedly faster.
    async fn begin_derived(
        &self,
    ) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, StoreError> {
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(q("starting a transaction"))?;
        sqlx::query("SET LOCAL synchronous_commit = off")
            .execute(&mut *tx)
            .await
            .map_err(q("starting a transaction"))?;
        Ok(tx)
    }

    /// The one writer of a file: delete its rows, insert its chunks, upsert its state.
    async fn write_file(&self, f: &FileWrite<'_>, error: Option<&str>) -> Result<(), StoreError> {
        let mut tx = self.begin_derived().await?;
        // The old chunks' vectors that the new ones do not carry over go to the cache: all of
        // them when the model changed (back to it, nothing is embedded again).
        let sql = self.evicting(
            "DELETE FROM codebase_index WHERE repository = $1 AND file_path = $2",
            "AND (content_hash <> ALL($3) OR embedding_model <> $4)",
        );
        let delete = sqlx::query(&sql).bind(f.repository).bind(f.file_path);
        let kept: Vec<&str> = f.chunks.iter().map(|c| c.content_hash.as_str()).collect();
        let delete = if self.vector_cache_chunks > 0 {
            delete.bind(&kept).bind(f.embedding_model)
        } else {
            delete
        };
        delete
            .execute(&mut *tx)
            .await
            .map_err(q("deleting a file's old chunks"))?;
        // One statement whatever the number of chunks: the columns as arrays, so the plan
        // is prepared once per connection instead of once per distinct row count.
        let chunks = f.chunks;
        sqlx::query(&format!(
            "INSERT INTO codebase_index (repository, file_path, chunk_index, chunk_content,
               embedding, file_type, module, component_type, file_hash, language, start_line,
               end_line, symbol, chunk_kind, content_hash, embedding_model, embedding_dim,
               embed_error, embed_failed_at, lexemes, lexical_length, defines, symbols,
               workspace)
             SELECT $1, $2, c.chunk_index, c.content, c.embedding, $3, $4, $5, $6, $7,
               c.start_line, c.end_line, c.symbol, c.kind, c.content_hash,
               CASE WHEN c.embedding IS NOT NULL THEN $8 END,
               CASE WHEN c.embedding IS NOT NULL THEN $9 END,
               c.embed_error, CASE WHEN c.embed_error IS NOT NULL THEN now() END,
               to_tsvector('{TEXT_SEARCH_CONFIG}', c.lexical), c.lexical_length,
               nullif(string_to_array(c.defines, ' '), '{{}}'),
               string_to_array(nullif(c.symbols, ''), chr(31)), {}
             FROM unnest($10::int4[], $11::text[], $12::vector[], $13::int4[], $14::int4[],
                         $15::text[], $16::text[], $17::text[], $18::text[], $19::text[],
                         $20::int4[], $21::text[], $22::text[])
               AS c(chunk_index, content, embedding, start_line, end_line, symbol, kind,
                    content_hash, embed_error, lexical, lexical_length, defines, symbols)",
            workspace_of("$1")
        ))
        .bind(f.repository)
        .bind(f.file_path)
        .bind(f.file_type)
        .bind(f.module)
        .bind(f.component_type)
        .bind(f.file_hash)
        .bind(f.language)
        .bind(f.embedding_model)
        .bind(f.embedding_dim)
        .bind(chunks.iter().map(|c| c.chunk_index).collect::<Vec<_>>())
        .bind(
            chunks
                .iter()
                .map(|c| c.content.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            chunks
                .iter()
                .map(|c| c.embedding.as_deref().map(pad))
                .collect::<Vec<_>>(),
        )
        .bind(chunks.iter().map(|c| c.start_line).collect::<Vec<_>>())
        .bind(chunks.iter().map(|c| c.end_line).collect::<Vec<_>>())
        .bind(
            chunks
                .iter()
                .map(|c| c.symbol.as_deref())
                .collect::<Vec<_>>(),
        )
        .bind(chunks.iter().map(|c| c.kind.as_str()).collect::<Vec<_>>())
        .bind(
            chunks
                .iter()
                .map(|c| c.content_hash.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            chunks
                .iter()
                .map(|c| c.embed_error.as_deref())
                .collect::<Vec<_>>(),
        )
        .bind(
            chunks
                .iter()
                .map(|c| c.lexical.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(chunks.iter().map(|c| c.lexical_length).collect::<Vec<_>>())
        // Arrays of arrays must be rectangular: each chunk's keys travel as one string (a
        // key never holds a space).
        .bind(
            chunks
                .iter()
                .map(|c| c.defines.join(" "))
                .collect::<Vec<_>>(),
        )
        .bind(
            chunks
                .iter()
                .map(|c| super::unit_joined(&c.symbols))
                .collect::<Vec<_>>(),
        )
        .execute(&mut *tx)
        .await
        .map_err(q("inserting chunks"))?;
        let file_id: i64 = sqlx::query_scalar(
            "INSERT INTO indexed_files (repository, file_path, file_hash, chunker_version,
               embedding_model, chunk_count, size_bytes, error, indexed_at, lexical_length,
               language, line_count, module, component_type, attributes_recorded)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now(), $9, nullif($10, ''), $11, $12, $13,
                     true)
             ON CONFLICT (repository, file_path) DO UPDATE SET
               file_hash = EXCLUDED.file_hash, chunker_version = EXCLUDED.chunker_version,
               embedding_model = EXCLUDED.embedding_model, chunk_count = EXCLUDED.chunk_count,
               size_bytes = EXCLUDED.size_bytes, error = EXCLUDED.error, indexed_at = now(),
               lexical_length = EXCLUDED.lexical_length, language = EXCLUDED.language,
               line_count = EXCLUDED.line_count, module = EXCLUDED.module,
               component_type = EXCLUDED.component_type, attributes_recorded = true
             RETURNING id",
        )
        .bind(f.repository)
        .bind(f.file_path)
        .bind(f.file_hash)
        .bind(f.chunker_version)
        .bind(f.embedding_model)
        .bind(f.chunks.len() as i32)
        .bind(f.size_bytes)
        .bind(error)
        .bind(f.terms.length)
        .bind(f.language)
        .bind(f.line_count)
        .bind(f.module)
        .bind(f.component_type)
        .fetch_one(&mut *tx)
        .await
        .map_err(q("recording a file"))?;
        // The file's postings and its repository's document frequencies change together: the
        // old postings' terms count -1, the new ones' +1, netted and applied in one statement in
        // term order, so concurrent writers of one repository wait for each other on a common
        // term instead of deadlocking.
        // The file's lexemes and their term frequencies: each distinct word through the text
        // search configuration (stemmed; a stop word gives none), counts summed per lexeme.
        let lexemes = format!(
            "SELECT t.lexeme AS term, sum(w.n)::int AS tf
             FROM unnest($2::text[], $3::int4[]) AS w(word, n)
             CROSS JOIN LATERAL unnest(to_tsvector('{FILE_TEXT_SEARCH_CONFIG}', w.word)) t
             GROUP BY t.lexeme"
        );
        sqlx::query(&format!(
            "WITH old AS (DELETE FROM file_terms WHERE file_id = $1 RETURNING term),
                  new AS ({lexemes}),
                  delta AS (SELECT term, sum(d)::int AS d
                            FROM (SELECT term, -1 AS d FROM old
                                  UNION ALL SELECT term, 1 FROM new) x
                            GROUP BY term HAVING sum(d) <> 0)
             INSERT INTO repo_terms (repository, term, files)
             SELECT $4, term, d FROM delta ORDER BY term
             ON CONFLICT (repository, term)
               DO UPDATE SET files = repo_terms.files + EXCLUDED.files"
        ))
        .bind(file_id)
        .bind(&f.terms.words)
        .bind(&f.terms.counts)
        .bind(f.repository)
        .execute(&mut *tx)
        .await
        .map_err(q("replacing a file's postings"))?;
        if !f.terms.words.is_empty() {
            sqlx::query(&format!(
                "INSERT INTO file_terms (file_id, term, impact, workspace)
                 SELECT $1, l.term, {}, {} FROM ({lexemes}) l",
                impact_sql("l.tf", "$4"),
                workspace_of("$5")
            ))
            .bind(file_id)
            .bind(&f.terms.words)
            .bind(&f.terms.counts)
            .bind(f.terms.length)
            .bind(f.repository)
            .execute(&mut *tx)
            .await
            .map_err(q("recording a file's postings"))?;
        }
        super::symbols::replace_intel(&mut tx, file_id, f.repository, f.intel).await?;
        bump_generation(&mut tx, f.repository).await?;
        tx.commit().await.map_err(q("committing a file"))?;
        Ok(())
    }

    /// Records how many recent commits changed each file of `repository` (`changes`, by path;
    /// see [`crate::scan::history`]); its other files get 0. Only the rows whose count differs
    /// are written, in one statement; returns how many were.
    pub async fn set_file_changes(
        &self,
        repository: &str,
        changes: &HashMap<String, f32>,
    ) -> Result<u64, StoreError> {
        let (paths, counts): (Vec<&str>, Vec<f32>) =
            changes.iter().map(|(p, c)| (p.as_str(), *c)).unzip();
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(q("starting a transaction"))?;
        let done = sqlx::query(
            "UPDATE indexed_files f SET changes = n.changes
               FROM (SELECT g.file_path, coalesce(v.changes, 0) AS changes
                       FROM indexed_files g
                       LEFT JOIN unnest($2::text[], $3::real[]) AS v(file_path, changes)
                         USING (file_path)
                      WHERE g.repository = $1) n
              WHERE f.repository = $1 AND f.file_path = n.file_path AND f.changes <> n.changes",
        )
        .bind(repository)
        .bind(&paths)
        .bind(&counts)
        .execute(&mut *tx)
        .await
        .map_err(q("recording the files' changes"))?;
        if done.rows_affected() > 0 {
            bump_generation(&mut tx, repository).await?;
        }
        tx.commit()
            .await
            .map_err(q("committing the files' changes"))?;
        Ok(done.rows_affected())
    }

    /// Removes files that no longer exist, chunks and state together.
    pub async fn delete_files(
        &self,
        repository: &str,
        paths: &[String],
    ) -> Result<u64, StoreError> {
        if paths.is_empty() {
            return Ok(0);
        }
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(q("starting a transaction"))?;
        sqlx::query(&self.evicting(
            "DELETE FROM codebase_index WHERE repository = $1 AND file_path = ANY($2)",
            "",
        ))
        .bind(repository)
        .bind(paths)
        .execute(&mut *tx)
        .await
        .map_err(q("deleting vanished files' chunks"))?;
        sqlx::query(
            "WITH old AS (
               DELETE FROM file_terms WHERE file_id IN (
                 SELECT id FROM indexed_files WHERE repository = $1 AND file_path = ANY($2))
               RETURNING term)
             INSERT INTO repo_terms (repository, term, files)
             SELECT $1, term, -count(*)::int FROM old GROUP BY term ORDER BY term
             ON CONFLICT (repository, term)
               DO UPDATE SET files = repo_terms.files + EXCLUDED.files",
        )
        .bind(repository)
        .bind(paths)
        .execute(&mut *tx)
        .await
        .map_err(q("deleting vanished files' postings"))?;
        super::symbols::delete_intel(&mut tx, repository, paths).await?;
        let done =
            sqlx::query("DELETE FROM indexed_files WHERE repository = $1 AND file_path = ANY($2)")
                .bind(repository)
                .bind(paths)
                .execute(&mut *tx)
                .await
                .map_err(q("deleting vanished files"))?;
        bump_generation(&mut tx, repository).await?;
        tx.commit().await.map_err(q("committing deletions"))?;
        self.trim_vector_cache_if_due().await;
        Ok(done.rows_affected())
    }
}
