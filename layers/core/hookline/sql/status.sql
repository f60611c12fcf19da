-- Status: what an operator reads first (`hookline status`), and deliveries listed for a look.

-- status_deliveries_by_state --
SELECT state, count(*) AS n FROM deliveries GROUP BY state

-- status_outbox --
SELECT count(*) AS pending,
       coalesce(extract(epoch FROM now() - min(created_at)), 0)::double precision AS oldest_seconds
FROM outbox WHERE fanned_out_at IS NULL

-- status_backlog_by_group --
-- Unfinished deliveries per tenant group; `due` are pending ones whose time has come (the
-- fan-out enqueues them on its next run).
SELECT tenant_group,
       count(*) FILTER (WHERE state = 'pending') AS pending,
       count(*) FILTER (WHERE state = 'pending' AND next_attempt_at <= now()) AS due,
       count(*) FILTER (WHERE state = 'queued') AS queued,
       count(*) FILTER (WHERE state = 'delivering') AS delivering
FROM deliveries
WHERE state IN ('pending', 'queued', 'delivering')
GROUP BY tenant_group
ORDER BY tenant_group

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
       d.state, d.attempt_count, d.last_status, d.last_error, d.next_attempt_at,
       d.deadline_at, d.created_at, d.updated_at, d.finished_at
FROM deliveries d JOIN events e ON e.id = d.event_id
WHERE (%(state)s::text IS NULL OR d.state = %(state)s)
  AND (%(endpoint_id)s::text IS NULL OR d.endpoint_id = %(endpoint_id)s)
  AND (%(event_id)s::text IS NULL OR d.event_id = %(event_id)s)
  AND (%(since)s::timestamptz IS NULL OR d.created_at >= %(since)s)
ORDER BY d.created_at DESC, d.id DESC
LIMIT %(limit)s
