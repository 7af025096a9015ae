-- The baseline schema of DESIGN.md, names kept. Outside programs read this table.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE IF NOT EXISTS codebase_index (
  id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
  file_path TEXT NOT NULL,
  chunk_index INTEGER NOT NULL,
  chunk_content TEXT NOT NULL,
  embedding vector(768),          -- nomic-embed-text dimensions
  file_type TEXT,                 -- 'ts', 'tsx', 'graphql', 'sql', ...
  module TEXT,                    -- 'backend', 'frontend', ...
  component_type TEXT,            -- 'service', 'resolver', 'component', 'migration'
  file_hash TEXT NOT NULL,
  indexed_at TIMESTAMP DEFAULT NOW(),
  UNIQUE(file_path, chunk_index)
);

CREATE INDEX IF NOT EXISTS idx_codebase_index_file_type ON codebase_index (file_type);
CREATE INDEX IF NOT EXISTS idx_codebase_index_module ON codebase_index (module);
CREATE INDEX IF NOT EXISTS idx_codebase_index_file_path ON codebase_index (file_path);
-- The seed's ivfflat index is deliberately not created here: built on an empty table its
-- centroids are useless. Approximate indexes are built once data exists (see docs/OPERATIONS.md).
