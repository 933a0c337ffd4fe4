-- PostgreSQL twin of ../022_domain_origin.sql: where each document's domain came from.

ALTER TABLE documents ADD COLUMN domain_origin VARCHAR;
UPDATE documents SET domain_origin = 'given' WHERE domain IS NOT NULL;
