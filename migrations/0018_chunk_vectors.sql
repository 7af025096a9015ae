-- A narrow copy of each chunk's vector, for exact scans under selective filters.
--
-- A search whose filters let at most 10,000 chunks through is scanned exactly instead of
-- walking the HNSW graph (src/store/retrieve.rs). Over `codebase_index` that reads each
-- passing row whole: about 3.1 KB (the 768-float vector stored PLAIN, the text, the lexemes),
-- two rows a page, and a key probe per file under a path filter: 12 ms for the 7,100 chunks of
-- `modules: ["tests"]` and 20-25 ms for the 7,700 of `**/tests/**` at 100k chunks. Here a row
-- is the vector in half precision at the model's own dimensions (768 bytes for a
-- 384-dimension model) beside the filter columns, about 0.9 KB, and a file's rows sit
-- together: the same searches take 7 and 10-11 ms, the 40 rows a scan keeps ordered again by
-- their full-precision distance in `codebase_index` (docs/BENCHMARKS.md).
--
-- Kept in step by triggers on `codebase_index`, whatever writes it (another daemon of an
-- older version included): rows with a vector are copied on insert and on any update, and
-- deleted with their chunk. Statement triggers, a statement's rows at once: a foreign key
-- would check and cascade row by row.
CREATE TABLE IF NOT EXISTS chunk_vectors (
  chunk_id uuid PRIMARY KEY,
  -- The file, as `chunk_file_key(repository, file_path)`: a path filter lists the matching
  -- files' keys from `indexed_files`. A 64-bit hash: a collision would only add another
  -- file's chunks as candidates, and the search checks its filters again on the rows it keeps.
  file_key bigint NOT NULL,
  repository text NOT NULL,
  workspace text NOT NULL,
  module text,
  language text,
  file_type text,
  component_type text,
  embedding_model text NOT NULL,
  embedding halfvec NOT NULL
);

CREATE OR REPLACE FUNCTION chunk_file_key(repository text, file_path text) RETURNS bigint
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT hashtextextended(file_path, hashtextextended(repository, 0)) $$;

-- The copy of a chunk row: its vector at the model's own dimensions, in half precision.
CREATE OR REPLACE FUNCTION chunk_vectors_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chunk_vectors (chunk_id, file_key, repository, workspace, module, language,
                             file_type, component_type, embedding_model, embedding)
  SELECT n.id, chunk_file_key(n.repository, n.file_path), n.repository, n.workspace, n.module,
         n.language, n.file_type, n.component_type, n.embedding_model,
         subvector(n.embedding, 1, coalesce(nullif(n.embedding_dim, 0), vector_dims(n.embedding)))::halfvec
    FROM new_chunks n
   WHERE n.embedding IS NOT NULL AND n.embedding_model IS NOT NULL;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION chunk_vectors_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM chunk_vectors v
   USING new_chunks n
   WHERE v.chunk_id = n.id AND (n.embedding IS NULL OR n.embedding_model IS NULL);
  INSERT INTO chunk_vectors (chunk_id, file_key, repository, workspace, module, language,
                             file_type, component_type, embedding_model, embedding)
  SELECT n.id, chunk_file_key(n.repository, n.file_path), n.repository, n.workspace, n.module,
         n.language, n.file_type, n.component_type, n.embedding_model,
         subvector(n.embedding, 1, coalesce(nullif(n.embedding_dim, 0), vector_dims(n.embedding)))::halfvec
    FROM new_chunks n JOIN old_chunks o ON o.id = n.id
   WHERE n.embedding IS NOT NULL AND n.embedding_model IS NOT NULL
     AND (n.embedding, n.embedding_model, n.embedding_dim, n.repository, n.file_path,
          n.workspace, n.module, n.language, n.file_type, n.component_type)
         IS DISTINCT FROM
         (o.embedding, o.embedding_model, o.embedding_dim, o.repository, o.file_path,
          o.workspace, o.module, o.language, o.file_type, o.component_type)
  ON CONFLICT (chunk_id) DO UPDATE SET
    file_key = EXCLUDED.file_key, repository = EXCLUDED.repository,
    workspace = EXCLUDED.workspace, module = EXCLUDED.module, language = EXCLUDED.language,
    file_type = EXCLUDED.file_type, component_type = EXCLUDED.component_type,
    embedding_model = EXCLUDED.embedding_model, embedding = EXCLUDED.embedding;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION chunk_vectors_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM chunk_vectors WHERE chunk_id IN (SELECT id FROM old_chunks);
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS chunk_vectors_insert ON codebase_index;
CREATE TRIGGER chunk_vectors_insert AFTER INSERT ON codebase_index
  REFERENCING NEW TABLE AS new_chunks
  FOR EACH STATEMENT EXECUTE FUNCTION chunk_vectors_insert();
DROP TRIGGER IF EXISTS chunk_vectors_update ON codebase_index;
CREATE TRIGGER chunk_vectors_update AFTER UPDATE ON codebase_index
  REFERENCING OLD TABLE AS old_chunks NEW TABLE AS new_chunks
  FOR EACH STATEMENT EXECUTE FUNCTION chunk_vectors_update();
DROP TRIGGER IF EXISTS chunk_vectors_delete ON codebase_index;
CREATE TRIGGER chunk_vectors_delete AFTER DELETE ON codebase_index
  REFERENCING OLD TABLE AS old_chunks
  FOR EACH STATEMENT EXECUTE FUNCTION chunk_vectors_delete();

-- The rows already there, each file's together (docs/BENCHMARKS.md says how long it takes).
INSERT INTO chunk_vectors (chunk_id, file_key, repository, workspace, module, language,
                           file_type, component_type, embedding_model, embedding)
SELECT id, chunk_file_key(repository, file_path), repository, workspace, module, language,
       file_type, component_type, embedding_model,
       subvector(embedding, 1, coalesce(nullif(embedding_dim, 0), vector_dims(embedding)))::halfvec
  FROM codebase_index
 WHERE embedding IS NOT NULL AND embedding_model IS NOT NULL
 ORDER BY repository, file_path, chunk_index
ON CONFLICT (chunk_id) DO NOTHING;

-- The filters an exact scan reads through.
CREATE INDEX IF NOT EXISTS idx_chunk_vectors_file_key ON chunk_vectors (file_key);
CREATE INDEX IF NOT EXISTS idx_chunk_vectors_repository ON chunk_vectors (repository);
CREATE INDEX IF NOT EXISTS idx_chunk_vectors_workspace ON chunk_vectors (workspace);
CREATE INDEX IF NOT EXISTS idx_chunk_vectors_module ON chunk_vectors (module);
CREATE INDEX IF NOT EXISTS idx_chunk_vectors_language ON chunk_vectors (language);
CREATE INDEX IF NOT EXISTS idx_chunk_vectors_file_type ON chunk_vectors (file_type);
CREATE INDEX IF NOT EXISTS idx_chunk_vectors_component_type ON chunk_vectors (component_type);

-- A path filter lists the files whose path matches its regular expression: the count that
-- chooses an exact scan, the scan itself, and the file-level lexical list each match it over
-- the files' rows (4 ms for the 6,650 files of 100k chunks). A trigram index (pg_trgm, a
-- contrib extension that PostgreSQL trusts any database owner to create) narrows that to the
-- rows holding the expression's literal text: 2 ms.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX IF NOT EXISTS idx_indexed_files_path_trgm
  ON indexed_files USING gin (file_path gin_trgm_ops);
