-- The review log: every decision a person made on a crystal (one by one or in bulk) and every revert of one,
-- with who, when, why, the review state before and after, and the crystal's review fields before and after
-- (as JSON), so any decision can be put back exactly and a revert can tell whether the crystal changed since.
--
-- decision: approve, reject, archive, or revert (then `reverts` names the review it undid).
-- batch_id: the bulk review an entry was part of. values_before/values_after are NULL for the decisions taken
-- before this log existed (recovered from the event log below): they are history, but cannot be reverted.

CREATE TABLE wander_reviews (
    id UUID PRIMARY KEY DEFAULT uuid(),
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
    AND TRY_CAST(payload->>'crystal_id' AS UUID) IS NOT NULL
ORDER BY seq;
