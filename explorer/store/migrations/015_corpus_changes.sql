-- A change counter for the corpus as a walk holds it in memory (explorer/wander/caches.py): the nodes, their
-- documents' domains and titles, and the relations between them. On a PostgreSQL store every transaction that
-- changes any of those adds one to `version` as it commits (a trigger; see the twin), so a process notices
-- another machine's writes by reading one row, where counting 100k nodes cost 60 ms of every step. A file has
-- one writing process and no triggers; counting its columns is cheap, so here the row stays at 0: the table
-- exists so both backends hold the same tables (a database copied either way keeps its own count).

CREATE TABLE corpus_changes (version BIGINT NOT NULL);
INSERT INTO corpus_changes VALUES (0);
