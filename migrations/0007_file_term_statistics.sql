-- File-level BM25 takes the file counts of the most common terms from the planner's
-- statistics of `file_terms.term` (src/store/mod.rs, `Store::file_stats`). With the default
-- statistics target (100) ANALYZE samples 30,000 postings and keeps 100 terms: on a small
-- index two ANALYZE runs gave different counts, enough to reorder results (the relevance
-- benchmark's asyncio MRR moved between 0.771 and 0.821). A target of 1000 samples 300,000
-- postings (all of them, up to that size: exact counts) and keeps 1,000 terms.
ALTER TABLE file_terms ALTER COLUMN term SET STATISTICS 1000;
