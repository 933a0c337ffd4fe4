-- PostgreSQL twin of ../017_form_refused.sql: a request the server refused for its response format is logged as
-- `form_refused`, apart from the errors.

ALTER TABLE model_calls DROP CONSTRAINT valid_outcome;
ALTER TABLE model_calls ADD CONSTRAINT valid_outcome
    CHECK (outcome IN ('ok', 'parse_error', 'error', 'timeout', 'form_refused'));
