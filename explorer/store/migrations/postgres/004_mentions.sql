-- PostgreSQL twin of ../004_mentions.sql: a relation may be a MENTIONS (the reading cycle's backlinks).
-- PostgreSQL replaces a CHECK constraint in place; DuckDB has to rebuild the table.
ALTER TABLE relations
    DROP CONSTRAINT valid_relation_type,
    ADD CONSTRAINT valid_relation_type CHECK (type IN ('UPDATES', 'EXTENDS', 'DERIVES', 'MENTIONS'));
