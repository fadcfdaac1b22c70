-- PostgreSQL only (page fill factor); SQLite rewrites rows in place.
SELECT 1;
