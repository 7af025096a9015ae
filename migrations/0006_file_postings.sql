-- File-level lexical search through an inverted index instead of whole-file tsvectors.
--
-- Scoring a file with `ts_rank_cd` meant decompressing its whole tsvector (kilobytes, out of
-- line) for every candidate of every query: tens of milliseconds at a few thousand files, and
-- linear in the candidates. A posting per (file, term) with the term's BM25 weight in that
-- file, precomputed at write time, lets a query read only the best postings of each of its
-- terms from a B-tree, whatever the size of the index.
ALTER TABLE indexed_files ADD COLUMN IF NOT EXISTS id BIGINT GENERATED ALWAYS AS IDENTITY;
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'indexed_files_id_key') THEN
    ALTER TABLE indexed_files ADD CONSTRAINT indexed_files_id_key UNIQUE (id);
  END IF;
END $$;

CREATE TABLE IF NOT EXISTS file_terms (
  -- `indexed_files.id`. No foreign key: its check, a trigger per posting, doubled the cost
  -- of writing a file. The store deletes a file's postings with the file.
  file_id BIGINT NOT NULL,
  -- A lexeme of the `english` text search configuration, as in `codebase_index.lexemes`.
  term TEXT NOT NULL,
  -- The term's BM25 weight in the file without its idf:
  -- tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / reference_length)), with k1 = 1.2,
  -- b = 0.75 and a fixed reference length of 1000 words (see src/store/mod.rs).
  impact REAL NOT NULL,
  -- Serves deleting one file's postings.
  PRIMARY KEY (file_id, term)
);
-- Serves a query: a term's postings, best first.
CREATE INDEX IF NOT EXISTS idx_file_terms_term_impact
  ON file_terms (term, impact DESC) INCLUDE (file_id);

-- Existing files keep their lexical index.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns
             WHERE table_name = 'indexed_files' AND column_name = 'lexemes'
               AND table_schema = current_schema()) THEN
    INSERT INTO file_terms (file_id, term, impact)
    SELECT f.id, t.lexeme,
           cardinality(t.positions) * 2.2
             / (cardinality(t.positions)
                + 1.2 * (0.25 + 0.75 * coalesce(f.lexical_length, 0) / 1000.0))
    FROM indexed_files f, unnest(f.lexemes) t
    WHERE f.lexemes IS NOT NULL
    ON CONFLICT DO NOTHING;
  END IF;
END $$;

DROP INDEX IF EXISTS idx_indexed_files_lexemes;
ALTER TABLE indexed_files DROP COLUMN IF EXISTS lexemes;
