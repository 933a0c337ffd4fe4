-- PostgreSQL twin of ../018_job_phase.sql: a job's progress names the phase its run is in.

ALTER TABLE jobs ADD COLUMN phase VARCHAR NOT NULL DEFAULT '';
