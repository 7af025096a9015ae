-- An enum variant's fields are owned by `Enum::Variant`; a pattern written with the variant's
-- name alone (`use Kind::*`, then `Redefinition { first, .. }`) looks them up by that name.
CREATE INDEX IF NOT EXISTS idx_code_members_variant
  ON code_members ((split_part(owner, '::', 2)))
  WHERE position('::' in owner) > 0;
