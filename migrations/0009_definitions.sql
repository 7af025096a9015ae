-- The definitions that start in each chunk, keyed by every suffix of their qualified name,
-- lower-cased (`stack.push`, `push`; crate::search::definition_keys). A query that names an
-- identifier (`max_frame_length`, `CancellationToken::child_token`) finds the chunk that
-- defines it, not only the files that mention it most. NULL until the file is chunked again
-- (chunker version 4 re-processes every file on the next pass; vectors are reused).
ALTER TABLE codebase_index ADD COLUMN IF NOT EXISTS defines text[];
CREATE INDEX IF NOT EXISTS idx_codebase_index_defines ON codebase_index USING gin (defines);
