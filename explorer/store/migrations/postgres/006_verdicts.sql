-- PostgreSQL twin of ../006_verdicts.sql: every verdict of a judge, kept or not, and why.
CREATE TABLE verdicts (
    id UUID PRIMARY KEY,
    seed_id UUID NOT NULL,
    candidate_id UUID NOT NULL,
    novelty DOUBLE PRECISION NOT NULL,
    plausibility DOUBLE PRECISION NOT NULL,
    usefulness DOUBLE PRECISION NOT NULL,
    kept BOOLEAN NOT NULL,
    reason VARCHAR NOT NULL,
    connection VARCHAR,
    evidence VARCHAR,
    created_by VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX idx_verdicts_created ON verdicts(created_at);
