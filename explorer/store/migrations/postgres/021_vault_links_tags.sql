-- PostgreSQL twin of ../021_vault_links_tags.sql (read it for why): a document's tags and wikilink targets, and
-- LINKS, a relation the person wrote as a [[wikilink]]. PostgreSQL replaces a CHECK constraint in place.

ALTER TABLE documents ADD COLUMN tags VARCHAR[] NOT NULL DEFAULT '{}';
ALTER TABLE documents ADD COLUMN links VARCHAR[] NOT NULL DEFAULT '{}';

ALTER TABLE relations
    DROP CONSTRAINT valid_relation_type,
    ADD CONSTRAINT valid_relation_type CHECK (type IN ('UPDATES', 'EXTENDS', 'DERIVES', 'MENTIONS', 'LINKS'));
