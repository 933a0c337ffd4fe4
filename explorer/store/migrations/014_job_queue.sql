-- The queue entry that carries a job out on a PostgreSQL store: there, jobs are queued on procrastinate (its
-- tables live in the same database) and `queue_job_id` names the procrastinate job, so cancelling the product's
-- job can abort the right one. The file queues its jobs in this table alone, so here it stays NULL: the column
-- exists so both backends hold the same jobs table (a database copied either way keeps every column).
--
-- `worker` (migration 010) names the process that ran a job, "host:pid:start", on either backend.

ALTER TABLE jobs ADD COLUMN queue_job_id BIGINT;
