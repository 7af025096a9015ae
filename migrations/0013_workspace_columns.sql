-- Each chunk and each file posting carries its repository's workspace, so that a search in
-- one workspace walks that workspace's rows only: the file postings through an index led by
-- the workspace, the vectors through a partial HNSW index per workspace once the database
-- holds several (src/store/upkeep.rs). Before this, a workspace that was not the whole
-- database was a filter of its repositories' names, and a search in it walked the other
-- workspaces' postings and vectors too (2x the latency of the same search over a
-- one-workspace install, docs/BENCHMARKS.md). Kept equal to `repositories.workspace` by the
-- writers and by `claim_repository` when a repository changes workspace.
ALTER TABLE codebase_index ADD COLUMN IF NOT EXISTS workspace TEXT NOT NULL DEFAULT 'default';
ALTER TABLE file_terms ADD COLUMN IF NOT EXISTS workspace TEXT NOT NULL DEFAULT 'default';

UPDATE codebase_index c SET workspace = r.workspace
FROM repositories r
WHERE r.name = c.repository AND r.workspace <> 'default';

UPDATE file_terms p SET workspace = r.workspace
FROM indexed_files f JOIN repositories r ON r.name = f.repository
WHERE f.id = p.file_id AND r.workspace <> 'default';

-- A term's best postings within one workspace. Replaces the index on (term, impact): every
-- file query names its workspace (a one-workspace install names the only one).
CREATE INDEX IF NOT EXISTS idx_file_terms_workspace_term_impact
  ON file_terms (workspace, term, impact DESC) INCLUDE (file_id);
DROP INDEX IF EXISTS idx_file_terms_term_impact;
