-- insert_event --
-- The dedupe key, the event and its outbox row in one statement, so in one transaction; a
-- duplicate dedupe key inserts nothing and returns no row. The key lives in its own table
-- (decision 0039): a unique key across the ledger's day partitions cannot be had otherwise.
-- An unknown tenant raises foreign_key_violation (hookline_require_tenant, decision 0080).
WITH new_key AS (
    INSERT INTO event_keys (tenant_id, origin, dedupe_key, event_id)
    SELECT %(tenant_id)s, %(origin)s, %(dedupe_key)s, %(id)s
    WHERE hookline_require_tenant(%(tenant_id)s)
    ON CONFLICT (tenant_id, origin, dedupe_key) DO NOTHING
    RETURNING event_id
), new_event AS (
    INSERT INTO events (id, tenant_id, source_id, origin, type, dedupe_key,
                        payload, content_type, headers)
    SELECT %(id)s, %(tenant_id)s, %(source_id)s, %(origin)s, %(type)s, %(dedupe_key)s,
           %(payload)s, %(content_type)s, %(headers)s
    FROM new_key
    RETURNING id, tenant_id, received_at
), new_outbox AS (
    INSERT INTO outbox (event_id, tenant_id, created_at, traceparent)
    SELECT id, tenant_id, received_at, %(traceparent)s FROM new_event
)
SELECT id FROM new_event

-- accept_event --
-- As insert_event, and for a tenant without a content-filtered or ordered endpoint the
-- event's deliveries too, created queued with a lease for the receiver to send after the
-- commit (decision 0076, migration 0032). No row for a duplicate dedupe key; else a head row
-- (`id` NULL; `fanned_out`: the deliveries were made here) and one row per delivery.
SELECT * FROM hookline_accept_event(
    %(id)s, %(tenant_id)s, %(source_id)s, %(origin)s, %(type)s, %(dedupe_key)s, %(payload)s,
    %(content_type)s, %(headers)s, %(traceparent)s, %(deadline)s::interval,
    %(lease)s::interval)

-- find_event_id_by_dedupe_key --
-- The original of a duplicate, also when its event was archived and removed from the ledger.
SELECT event_id AS id FROM event_keys
WHERE tenant_id = %(tenant_id)s AND origin = %(origin)s AND dedupe_key = %(dedupe_key)s

-- get_event --
SELECT e.id, e.tenant_id, e.source_id, e.origin, e.type, e.dedupe_key, e.payload,
       e.content_type, e.headers, e.received_at,
       hookline_fanned_out_at(o.event_id, o.fanned_out_at, e.received_at) AS fanned_out_at
FROM events e LEFT JOIN outbox o ON o.event_id = e.id
WHERE e.id = %(id)s

-- list_events --
SELECT e.id, e.tenant_id, e.source_id, e.type, e.dedupe_key, e.received_at,
       length(e.payload) AS size
FROM events e
WHERE (%(tenant_id)s::text IS NULL OR e.tenant_id = %(tenant_id)s)
  AND (%(type)s::text IS NULL OR e.type = %(type)s)
  AND (%(source_id)s::text IS NULL OR e.source_id = %(source_id)s)
ORDER BY e.id DESC
LIMIT %(limit)s
