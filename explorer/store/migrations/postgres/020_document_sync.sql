-- PostgreSQL twin of ../020_document_sync.sql (read it for why): retired documents, and each file read with the
-- size and modification time it had and the documents it held.

ALTER TABLE documents ADD COLUMN retired_at TIMESTAMPTZ;
ALTER TABLE documents ADD COLUMN retired_because VARCHAR;

CREATE TABLE source_files (
    path VARCHAR PRIMARY KEY,
    size BIGINT,
    mtime_ns BIGINT,
    document_ids UUID[] NOT NULL,
    read_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
