-- Wander's engine state beyond the original design's columns (docs/wander.md#what-it-stores).
--
-- wander_sessions: the locus a person asked to visit next (inject with
-- force_visit), the circuit breaker's counters, and the step from which it
-- counts again after a resume (so a reviewed loop does not trip it at once).
-- wander_loci / wander_traces: which adjacency strategy proposed the locus,
-- its drift from the fence's centre, and how many stages failed in the step.

ALTER TABLE wander_sessions ADD COLUMN pending_locus_id UUID;
ALTER TABLE wander_sessions ADD COLUMN failure_streak INTEGER NOT NULL DEFAULT 0;
ALTER TABLE wander_sessions ADD COLUMN fence_streak INTEGER NOT NULL DEFAULT 0;
ALTER TABLE wander_sessions ADD COLUMN circuit_reset_step INTEGER NOT NULL DEFAULT 0;

-- DuckDB cannot alter a table an index depends on: drop the index, alter, recreate.
DROP INDEX idx_loci_session;
ALTER TABLE wander_loci ADD COLUMN strategy VARCHAR NOT NULL DEFAULT 'seed';
CREATE INDEX idx_loci_session ON wander_loci(session_id);

ALTER TABLE wander_traces ADD COLUMN strategy VARCHAR;
ALTER TABLE wander_traces ADD COLUMN drift DOUBLE;
ALTER TABLE wander_traces ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;

CREATE INDEX idx_traces_session ON wander_traces(session_id, step_number);
CREATE INDEX idx_resonances_session ON wander_resonances(session_id);
CREATE INDEX idx_crystals_session ON wander_crystals(session_id);
CREATE INDEX idx_warm_memory_session ON wander_warm_memory(session_id);
