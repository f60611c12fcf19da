-- Queries of the local dev stack only (`hookline dev`, `hookline demo`); never run on AWS.

-- devstack_try_lock --
-- One dev stack per database: a session-level advisory lock, held by a connection kept open
-- for the stack's lifetime. It is released by Postgres when that session ends, even on kill -9.
SELECT pg_try_advisory_lock(%(key)s) AS locked

-- devstack_requeue_in_progress --
-- On start, the dev stack owns every delivery that is on a queue or being delivered: the
-- previous stack is gone (the lock above proves it), and its emulator's queues with it.
-- Back to pending keeps next_attempt_at, so a retry still waits for its time; fan-out then
-- enqueues each with a new generation, which retires any copy a surviving emulator still holds.
WITH requeued AS (
    UPDATE deliveries
    SET state = 'pending', lease_expires_at = NULL, updated_at = now()
    WHERE state IN ('queued', 'delivering')
    RETURNING id
), ended AS (
    -- their claims (decision 0085), which frees their endpoints' slots
    DELETE FROM deliveries_in_flight f USING requeued r WHERE f.id = r.id
)
SELECT count(*) AS requeued FROM requeued

-- devstack_status --
-- The numbers of the live status line.
SELECT
    (SELECT count(*) FROM events) AS received,
    (SELECT count(*) FROM outbox WHERE fanned_out_at IS NULL) AS unfanned,
    count(*) FILTER (WHERE state = 'delivered') AS delivered,
    count(*) FILTER (WHERE state IN ('pending', 'queued', 'delivering') AND attempt_count > 0)
        AS retrying,
    count(*) FILTER (WHERE state = 'failed') AS failed,
    count(*) FILTER (WHERE state = 'dead') AS dead
FROM deliveries

-- devstack_backlog --
-- Unfinished deliveries per tenant group.
SELECT tenant_group, count(*) AS backlog
FROM deliveries
WHERE state IN ('pending', 'queued', 'delivering')
GROUP BY tenant_group

-- devstack_event_deliveries --
-- Every delivery of one event, with its endpoint's URL.
SELECT d.id, d.endpoint_id, p.url, hookline_shown_state(d.state, d.id) AS state,
       d.attempt_count, d.last_status, d.last_error,
       d.next_attempt_at, d.finished_at
FROM deliveries d JOIN endpoints p ON p.id = d.endpoint_id
WHERE d.event_id = %(event_id)s  -- by key (decision 0087)
  AND d.id >= hookline_event_deliveries_from(%(event_id)s)
  AND d.id < hookline_event_deliveries_to(%(event_id)s)
ORDER BY d.id
