-- Other titles of a document: the same text read again under another name (a synonym's entry, a renamed file)
-- is not read twice, but its name is kept, so notes that mention it link to the document.
ALTER TABLE documents ADD COLUMN aliases VARCHAR[] NOT NULL DEFAULT [];
