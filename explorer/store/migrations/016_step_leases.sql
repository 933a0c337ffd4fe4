-- Which process is taking a session's step now (explorer/store/leases.py): a second stepper is refused before it
-- asks a model. No foreign key: a lease outliving its session is harmless and is dropped with it.
CREATE TABLE step_leases (
    session_id VARCHAR PRIMARY KEY,
    holder VARCHAR NOT NULL,
    until TIMESTAMPTZ NOT NULL
);
