-- Lexical search: the words of each chunk as code search sees them (identifiers split and
-- kept whole, the path and symbol counted twice), stemmed by the `english` configuration.
-- Written by the indexer with each chunk; ranked with BM25 at query time.
ALTER TABLE codebase_index
  ADD COLUMN IF NOT EXISTS lexemes tsvector,
  -- Number of words the chunk's lexical text had: BM25's document length.
  ADD COLUMN IF NOT EXISTS lexical_length INTEGER;

CREATE INDEX IF NOT EXISTS idx_codebase_index_lexemes ON codebase_index USING gin (lexemes);
CREATE INDEX IF NOT EXISTS idx_codebase_index_language ON codebase_index (language);
CREATE INDEX IF NOT EXISTS idx_codebase_index_component_type ON codebase_index (component_type);

-- Bumped by every write to the index, in the same transaction: a cached search result is
-- valid while the generation it was computed at is still the current one.
CREATE TABLE IF NOT EXISTS index_generation (
  id BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (id),
  generation BIGINT NOT NULL
);
INSERT INTO index_generation (id, generation) VALUES (TRUE, 0) ON CONFLICT (id) DO NOTHING;
