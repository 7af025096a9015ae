-- File-level lexical search: the words of a whole file (path counted twice), so a query whose
-- words are spread over several functions of one file still finds the file.
ALTER TABLE indexed_files
  ADD COLUMN IF NOT EXISTS lexemes tsvector,
  ADD COLUMN IF NOT EXISTS lexical_length INTEGER;

CREATE INDEX IF NOT EXISTS idx_indexed_files_lexemes ON indexed_files USING gin (lexemes);
