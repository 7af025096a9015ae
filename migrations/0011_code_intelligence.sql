-- Code intelligence (crate::intel): what each file defines, calls and imports, written with the
-- file's chunks in one transaction. Rows belong to `indexed_files.id`; no foreign key (as with
-- file_terms, a trigger per row would double the cost of writing a file): the writer deletes a
-- file's rows when it replaces or deletes the file. Calls are resolved to definitions when a
-- question is asked, so an edit never has to rewrite the files that call into it. Empty until
-- a file is processed again (chunker version 6 re-processes every file; vectors are reused).

CREATE TABLE IF NOT EXISTS code_definitions (
  file_id BIGINT NOT NULL,
  ordinal INTEGER NOT NULL,          -- position in the file's list; `parent` refers to it
  repository TEXT NOT NULL,
  name TEXT NOT NULL,                -- `push`
  qualified TEXT NOT NULL,           -- `Stack::push`, `UserService.find` (within the file)
  kind TEXT NOT NULL,                -- function, method, class, struct, trait, interface, ...
  signature TEXT NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  parent INTEGER,                    -- ordinal of the innermost enclosing definition
  PRIMARY KEY (file_id, ordinal)
);
CREATE INDEX IF NOT EXISTS idx_code_definitions_name ON code_definitions (name, repository);
CREATE INDEX IF NOT EXISTS idx_code_definitions_lower_name
  ON code_definitions (lower(name) text_pattern_ops, repository);

CREATE TABLE IF NOT EXISTS code_references (
  file_id BIGINT NOT NULL,
  repository TEXT NOT NULL,
  name TEXT NOT NULL,                -- the callee as written: `push` of `stack.push(x)`
  qualifier TEXT,                    -- `stack`, `Stack`, `os.path`; self/this as the type
  line INTEGER NOT NULL,
  enclosing INTEGER                  -- ordinal of the definition the call is in
);
CREATE INDEX IF NOT EXISTS idx_code_references_name ON code_references (name, repository);
CREATE INDEX IF NOT EXISTS idx_code_references_enclosing ON code_references (file_id, enclosing);

CREATE TABLE IF NOT EXISTS code_imports (
  file_id BIGINT NOT NULL,
  repository TEXT NOT NULL,
  specifier TEXT NOT NULL,
  name TEXT NOT NULL,                -- what it binds here; '*' for a wildcard
  line INTEGER NOT NULL,
  candidates TEXT[] NOT NULL         -- crate::intel::Import::candidates
);
CREATE INDEX IF NOT EXISTS idx_code_imports_file ON code_imports (file_id);
CREATE INDEX IF NOT EXISTS idx_code_imports_candidates ON code_imports USING gin (candidates);

-- Import candidates name files by path (`src/a.rs`) or by path suffix (`a/b.py`, looked up as
-- a prefix of the reversed path), and Go packages by directory (a prefix of the path).
CREATE INDEX IF NOT EXISTS idx_indexed_files_reverse_path
  ON indexed_files (repository, reverse(file_path) text_pattern_ops);
CREATE INDEX IF NOT EXISTS idx_indexed_files_path_prefix
  ON indexed_files (repository, file_path text_pattern_ops);
