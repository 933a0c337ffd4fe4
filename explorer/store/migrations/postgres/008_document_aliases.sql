-- PostgreSQL twin of ../008_document_aliases.sql: other titles of a document, the same text read again.
ALTER TABLE documents ADD COLUMN aliases VARCHAR[] NOT NULL DEFAULT '{}';
