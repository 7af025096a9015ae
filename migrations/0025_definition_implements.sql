-- The trait a Rust method's `impl Trait for Type` block implements (`Colorable` for `path` in
-- `impl Colorable for DirEntry`); NULL for an inherent method and every other definition. A
-- type may define a method of one name in both (`DirEntry::path`), and a call on the type
-- reaches the inherent one. Filled when a file is processed again (chunker version 44).
ALTER TABLE code_definitions ADD COLUMN IF NOT EXISTS implements TEXT;
