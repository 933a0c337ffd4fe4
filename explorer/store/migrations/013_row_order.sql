-- Row order without rowid: the order rows were written in, as a column (`seq`), so queries order by
-- `created_at, seq` (or `seq` alone) on both backends; PostgreSQL has no rowid. Rows written in one transaction
-- share a `created_at`, and `seq` keeps them in the order they were inserted.
--
-- Each table gets its own sequence. Its existing rows are numbered 1, 2, ... in their rowid order (the order the
-- store read them in until now), the sequence is advanced past them (`nextval` once a row), and only then does
-- it become the column's default, so new rows follow the old ones.
--
-- DuckDB before 2.0 cannot alter a table an index depends on: drop the indexes, alter, recreate.

DROP INDEX idx_nodes_document;
DROP INDEX idx_relations_source;
DROP INDEX idx_relations_target;
DROP INDEX idx_verdicts_created;
DROP INDEX idx_experiences_source;
DROP INDEX idx_patterns_run;
DROP INDEX idx_loci_session;
DROP INDEX idx_residues_session;
DROP INDEX idx_resonances_session;
DROP INDEX idx_warm_memory_session;

CREATE SEQUENCE nodes_seq;
ALTER TABLE nodes ADD COLUMN seq BIGINT;
UPDATE nodes SET seq = o.n FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS n FROM nodes) AS o
WHERE nodes.rowid = o.r;
SELECT max(nextval('nodes_seq')) FROM nodes;
ALTER TABLE nodes ALTER COLUMN seq SET DEFAULT nextval('nodes_seq');

CREATE SEQUENCE relations_seq;
ALTER TABLE relations ADD COLUMN seq BIGINT;
UPDATE relations SET seq = o.n FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS n FROM relations) AS o
WHERE relations.rowid = o.r;
SELECT max(nextval('relations_seq')) FROM relations;
ALTER TABLE relations ALTER COLUMN seq SET DEFAULT nextval('relations_seq');

CREATE SEQUENCE verdicts_seq;
ALTER TABLE verdicts ADD COLUMN seq BIGINT;
UPDATE verdicts SET seq = o.n FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS n FROM verdicts) AS o
WHERE verdicts.rowid = o.r;
SELECT max(nextval('verdicts_seq')) FROM verdicts;
ALTER TABLE verdicts ALTER COLUMN seq SET DEFAULT nextval('verdicts_seq');

CREATE SEQUENCE model_calls_seq;
ALTER TABLE model_calls ADD COLUMN seq BIGINT;
UPDATE model_calls SET seq = o.n FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS n FROM model_calls) AS o
WHERE model_calls.rowid = o.r;
SELECT max(nextval('model_calls_seq')) FROM model_calls;
ALTER TABLE model_calls ALTER COLUMN seq SET DEFAULT nextval('model_calls_seq');

CREATE SEQUENCE experiences_seq;
ALTER TABLE experiences ADD COLUMN seq BIGINT;
UPDATE experiences SET seq = o.n FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS n FROM experiences) AS o
WHERE experiences.rowid = o.r;
SELECT max(nextval('experiences_seq')) FROM experiences;
ALTER TABLE experiences ALTER COLUMN seq SET DEFAULT nextval('experiences_seq');

CREATE SEQUENCE consolidation_runs_seq;
ALTER TABLE consolidation_runs ADD COLUMN seq BIGINT;
UPDATE consolidation_runs SET seq = o.n FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS n FROM consolidation_runs) AS o
WHERE consolidation_runs.rowid = o.r;
SELECT max(nextval('consolidation_runs_seq')) FROM consolidation_runs;
ALTER TABLE consolidation_runs ALTER COLUMN seq SET DEFAULT nextval('consolidation_runs_seq');

CREATE SEQUENCE consolidation_patterns_seq;
ALTER TABLE consolidation_patterns ADD COLUMN seq BIGINT;
UPDATE consolidation_patterns SET seq = o.n FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS n FROM consolidation_patterns) AS o
WHERE consolidation_patterns.rowid = o.r;
SELECT max(nextval('consolidation_patterns_seq')) FROM consolidation_patterns;
ALTER TABLE consolidation_patterns ALTER COLUMN seq SET DEFAULT nextval('consolidation_patterns_seq');

CREATE SEQUENCE consolidation_ladder_seq;
ALTER TABLE consolidation_ladder ADD COLUMN seq BIGINT;
UPDATE consolidation_ladder SET seq = o.n FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS n FROM consolidation_ladder) AS o
WHERE consolidation_ladder.rowid = o.r;
SELECT max(nextval('consolidation_ladder_seq')) FROM consolidation_ladder;
ALTER TABLE consolidation_ladder ALTER COLUMN seq SET DEFAULT nextval('consolidation_ladder_seq');

CREATE SEQUENCE wander_loci_seq;
ALTER TABLE wander_loci ADD COLUMN seq BIGINT;
UPDATE wander_loci SET seq = o.n FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS n FROM wander_loci) AS o
WHERE wander_loci.rowid = o.r;
SELECT max(nextval('wander_loci_seq')) FROM wander_loci;
ALTER TABLE wander_loci ALTER COLUMN seq SET DEFAULT nextval('wander_loci_seq');

CREATE SEQUENCE wander_residues_seq;
ALTER TABLE wander_residues ADD COLUMN seq BIGINT;
UPDATE wander_residues SET seq = o.n FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS n FROM wander_residues) AS o
WHERE wander_residues.rowid = o.r;
SELECT max(nextval('wander_residues_seq')) FROM wander_residues;
ALTER TABLE wander_residues ALTER COLUMN seq SET DEFAULT nextval('wander_residues_seq');

CREATE SEQUENCE wander_resonances_seq;
ALTER TABLE wander_resonances ADD COLUMN seq BIGINT;
UPDATE wander_resonances SET seq = o.n FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS n FROM wander_resonances) AS o
WHERE wander_resonances.rowid = o.r;
SELECT max(nextval('wander_resonances_seq')) FROM wander_resonances;
ALTER TABLE wander_resonances ALTER COLUMN seq SET DEFAULT nextval('wander_resonances_seq');

CREATE SEQUENCE wander_warm_memory_seq;
ALTER TABLE wander_warm_memory ADD COLUMN seq BIGINT;
UPDATE wander_warm_memory SET seq = o.n FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS n FROM wander_warm_memory) AS o
WHERE wander_warm_memory.rowid = o.r;
SELECT max(nextval('wander_warm_memory_seq')) FROM wander_warm_memory;
ALTER TABLE wander_warm_memory ALTER COLUMN seq SET DEFAULT nextval('wander_warm_memory_seq');

CREATE INDEX idx_nodes_document ON nodes(document_id);
CREATE INDEX idx_relations_source ON relations(source_id);
CREATE INDEX idx_relations_target ON relations(target_id);
CREATE INDEX idx_verdicts_created ON verdicts(created_at);
CREATE INDEX idx_experiences_source ON experiences(source);
CREATE INDEX idx_patterns_run ON consolidation_patterns(run_id);
CREATE INDEX idx_loci_session ON wander_loci(session_id);
CREATE INDEX idx_residues_session ON wander_residues(session_id);
CREATE INDEX idx_resonances_session ON wander_resonances(session_id);
CREATE INDEX idx_warm_memory_session ON wander_warm_memory(session_id);
