-- PostgreSQL twin of ../002_wander.sql (read it for why). PostgreSQL alters a table its indexes depend on, so
-- idx_loci_session and idx_crystals_session stay as they are.

ALTER TABLE wander_sessions ADD COLUMN pending_locus_id UUID;
ALTER TABLE wander_sessions ADD COLUMN failure_streak INTEGER NOT NULL DEFAULT 0;
ALTER TABLE wander_sessions ADD COLUMN fence_streak INTEGER NOT NULL DEFAULT 0;
ALTER TABLE wander_sessions ADD COLUMN circuit_reset_step INTEGER NOT NULL DEFAULT 0;

ALTER TABLE wander_loci ADD COLUMN strategy VARCHAR NOT NULL DEFAULT 'seed';

ALTER TABLE wander_traces ADD COLUMN strategy VARCHAR;
ALTER TABLE wander_traces ADD COLUMN drift DOUBLE PRECISION;
ALTER TABLE wander_traces ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;

CREATE INDEX idx_traces_session ON wander_traces(session_id, step_number);
CREATE INDEX idx_resonances_session ON wander_resonances(session_id);
CREATE INDEX idx_crystals_session ON wander_crystals(session_id);
CREATE INDEX idx_warm_memory_session ON wander_warm_memory(session_id);
