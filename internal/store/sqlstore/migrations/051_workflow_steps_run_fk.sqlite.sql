-- PostgreSQL only (the foreign key of a step on its run goes there);
-- SQLite's check is an in-process index probe, and dropping it would
-- rebuild the table.
SELECT 1;
