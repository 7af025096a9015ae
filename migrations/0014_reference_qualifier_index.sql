-- Callers of a definition whose name has many definitions (`new`, `len`) read only the calls
-- that can reach it: those in its repository (the index on (name, repository)) and those whose
-- qualifier ends with its owner (`Stack::new`), found through this index on the qualifier's
-- last part (src/store/symbols.rs, `Narrowing`).
CREATE INDEX IF NOT EXISTS idx_code_references_name_qualifier_last
  ON code_references (name, (substring(qualifier from '[^.:]*$')));
