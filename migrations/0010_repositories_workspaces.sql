-- Repositories as records of their own, each in one workspace (tenant).
--
-- `repositories.name` stays the key the chunks are stored under (`codebase_index.repository`,
-- `indexed_files.repository`), unique across the database. What is new:
-- - a stable `id`, the `workspace` the repository belongs to, where it came from (`origin`:
--   'local' for command-line and configured roots, 'request' for repositories added over NATS,
--   which the daemon restores at start-up; `git_url` for cloned ones), its `state`
--   (initializing | indexing | ready | failed, with `state_error`), and a `generation` bumped
--   by every write to its rows: a cached search of a workspace is valid while the generations
--   of its repositories are unchanged, so writes to one workspace never invalidate another's.
ALTER TABLE repositories
  ADD COLUMN IF NOT EXISTS id BIGINT GENERATED ALWAYS AS IDENTITY,
  ADD COLUMN IF NOT EXISTS workspace TEXT NOT NULL DEFAULT 'default',
  ADD COLUMN IF NOT EXISTS origin TEXT NOT NULL DEFAULT 'local',
  ADD COLUMN IF NOT EXISTS git_url TEXT,
  ADD COLUMN IF NOT EXISTS state TEXT NOT NULL DEFAULT 'ready',
  ADD COLUMN IF NOT EXISTS state_error TEXT,
  ADD COLUMN IF NOT EXISTS generation BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS created_at TIMESTAMPTZ NOT NULL DEFAULT now();
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'repositories_id_key') THEN
    ALTER TABLE repositories ADD CONSTRAINT repositories_id_key UNIQUE (id);
  END IF;
END $$;
CREATE INDEX IF NOT EXISTS idx_repositories_workspace ON repositories (workspace, name);

-- Every repository with rows has a record (an index written before repositories were recorded
-- for every pass may lack one).
INSERT INTO repositories (name, root_path)
SELECT DISTINCT repository, '' FROM indexed_files
ON CONFLICT (name) DO NOTHING;

-- Per-repository status without reading the chunks: each file's language and line count.
ALTER TABLE indexed_files
  ADD COLUMN IF NOT EXISTS language TEXT,
  ADD COLUMN IF NOT EXISTS line_count INTEGER;
UPDATE indexed_files f SET language = c.language, line_count = c.lines
FROM (SELECT repository, file_path, max(language) AS language, max(end_line) AS lines
      FROM codebase_index GROUP BY repository, file_path) c
WHERE c.repository = f.repository AND c.file_path = f.file_path AND f.language IS NULL;

-- File-level BM25 document frequencies, per repository: how many of the repository's files
-- hold each term. A search sums them over the repositories of its workspace, so a term's
-- weight in one workspace never depends on another's files (the planner's statistics of
-- `file_terms`, used before, were a sample of every workspace at once). Maintained in the
-- same transaction as the postings (src/store/files.rs).
CREATE TABLE IF NOT EXISTS repo_terms (
  repository TEXT NOT NULL,
  term TEXT NOT NULL,
  files INTEGER NOT NULL,
  -- A query looks a term up in the repositories of its workspace.
  PRIMARY KEY (term, repository)
);
INSERT INTO repo_terms (repository, term, files)
SELECT f.repository, p.term, count(*)
FROM file_terms p JOIN indexed_files f ON f.id = p.file_id
GROUP BY f.repository, p.term
ON CONFLICT DO NOTHING;

-- `index_generation` (migration 0003) is no longer written: the repositories' generations
-- replace it. The table is kept for programs that may read it.
