-- PostgreSQL twin of ../019_chunk_sections.sql: a raw chunk keeps the heading it stands under in its document.

ALTER TABLE nodes ADD COLUMN section VARCHAR;
