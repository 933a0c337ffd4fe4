-- A raw chunk keeps the heading it stands under in its document ("OPTIONS", "page 3", "assistant"), so where a
-- chunk came from is shown as its document and its section; NULL for chunks read before, and for other nodes.
--
-- DuckDB cannot alter a table an index depends on: the document index is dropped and made again around the change.

DROP INDEX idx_nodes_document;
ALTER TABLE nodes ADD COLUMN section VARCHAR;
CREATE INDEX idx_nodes_document ON nodes(document_id);
