-- Chunks are stored even when their vector cannot be computed yet (the embedder is down or
-- paused): `embedding` is NULL and the daemon's backfill fills it when the embedder answers.
-- An input the model itself rejects is recorded here instead of failing its neighbours; the
-- backfill tries it again after a while (the model may be replaced or fixed).
ALTER TABLE codebase_index
  ADD COLUMN IF NOT EXISTS embed_error TEXT,
  ADD COLUMN IF NOT EXISTS embed_failed_at TIMESTAMPTZ;

-- The backfill's scan: only rows without a vector, which are few.
CREATE INDEX IF NOT EXISTS idx_codebase_index_pending
  ON codebase_index (embed_failed_at NULLS FIRST) WHERE embedding IS NULL;
