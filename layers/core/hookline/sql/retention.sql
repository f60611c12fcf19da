-- Bounded storage: day partitions, retention, the archive's selection, restore and erasure
-- (docs/decisions/0039-0041). A day's rows are found by ranges of the partition keys, so each
-- statement reads that day's partitions only: `lo`/`hi` bound the event ids of the day,
-- `dlo`/`dhi` its delivery ids.

-- create_day_partition --
-- One table's partition of the day, one transaction each (migration 0030).
SELECT hookline_create_day_partition(%(day)s::date, %(table)s) AS made

-- make_day_functions --
-- Deliver's claim and record for the day's `deliveries` partition, once it has one (migration
-- 0036, decision 0084).
SELECT hookline_make_day_functions(%(day)s::date) AS made

-- set_lock_wait --
-- How long a statement of this transaction waits for a lock before it fails with
-- lock_not_available (decision 0116): below Postgres's deadlock_timeout, so in a deadlock with
-- the pipeline retention gives way, and a pipeline statement queued behind it waits no longer.
-- Set inside a function, which RDS Proxy does not pin on (migration 0054).
SELECT hookline_set_lock_wait(%(wait_ms)s)

-- lock_hot_parents --
-- The hot tables' parents, before any of the day's partitions (migration 0054).
SELECT hookline_lock_hot_parents()

-- drop_day_partitions --
-- The day's partitions and its functions, in one transaction: both stay if the drop refuses.
SELECT hookline_drop_day_functions(%(day)s::date) AS functions,
       hookline_drop_day_partitions(%(day)s::date) AS dropped

-- list_day_partitions --
SELECT day, array_agg(table_name::text ORDER BY table_name) AS tables
FROM hookline_day_partitions
GROUP BY day ORDER BY day

-- day_bounds --
SELECT 'evt_' || hookline_ulid_time(%(day)s::date::timestamp AT TIME ZONE 'UTC') AS lo,
       'evt_' || hookline_ulid_time((%(day)s::date + 1)::timestamp AT TIME ZONE 'UTC') AS hi,
       'dlv_' || hookline_ulid_time(%(day)s::date::timestamp AT TIME ZONE 'UTC') AS dlo,
       'dlv_' || hookline_ulid_time((%(day)s::date + 1)::timestamp AT TIME ZONE 'UTC') AS dhi

-- day_tenants --
-- Per tenant with events in the day: its events, those held by an unfinished delivery, its
-- own retention (NULL: the global one), and whether a restore hold covers the day.
WITH day_deliveries AS (
    SELECT d.event_id, d.state FROM deliveries d WHERE d.id >= %(dlo)s AND d.id < %(dhi)s
    UNION ALL
    SELECT d.event_id, d.state FROM deliveries_default d
    WHERE d.event_id >= %(lo)s AND d.event_id < %(hi)s
), unfinished AS (
    SELECT DISTINCT event_id FROM day_deliveries
    WHERE state IN ('pending', 'queued', 'delivering', 'held')
    UNION
    -- a quarantined fan-out pair is undecided, so unfinished (decision 0059)
    SELECT q.event_id FROM fanout_quarantine q
    WHERE q.event_id >= %(lo)s AND q.event_id < %(hi)s
)
SELECT e.tenant_id, count(*) AS events,
       count(*) FILTER (WHERE e.id IN (SELECT event_id FROM unfinished)) AS unfinished,
       t.retention_days,
       EXISTS (SELECT 1 FROM retention_holds h
               WHERE h.tenant_id = e.tenant_id AND h.expires_at > %(as_of)s
                 AND h.since < %(day_end)s AND h.until >= %(day_start)s) AS held
FROM events e JOIN tenants t ON t.id = e.tenant_id
WHERE e.id >= %(lo)s AND e.id < %(hi)s
GROUP BY e.tenant_id, t.retention_days
ORDER BY e.tenant_id

-- archive_selection --
-- The day's events of the given tenants (all when NULL), none held by an unfinished delivery,
-- in tenant order: each as its archive line, JSON made here (decision 0118; the format is
-- hookline.archive's), with how many deliveries and attempts the line holds and, when
-- `with_ids`, its deliveries' ids (for a delete by id). JSON, not JSONB: nothing is parsed,
-- sorted or read back on the way. A delivery's attempts: the first one its row holds
-- (decision 0109), then its rows of `attempts` by id.
WITH day_deliveries AS (
    SELECT d.id, d.event_id, d.endpoint_id, d.state, d.attempt_count, d.last_status,
           d.last_error, d.created_at, d.finished_at, d.first_attempt_id,
           d.first_attempted_at, d.first_duration_ms, d.first_status
    FROM deliveries d WHERE d.id >= %(dlo)s AND d.id < %(dhi)s
    UNION ALL
    SELECT d.id, d.event_id, d.endpoint_id, d.state, d.attempt_count, d.last_status,
           d.last_error, d.created_at, d.finished_at, d.first_attempt_id,
           d.first_attempted_at, d.first_duration_ms, d.first_status
    FROM deliveries_default d WHERE d.event_id >= %(lo)s AND d.event_id < %(hi)s
), later_attempts AS (
    -- grouped once and joined (a sub-query per delivery read the day's attempts once per
    -- delivery: decision 0117)
    SELECT a.delivery_id, count(*) AS n, json_agg(json_build_object(
               'attempted_at', a.attempted_at, 'duration_ms', a.duration_ms,
               'status_code', a.status_code, 'error_class', a.error_class) ORDER BY a.id)
               AS attempts
    FROM (
        SELECT a.* FROM attempts a WHERE a.delivery_id >= %(dlo)s AND a.delivery_id < %(dhi)s
        UNION ALL
        SELECT a.* FROM attempts_default a
        WHERE a.delivery_id IN (SELECT d.id FROM deliveries_default d
                                WHERE d.event_id >= %(lo)s AND d.event_id < %(hi)s)
    ) a
    GROUP BY a.delivery_id
), outcomes AS (
    SELECT d.event_id,
           json_agg(json_build_object(
               'id', d.id, 'endpoint_id', d.endpoint_id, 'state', d.state,
               'attempt_count', d.attempt_count, 'last_status', d.last_status,
               'last_error', d.last_error, 'created_at', d.created_at,
               'finished_at', d.finished_at,
               'attempts', CASE
                   WHEN d.first_attempt_id IS NULL THEN coalesce(x.attempts, '[]'::json)
                   WHEN x.attempts IS NULL THEN json_build_array(json_build_object(
                       'attempted_at', d.first_attempted_at, 'duration_ms', d.first_duration_ms,
                       'status_code', d.first_status, 'error_class', NULL))
                   ELSE (jsonb_build_array(jsonb_build_object(
                       'attempted_at', d.first_attempted_at, 'duration_ms', d.first_duration_ms,
                       'status_code', d.first_status, 'error_class', NULL))
                       || x.attempts::jsonb)::json
               END
           ) ORDER BY d.id) AS deliveries,
           count(*) AS deliveries_n,
           sum(coalesce(x.n, 0) + (d.first_attempt_id IS NOT NULL)::int)::bigint AS attempts_n,
           array_agg(d.id ORDER BY d.id) FILTER (WHERE %(with_ids)s) AS delivery_ids,
           bool_or(d.state IN ('pending', 'queued', 'delivering', 'held')) AS unfinished
    FROM day_deliveries d LEFT JOIN later_attempts x ON x.delivery_id = d.id
    GROUP BY d.event_id
)
SELECT e.tenant_id, e.id, coalesce(x.deliveries_n, 0) AS deliveries,
       coalesce(x.attempts_n, 0) AS attempts, coalesce(x.delivery_ids, '{}') AS delivery_ids,
       json_build_object(
           'id', e.id, 'tenant_id', e.tenant_id, 'source_id', e.source_id, 'origin', e.origin,
           'type', e.type, 'dedupe_key', e.dedupe_key, 'content_type', e.content_type,
           'headers', e.headers, 'received_at', e.received_at,
           'fanned_out_at', hookline_fanned_out_at(o.event_id, o.fanned_out_at, e.received_at),
           -- base64 without its line breaks (replace: translate costs ~20 µs a line more)
           'payload_base64', replace(encode(e.payload, 'base64'), E'\n', ''),
           'payload_size', octet_length(e.payload),
           'deliveries', coalesce(x.deliveries, '[]'::json))::text AS line
FROM events e
LEFT JOIN outbox o ON o.event_id = e.id
LEFT JOIN outcomes x ON x.event_id = e.id
WHERE e.id >= %(lo)s AND e.id < %(hi)s
  AND (%(tenants)s::text[] IS NULL OR e.tenant_id = ANY(%(tenants)s))
  AND NOT coalesce(x.unfinished, false)
  AND NOT EXISTS (SELECT 1 FROM fanout_quarantine q WHERE q.event_id = e.id)
ORDER BY e.tenant_id, e.id

-- slice_end --
-- Where a slice of the day that begins at `lo` ends (decision 0118): at the millisecond of
-- the `events`-th event after lo's millisecond, or of the `deliveries`-th delivery, whichever
-- comes first (a delivery id keeps its event's millisecond), so it never splits a millisecond
-- and always moves on; at the day's end `hi` when fewer are left.
SELECT least(
    coalesce((SELECT 'evt_' || substr(e.id, 5, 10) FROM events e
              WHERE e.id > %(lo)s::text || '~' AND e.id < %(hi)s
              ORDER BY e.id OFFSET %(events)s - 1 LIMIT 1), %(hi)s),
    coalesce((SELECT 'evt_' || substr(d.id, 5, 10) FROM deliveries d
              WHERE d.id > 'dlv_' || substr(%(lo)s::text, 5) || '~'
                AND d.id < 'dlv_' || substr(%(hi)s::text, 5)
              ORDER BY d.id OFFSET %(deliveries)s - 1 LIMIT 1), %(hi)s)) AS hi

-- record_slice --
INSERT INTO archive_slices (day, lo, hi, counts, attempt_rows)
VALUES (%(day)s, %(lo)s, %(hi)s, %(counts)s, %(attempt_rows)s)
ON CONFLICT (day, lo) DO UPDATE
SET hi = excluded.hi, counts = excluded.counts, attempt_rows = excluded.attempt_rows,
    archived_at = now(), changed = false

-- day_slices --
SELECT lo, hi, counts, attempt_rows, changed FROM archive_slices WHERE day = %(day)s ORDER BY lo

-- forget_slices --
DELETE FROM archive_slices WHERE day = %(day)s

-- mark_slices_changed --
-- The archived slices holding any of these deliveries, which a replay reset or created: the
-- day's drop writes them again (migration 0056). A delivery id keeps its event's millisecond,
-- and a slice's bounds are whole milliseconds, so the event-id form of a delivery id falls in
-- its event's slice. Only days in progress have slices: a few rows.
UPDATE archive_slices s SET changed = true
WHERE NOT s.changed
  AND EXISTS (SELECT 1 FROM unnest(%(ids)s::text[]) AS d(id)
              WHERE 'evt_' || substr(d.id, 5) >= s.lo AND 'evt_' || substr(d.id, 5) < s.hi)

-- days_in_progress --
-- The days with archived slices not yet dropped, or a share stopped mid-way (decision 0118),
-- oldest first.
SELECT day FROM archive_slices UNION SELECT day FROM retention_shares ORDER BY day

-- share_position --
SELECT next_lo FROM retention_shares WHERE day = %(day)s

-- record_share_position --
INSERT INTO retention_shares (day, next_lo) VALUES (%(day)s, %(next_lo)s)
ON CONFLICT (day) DO UPDATE SET next_lo = excluded.next_lo, updated_at = now()

-- forget_share --
DELETE FROM retention_shares WHERE day = %(day)s

-- slice_rows --
-- How many events a slice of the day holds now, and rows of `attempts` (a replay's or a late
-- attempt; a first one on its row never changes): two index ranges (decision 0118).
SELECT (SELECT count(*) FROM events e WHERE e.id >= %(lo)s AND e.id < %(hi)s) AS events,
       (SELECT count(*) FROM attempts a
        WHERE a.delivery_id >= %(dlo)s AND a.delivery_id < %(dhi)s) AS attempt_rows

-- delete_attempts --
DELETE FROM attempts WHERE delivery_id = ANY(%(delivery_ids)s::text[])

-- delete_deliveries --
-- Never an unfinished one: if a replay made one pending since the selection, it stays, and
-- count_deliveries_left finds it, which rolls the whole day back.
DELETE FROM deliveries WHERE id = ANY(%(delivery_ids)s::text[])
  AND state NOT IN ('pending', 'queued', 'delivering', 'held')

-- count_deliveries_left --
-- Deliveries of these events still there after the finished ones were deleted (each event's
-- by key, decision 0087; or made before decision 0040 in the default partition).
SELECT count(*) AS n FROM (
    SELECT 1 FROM unnest(%(event_ids)s::text[]) AS x(event_id)
    JOIN deliveries d ON d.event_id = x.event_id
        AND d.id >= hookline_event_deliveries_from(x.event_id)
        AND d.id < hookline_event_deliveries_to(x.event_id)
    UNION ALL
    SELECT 1 FROM deliveries_default d WHERE d.event_id = ANY(%(event_ids)s::text[])
) left_over

-- delete_outbox --
DELETE FROM outbox WHERE event_id = ANY(%(event_ids)s::text[])

-- delete_events --
DELETE FROM events WHERE id = ANY(%(event_ids)s::text[])

-- prune_event_keys --
-- Dedupe keys past their retention whose event has left the ledger (a key lives at least as
-- long as its event, so a duplicate is never stored twice).
DELETE FROM event_keys k
WHERE k.created_at < %(before)s
  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id)

-- count_event_keys_to_prune --
SELECT count(*) AS n FROM event_keys k
WHERE k.created_at < %(before)s
  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id)

-- retention_overrides --
SELECT coalesce(min(retention_days), 0) AS shortest FROM tenants WHERE retention_days IS NOT NULL

-- set_tenant_retention --
UPDATE tenants SET retention_days = %(days)s WHERE id = %(id)s RETURNING id, retention_days

-- restore_event --
-- An archived event back in the ledger with its original id, its outbox row pending so the
-- fan-out recreates its deliveries (same ids, so the same webhook-ids). Already there: nothing.
WITH new_event AS (
    INSERT INTO events (id, tenant_id, source_id, origin, type, dedupe_key, payload,
                        content_type, headers, received_at)
    SELECT %(id)s, %(tenant_id)s, s.id, %(origin)s, %(type)s, %(dedupe_key)s, %(payload)s,
           %(content_type)s, %(headers)s, %(received_at)s
    FROM (SELECT 1) one LEFT JOIN sources s ON s.id = %(source_id)s
    WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = %(id)s)
    ON CONFLICT (id) DO NOTHING
    RETURNING id, tenant_id
), new_key AS (
    INSERT INTO event_keys (tenant_id, origin, dedupe_key, event_id, created_at)
    SELECT tenant_id, %(origin)s, %(dedupe_key)s, id, %(received_at)s FROM new_event
    WHERE %(origin)s <> 'test'
    ON CONFLICT (tenant_id, origin, dedupe_key) DO NOTHING
), new_outbox AS (
    INSERT INTO outbox (event_id, tenant_id, created_at)
    SELECT id, tenant_id, now() FROM new_event
)
SELECT count(*) AS restored FROM new_event

-- insert_retention_hold --
INSERT INTO retention_holds (tenant_id, since, until, expires_at, reason)
VALUES (%(tenant_id)s, %(since)s, %(until)s, %(expires_at)s, %(reason)s)

-- erase_tenant_attempts --
-- A tenant's deliveries are its endpoints' (no tenant index on deliveries, decision 0091;
-- endpoints are never deleted, only marked so), read by their endpoints' keys (decision 0106).
DELETE FROM attempts a USING deliveries d
WHERE a.delivery_id = d.id AND d.tenant_id = %(tenant_id)s
  AND hookline_endpoint_key(d.endpoint_id) IN (
      SELECT hookline_endpoint_key(id) FROM endpoints WHERE tenant_id = %(tenant_id)s)

-- erase_tenant_deliveries --
DELETE FROM deliveries
WHERE tenant_id = %(tenant_id)s
  AND hookline_endpoint_key(endpoint_id) IN (
      SELECT hookline_endpoint_key(id) FROM endpoints WHERE tenant_id = %(tenant_id)s)

-- erase_tenant_quarantine --
DELETE FROM fanout_quarantine WHERE tenant_id = %(tenant_id)s

-- erase_tenant_outbox --
DELETE FROM outbox WHERE tenant_id = %(tenant_id)s

-- erase_tenant_events --
DELETE FROM events WHERE tenant_id = %(tenant_id)s

-- erase_tenant_keys --
DELETE FROM event_keys WHERE tenant_id = %(tenant_id)s

-- erase_tenant_slices --
-- What the slices of days being archived say of the tenant (decision 0118): its objects go
-- with the erasure, and its rows are gone, so the slices still match what they hold.
UPDATE archive_slices SET counts = counts - %(tenant_id)s::text
WHERE counts ? %(tenant_id)s::text

-- erase_tenant_endpoint_secrets --
DELETE FROM endpoint_secrets s USING endpoints p
WHERE s.endpoint_id = p.id AND p.tenant_id = %(tenant_id)s

-- erase_tenant_source_secrets --
UPDATE sources SET secrets = '{}', enabled = false, deleted_at = coalesce(deleted_at, now())
WHERE tenant_id = %(tenant_id)s AND cardinality(secrets) > 0

-- erase_tenant_endpoints --
UPDATE endpoints SET enabled = false, deleted_at = coalesce(deleted_at, now()),
                     disabled_reason = 'tenant erased'
WHERE tenant_id = %(tenant_id)s AND deleted_at IS NULL

-- tenant_source_ids --
-- Every source the tenant has had (deleted ones too): an archived event names one of these.
SELECT id FROM sources WHERE tenant_id = %(tenant_id)s

-- tenant_exists --
SELECT id FROM tenants WHERE id = %(tenant_id)s

-- table_sizes --
SELECT c.relname AS table_name,
       coalesce(sum(pg_total_relation_size(p.oid)), pg_total_relation_size(c.oid)) AS bytes,
       count(p.oid) AS partitions
FROM pg_class c
LEFT JOIN pg_inherits i ON i.inhparent = c.oid
LEFT JOIN pg_class p ON p.oid = i.inhrelid
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
  AND NOT c.relispartition
GROUP BY c.relname, c.oid ORDER BY c.relname

-- events_outside_days --
-- Events in the default partition: none normally; some when partitions were not made ahead in
-- time (reconcile down longer than partitions_ahead_days, or a clock far off). Retention does
-- not remove them: an operator looks (docs/operations.md).
SELECT count(*) AS n FROM events_default
