-- PostgreSQL twin of ../003_pause_kind.sql, the same statements: why a session is paused, as a fact.
ALTER TABLE wander_sessions ADD COLUMN pause_kind VARCHAR;

UPDATE wander_sessions SET pause_kind = CASE
    WHEN status_reason LIKE 'checkpoint%' THEN 'checkpoint'
    WHEN status_reason LIKE 'circuit breaker%' THEN 'circuit_breaker'
    WHEN status_reason LIKE 'cloud budget exhausted%' THEN 'budget'
    ELSE 'person'
END
WHERE status = 'paused';
