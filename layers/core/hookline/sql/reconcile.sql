-- lock_late_outbox --
-- Outbox rows still waiting for fan-out long after they were written: the nudge and the
-- scheduled fan-out both missed them. Locked (in the caller's transaction) so the fan-out
-- that follows in the same transaction takes exactly these, and no other run counts them.
SELECT event_id FROM outbox
WHERE fanned_out_at IS NULL AND created_at < now() - %(age)s::interval
ORDER BY created_at
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED

-- count_fanned_out --
SELECT count(*) AS n FROM outbox
WHERE event_id = ANY(%(ids)s::text[]) AND fanned_out_at IS NOT NULL

-- count_late_outbox --
SELECT count(*) AS n FROM outbox
WHERE fanned_out_at IS NULL AND created_at < now() - %(age)s::interval

-- kill_past_deadline --
-- Deliveries whose deadline passed while nobody holds them (pending, or leased with the lease
-- run out) are dead, with the reason; a slot they held is released. Each arm of the union
-- reads one partial index, so the sweep never scans delivered rows.
WITH candidates AS (
    SELECT id FROM deliveries WHERE state = 'pending' AND deadline_at <= now()
    UNION ALL
    SELECT id FROM deliveries
    WHERE state IN ('queued', 'delivering') AND lease_expires_at < now() AND deadline_at <= now()
), past AS (
    SELECT d.id, d.endpoint_id, d.state AS was FROM deliveries d
    JOIN candidates c ON c.id = d.id
    WHERE d.deadline_at <= now()
      AND (d.state = 'pending'
           OR (d.state IN ('queued', 'delivering') AND d.lease_expires_at < now()))
    LIMIT %(limit)s
    FOR UPDATE OF d SKIP LOCKED
), released AS (
    DELETE FROM endpoint_slots s USING past
    WHERE s.endpoint_id = past.endpoint_id AND s.delivery_id = past.id
)
UPDATE deliveries d
SET state = 'dead', lease_expires_at = NULL, finished_at = now(), updated_at = now(),
    last_error = 'deadline passed before delivery after ' || d.attempt_count || ' attempts'
                 || coalesce('; last: ' || d.last_error, '')
FROM past WHERE d.id = past.id
RETURNING d.id, past.was

-- requeue_expired_leases --
-- Queued deliveries whose lease ran out (the queue message was lost or never consumed) and
-- delivering ones whose lease ran out (the worker died mid-attempt) are due again now. Only
-- the state moves: the next enqueue bumps enqueue_seq, so a stale copy of the old message is
-- skipped. The endpoint slot a dead worker held is released at once.
WITH expired AS (
    SELECT id, endpoint_id, state AS was FROM deliveries
    WHERE state IN ('queued', 'delivering') AND lease_expires_at < now()
    ORDER BY lease_expires_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
), released AS (
    DELETE FROM endpoint_slots s USING expired
    WHERE s.endpoint_id = expired.endpoint_id AND s.delivery_id = expired.id
)
UPDATE deliveries d
SET state = 'pending', next_attempt_at = now(), lease_expires_at = NULL, updated_at = now()
FROM expired WHERE d.id = expired.id
RETURNING d.id, expired.was

-- count_expired_leases --
SELECT count(*) AS n FROM deliveries
WHERE state IN ('queued', 'delivering') AND lease_expires_at < now()

-- create_missing_deliveries --
-- Fanned-out events of the recent window that lack a delivery to an enabled endpoint which
-- existed, unchanged, before the event arrived and whose filters match its type: the fan-out
-- would have created it, so something lost it. Created now, idempotently. Endpoints with a
-- content filter are left out: a missing delivery there is usually a non-match.
WITH missing AS (
    SELECT e.id AS event_id, p.id AS endpoint_id, e.tenant_id, t.tenant_group, e.received_at
    FROM endpoints p
    JOIN tenants t ON t.id = p.tenant_id
    JOIN events e ON e.tenant_id = p.tenant_id
        AND e.received_at >= now() - %(window)s::interval
        AND e.received_at > greatest(p.created_at, p.updated_at)
    JOIN outbox o ON o.event_id = e.id AND o.fanned_out_at IS NOT NULL
    WHERE p.enabled
      AND hookline_type_matches(p.event_types, e.type)
      AND p.content_filter IS NULL  -- the fan-out decided in Python (decision 0044)
      AND NOT EXISTS (
          SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.endpoint_id = p.id
      )
    LIMIT %(limit)s
)
INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, deadline_at)
SELECT hookline_delivery_id(event_id, endpoint_id), event_id, endpoint_id, tenant_id, tenant_group,
       received_at + %(deadline)s::interval
FROM missing
ON CONFLICT (id) DO NOTHING
RETURNING id

-- never_attempted_deliveries --
-- Unfinished deliveries created long ago that have never been tried (the endpoint is
-- hopelessly behind, or the pipeline is stuck), minus those this run just repaired.
WITH unfinished AS (
    SELECT id, created_at FROM deliveries
    WHERE state = 'pending' AND attempt_count = 0 AND created_at < now() - %(age)s::interval
    UNION ALL
    SELECT id, created_at FROM deliveries
    WHERE state IN ('queued', 'delivering') AND attempt_count = 0
      AND created_at < now() - %(age)s::interval
)
SELECT id FROM unfinished
WHERE NOT (id = ANY(%(exclude)s::text[]))
ORDER BY created_at
LIMIT %(limit)s

-- count_never_attempted --
WITH unfinished AS (
    SELECT id FROM deliveries
    WHERE state = 'pending' AND attempt_count = 0 AND created_at < now() - %(age)s::interval
    UNION ALL
    SELECT id FROM deliveries
    WHERE state IN ('queued', 'delivering') AND attempt_count = 0
      AND created_at < now() - %(age)s::interval
)
SELECT count(*) AS n FROM unfinished WHERE NOT (id = ANY(%(exclude)s::text[]))

-- count_deliveries_by_state --
-- Every state but `delivered` (the bulk of the table, counted by the deliver metrics): each
-- arm reads a partial index.
SELECT 'pending' AS state, count(*) AS n FROM deliveries WHERE state = 'pending'
UNION ALL
SELECT 'queued', count(*) FROM deliveries WHERE state = 'queued'
UNION ALL
SELECT 'delivering', count(*) FROM deliveries WHERE state = 'delivering'
UNION ALL
SELECT 'failed', count(*) FROM deliveries WHERE state = 'failed'
UNION ALL
SELECT 'dead', count(*) FROM deliveries WHERE state = 'dead'

-- insert_reconcile_run --
INSERT INTO reconcile_runs (id, trigger, started_at, finished_at, repairs, findings, unreconciled)
VALUES (%(id)s, %(trigger)s, %(started_at)s, %(finished_at)s, %(repairs)s, %(findings)s,
        %(unreconciled)s)

-- last_reconcile_run --
SELECT id, trigger, started_at, finished_at, repairs, findings, unreconciled
FROM reconcile_runs ORDER BY started_at DESC LIMIT 1

-- prune_reconcile_runs --
DELETE FROM reconcile_runs WHERE started_at < now() - %(keep)s::interval

-- enroll_catchup_sources --
-- Every enabled source whose options turn catch-up on gets a state row.
INSERT INTO source_catchup (source_id)
SELECT id FROM sources
WHERE enabled AND coalesce((options -> 'catchup' ->> 'enabled')::boolean, false)
ON CONFLICT (source_id) DO NOTHING

-- claim_catchup_sources --
-- Sources due for catch-up that no other run holds, leased to this run.
WITH due AS (
    SELECT c.source_id FROM source_catchup c
    JOIN sources s ON s.id = c.source_id
    WHERE s.enabled AND coalesce((s.options -> 'catchup' ->> 'enabled')::boolean, false)
      AND (c.leased_until IS NULL OR c.leased_until < now())
    ORDER BY c.last_run_at NULLS FIRST
    LIMIT %(limit)s
    FOR UPDATE OF c SKIP LOCKED
)
UPDATE source_catchup c SET leased_until = now() + %(lease)s::interval
FROM due WHERE c.source_id = due.source_id
RETURNING c.source_id, c.position

-- finish_catchup_source --
UPDATE source_catchup
SET position = coalesce(%(position)s, position), leased_until = NULL, last_run_at = now(),
    last_error = %(error)s
WHERE source_id = %(source_id)s

-- known_dedupe_keys --
-- Which of these provider ids the ledger already holds for a source.
SELECT dedupe_key FROM events
WHERE tenant_id = %(tenant_id)s AND origin = %(origin)s AND dedupe_key = ANY(%(keys)s::text[])

-- redelivery_requests --
SELECT delivery_key, requests, last_requested_at FROM catchup_redeliveries
WHERE source_id = %(source_id)s AND delivery_key = ANY(%(keys)s::text[])

-- record_redelivery_request --
INSERT INTO catchup_redeliveries (source_id, delivery_key)
VALUES (%(source_id)s, %(key)s)
ON CONFLICT (source_id, delivery_key) DO UPDATE
    SET requests = catchup_redeliveries.requests + 1, last_requested_at = now()
