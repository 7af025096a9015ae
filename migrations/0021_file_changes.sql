-- How many of its repository's recent commits changed each file (src/scan/history.rs), a prior
-- that hybrid search adds to a file's fused score (`search.history_weight`). Written by the
-- indexer after each full reconcile; 0 for a file no counted commit changed, a root outside
-- git, and rows written before this migration until their repository's next reconcile. A
-- constant default: adding the column rewrites no row.
ALTER TABLE indexed_files ADD COLUMN IF NOT EXISTS changes real NOT NULL DEFAULT 0;
