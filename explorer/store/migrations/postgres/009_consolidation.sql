-- PostgreSQL twin of ../009_consolidation.sql (read it for what each table holds): the experiences
-- consolidation reads and what each run makes of them.

CREATE TABLE experiences (
    id UUID PRIMARY KEY,
    source VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    outcome VARCHAR NOT NULL,
    description VARCHAR NOT NULL,
    strategy VARCHAR,
    confidence DOUBLE PRECISION NOT NULL,
    insight_type VARCHAR,
    impact VARCHAR,
    trigger VARCHAR,
    duration_s DOUBLE PRECISION,
    candidates_eliminated INTEGER NOT NULL DEFAULT 0,
    session_id VARCHAR NOT NULL,
    metadata JSON NOT NULL DEFAULT '{}',
    occurred_at TIMESTAMPTZ,
    captured_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT valid_experience_source CHECK (source IN ('wander', 'dreams', 'imported')),
    CONSTRAINT valid_experience_kind CHECK (kind IN ('move', 'strategy', 'insight')),
    CONSTRAINT valid_experience_outcome CHECK (outcome IN ('success', 'failure', 'progress')),
    CONSTRAINT valid_experience_confidence CHECK (confidence BETWEEN 0 AND 1)
);
CREATE INDEX idx_experiences_source ON experiences(source);

CREATE TABLE consolidation_runs (
    id UUID PRIMARY KEY,
    source VARCHAR NOT NULL,
    trigger VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    experiences INTEGER NOT NULL,
    triaged INTEGER NOT NULL,
    patterns INTEGER NOT NULL,
    compression_ratio DOUBLE PRECISION,
    ladder_levels INTEGER NOT NULL,
    connections INTEGER NOT NULL,
    verification_score DOUBLE PRECISION,
    report JSON NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE consolidation_patterns (
    id UUID PRIMARY KEY,
    run_id UUID NOT NULL,
    name VARCHAR NOT NULL,
    type VARCHAR NOT NULL,
    description VARCHAR NOT NULL,
    conditions VARCHAR[] NOT NULL,
    actions VARCHAR[] NOT NULL,
    example_ids UUID[] NOT NULL,
    member_ids UUID[] NOT NULL,
    success_rate DOUBLE PRECISION,
    usage_count INTEGER NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    utility DOUBLE PRECISION NOT NULL,
    status VARCHAR NOT NULL,
    embedding vector({dim}),
    CONSTRAINT valid_pattern_status CHECK (status IN ('unverified', 'verified', 'invalidated'))
);
CREATE INDEX idx_patterns_run ON consolidation_patterns(run_id);

CREATE TABLE consolidation_ladder (
    run_id UUID NOT NULL,
    id UUID NOT NULL,
    level INTEGER NOT NULL,
    name VARCHAR NOT NULL,
    statement VARCHAR NOT NULL,
    subsumes UUID[] NOT NULL,
    embedding vector({dim}),
    PRIMARY KEY (run_id, id)
);

CREATE TABLE consolidation_connections (
    run_id UUID NOT NULL,
    from_id UUID NOT NULL,
    to_id UUID NOT NULL,
    relationship VARCHAR NOT NULL,
    strength DOUBLE PRECISION NOT NULL,
    level INTEGER NOT NULL,
    evidence UUID[] NOT NULL,
    reason VARCHAR NOT NULL,
    CONSTRAINT valid_relationship CHECK (relationship IN ('prerequisite', 'alternative', 'refinement', 'complement'))
);
CREATE INDEX idx_connections_run ON consolidation_connections(run_id);

CREATE TABLE consolidation_checks (
    run_id UUID NOT NULL,
    name VARCHAR NOT NULL,
    passed BOOLEAN NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    severity VARCHAR NOT NULL,
    message VARCHAR NOT NULL,
    details VARCHAR[] NOT NULL
);

-- Nearest-neighbour search, as in 001_initial.sql (an embedding over 2000 dimensions goes without).
DO $$
BEGIN
    IF {dim} <= 2000 THEN
        CREATE INDEX idx_patterns_embedding ON consolidation_patterns USING hnsw (embedding vector_cosine_ops);
        CREATE INDEX idx_ladder_embedding ON consolidation_ladder USING hnsw (embedding vector_cosine_ops);
    END IF;
END
$$;
