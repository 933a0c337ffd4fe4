-- A job's progress names the phase its run is in ("loading the embedding model", "embedding", "REM: dreaming"),
-- so a surface following it says what the run does through stretches no item count covers.
--
-- DuckDB cannot alter a table an index depends on: the status index is dropped and made again around the change.

DROP INDEX idx_jobs_status;
ALTER TABLE jobs ADD COLUMN phase VARCHAR NOT NULL DEFAULT '';
CREATE INDEX idx_jobs_status ON jobs(status);
