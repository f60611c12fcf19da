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
UPDATE replays SET state = 'running', started_at = now(), heartbeat_at = now()
WHERE id = %(id)s AND state = 'accepted'
RETURNING *

-- replay_progress --
UPDATE replays SET done = %(done)s, total = coalesce(%(total)s, total), heartbeat_at = now()
WHERE id = %(id)s AND state = 'running'

-- finish_replay --
UPDATE replays SET state = %(state)s, done = coalesce(%(done)s, done),
    total = coalesce(%(total)s, total), result = %(result)s, audit_id = %(audit_id)s,
    finished_at = now(), heartbeat_at = now()
WHERE id = %(id)s AND state IN ('accepted', 'running')
RETURNING *

-- fail_stale_replays --
-- A runner that died leaves its replay running (or, if it never started, accepted): after
-- the given quiet time it is marked failed, with why, so it does not look alive forever.
UPDATE replays SET state = 'failed', finished_at = now(),
    result = jsonb_build_object('error', CASE state
        WHEN 'running' THEN 'the replay stopped reporting progress (its runner ended); '
                            || 'see the audit log and run it again for what was not reached'
        ELSE 'the replay never started (its runner was not invoked or was lost); create it again'
    END)
WHERE (state = 'running' AND heartbeat_at < now() - %(running_quiet)s::interval)
   OR (state = 'accepted' AND created_at < now() - %(accepted_quiet)s::interval)
RETURNING id

-- replay_visible_deliveries --
-- Which of the ids a caller may replay, and their tenants (`%(tenant)s` NULL: an operator).
SELECT id, tenant_id FROM deliveries
WHERE id = ANY(%(ids)s) AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)

-- replay_visible_events --
SELECT id, tenant_id FROM events
WHERE id = ANY(%(ids)s) AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
