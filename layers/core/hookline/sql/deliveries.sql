-- fan_out_batch --
-- Claim pending outbox rows, create one delivery per matching enabled endpoint, mark the rows
-- fanned out: one statement, so one transaction; SKIP LOCKED lets fan-outs run side by side
-- and the unique (event, endpoint) makes a repeat harmless. The claimed tenants' endpoints
-- are read once, their filters turned into LIKE patterns once per endpoint rather than once
-- per (event, endpoint) pair (bench/fanout.py). Endpoints with a content filter (an
-- EventBridge pattern, decision 0044) or an ordering (decision 0069) get no delivery here:
-- their type-matching pairs come back, one row per event with its payload, for the caller to
-- match and key in Python and insert with insert_matched_deliveries (or, ordered,
-- insert_ordered_deliveries) in the same transaction. Without such pairs, one row of counts.
-- %(since)s (a ULID time, NULL: every day) keeps a nudged run to the recent days (decision
-- 0101). The statement is hookline_fan_out_batch (migration 0047), whose plan the backend
-- caches: planned at every call it planned every day partition it references.
SELECT * FROM hookline_fan_out_batch(%(limit)s::integer, %(deadline)s::interval,
                                     %(since)s::text)

-- insert_matched_deliveries --
-- The content-filtered pairs that matched (see fan_out_batch), in its transaction.
INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, deadline_at)
SELECT hookline_delivery_id(m.event_id, m.endpoint_id), m.event_id, m.endpoint_id, m.tenant_id,
       m.tenant_group, now() + %(deadline)s
FROM unnest(%(event_ids)s::text[], %(endpoint_ids)s::text[], %(tenant_ids)s::text[],
            %(groups)s::text[]) AS m(event_id, endpoint_id, tenant_id, tenant_group)
ON CONFLICT (id) DO NOTHING

-- insert_ordered_deliveries --
-- The matched pairs of ordered endpoints, in ledger order with their keys, created held and
-- each key's head released (hookline_insert_ordered_deliveries, migration 0028).
SELECT hookline_insert_ordered_deliveries(
    %(event_ids)s::text[], %(endpoint_ids)s::text[], %(tenant_ids)s::text[], %(groups)s::text[],
    %(keys)s::text[], %(deadline)s::interval) AS created

-- new_ordered_deliveries --
-- Of the given deliveries, just created pending, those of an ordered endpoint, with what
-- their keys are computed from, in ledger order (decision 0069).
SELECT d.id, p.ordering, e.type, e.tenant_id, e.source_id, e.payload
FROM deliveries d
JOIN endpoints p ON p.id = d.endpoint_id
JOIN events e ON e.id = d.event_id
WHERE d.id = ANY(%(ids)s::text[]) AND p.ordering IS NOT NULL
  AND d.state = 'pending' AND d.ordering_key IS NULL
ORDER BY d.event_id, d.id

-- hold_new_deliveries --
-- Those deliveries held in their keys' order and each key's head released (migration 0028).
SELECT hookline_hold_deliveries(%(ids)s::text[], %(keys)s::text[]) AS held

-- release_ordered_heads --
-- Each given (endpoint, key)'s oldest held delivery, when nothing of the key runs: pending,
-- due now (migration 0028).
SELECT hookline_release_heads(%(endpoint_ids)s::text[], %(keys)s::text[]) AS released

-- fan_out_and_claim --
-- One fan-out round in one statement (bench/pipeline.py: a nudged run finds one or two events,
-- so every statement it makes is paid per event): fan out up to %(limit)s outbox rows, the new
-- deliveries inserted already queued (a lease and their first generation) and returned, to be
-- sent at once; claim up to %(due_limit)s deliveries that came due otherwise (retries, parked
-- and unsent ones) as claim_due_deliveries does, returned with them; and say whether events of
-- tenants with a content-filtered endpoint wait, which this round leaves to fan_out_batch
-- (hookline.patterns matches them, decision 0044). A head row of `events`, `due` and
-- `filtered_waiting` (`id` NULL), then one row per delivery to send. The work is
-- hookline_fan_out_round (migrations 0022, 0031), whose plans the backend caches: behind RDS
-- Proxy nothing is prepared, and planning it cost more than running it. Its steps after the
-- outbox and due scans are bounded to the days they touch (decision 0072); a nudged run's
-- scans to the days from %(since)s, a ULID time (decision 0101, migration 0046; NULL: every
-- day).
SELECT * FROM hookline_fan_out_round(%(limit)s::integer, %(deadline)s::interval,
                                     %(lease)s::interval, %(due_limit)s::integer,
                                     %(since)s::text)

-- claim_due_deliveries --
-- Pending deliveries whose time has come, marked queued with a lease and a new generation;
-- those made from %(since)s on, a ULID time (decision 0101; NULL: every day). The fan-out
-- round claims its due deliveries the same way: hookline_claim_due (migration 0047), whose
-- plan the backend caches.
SELECT * FROM hookline_claim_due(%(limit)s::integer, %(lease)s::interval, %(since)s::text)

-- ordering_in_use --
-- Whether any enabled endpoint is ordered (decision 0069): the deliverer asks now and then.
SELECT EXISTS (SELECT 1 FROM endpoints WHERE ordering IS NOT NULL AND enabled) AS in_use

-- claim_released_heads --
-- After a deliver batch (decision 0069): what its finished ordered deliveries released (the
-- next of the same endpoint and key, pending and due now), queued with a lease and a new
-- generation, for the deliverer to send at once rather than leave to the next fan-out run.
-- Unordered ids find nothing. A PL/pgSQL function (migration 0028), so its plan over the day
-- partitions is cached in the backend (decision 0066): planned per call it cost more than
-- the rest of the batch's statements together (bench/ordering.py).
SELECT * FROM hookline_claim_released_heads(%(ids)s::text[], %(lease)s::interval)

-- return_unsent_deliveries --
UPDATE deliveries SET state = 'pending', lease_expires_at = NULL, updated_at = now()
WHERE id = ANY(%(ids)s) AND state = 'queued'

-- oldest_pending_outbox_age --
SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::double precision AS seconds
FROM outbox WHERE fanned_out_at IS NULL

-- claim_delivery_to_send --
-- The deliverer's claim of one message, in one statement and so one round trip and one
-- transaction (decision 0025): claim_deliveries_to_send for a batch of one, so the two stay
-- one body (hookline_claim_batch, migration 0037). Claim this generation (a queued delivery
-- held by no live claim with a slot: one whose worker crashed is taken over once its lease
-- runs out; a stale or finished one returns nothing), and, only when the endpoint is enabled
-- and the deadline (%(now)s, the deliverer's clock) has not passed, take a slot while fewer
-- than the endpoint's cap are taken, and read its active secrets (sealed). The claim is a row
-- of the unlogged in-flight table (decision 0085), held without a slot when none was free.
-- It commits without waiting for the disk, behind RDS Proxy too
-- (decisions 0014, 0081).
SELECT * FROM hookline_claim_batch(ARRAY[%(id)s]::text[], ARRAY[%(seq)s]::integer[],
                                   %(lease)s::interval, %(now)s::timestamptz,
                                   %(lease_seconds)s::double precision, false)

-- events_of_claims --
-- The events a day's claim function did not find in the day's partition of events (a test
-- event's delivery made before decision 0087 can carry the next day), read through the
-- parent (decision 0100).
SELECT id, type, payload, content_type, source_id FROM events WHERE id = ANY(%(ids)s::text[])

-- defer_delivery --
-- No slot, or the claim given back: the claim kept without a slot, for a lease covering the
-- delay; the delivery stays queued and no attempt is counted. Only this claim's
-- (hookline_end_claims, migration 0037). It writes only the unlogged in-flight table, so its
-- commit never waits for the disk (decisions 0014, 0085).
SELECT id FROM hookline_end_claims(ARRAY[%(id)s]::text[], ARRAY[%(seq)s]::integer[],
                                   ARRAY[%(claimed_until)s]::timestamptz[], %(lease)s::interval)

-- park_deferred_delivery --
-- Deferred too often in a row (a busy endpoint): off the queue, a due row that fan-out's
-- claim_due_deliveries enqueues when due; no attempt counted. Only while this claim stands
-- (hookline_end_claims, which ends it).
UPDATE deliveries d
SET state = 'pending', next_attempt_at = now() + %(wait)s, lease_expires_at = NULL,
    updated_at = now()
FROM hookline_end_claims(ARRAY[%(id)s]::text[], ARRAY[%(seq)s]::integer[],
                         ARRAY[%(claimed_until)s]::timestamptz[], NULL) AS stood
WHERE d.id = %(id)s AND stood.id = d.id AND d.state = 'queued' AND d.enqueue_seq = %(seq)s

-- insert_attempt --
INSERT INTO attempts (delivery_id, attempted_at, duration_ms, status_code, response_excerpt,
                      error_class, response_headers)
VALUES (%(id)s, %(attempted_at)s, %(duration_ms)s, %(status)s, %(excerpt)s, %(error)s,
        %(headers)s)

-- finish_attempt --
-- The delivery after an attempt: finished, queued again (short retry on an SQS delay, new
-- generation), or pending until a later due time; or finished without one (endpoint disabled,
-- deadline passed: the claim took no slot). Only while this worker's claim stands
-- (hookline_end_claims, which ends it): a worker whose lease ran out and whose delivery was
-- taken over — requeued by reconcile, or claimed again from a redelivered message — changes
-- nothing.
UPDATE deliveries d
SET state = %(state)s,
    attempt_count = d.attempt_count + %(attempted)s,
    next_attempt_at = coalesce(%(next_attempt_at)s, d.next_attempt_at),
    lease_expires_at = %(lease_expires_at)s,
    enqueue_seq = d.enqueue_seq + %(bump)s,
    last_status = coalesce(%(status)s, d.last_status),
    last_error = %(error)s,
    finished_at = CASE WHEN %(state)s IN ('delivered', 'failed', 'dead') THEN now() END,
    updated_at = now()
FROM hookline_end_claims(ARRAY[%(id)s]::text[], ARRAY[%(seq)s]::integer[],
                         ARRAY[%(claimed_until)s]::timestamptz[], NULL) AS stood
WHERE d.id = %(id)s AND stood.id = d.id AND d.state = 'queued' AND d.enqueue_seq = %(seq)s
RETURNING d.id, d.enqueue_seq, d.state

-- record_delivered --
-- A delivered attempt in one statement (one transaction, committed durably):
-- record_deliveries_delivered for a batch of one, so the two stay one body
-- (hookline_record_batch_delivered, migration 0027). The attempt is recorded (it was made,
-- whoever holds the delivery now); the delivery is finished — which frees its slot — only
-- while this worker's claim stands, so a worker whose lease ran out changes nothing of the
-- run that took over. Any success ends the endpoint's failure streak. Returns the id, or no
-- row when the claim no longer stood.
SELECT id FROM hookline_record_batch_delivered(
    ARRAY[%(id)s]::text[], ARRAY[%(seq)s]::integer[], ARRAY[%(claimed_until)s]::timestamptz[],
    ARRAY[%(endpoint_id)s]::text[], ARRAY[%(attempted_at)s]::timestamptz[],
    ARRAY[%(duration_ms)s]::integer[], ARRAY[%(status)s]::integer[],
    ARRAY[%(excerpt)s]::text[], ARRAY[%(headers)s]::jsonb[])

-- get_delivery --
SELECT id, event_id, endpoint_id, tenant_id, tenant_group, state, attempt_count,
       next_attempt_at, lease_expires_at, deadline_at, last_status, last_error, enqueue_seq,
       created_at, updated_at, finished_at
FROM deliveries WHERE id = %(id)s

-- list_attempts --
SELECT id, delivery_id, attempted_at, duration_ms, status_code, response_excerpt, error_class
FROM attempt_log WHERE delivery_id = %(id)s ORDER BY attempted_at, id
