-- A qualified lookup (`Zeta::new`) wants the definitions of `new` whose owner is `Zeta`: the
-- segment before the last of the qualified name, split as `segments()` splits (src/intel/
-- graph.rs: `.`, `:`, `/`, `\`, `#`); top-level definitions (no owner) are matched on their
-- path. At the 1M-chunk scale corpus `new` has about 30,000 definitions, which the lookup read
-- and filtered one by one (up to 1.7 s); this index reads the few it wants.
CREATE INDEX IF NOT EXISTS idx_code_definitions_name_owner
  ON code_definitions (name, substring(qualified from '([^.:/\\#]*)[.:/\\#]+[^.:/\\#]*$'));
