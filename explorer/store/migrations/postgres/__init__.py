"""The schema for PostgreSQL with pgvector: twins of the DuckDB migrations beside (a package so they ship)."""
