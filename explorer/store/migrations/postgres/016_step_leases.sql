-- PostgreSQL twin of ../016_step_leases.sql (read it for why).
CREATE TABLE step_leases (
    session_id VARCHAR PRIMARY KEY,
    holder VARCHAR NOT NULL,
    until TIMESTAMPTZ NOT NULL
);
