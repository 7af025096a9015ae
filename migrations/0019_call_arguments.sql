-- How many arguments each call passes (crate::intel::Reference::args), so that overloads
-- (Java, C#, C++: `Create(reader, message)` against `Create(reader, message, ex)`) are told
-- apart by their parameter count, read from the definitions' signatures when a call is
-- resolved. NULL where it is not counted (other languages, a spread argument) and for rows
-- written before this migration; chunker version 14 extracts every file again.
ALTER TABLE code_references ADD COLUMN IF NOT EXISTS args SMALLINT;
