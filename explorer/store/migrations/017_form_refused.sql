-- A request the server refused for its response format (the gateway then asks again at once in a weaker form)
-- is logged as `form_refused`, apart from the errors: it is the server saying what it reads, not a failure.
--
-- DuckDB cannot alter a CHECK constraint: the table is built again with the wider check, its rows (and their
-- `seq`, whose sequence goes on numbering the new ones) copied over.

CREATE TABLE model_calls_017 (
    id UUID PRIMARY KEY DEFAULT uuid(),
    model VARCHAR NOT NULL,
    tier VARCHAR NOT NULL,
    purpose VARCHAR NOT NULL,
    session_id UUID,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost_cents DOUBLE NOT NULL DEFAULT 0,
    latency_ms DOUBLE NOT NULL DEFAULT 0,
    outcome VARCHAR NOT NULL,
    error VARCHAR,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    seq BIGINT DEFAULT nextval('model_calls_seq'),
    CONSTRAINT valid_tier CHECK (tier IN ('local', 'cloud', 'offline')),
    CONSTRAINT valid_outcome CHECK (outcome IN ('ok', 'parse_error', 'error', 'timeout', 'form_refused'))
);
INSERT INTO model_calls_017
SELECT id, model, tier, purpose, session_id, prompt_tokens, completion_tokens, cost_cents, latency_ms, outcome, error,
    created_at, seq
FROM model_calls;
DROP TABLE model_calls;
ALTER TABLE model_calls_017 RENAME TO model_calls;
