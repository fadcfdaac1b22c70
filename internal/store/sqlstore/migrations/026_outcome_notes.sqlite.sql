-- SQLite keeps its outcome notes in a file of their own (store/sqlite
-- journal.go), so a note never waits for the main writer.
SELECT 1;
