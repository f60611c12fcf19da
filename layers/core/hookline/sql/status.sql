-- Status: what an operator reads first (`hookline status`), and deliveries listed for a look.

-- status_deliveries_by_state --
-- (a delivery being sent is stored queued with a live claim holding a slot, decision 0085)
WITH stored AS (
    SELECT state, count(*) AS n FROM deliveries GROUP BY state
), sending AS (
    SELECT count(*) AS n FROM deliveries_in_flight WHERE slot AND lease_expires_at >= now()
)
SELECT s.state, s.n - CASE WHEN s.state = 'queued' THEN (SELECT n FROM sending) ELSE 0 END AS n
FROM stored s
UNION ALL
SELECT 'delivering', n FROM sending WHERE n > 0

-- status_outbox --
SELECT count(*) AS pending,
       coalesce(extract(epoch FROM now() - min(created_at)), 0)::double precision AS oldest_seconds
FROM outbox WHERE fanned_out_at IS NULL

-- status_backlog_by_group --
-- Unfinished deliveries per tenant group; `due` are pending ones whose time has come (the
-- fan-out enqueues them on its next run).
SELECT d.tenant_group,
       count(*) FILTER (WHERE d.state = 'pending') AS pending,
       count(*) FILTER (WHERE d.state = 'pending' AND d.next_attempt_at <= now()) AS due,
       count(*) FILTER (WHERE d.state = 'queued' AND f.id IS NULL) AS queued,
       count(*) FILTER (WHERE f.id IS NOT NULL) AS delivering
-- (pending through the due index, queued through the leases from the lease floor on, written
-- or implied by a receipt: decision 0111)
FROM (SELECT x.id, x.tenant_group, x.state, x.next_attempt_at FROM deliveries x
      WHERE x.due_at IS NOT NULL AND x.state = 'pending'
      UNION ALL
      SELECT x.id, x.tenant_group, x.state, x.next_attempt_at
      FROM hookline_leased(hookline_lease_floor()) x
      WHERE x.state IN ('queued', 'delivering')) d
-- (a delivery being sent: queued, with a live claim holding a slot, decision 0085)
LEFT JOIN deliveries_in_flight f
       ON f.id = d.id AND d.state = 'queued' AND f.slot AND f.lease_expires_at >= now()
GROUP BY d.tenant_group
ORDER BY d.tenant_group

-- status_table_columns --
-- The columns of a table, none when it does not exist (an older schema).
SELECT column_name FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = %(table)s

-- status_last_reconcile_run --
-- Run only after status_table_columns found the table and its started_at column: status
-- must answer on a schema from before reconcile (migration 0003) too.
SELECT to_jsonb(r) AS run FROM reconcile_runs r ORDER BY r.started_at DESC LIMIT 1

-- list_deliveries --
SELECT d.id, d.event_id, e.type AS event_type, d.endpoint_id, d.tenant_id, d.tenant_group,
       hookline_shown_state(d.state, d.id) AS state, d.attempt_count, d.last_status,
       d.last_error, d.next_attempt_at,
       d.deadline_at, d.created_at, d.updated_at, d.finished_at
FROM deliveries d JOIN events e ON e.id = d.event_id
WHERE (%(state)s::text IS NULL OR (d.state = hookline_stored_state(%(state)s)
                                  AND hookline_shown_state(d.state, d.id) = %(state)s))
  AND (%(endpoint_id)s::text IS NULL
       OR (hookline_endpoint_key(d.endpoint_id) = hookline_endpoint_key(%(endpoint_id)s)
           AND d.endpoint_id = %(endpoint_id)s))  -- by key (decision 0106)
  AND (%(event_id)s::text IS NULL OR (d.event_id = %(event_id)s  -- by key (decision 0087)
       AND d.id >= hookline_event_deliveries_from(%(event_id)s)
       AND d.id < hookline_event_deliveries_to(%(event_id)s)))
  AND (%(since)s::timestamptz IS NULL OR d.created_at >= %(since)s)
ORDER BY d.created_at DESC, d.id DESC
LIMIT %(limit)s
