-- Keep each chunk's tsvector in the row (compressed) instead of the TOAST table. A row holds
-- a 3 KB vector stored PLAIN, so the toaster moved `lexemes` out of line, and every file
-- query that picks a file's best-matching chunk fetched each of the file's chunks' lexemes
-- from TOAST (about 8 µs a chunk, 60 % of the query). Measured after the change: file query
-- 3.7 -> 2.9 ms at 11,000 chunks; hybrid p50 8.9 -> 7.7 ms at 100,000 (docs/BENCHMARKS.md).
-- MAIN still moves a value out of line when a row would not fit a page otherwise. Existing
-- rows keep their storage until their file is indexed again (`VACUUM FULL codebase_index`
-- rewrites them all at once, locking the table meanwhile).
ALTER TABLE codebase_index ALTER COLUMN lexemes SET STORAGE MAIN;
