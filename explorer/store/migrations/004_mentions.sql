-- A relation may say that one node's text names another's subject (MENTIONS: the reading cycle's backlinks).
-- DuckDB cannot alter a CHECK constraint, so the table is rebuilt with its rows.
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
    CONSTRAINT valid_relation_type CHECK (type IN ('UPDATES', 'EXTENDS', 'DERIVES', 'MENTIONS')),
    CONSTRAINT valid_relation_confidence CHECK (confidence BETWEEN 0 AND 1),
    CONSTRAINT no_self_relation CHECK (source_id <> target_id)
);
INSERT INTO relations_new SELECT id, source_id, target_id, type, confidence, description, scores, created_by, created_at
FROM relations ORDER BY rowid;
DROP TABLE relations;
ALTER TABLE relations_new RENAME TO relations;
CREATE INDEX idx_relations_source ON relations(source_id);
CREATE INDEX idx_relations_target ON relations(target_id);
