-- What a crystal connects: the two stored sources it bridges, [{locus_id, node_id, name, document_id, title,
-- domain}], so a reviewer sees which two notes it is about and a crystal connecting the same two is refused.

-- DuckDB cannot alter a table an index depends on: drop the index, alter, recreate.
DROP INDEX idx_crystals_session;
ALTER TABLE wander_crystals ADD COLUMN connects JSON NOT NULL DEFAULT '[]';
CREATE INDEX idx_crystals_session ON wander_crystals(session_id);
