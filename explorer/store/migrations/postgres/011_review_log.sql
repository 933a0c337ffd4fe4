-- PostgreSQL twin of ../011_review_log.sql (read it for what the review log keeps): every decision a person made
-- on a crystal, and the decisions taken before the log existed, recovered from the event log.
-- PostgreSQL has no TRY_CAST: an event whose crystal id is not a UUID in the form the store writes one is left
-- out by a pattern instead, and the CAST in the select list only sees the events kept.

CREATE TABLE wander_reviews (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    crystal_id UUID NOT NULL,
    decision VARCHAR NOT NULL,
    reviewer VARCHAR NOT NULL,
    notes VARCHAR,
    state_before VARCHAR NOT NULL,
    state_after VARCHAR NOT NULL,
    values_before JSON,
    values_after JSON,
    forced BOOLEAN NOT NULL DEFAULT false,
    batch_id UUID,
    reverts UUID,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT valid_review_decision CHECK (decision IN ('approve', 'reject', 'archive', 'revert')),
    CONSTRAINT valid_review_states CHECK (
        state_before IN ('pending', 'approved', 'rejected', 'archived')
        AND state_after IN ('pending', 'approved', 'rejected', 'archived')
    )
);
CREATE INDEX idx_reviews_crystal ON wander_reviews(crystal_id);

INSERT INTO wander_reviews (crystal_id, decision, reviewer, notes, state_before, state_after, forced, created_at)
SELECT
    CAST(payload->>'crystal_id' AS UUID),
    payload->>'decision',
    coalesce(payload->>'reviewer', 'human'),
    payload->>'notes',
    payload->>'before',
    payload->>'after',
    coalesce(CAST(payload->>'forced' AS BOOLEAN), false),
    created_at
FROM events
WHERE subject = 'wander.crystal.validated'
    AND payload->>'validated_by' = 'human'
    AND payload->>'decision' IN ('approve', 'reject', 'archive')
    AND payload->>'before' IN ('pending', 'approved', 'rejected', 'archived')
    AND payload->>'after' IN ('pending', 'approved', 'rejected', 'archived')
    AND payload->>'crystal_id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
ORDER BY seq;
