-- Where each document's domain came from, so what a person chose is never overwritten by what was guessed:
-- 'given' (front matter, --domain, a JSON line's field, or a person's rename or merge), 'folder' (the top folder
-- under the folder ingested), 'tag' (the note's first tag), 'topic' (found from the notes themselves; refreshed
-- as the corpus grows); NULL with no domain. Domains stored before this migration were all given.

ALTER TABLE documents ADD COLUMN domain_origin VARCHAR;
UPDATE documents SET domain_origin = 'given' WHERE domain IS NOT NULL;
