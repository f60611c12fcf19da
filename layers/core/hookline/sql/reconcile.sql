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
-- Deliveries whose deadline passed while nobody holds them (pending, or queued with the lease
-- run out and no live claim) are dead, with the reason; the claims they had end with them.
-- The pending arm reads the due index (decision 0097); the queued arm the leases that ran
-- out since the lease floor (hookline_lease_floor: below it nothing is queued), written or
-- implied by a receipt (hookline_leased, decision 0111).
-- Whether a claim holds a queued delivery is asked after its row and its endpoint's slot
-- lock are taken (decision 0092; hookline_in_flight reads with a fresh snapshot): a claim
-- being made holds that lock, so it commits first and is seen.
WITH candidates AS (
    SELECT id FROM deliveries
    WHERE due_at IS NOT NULL AND state = 'pending' AND deadline_at <= now()
    UNION ALL
    SELECT id FROM hookline_leased(hookline_lease_floor(), now())
    WHERE state IN ('queued', 'delivering') AND deadline_at <= now()
), past AS MATERIALIZED (
    SELECT d.id, d.state AS was, d.endpoint_id FROM deliveries d
    JOIN candidates c ON c.id = d.id
    WHERE d.deadline_at <= now()
      AND (d.state = 'pending'
           OR (d.state IN ('queued', 'delivering')
               AND hookline_lease_of(d.id, d.lease_expires_at) < now()))
    LIMIT %(limit)s
    FOR UPDATE OF d SKIP LOCKED
), settled AS MATERIALIZED (
    -- the queued ones' endpoint slot locks: a claim being made of them commits first
    SELECT hookline_lock_endpoint_slots(array_agg(p.endpoint_id)) AS done
    FROM past p WHERE p.was <> 'pending'
), free AS MATERIALIZED (
    -- (a CASE: the locks before the question)
    SELECT p.id, p.was FROM past p
    WHERE p.was = 'pending'
       OR CASE WHEN (SELECT s.done FROM settled s) THEN NOT hookline_in_flight(p.id) END
), ended AS (
    DELETE FROM deliveries_in_flight f USING free WHERE f.id = free.id
)
UPDATE deliveries d
SET state = 'dead', lease_expires_at = NULL, finished_at = now(), updated_at = now(),
    last_error = 'deadline passed before delivery after ' || d.attempt_count || ' attempts'
                 || coalesce('; last: ' || d.last_error, '')
FROM free WHERE d.id = free.id AND d.id = ANY (ARRAY(SELECT id FROM free))
RETURNING d.id, free.was

-- requeue_expired_leases --
-- Queued deliveries whose lease ran out (the queue message was lost or never consumed), and
-- those whose claim's lease ran out first (the worker died mid-attempt: `was` delivering), are
-- due again now, unless a claim holds them (asked after the locks, as kill_past_deadline
-- does). Only the state moves, and the dead claim is forgotten: the next enqueue bumps
-- enqueue_seq, so a stale copy of the old message is skipped. The leases read are those that
-- ran out since the lease floor (decision 0097), which advance_lease_floor moves after,
-- written or implied by a receipt (decision 0111): the oldest first, each delivery locked by
-- its id, until the limit.
WITH expired AS MATERIALIZED (
    SELECT d.id, d.endpoint_id
    FROM (SELECT l.id FROM hookline_leased(hookline_lease_floor(), now()) l
          WHERE l.state IN ('queued', 'delivering')
          ORDER BY hookline_lease_of(l.id, l.lease_expires_at)) l
    CROSS JOIN LATERAL (SELECT x.id, x.endpoint_id FROM deliveries x
                        WHERE x.id = l.id AND x.state IN ('queued', 'delivering')
                          AND hookline_lease_of(x.id, x.lease_expires_at) < now()
                        FOR UPDATE SKIP LOCKED) d
    LIMIT %(limit)s
), crashed AS MATERIALIZED (
    -- claims whose lease ran out before their delivery's own (the in-flight table is small),
    -- each delivery looked up and locked by its id
    SELECT d.id, d.endpoint_id
    FROM (SELECT f.id FROM deliveries_in_flight f
          WHERE f.slot AND f.lease_expires_at < now()
          ORDER BY f.lease_expires_at
          LIMIT %(limit)s) f
    CROSS JOIN LATERAL (SELECT x.id, x.endpoint_id FROM deliveries x
                        WHERE x.id = f.id AND x.state IN ('queued', 'delivering')
                          AND hookline_lease_of(x.id, x.lease_expires_at) >= now()
                        FOR UPDATE SKIP LOCKED) d
), locked AS MATERIALIZED (
    SELECT id, endpoint_id FROM expired UNION SELECT id, endpoint_id FROM crashed
), settled AS MATERIALIZED (
    SELECT hookline_lock_endpoint_slots(array_agg(l.endpoint_id)) AS done FROM locked l
), free AS MATERIALIZED (
    SELECT l.id FROM locked l
    WHERE CASE WHEN (SELECT s.done FROM settled s) THEN NOT hookline_in_flight(l.id) END
), ended AS MATERIALIZED (
    DELETE FROM deliveries_in_flight f USING free WHERE f.id = free.id
    RETURNING f.id, f.slot
)
UPDATE deliveries d
SET state = 'pending', next_attempt_at = now(), lease_expires_at = NULL, updated_at = now()
FROM free
-- (reached through the ids, whatever the estimate of the union above)
WHERE d.id = free.id AND d.id = ANY (ARRAY(SELECT id FROM free))
RETURNING d.id,
          CASE WHEN EXISTS (SELECT 1 FROM ended x WHERE x.id = d.id AND x.slot)
               THEN 'delivering' ELSE 'queued' END AS was

-- advance_lease_floor --
-- The lease floor (decision 0097) moved up to the first lease that ran out on a delivery still
-- queued (a live claim holds it, or a sweep skipped it as locked: it is looked at again next
-- run), or to a minute ago when there is none. Never down. A lease is written 15 minutes or
-- more ahead, and by a transaction far shorter than that (a Lambda's 15 minutes at most), so
-- no lease committed after this statement falls below the floor it sets.
INSERT INTO reconcile_positions AS r (name, after_at)
SELECT 'lease_floor', least(
    now() - interval '1 minute',
    coalesce((SELECT min(hookline_lease_of(d.id, d.lease_expires_at))
              FROM hookline_leased(hookline_lease_floor(), now()) d
              WHERE d.state IN ('queued', 'delivering')), 'infinity'))
ON CONFLICT (name) DO UPDATE
    SET after_at = greatest(r.after_at, excluded.after_at), updated_at = now()
RETURNING r.after_at

-- count_expired_leases --
-- What requeue_expired_leases would requeue now.
SELECT count(*) AS n FROM (
    SELECT id FROM hookline_leased(hookline_lease_floor(), now())
    WHERE state IN ('queued', 'delivering')
    UNION
    SELECT f.id FROM deliveries_in_flight f WHERE f.slot AND f.lease_expires_at < now()
) c
WHERE NOT EXISTS (SELECT 1 FROM deliveries_in_flight f
                  WHERE f.id = c.id AND f.lease_expires_at >= now())

-- missing_deliveries_page --
-- One step of the walk over the recent window's events, by id after %(floor)s (where the
-- last step stopped, or the window's start when that is later; a value, so that only the day
-- partitions from it on are planned: with the 99 of the default retention, naming them all
-- cost 80 ms of planning a step): of the next %(scan)s events, those up to the %(limit)s-th
-- that are fanned out and lack a delivery to an enabled endpoint which existed, unchanged,
-- before the event arrived and whose type filters match (the fan-out would have created it
-- or, for an endpoint with a content filter, decided whether to). One row per such event,
-- with those of its missing pairs whose endpoint has a content filter, their patterns and
-- the payload, for the caller to match with the fan-out's rule (`content_matches`, decision
-- 0056); the events and the matches go to create_missing_deliveries. Keep the pairs in step
-- with it. Every row (one, with a NULL event, when none lacks anything) carries where the
-- next step starts (`last`), whether there is one (`more`) and whether the step stopped at
-- its %(limit)s-th event (`full`). A non-matching pair stays "missing" for good, so the walk
-- goes by id rather than take whatever is missing first; the scan is capped so each step
-- reads the events' primary key in order.
-- The pairs are checked as sets (decision 0090), not one by one: each (tenant, type) of the
-- scan is matched against its tenant's endpoints once; the scan's deliveries are read as one
-- range of the primary key (a delivery's id starts with its event's millisecond, 0040) and
-- taken away from the pairs; a pair still missing is looked for in the default partition by
-- (event, endpoint), where ids made before 0040 live (as hookline_pair_deliveries does).
-- The CTEs' row estimates are guesses, so the statement is written for plans that stay
-- linear whatever they are: ranges, a set difference, hashes and probes by key, never a CTE
-- read again per row of another (an IN over one did that: 750,000 rows read a step).
WITH scanned AS MATERIALIZED (
    SELECT e.id, e.tenant_id, e.source_id, e.type, e.received_at, e.origin FROM events e
    WHERE e.id > %(floor)s::text AND e.received_at >= now() - %(window)s::interval
    ORDER BY e.id
    LIMIT %(scan)s
), bounds AS MATERIALIZED (
    SELECT min(s.id) AS lo, max(s.id) AS hi FROM scanned s
), fanned AS MATERIALIZED (
    -- the scan's fanned-out events: all but those whose outbox row still waits for the
    -- fan-out (one fanned out at receipt has none, decision 0096), within the scan's range;
    -- an anti-join, which reads the waiting rows' partial index (a NOT IN would be a
    -- subplan, run again per event once its estimate outgrew work_mem)
    SELECT s.* FROM scanned s
    WHERE s.origin <> 'test'  -- a test event goes to its one endpoint only
      AND NOT EXISTS (SELECT 1 FROM outbox o
                      WHERE o.event_id = s.id
                        AND o.event_id > %(floor)s::text
                        AND o.event_id >= (SELECT b.lo FROM bounds b)
                        AND o.event_id <= (SELECT b.hi FROM bounds b)
                        AND o.fanned_out_at IS NULL)
), targets AS MATERIALIZED (
    -- each (tenant, type) of the scan matched against its tenant's endpoints once
    SELECT k.tenant_id, k.type, p.id AS endpoint_id, greatest(p.created_at, p.updated_at) AS since
    FROM (SELECT DISTINCT f.tenant_id, f.type FROM fanned f) k
    JOIN endpoints p ON p.tenant_id = k.tenant_id AND p.enabled
    WHERE hookline_type_matches(p.event_types, k.type)
), unpaired AS MATERIALIZED (
    -- the pairs without a delivery among the scan's, read as one range of the primary key
    SELECT f.id AS event_id, t.endpoint_id FROM fanned f
    JOIN targets t ON t.tenant_id = f.tenant_id AND t.type = f.type AND f.received_at > t.since
    EXCEPT
    SELECT d.event_id, d.endpoint_id FROM deliveries d
    WHERE d.id > hookline_event_deliveries_from(%(floor)s::text)
      AND d.id >= (SELECT hookline_event_deliveries_from(b.lo) FROM bounds b)
      AND d.id < (SELECT hookline_event_deliveries_to(b.hi) FROM bounds b)
), page_end AS MATERIALIZED (
    -- the `limit`-th event with an unpaired pair, if there are that many: a full page's end
    SELECT u.event_id AS last FROM (SELECT DISTINCT v.event_id FROM unpaired v) u
    ORDER BY u.event_id OFFSET %(limit)s - 1 LIMIT 1
), lacking AS MATERIALIZED (
    -- the page's pairs probed by key: also finds a delivery made before 0040
    SELECT u.event_id, u.endpoint_id FROM unpaired u
    WHERE ((SELECT pe.last FROM page_end pe) IS NULL
           OR u.event_id <= (SELECT pe.last FROM page_end pe))
      AND NOT EXISTS (SELECT 1 FROM deliveries_default d
                      WHERE d.event_id = u.event_id AND d.endpoint_id = u.endpoint_id)
), walked AS (
    -- a full page: the next step starts after it; else after everything scanned
    SELECT coalesce((SELECT pe.last FROM page_end pe), (SELECT max(s.id) FROM scanned s)) AS last,
           (SELECT pe.last FROM page_end pe) IS NOT NULL AS full,
           (SELECT pe.last FROM page_end pe) IS NOT NULL
           OR (SELECT count(*) FROM scanned s) >= %(scan)s AS more
), page AS (
    -- per event lacking a pair: those of its pairs whose endpoint has a content filter
    SELECT l.event_id,
           array_agg(p.id ORDER BY p.id) FILTER (WHERE p.content_filter IS NOT NULL)
               AS endpoint_ids,
           array_agg(t.tenant_group ORDER BY p.id) FILTER (WHERE p.content_filter IS NOT NULL)
               AS tenant_groups,
           jsonb_object_agg(p.id, p.content_filter) FILTER (WHERE p.content_filter IS NOT NULL)
               AS content_filters
    FROM lacking l
    JOIN endpoints p ON p.id = l.endpoint_id
    JOIN tenants t ON t.id = p.tenant_id
    GROUP BY l.event_id
)
SELECT w.last, w.more, w.full, g.event_id, e.tenant_id, e.source_id, e.type,
       coalesce(g.endpoint_ids, '{}') AS endpoint_ids,
       coalesce(g.tenant_groups, '{}') AS tenant_groups,
       g.content_filters,
       CASE WHEN g.endpoint_ids IS NOT NULL THEN e.payload END AS payload
FROM walked w
LEFT JOIN page g ON true
LEFT JOIN LATERAL (
    SELECT x.tenant_id, x.source_id, x.type, x.payload FROM events x
    WHERE x.id = g.event_id AND x.id > %(floor)s::text
) e ON true
ORDER BY g.event_id

-- create_missing_deliveries --
-- Create, idempotently, the deliveries a page of missing_deliveries_page lacks: to every
-- endpoint without a content filter, and to a filtered one only for the pairs its pattern
-- matched (passed as two arrays, as to refanout_create_deliveries). The pair conditions are
-- missing_deliveries_page's, checked again: an endpoint changed or disabled meanwhile is left
-- alone. The deadline counts from when the event arrived, as the fan-out's would have.
WITH missing AS (
    SELECT e.id AS event_id, p.id AS endpoint_id, e.tenant_id, t.tenant_group, e.received_at
    FROM events e
    JOIN endpoints p ON p.tenant_id = e.tenant_id AND p.enabled
        AND e.received_at > greatest(p.created_at, p.updated_at)
    JOIN tenants t ON t.id = p.tenant_id
    WHERE e.id = ANY(%(event_ids)s::text[]) AND e.origin <> 'test'
      -- fanned out: no outbox row still waiting (none at all: fanned out at receipt, 0096)
      AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = e.id AND o.fanned_out_at IS NULL)
      AND hookline_type_matches(p.event_types, e.type)
      AND (p.content_filter IS NULL  -- filtered: only the pairs their patterns matched
           OR (e.id, p.id) IN (SELECT * FROM unnest(%(matched_events)s::text[],
                                                    %(matched_endpoints)s::text[])))
      AND NOT EXISTS (SELECT 1 FROM hookline_pair_deliveries(e.id, p.id))
)
INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, deadline_at)
SELECT hookline_delivery_id(event_id, endpoint_id), event_id, endpoint_id, tenant_id, tenant_group,
       received_at + %(deadline)s::interval
FROM missing
ORDER BY event_id, endpoint_id
ON CONFLICT (id) DO NOTHING
RETURNING id

-- reconcile_position --
-- Where the named walk resumes: its cycle, the last event id it read (NULL: the window's
-- start), whether that id is older than the window's start (the cycle took longer than the
-- window: the events in between were never checked in this cycle), and until when the walk
-- rests after finishing a cycle (NULL: it does not; finish_reconcile_cycle stamps the time).
SELECT cycle, after_id,
       after_id < 'evt_' || hookline_ulid_time(now() - %(window)s::interval) AS lapsed,
       CASE WHEN after_id IS NULL AND cycle > 0 AND updated_at + %(rest)s::interval > now()
            THEN updated_at + %(rest)s::interval END AS resting_until
FROM reconcile_positions WHERE name = %(name)s

-- advance_reconcile_position --
-- A run stopped after an event, in the cycle it read. Only forward, and only in the cycle
-- the run read: two runs at once keep the further position (each walked contiguously from a
-- stored position, so nothing before it is skipped), and a run that started before another
-- finished the cycle writes nothing (its position would skip the new cycle's start).
INSERT INTO reconcile_positions AS r (name, cycle, after_id)
VALUES (%(name)s, %(cycle)s::bigint, %(after)s::text)
ON CONFLICT (name) DO UPDATE
    SET after_id = greatest(r.after_id, excluded.after_id), updated_at = now()
    WHERE r.cycle = excluded.cycle

-- finish_reconcile_cycle --
-- A run reached the window's end: the next run starts a new cycle at the
-- window's start. Once per cycle: a second run finishing the same cycle writes nothing.
INSERT INTO reconcile_positions AS r (name, cycle, after_id)
VALUES (%(name)s, %(cycle)s::bigint + 1, NULL)
ON CONFLICT (name) DO UPDATE
    SET cycle = excluded.cycle, after_id = NULL, updated_at = now()
    WHERE r.cycle = %(cycle)s::bigint

-- never_attempted_deliveries --
-- Unfinished deliveries created long ago that have never been tried (the endpoint is
-- hopelessly behind, or the pipeline is stuck), minus those this run just repaired. A queued
-- one counts once its lease has run out (decision 0097): until then its message is on the
-- queue, and the leases read are only those since the lease floor.
WITH unfinished AS (
    SELECT id, created_at FROM deliveries
    WHERE due_at IS NOT NULL AND state = 'pending' AND attempt_count = 0
      AND created_at < now() - %(age)s::interval
    UNION ALL
    SELECT id, created_at FROM hookline_leased(hookline_lease_floor(), now())
    WHERE state IN ('queued', 'delivering') AND attempt_count = 0
      AND created_at < now() - %(age)s::interval
)
SELECT id FROM unfinished
WHERE NOT (id = ANY(%(exclude)s::text[]))
ORDER BY created_at
LIMIT %(limit)s

-- count_never_attempted --
-- (never_attempted_deliveries' rows, counted)
WITH unfinished AS (
    SELECT id FROM deliveries
    WHERE due_at IS NOT NULL AND state = 'pending' AND attempt_count = 0
      AND created_at < now() - %(age)s::interval
    UNION ALL
    SELECT id FROM hookline_leased(hookline_lease_floor(), now())
    WHERE state IN ('queued', 'delivering') AND attempt_count = 0
      AND created_at < now() - %(age)s::interval
)
SELECT count(*) AS n FROM unfinished WHERE NOT (id = ANY(%(exclude)s::text[]))

-- count_deliveries_by_state --
-- Every state but `delivered` (the bulk of the table, counted by the deliver metrics): each
-- arm reads a partial index on a marker (decision 0097), the queued one the leases from the
-- lease floor on (one lease's deliveries, delivered ones included).
SELECT 'pending' AS state, count(*) AS n FROM deliveries
WHERE due_at IS NOT NULL AND state = 'pending'
UNION ALL
-- (a delivery being sent is queued with a live claim holding a slot, decision 0085)
SELECT 'queued', (SELECT count(*) FROM hookline_leased(hookline_lease_floor())
                  WHERE state = 'queued')
                 - (SELECT count(*) FROM deliveries_in_flight
                    WHERE slot AND lease_expires_at >= now())
UNION ALL
SELECT 'delivering', count(*) FROM deliveries_in_flight
WHERE slot AND lease_expires_at >= now()
UNION ALL
SELECT 'failed', count(*) FROM deliveries WHERE failed_at IS NOT NULL AND state = 'failed'
UNION ALL
SELECT 'dead', count(*) FROM deliveries WHERE failed_at IS NOT NULL AND state = 'dead'
UNION ALL  -- waiting behind their ordering key (decision 0069)
SELECT 'held', count(*) FROM deliveries WHERE ordering_open AND state = 'held'

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

-- prune_expired_claims --
-- The in-flight rows whose lease ran out, forgotten (decision 0085); requeue_expired_leases,
-- which runs first, has requeued the deliveries they held.
SELECT hookline_prune_expired_claims() AS n

-- receipt_lease --
-- The lease a delivery made at receipt holds without writing it (decision 0111); NULL: off.
SELECT hookline_receipt_lease() AS lease

-- set_receipt_lease --
-- The receipt lease set to `lease`, the queued deliveries' implied leases written first so
-- none moves; how many were written.
SELECT hookline_set_receipt_lease(%(lease)s::interval) AS written
