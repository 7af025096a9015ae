-- What a type holds and reaches beyond its own methods (crate::intel::Member): a Rust struct's
-- fields with their declared types, the traits it implements, the type it dereferences to, the
-- type an alias names. Written with the file's other code intelligence rows; read by type name.
CREATE TABLE IF NOT EXISTS code_members (
  file_id BIGINT NOT NULL,
  repository TEXT NOT NULL,
  owner TEXT NOT NULL,               -- the type: `Recipe`
  kind TEXT NOT NULL,                -- field, trait, deref, alias
  name TEXT NOT NULL,                -- the field's name; '' for the other kinds
  type TEXT NOT NULL                 -- the class the field's type, trait, target or alias is
);
CREATE INDEX IF NOT EXISTS idx_code_members_owner ON code_members (owner, repository);
CREATE INDEX IF NOT EXISTS idx_code_members_file ON code_members (file_id);
