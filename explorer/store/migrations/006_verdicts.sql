-- Every verdict of a judge, kept or not, with its scores, its one-line reason and the evidence it was shown,
-- so a person can see why a link was made or refused.
CREATE TABLE verdicts (
    id UUID PRIMARY KEY,
    seed_id UUID NOT NULL,
    candidate_id UUID NOT NULL,
    novelty DOUBLE NOT NULL,
    plausibility DOUBLE NOT NULL,
    usefulness DOUBLE NOT NULL,
    kept BOOLEAN NOT NULL,
    reason VARCHAR NOT NULL,
    connection VARCHAR,
    evidence VARCHAR,
    created_by VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX idx_verdicts_created ON verdicts(created_at);
