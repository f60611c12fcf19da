-- Replay: select deliveries (or ledger events) by an operator's selector, reset them for a
-- new run that keeps their id (= webhook-id), re-create missing ones from the ledger, and
-- write the audit entry. Windows are on when the event was received.
--
-- Selections are walked in a stable order (deliveries by created_at, event_id, id; events by
-- received_at, id); the `after` parameter (NULL: from the start) resumes a replay that
-- goes on in a new run after the last id the previous run dealt with. Deliveries go in
-- ledger order: those a fan-out made together share created_at and were made in event id
-- order, while their own ids sort by a hash after the event's millisecond (decision 0040),
-- so by id alone a burst's deliveries would reach an ordered endpoint's keys out of order
-- (decision 0069: a replay holds them in the order it walks them).

-- replay_deliveries_by_ids --
SELECT d.id FROM deliveries d
WHERE d.id = ANY(%(ids)s)
  AND (%(after)s::text IS NULL
       OR (d.created_at, d.event_id, d.id)
           > (SELECT a.created_at, a.event_id, a.id FROM deliveries a WHERE a.id = %(after)s))
ORDER BY d.created_at, d.event_id, d.id
LIMIT %(limit)s

-- replay_deliveries_by_events --
-- Each event's deliveries by key (decision 0087).
SELECT d.id FROM (SELECT DISTINCT unnest(%(event_ids)s::text[]) AS event_id) x
JOIN deliveries d ON d.event_id = x.event_id
    AND d.id >= hookline_event_deliveries_from(x.event_id)
    AND d.id < hookline_event_deliveries_to(x.event_id)
WHERE d.state = ANY(%(states)s)
  AND (%(after)s::text IS NULL
       OR (d.created_at, d.event_id, d.id)
           > (SELECT a.created_at, a.event_id, a.id FROM deliveries a WHERE a.id = %(after)s))
ORDER BY d.created_at, d.event_id, d.id
LIMIT %(limit)s

-- replay_deliveries_by_endpoint --
-- A delivery is created after its event is received, so `d.created_at >= since` is implied
-- and lets the endpoint key index (decision 0106) do the work.
SELECT d.id FROM deliveries d
JOIN events e ON e.id = d.event_id
WHERE hookline_endpoint_key(d.endpoint_id) = hookline_endpoint_key(%(endpoint_id)s)
  AND d.endpoint_id = %(endpoint_id)s
  AND d.created_at >= %(since)s
  AND e.received_at >= %(since)s AND e.received_at < %(until)s
  AND d.state = ANY(%(states)s)
  AND (%(after)s::text IS NULL
       OR (d.created_at, d.event_id, d.id)
           > (SELECT a.created_at, a.event_id, a.id FROM deliveries a WHERE a.id = %(after)s))
ORDER BY d.created_at, d.event_id, d.id
LIMIT %(limit)s

-- replay_deliveries_by_window --
SELECT d.id FROM events e
JOIN deliveries d ON d.event_id = e.id  -- by key (decision 0087)
    AND d.id >= hookline_event_deliveries_from(e.id)
    AND d.id < hookline_event_deliveries_to(e.id)
WHERE (%(tenant_id)s::text IS NULL OR e.tenant_id = %(tenant_id)s)
  AND e.received_at >= %(since)s AND e.received_at < %(until)s
  AND hookline_type_matches(%(types)s::text[], e.type)
  AND d.state = ANY(%(states)s)
  AND (%(after)s::text IS NULL
       OR (d.created_at, d.event_id, d.id)
           > (SELECT a.created_at, a.event_id, a.id FROM deliveries a WHERE a.id = %(after)s))
ORDER BY d.created_at, d.event_id, d.id
LIMIT %(limit)s

-- replay_judge_deliveries --
-- What a reset would do to each delivery, without doing it (dry run). Keep the CASE in step
-- with replay_reset_deliveries.
SELECT d.id,
       CASE
           WHEN d.state IN ('queued', 'delivering')
                AND (hookline_lease_of(d.id, d.lease_expires_at) > now()
                     OR hookline_in_flight(d.id)) THEN 'in_flight'
           WHEN d.state = 'held' THEN 'in_flight'
           WHEN NOT p.enabled THEN 'endpoint_disabled'
       END AS skip
FROM deliveries d JOIN endpoints p ON p.id = d.endpoint_id
WHERE d.id = ANY(%(ids)s)

-- replay_reset_deliveries --
-- A new run of each delivery: queued now with a new generation (older queue messages become
-- stale), a fresh deadline and retry schedule, and a lease covering the send that follows.
-- One in flight (queued under a live lease or a claim, asked after the endpoint's slot lock
-- is taken, decision 0092) is left alone; so is one whose endpoint is disabled (it would only
-- fail). A claim of the endpoint that comes after waits for this transaction.
-- A delivery of an ordered endpoint (decision 0069) is not queued but held, at the back of
-- its key in the order of `ids` (new positions), its deadline counted from its release; one
-- already held waits anyway (in_flight). The caller releases the keys' heads
-- (release_ordered_heads) in the same transaction.
WITH candidates AS (
    SELECT d.id, d.state, hookline_lease_of(d.id, d.lease_expires_at) AS lease, p.enabled,
           d.ordering_key, d.endpoint_id
    FROM deliveries d JOIN endpoints p ON p.id = d.endpoint_id
    WHERE d.id = ANY(%(ids)s)
    FOR UPDATE OF d
), settled AS MATERIALIZED (
    -- the queued ones' endpoint slot locks: a claim being made of them commits first
    SELECT hookline_lock_endpoint_slots(array_agg(endpoint_id)) AS done
    FROM candidates WHERE state IN ('queued', 'delivering')
), judged AS MATERIALIZED (
    SELECT id, ordering_key,
           CASE
               WHEN state IN ('queued', 'delivering')
                    AND CASE WHEN lease > now() THEN true
                             WHEN (SELECT s.done FROM settled s) THEN hookline_in_flight(id)
                        END THEN 'in_flight'
               WHEN state = 'held' THEN 'in_flight'
               WHEN NOT enabled THEN 'endpoint_disabled'
           END AS skip
    FROM candidates
), positions AS (
    SELECT x.id, nextval('hookline_ordering_position') AS position
    FROM (SELECT j.id FROM judged j
          WHERE j.skip IS NULL AND j.ordering_key IS NOT NULL
          ORDER BY array_position(%(ids)s::text[], j.id)) x
), reset AS (
    UPDATE deliveries d
    SET state = CASE WHEN d.ordering_key IS NULL THEN 'queued' ELSE 'held' END,
        enqueue_seq = d.enqueue_seq + 1, attempt_count = 0, next_attempt_at = now(),
        lease_expires_at = CASE WHEN d.ordering_key IS NULL THEN now() + %(lease)s END,
        deadline_at = CASE WHEN d.ordering_key IS NULL THEN now() + %(deadline)s
                           ELSE d.created_at + %(deadline)s END,
        ordering_position = coalesce(o.position, d.ordering_position),
        finished_at = NULL, updated_at = now()
    FROM judged j LEFT JOIN positions o ON o.id = j.id
    WHERE d.id = j.id AND j.skip IS NULL
    RETURNING d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq, d.ordering_key
)
SELECT j.id, j.skip, r.endpoint_id, r.tenant_group, r.enqueue_seq, r.ordering_key
FROM judged j LEFT JOIN reset r ON r.id = j.id

-- replay_known_events --
SELECT id FROM events WHERE id = ANY(%(event_ids)s)

-- refanout_events_by_window --
-- A test event is left out: it was sent to one endpoint, and goes to no other (as reconcile's
-- missing_deliveries_page leaves it out).
SELECT e.id FROM events e
WHERE (%(tenant_id)s::text IS NULL OR e.tenant_id = %(tenant_id)s)
  AND e.origin <> 'test'
  AND e.received_at >= %(since)s AND e.received_at < %(until)s
  AND hookline_type_matches(%(types)s::text[], e.type)
  AND (%(after)s::text IS NULL
       OR (e.received_at, e.id) > (SELECT a.received_at, a.id FROM events a WHERE a.id = %(after)s))
ORDER BY e.received_at, e.id
LIMIT %(limit)s

-- refanout_events_for_endpoint --
-- History for one endpoint: its tenant's events in the window that its filters match, but
-- for test events (each was sent to one endpoint, as in refanout_events_by_window).
SELECT e.id FROM endpoints p
JOIN events e ON e.tenant_id = p.tenant_id
WHERE p.id = %(endpoint_id)s AND e.origin <> 'test'
  AND e.received_at >= %(since)s AND e.received_at < %(until)s
  AND hookline_type_matches(p.event_types, e.type)
  AND (%(after)s::text IS NULL
       OR (e.received_at, e.id) > (SELECT a.received_at, a.id FROM events a WHERE a.id = %(after)s))
ORDER BY e.received_at, e.id
LIMIT %(limit)s

-- refanout_filtered_events --
-- The content-filtered endpoints a refanout considers for each event, one row per event with
-- its payload and the endpoints' patterns, for the caller to match in Python with the
-- fan-out's rule (decisions 0044, 0056); the matches are passed to refanout_count_missing
-- and refanout_create_deliveries. Keep the pairs in step with those two.
SELECT e.id AS event_id, e.tenant_id, e.source_id, e.type, e.payload,
       array_agg(p.id ORDER BY p.id) AS endpoint_ids,
       array_agg(t.tenant_group ORDER BY p.id) AS tenant_groups,
       jsonb_object_agg(p.id, p.content_filter) AS content_filters
FROM events e
JOIN tenants t ON t.id = e.tenant_id
JOIN endpoints p ON p.tenant_id = e.tenant_id AND p.enabled
LEFT JOIN outbox o ON o.event_id = e.id
WHERE e.id = ANY(%(event_ids)s)
  AND hookline_type_matches(p.event_types, e.type)
  AND p.content_filter IS NOT NULL
  AND CASE WHEN %(endpoint_id)s::text IS NULL
           THEN p.created_at <= coalesce(hookline_fanned_out_at(o.event_id, o.fanned_out_at,
                                                                 e.received_at), now())
           ELSE p.id = %(endpoint_id)s END
GROUP BY e.id, e.tenant_id, e.source_id, e.type, e.payload

-- refanout_count_missing --
-- The (event, endpoint) pairs a refanout would consider, and how many have no delivery.
-- Keep the pairs in step with refanout_create_deliveries and refanout_filtered_events.
WITH pairs AS (
    SELECT e.id AS event_id, p.id AS endpoint_id
    FROM events e
    JOIN endpoints p ON p.tenant_id = e.tenant_id AND p.enabled
    LEFT JOIN outbox o ON o.event_id = e.id
    WHERE e.id = ANY(%(event_ids)s)
      AND hookline_type_matches(p.event_types, e.type)
      AND (p.content_filter IS NULL  -- filtered: only the pairs their patterns matched
           OR (e.id, p.id) IN (SELECT * FROM unnest(%(matched_events)s::text[],
                                                    %(matched_endpoints)s::text[])))
      AND CASE WHEN %(endpoint_id)s::text IS NULL
               THEN p.created_at <= coalesce(hookline_fanned_out_at(o.event_id, o.fanned_out_at,
                                                                     e.received_at), now())
               ELSE p.id = %(endpoint_id)s END
)
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE NOT EXISTS (
           SELECT 1 FROM hookline_pair_deliveries(pairs.event_id, pairs.endpoint_id))) AS missing
FROM pairs

-- refanout_create_deliveries --
-- Re-create from the ledger the deliveries the selected events should have: to one named
-- endpoint, or else to every enabled matching endpoint that existed when the event was
-- fanned out (what the fan-out would have created; a content-filtered endpoint only where its
-- pattern matched, see refanout_filtered_events). Existing ones are left alone, so only
-- the missing ones are made. They are held pending for `hold`: the replay sends them at its
-- own pace, and if it dies first the fan-out enqueues them when the hold ends.
WITH pairs AS (
    SELECT e.id AS event_id, p.id AS endpoint_id, e.tenant_id, t.tenant_group
    FROM events e
    JOIN tenants t ON t.id = e.tenant_id
    JOIN endpoints p ON p.tenant_id = e.tenant_id AND p.enabled
    LEFT JOIN outbox o ON o.event_id = e.id
    WHERE e.id = ANY(%(event_ids)s)
      AND hookline_type_matches(p.event_types, e.type)
      AND (p.content_filter IS NULL  -- filtered: only the pairs their patterns matched
           OR (e.id, p.id) IN (SELECT * FROM unnest(%(matched_events)s::text[],
                                                    %(matched_endpoints)s::text[])))
      AND CASE WHEN %(endpoint_id)s::text IS NULL
               THEN p.created_at <= coalesce(hookline_fanned_out_at(o.event_id, o.fanned_out_at,
                                                                     e.received_at), now())
               ELSE p.id = %(endpoint_id)s END
), created AS (
    INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, deadline_at,
                            next_attempt_at)
    SELECT hookline_delivery_id(event_id, endpoint_id), event_id, endpoint_id, tenant_id,
           tenant_group, now() + %(deadline)s, now() + %(hold)s
    FROM pairs x
    -- a delivery made before decision 0040 has an id of another shape: checked by pair
    WHERE NOT EXISTS (SELECT 1 FROM hookline_pair_deliveries(x.event_id, x.endpoint_id))
    ORDER BY event_id, endpoint_id
    ON CONFLICT (id) DO NOTHING
    RETURNING id
)
SELECT (SELECT count(*) FROM pairs) AS pairs,
       coalesce((SELECT array_agg(id ORDER BY id) FROM created), '{}') AS created

-- ---------------------------------------------------------------------------------------
-- The replays the API records (the `replays` table).

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
