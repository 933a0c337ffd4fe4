-- What the READING cycle could not finish for a chunk that was stored: the model failed (or the budget refused
-- it) on the chunk's implant synthesis, its entities, or one entity's insight. The chunk is kept; each row is
-- work left, completed by the next ingest of the same document or by `explorer ingest --retry-failed`, and
-- deleted once done.
--
-- entity: the insight's entity ('' for the chunk's own steps, so it can be part of the key).
-- learning: what the chunk teaches about that entity (the insight's question).
-- related_ids: what the step reads the chunk against, fixed when it first failed: the earlier nodes of an
-- implant, or what was known of the insight's entity.
-- attempts: how many times it was asked and failed; error: the last failure.

CREATE TABLE reading_pending (
    chunk_id UUID NOT NULL,
    step VARCHAR NOT NULL,
    entity VARCHAR NOT NULL DEFAULT '',
    learning VARCHAR NOT NULL DEFAULT '',
    related_ids VARCHAR[] NOT NULL,
    error VARCHAR NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 1,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (chunk_id, step, entity),
    CONSTRAINT valid_pending_step CHECK (step IN ('implant', 'entities', 'insight'))
);
