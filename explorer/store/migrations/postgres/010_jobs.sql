-- PostgreSQL twin of ../010_jobs.sql: long runs carried out by a worker process (read it for the life of a job).

CREATE TABLE jobs (
    id UUID PRIMARY KEY,
    kind VARCHAR NOT NULL,
    params JSON NOT NULL DEFAULT '{}',
    status VARCHAR NOT NULL DEFAULT 'queued',
    done INTEGER NOT NULL DEFAULT 0,
    total INTEGER NOT NULL DEFAULT 0,
    "current" VARCHAR NOT NULL DEFAULT '',
    result JSON,
    error VARCHAR,
    cancel_requested BOOLEAN NOT NULL DEFAULT false,
    worker VARCHAR,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    started_at TIMESTAMPTZ,
    finished_at TIMESTAMPTZ,
    heartbeat_at TIMESTAMPTZ,
    CONSTRAINT valid_job_status CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    CONSTRAINT valid_job_progress CHECK (done >= 0 AND total >= 0)
);
CREATE INDEX idx_jobs_status ON jobs(status);
