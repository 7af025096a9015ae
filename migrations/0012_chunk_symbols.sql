-- The qualified names of every definition a chunk holds, as written, when it holds several:
-- small neighbouring definitions are merged into one chunk, and `symbol` names only the
-- first. NULL for a chunk of one definition (or none). Chunker version 9 re-processes every
-- file on the next pass to fill it (vectors are reused).
ALTER TABLE codebase_index ADD COLUMN IF NOT EXISTS symbols text[];
