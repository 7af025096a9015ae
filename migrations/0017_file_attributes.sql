-- A file's module and component type (from `index.module_rules` and `index.component_rules`,
-- functions of its path, the same for all its chunks) on its `indexed_files` row, as its
-- language already is: a file-level search filtered by module or component type checks the
-- row instead of probing the file's chunks for every posting it walks (120 to 320 ms a search
-- under `modules: ["tests"]` at 100k chunks). `attributes_recorded` is false for rows written
-- before this migration that have no chunks to copy them from: those are still checked
-- through their chunks.
ALTER TABLE indexed_files
  ADD COLUMN IF NOT EXISTS module text,
  ADD COLUMN IF NOT EXISTS component_type text,
  ADD COLUMN IF NOT EXISTS attributes_recorded boolean NOT NULL DEFAULT false;

UPDATE indexed_files f
   SET module = x.module, component_type = x.component_type, attributes_recorded = true
  FROM (SELECT DISTINCT ON (repository, file_path) repository, file_path, module, component_type
          FROM codebase_index
         ORDER BY repository, file_path) x
 WHERE f.repository = x.repository AND f.file_path = x.file_path
   AND NOT f.attributes_recorded;
