-- PostgreSQL twin of ../001_initial.sql: read it for why the schema is as it is (and why no FOREIGN KEY).
-- Every migration here makes the same tables, columns, defaults and constraints as its DuckDB twin, in the
-- SQL PostgreSQL speaks: FLOAT[{dim}] is pgvector's vector({dim}), with an HNSW index for cosine search
-- (at the end); FLOAT[] is REAL[] (FLOAT means 8 bytes here); DOUBLE is DOUBLE PRECISION; JSON stays json,
-- not jsonb, so a value reads back as the text that was written, as from DuckDB; uuid() is gen_random_uuid();
-- an empty list is '{}'. {dim} is filled in by the migrator, as for DuckDB.
-- No question mark anywhere in these files, not even in a comment: the store's connection reads one as a
-- placeholder.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE meta (
    key VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);

-- READING cycle ---------------------------------------------------------------

CREATE TABLE documents (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    content_hash VARCHAR NOT NULL UNIQUE,
    title VARCHAR NOT NULL,
    source VARCHAR,
    path VARCHAR,
    year INTEGER,
    domain VARCHAR,
    word_count INTEGER NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE nodes (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    type VARCHAR NOT NULL,
    text VARCHAR NOT NULL,
    embedding vector({dim}),
    document_id UUID,
    chunk_index INTEGER,
    year INTEGER,
    domain VARCHAR,
    entity VARCHAR,
    generation INTEGER NOT NULL DEFAULT 0,
    parent_ids UUID[] NOT NULL DEFAULT '{}',
    category VARCHAR,
    importance DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    prominence DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    confidence DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    memory_type VARCHAR NOT NULL DEFAULT 'regular',
    is_latest BOOLEAN NOT NULL DEFAULT TRUE,
    superseded_by UUID,
    learned_from VARCHAR,
    source_text VARCHAR,
    metadata JSON,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT valid_node_type CHECK (type IN ('raw_chunk', 'synthesis', 'entity_insight', 'rem_dream', 'fused', 'pattern', 'abstraction')),
    CONSTRAINT valid_memory_type CHECK (memory_type IN ('regular', 'static_profile', 'derived', 'superseded')),
    CONSTRAINT valid_node_scores CHECK (importance BETWEEN 0 AND 1 AND prominence BETWEEN 0 AND 1 AND confidence BETWEEN 0 AND 1),
    CONSTRAINT valid_generation CHECK (generation >= 0)
);
CREATE INDEX idx_nodes_document ON nodes(document_id);

CREATE TABLE relations (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    source_id UUID NOT NULL,
    target_id UUID NOT NULL,
    type VARCHAR NOT NULL,
    confidence DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    description VARCHAR,
    scores JSON,
    created_by VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT valid_relation_type CHECK (type IN ('UPDATES', 'EXTENDS', 'DERIVES')),
    CONSTRAINT valid_relation_confidence CHECK (confidence BETWEEN 0 AND 1),
    CONSTRAINT no_self_relation CHECK (source_id <> target_id)
);
CREATE INDEX idx_relations_source ON relations(source_id);
CREATE INDEX idx_relations_target ON relations(target_id);

-- Any model's vectors, whatever their length: an array, not a vector({dim}).
CREATE TABLE embedding_cache (
    model VARCHAR NOT NULL,
    text_hash VARCHAR NOT NULL,
    embedding REAL[] NOT NULL,
    PRIMARY KEY (model, text_hash)
);

-- Wander (docs/wander.md) -----------------------------------------------

CREATE TABLE wander_sessions (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    name VARCHAR NOT NULL,
    status VARCHAR NOT NULL DEFAULT 'active',
    status_reason VARCHAR,
    seed_concept VARCHAR NOT NULL,
    seed_embedding vector({dim}),
    attractor VARCHAR,
    attractor_embedding vector({dim}),
    allowed_domains VARCHAR[],
    forbidden_domains VARCHAR[],
    fence JSON NOT NULL DEFAULT '[]',
    max_drift_distance DOUBLE PRECISION NOT NULL DEFAULT 0.8,
    max_steps INTEGER NOT NULL DEFAULT 1000,
    cloud_budget_cents INTEGER NOT NULL DEFAULT 500,
    cloud_spent_cents DOUBLE PRECISION NOT NULL DEFAULT 0,
    local_calls INTEGER NOT NULL DEFAULT 0,
    cloud_calls INTEGER NOT NULL DEFAULT 0,
    offline_calls INTEGER NOT NULL DEFAULT 0,
    temperature DOUBLE PRECISION NOT NULL DEFAULT 0.7,
    human_checkpoint_frequency INTEGER NOT NULL DEFAULT 50,
    random_seed BIGINT NOT NULL DEFAULT 0,
    step_count INTEGER NOT NULL DEFAULT 0,
    current_locus_id UUID,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_step_at TIMESTAMPTZ,
    completed_at TIMESTAMPTZ,
    CONSTRAINT valid_status CHECK (status IN ('active', 'paused', 'completed', 'abandoned')),
    CONSTRAINT valid_session_numbers CHECK (max_drift_distance > 0 AND max_steps > 0 AND cloud_budget_cents >= 0
        AND temperature > 0 AND human_checkpoint_frequency >= 0 AND step_count >= 0)
);

CREATE TABLE wander_loci (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    session_id UUID NOT NULL,
    concept VARCHAR NOT NULL,
    embedding vector({dim}) NOT NULL,
    source_type VARCHAR NOT NULL,
    node_id UUID,
    domains VARCHAR[] NOT NULL DEFAULT '{}',
    abstraction_level DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    novelty_score DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    interestingness DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    actionability DOUBLE PRECISION NOT NULL DEFAULT 0.0,
    uncertainty DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    visit_count INTEGER NOT NULL DEFAULT 0,
    first_encountered TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_visited TIMESTAMPTZ,
    adjacent_to JSON NOT NULL DEFAULT '[]',
    bridges_to JSON NOT NULL DEFAULT '[]',
    contradicts JSON NOT NULL DEFAULT '[]',
    CONSTRAINT valid_source_type CHECK (source_type IN ('SEED', 'ADJACENT', 'BRIDGED', 'SERENDIPITOUS'))
);
CREATE INDEX idx_loci_session ON wander_loci(session_id);

CREATE TABLE wander_traces (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    session_id UUID NOT NULL,
    step_number INTEGER NOT NULL,
    from_locus_id UUID,
    to_locus_id UUID NOT NULL,
    adjacencies_considered INTEGER,
    selection_scores JSON,
    selection_reason VARCHAR,
    model_used VARCHAR,
    tokens_used INTEGER,
    cost_cents DOUBLE PRECISION NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (session_id, step_number)
);

CREATE TABLE wander_residues (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    session_id UUID NOT NULL,
    trace_id UUID NOT NULL,
    from_locus_id UUID,
    to_locus_id UUID NOT NULL,
    connection VARCHAR,
    tension VARCHAR,
    bridge VARCHAR,
    surprise VARCHAR,
    possibility VARCHAR,
    themes VARCHAR[] NOT NULL DEFAULT '{}',
    themes_embedding vector({dim}),
    interestingness DOUBLE PRECISION,
    actionability DOUBLE PRECISION,
    model_used VARCHAR,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX idx_residues_session ON wander_residues(session_id);

CREATE TABLE wander_resonances (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    session_id UUID,
    themes VARCHAR[] NOT NULL,
    embedding vector({dim}) NOT NULL,
    occurrences INTEGER NOT NULL DEFAULT 1,
    strength DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    status VARCHAR NOT NULL DEFAULT 'candidate',
    supporting_residue_ids UUID[] NOT NULL DEFAULT '{}',
    last_reinforced_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    decay_rate DOUBLE PRECISION NOT NULL DEFAULT 0.1,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT valid_resonance_status CHECK (status IN ('candidate', 'confirmed', 'invalidated'))
);

CREATE TABLE wander_crystals (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    session_id UUID,
    insight VARCHAR NOT NULL,
    embedding vector({dim}) NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    actionability DOUBLE PRECISION NOT NULL,
    domains VARCHAR[] NOT NULL,
    source_resonance_id UUID,
    source_locus_id UUID,
    supporting_evidence JSON NOT NULL DEFAULT '[]',
    status VARCHAR NOT NULL DEFAULT 'active',
    validated_by VARCHAR,
    validation_notes VARCHAR,
    human_approved BOOLEAN NOT NULL DEFAULT FALSE,
    human_approved_at TIMESTAMPTZ,
    human_approved_by VARCHAR,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT valid_crystal_status CHECK (status IN ('active', 'acted_upon', 'invalidated', 'archived')),
    CONSTRAINT valid_crystal_scores CHECK (confidence BETWEEN 0 AND 1 AND actionability BETWEEN 0 AND 1)
);

CREATE TABLE wander_warm_memory (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    session_id UUID NOT NULL,
    cluster_type VARCHAR NOT NULL,
    content JSON NOT NULL,
    embedding vector({dim}),
    strength DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    last_accessed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at TIMESTAMPTZ,
    CONSTRAINT valid_cluster_type CHECK (cluster_type IN ('theme_cluster', 'failed_path', 'summary'))
);

-- Cross-cutting ----------------------------------------------------------------

CREATE SEQUENCE event_seq;
CREATE TABLE events (
    seq BIGINT PRIMARY KEY DEFAULT nextval('event_seq'),
    subject VARCHAR NOT NULL,
    session_id UUID,
    payload JSON NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE model_calls (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    model VARCHAR NOT NULL,
    tier VARCHAR NOT NULL,
    purpose VARCHAR NOT NULL,
    session_id UUID,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost_cents DOUBLE PRECISION NOT NULL DEFAULT 0,
    latency_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
    outcome VARCHAR NOT NULL,
    error VARCHAR,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT valid_tier CHECK (tier IN ('local', 'cloud', 'offline')),
    CONSTRAINT valid_outcome CHECK (outcome IN ('ok', 'parse_error', 'error', 'timeout'))
);

-- Stable map: 2-d coordinates of every item, fitted once and extended in place.
CREATE TABLE projection_points (
    item_kind VARCHAR NOT NULL,
    item_id UUID NOT NULL,
    x DOUBLE PRECISION NOT NULL,
    y DOUBLE PRECISION NOT NULL,
    projection_version INTEGER NOT NULL,
    placed_by VARCHAR NOT NULL,
    PRIMARY KEY (item_kind, item_id),
    CONSTRAINT valid_item_kind CHECK (item_kind IN ('node', 'locus', 'crystal', 'resonance'))
);

-- Nearest-neighbour search: an HNSW index for cosine distance on every vector column. pgvector indexes at
-- most 2000 dimensions; a longer embedding (a 3072-dimension model) is searched without one, row by row.
DO $$
BEGIN
    IF {dim} <= 2000 THEN
        CREATE INDEX idx_nodes_embedding ON nodes USING hnsw (embedding vector_cosine_ops);
        CREATE INDEX idx_sessions_seed_embedding ON wander_sessions USING hnsw (seed_embedding vector_cosine_ops);
        CREATE INDEX idx_sessions_attractor_embedding ON wander_sessions
            USING hnsw (attractor_embedding vector_cosine_ops);
        CREATE INDEX idx_loci_embedding ON wander_loci USING hnsw (embedding vector_cosine_ops);
        CREATE INDEX idx_residues_themes_embedding ON wander_residues USING hnsw (themes_embedding vector_cosine_ops);
        CREATE INDEX idx_resonances_embedding ON wander_resonances USING hnsw (embedding vector_cosine_ops);
        CREATE INDEX idx_crystals_embedding ON wander_crystals USING hnsw (embedding vector_cosine_ops);
        CREATE INDEX idx_warm_memory_embedding ON wander_warm_memory USING hnsw (embedding vector_cosine_ops);
    END IF;
END
$$;
