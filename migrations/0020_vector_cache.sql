-- Vectors of chunks that left the index, kept for a while by the hash of their embedding
-- input: a branch switched away from and back, a file deleted and restored, or a directory
-- removed and cloned again would otherwise embed those chunks again (requests v2.32.0 <->
-- main: 320 to 360 of about 800 chunks at every switch, docs/BENCHMARKS.md). Written when a
-- file's chunks are replaced or a vanished file's are deleted, never when a repository is
-- removed; read with `codebase_index` when vectors are reused; trimmed by age and count after
-- each index pass (`database.vector_cache_chunks`).
CREATE TABLE IF NOT EXISTS vector_cache (
  embedding_model text NOT NULL,
  content_hash text NOT NULL,
  -- At the model's own dimensions, full precision: a reused vector is the one computed.
  embedding vector NOT NULL,
  evicted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (embedding_model, content_hash)
);
CREATE INDEX IF NOT EXISTS idx_vector_cache_evicted_at ON vector_cache (evicted_at);
