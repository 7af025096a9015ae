-- What the product needs beyond the baseline, added without breaking its columns.

ALTER TABLE codebase_index
  ADD COLUMN IF NOT EXISTS repository TEXT NOT NULL DEFAULT '',
  ADD COLUMN IF NOT EXISTS language TEXT,
  ADD COLUMN IF NOT EXISTS start_line INTEGER,
  ADD COLUMN IF NOT EXISTS end_line INTEGER,
  ADD COLUMN IF NOT EXISTS symbol TEXT,
  ADD COLUMN IF NOT EXISTS chunk_kind TEXT,
  -- sha256 of the exact text given to the embedding model: the key for reusing vectors.
  ADD COLUMN IF NOT EXISTS content_hash TEXT,
  -- The model that made `embedding` (e.g. 'ollama/nomic-embed-text', 'local/all-MiniLM-L6-v2')
  -- and its native dimension. Vectors of models with fewer than 768 dimensions are stored
  -- zero-padded to 768, which leaves cosine distances unchanged; searches only ever compare
  -- vectors of one model.
  ADD COLUMN IF NOT EXISTS embedding_model TEXT,
  ADD COLUMN IF NOT EXISTS embedding_dim INTEGER;

-- Keep vectors in the row, uncompressed: exact scans must not detoast every row.
ALTER TABLE codebase_index ALTER COLUMN embedding SET STORAGE PLAIN;

-- Several repositories may hold the same relative path.
ALTER TABLE codebase_index DROP CONSTRAINT IF EXISTS codebase_index_file_path_chunk_index_key;
ALTER TABLE codebase_index
  ADD CONSTRAINT codebase_index_repo_path_chunk_key UNIQUE (repository, file_path, chunk_index);

CREATE INDEX IF NOT EXISTS idx_codebase_index_content_hash
  ON codebase_index (embedding_model, content_hash);
CREATE INDEX IF NOT EXISTS idx_codebase_index_repository ON codebase_index (repository);

-- One row per file seen: the key that decides whether it must be indexed again, and the
-- reason when it could not be.
CREATE TABLE IF NOT EXISTS indexed_files (
  repository TEXT NOT NULL,
  file_path TEXT NOT NULL,
  file_hash TEXT NOT NULL,
  chunker_version INTEGER NOT NULL,
  embedding_model TEXT NOT NULL,
  chunk_count INTEGER NOT NULL DEFAULT 0,
  size_bytes BIGINT NOT NULL DEFAULT 0,
  error TEXT,
  indexed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (repository, file_path)
);

-- The roots indexed, by repository name.
CREATE TABLE IF NOT EXISTS repositories (
  name TEXT PRIMARY KEY,
  root_path TEXT NOT NULL,
  last_indexed TIMESTAMPTZ
);
