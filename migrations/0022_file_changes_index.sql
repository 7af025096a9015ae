-- Search keeps each workspace's change counts (migration 0021) in memory and reads them again
-- after a write to the workspace: through this index, only the files that have one.
CREATE INDEX IF NOT EXISTS idx_indexed_files_changes
  ON indexed_files (repository) INCLUDE (file_path, changes) WHERE changes > 0;
