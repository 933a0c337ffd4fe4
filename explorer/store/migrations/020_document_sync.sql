-- A knowledge base that stays in step with the notes it was read from.
--
-- documents.retired_at / retired_because ('changed' or 'removed'): the file this text came from was edited (its
-- new text is another document) or deleted. A retired document's nodes are no longer latest (is_latest = false,
-- superseded_by left null), so walks, dreaming and the map pass them over through the filter they already apply,
-- while the crystals that cite them still name their source, marked "source changed" / "source removed".
-- A retired text met again (an edit undone, a file put back) is brought back.
--
-- source_files: each file read, by its absolute path, with the size and modification time it had then and the
-- documents it held (several for JSON lines), so reading a folder again skips the files that did not change
-- without opening them, and knows which documents an edited or deleted file retires. size and mtime_ns are null
-- when a file must be read again next time (one of its documents could not be stored).

ALTER TABLE documents ADD COLUMN retired_at TIMESTAMPTZ;
ALTER TABLE documents ADD COLUMN retired_because VARCHAR;

CREATE TABLE source_files (
    path VARCHAR PRIMARY KEY,
    size BIGINT,
    mtime_ns BIGINT,
    document_ids UUID[] NOT NULL,
    read_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
