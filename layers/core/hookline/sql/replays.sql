-- Replays requested through the API and their progress. `%(tenant)s` is the caller's scope:
-- NULL for an operator, else the caller's tenant (which sees the replays confined to it).

-- insert_replay --
INSERT INTO replays (id, scope, tenant_id, requested_by, reason, request)
VALUES (%(id)s, %(scope)s, %(tenant_id)s, %(requested_by)s, %(reason)s, %(request)s)
RETURNING *

-- get_replay --
SELECT * FROM replays
WHERE id = %(id)s AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)

-- list_replays --
SELECT * FROM replays
WHERE (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
  AND (%(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s)
  AND (%(state)s::text IS NULL OR state = %(state)s)
  AND (%(after)s::text IS NULL OR id < %(after)s)
ORDER BY id DESC LIMIT %(limit)s

-- claim_replay --
-- The runner takes an accepted replay; a second delivery of the same invocation finds it
-- taken and does nothing.
UPDATE replays SET state = 'running', started_at = now(), heartbeat_at = now(), runs = 1
WHERE id = %(id)s AND state = 'accepted'
RETURNING *

-- claim_continuation --
-- The next run takes a replay handed off by the run before it: only while it is still
-- handed off from that run, so a duplicate or late invocation (or a re-invocation by
-- reconcile racing the original) finds it taken, or finished, and does nothing.
UPDATE replays SET runs = runs + 1, handed_off_at = NULL, reinvoked = 0, heartbeat_at = now()
WHERE id = %(id)s AND state = 'running' AND handed_off_at IS NOT NULL AND runs = %(run)s - 1
RETURNING *

-- hand_off_replay --
-- A run near its time limit records where the next one carries on and the summary so far.
UPDATE replays SET resume = %(resume)s, handed_off_at = now(), heartbeat_at = now(),
    done = %(done)s, total = coalesce(%(total)s, total)
WHERE id = %(id)s AND state = 'running' AND runs = %(run)s AND handed_off_at IS NULL
RETURNING id

-- replay_progress --
UPDATE replays SET done = %(done)s, total = coalesce(%(total)s, total), heartbeat_at = now()
WHERE id = %(id)s AND state = 'running'

-- finish_replay --
UPDATE replays SET state = %(state)s, done = coalesce(%(done)s, done),
    total = coalesce(%(total)s, total), result = %(result)s, audit_id = %(audit_id)s,
    finished_at = now(), heartbeat_at = now(), resume = NULL, handed_off_at = NULL
WHERE id = %(id)s AND state IN ('accepted', 'running')
RETURNING *

-- fail_stale_replays --
-- A runner that died leaves its replay running (or, if it never started, accepted): after
-- the given quiet time it is marked failed, with why, so it does not look alive forever. A
-- replay handed off to its next run is not quiet but waiting (lost_continuations); it fails
-- here only once reconcile has re-invoked it the given number of times in vain.
UPDATE replays SET state = 'failed', finished_at = now(), resume = NULL,
    result = coalesce(resume -> 'result', '{}'::jsonb) || jsonb_build_object('error', CASE
        WHEN state = 'accepted'
            THEN 'the replay never started (its runner was not invoked or was lost); create it again'
        WHEN handed_off_at IS NOT NULL
            THEN 'the replay''s next run never started (invoked ' || (reinvoked + 1)::text
                 || ' times); see the audit log and create it again for what was not reached'
        ELSE 'the replay stopped reporting progress (its runner ended); '
             || 'see the audit log and run it again for what was not reached'
    END)
WHERE (state = 'running' AND handed_off_at IS NULL
       AND heartbeat_at < now() - %(running_quiet)s::interval)
   OR (state = 'running' AND handed_off_at < now() - %(handoff_quiet)s::interval
       AND reinvoked >= %(max_reinvokes)s)
   OR (state = 'accepted' AND created_at < now() - %(accepted_quiet)s::interval)
RETURNING id, requested_by, reason, request, result

-- set_replay_audit_id --
UPDATE replays SET audit_id = %(audit_id)s WHERE id = %(id)s

-- lost_continuations --
-- Replays handed off whose next run has not claimed them for the given time: the
-- invocation was lost (or is still coming). Counted and re-stamped here, in one statement,
-- so two sweeps never re-invoke the same hand-off twice; the claim makes a late original
-- and the re-invocation start one run between them.
UPDATE replays SET reinvoked = reinvoked + 1, handed_off_at = now()
WHERE id IN (
    SELECT id FROM replays
    WHERE state = 'running' AND handed_off_at < now() - %(handoff_quiet)s::interval
      AND reinvoked < %(max_reinvokes)s
    FOR UPDATE SKIP LOCKED
)
RETURNING id, runs

-- replay_visible_deliveries --
-- Which of the ids a caller may replay, and their tenants (`%(tenant)s` NULL: an operator).
SELECT id, tenant_id FROM deliveries
WHERE id = ANY(%(ids)s) AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)

-- replay_visible_events --
SELECT id, tenant_id FROM events
WHERE id = ANY(%(ids)s) AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
