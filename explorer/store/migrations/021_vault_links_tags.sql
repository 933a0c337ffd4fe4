-- A vault's own structure (explorer/reading/vault.py): a note's tags and the notes its [[wikilinks]] name are kept
-- with its document, and a wikilink between two notes is a relation of its own kind, LINKS (written by the
-- person), apart from MENTIONS (found by reading).
--
-- Tags and links are lists on the document, as its aliases are: read with it, written with it, and filtered by
-- `EXISTS (SELECT 1 FROM unnest(tags) ...)`, which both backends run. `links` keeps each wikilink's target as
-- written, resolved or not, so a note ingested later resolves the links made to it before it came.
--
-- DuckDB cannot alter a CHECK constraint, so the relations table is rebuilt with its rows (as 004 did), its row
-- order (`seq`, 013) kept.

ALTER TABLE documents ADD COLUMN tags VARCHAR[] NOT NULL DEFAULT [];
ALTER TABLE documents ADD COLUMN links VARCHAR[] NOT NULL DEFAULT [];

CREATE TABLE relations_new (
    id UUID PRIMARY KEY DEFAULT uuid(),
    source_id UUID NOT NULL,
    target_id UUID NOT NULL,
    type VARCHAR NOT NULL,
    confidence DOUBLE NOT NULL DEFAULT 1.0,
    description VARCHAR,
    scores JSON,
    created_by VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    seq BIGINT DEFAULT nextval('relations_seq'),
    CONSTRAINT valid_relation_type CHECK (type IN ('UPDATES', 'EXTENDS', 'DERIVES', 'MENTIONS', 'LINKS')),
    CONSTRAINT valid_relation_confidence CHECK (confidence BETWEEN 0 AND 1),
    CONSTRAINT no_self_relation CHECK (source_id <> target_id)
);
INSERT INTO relations_new
SELECT id, source_id, target_id, type, confidence, description, scores, created_by, created_at, seq
FROM relations ORDER BY seq;
DROP INDEX idx_relations_source;
DROP INDEX idx_relations_target;
DROP TABLE relations;
ALTER TABLE relations_new RENAME TO relations;
CREATE INDEX idx_relations_source ON relations(source_id);
CREATE INDEX idx_relations_target ON relations(target_id);
