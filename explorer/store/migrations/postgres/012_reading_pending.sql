-- PostgreSQL twin of ../012_reading_pending.sql (read it for each column): what the READING cycle could not
-- finish for a chunk that was stored, one row a step left to do.

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
