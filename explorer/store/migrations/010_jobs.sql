-- Jobs: long runs carried out by a worker process outside the surface that asked for them.
--
-- A worker claims a queued job by setting it running with its own identity ("host:pid:start"), reports
-- progress (and a heartbeat) between items, and ends it succeeded, failed or cancelled. Whoever reads the
-- jobs checks that the worker of a running job is still alive, so a worker killed outright leaves its job
-- failed with a reason, never running forever.

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
