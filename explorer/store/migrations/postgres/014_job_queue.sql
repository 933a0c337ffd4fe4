-- PostgreSQL twin of ../014_job_queue.sql: the procrastinate job carrying each product job out (read it for why).
-- procrastinate's own tables are installed by explorer/jobs/shared_queue.py when a queue is first opened.

ALTER TABLE jobs ADD COLUMN queue_job_id BIGINT;
