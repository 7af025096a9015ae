-- The type a Rust call's first argument is written as, where a literal or a constructor says it
-- (`"a"` is `&str`, `format!(…)` a `String`, `true` a `bool`); NULL for every other call. Of a
-- type's several `From<T>` impls, `Value::from("a")` reaches `From<&str>`'s. Filled when a file
-- is processed again (chunker version 47).
ALTER TABLE code_references ADD COLUMN IF NOT EXISTS argument TEXT;
