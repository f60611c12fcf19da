-- The hot path's three heaviest statements as PL/pgSQL functions (decision 0066): behind RDS
-- Proxy nothing may be prepared by name (a named prepared statement pins the session,
-- decision 0036), so each statement was planned afresh on every call, and planning the
-- fan-out round and the batch claim over the day partitions cost more than running them
-- (pg_stat_statements, bench/pipeline.py --statements). PL/pgSQL caches each function's plans
-- in the backend, where the proxy sees no session state: a call is an ordinary statement.
-- The bodies are the named statements of sql/deliveries.sql and sql/delivery_batches.sql
-- (fan_out_and_claim, claim_deliveries_to_send, record_deliveries_delivered), which call them.
-- hookline_claim_batch returns the endpoint auth columns that migration 0023 adds (a PL/pgSQL
-- body is resolved when first called, so the order of the two migrations does not matter).

CREATE FUNCTION hookline_fan_out_round(p_limit integer, p_deadline interval, p_lease interval,
                                       p_due_limit integer)
RETURNS TABLE (events bigint, due bigint, filtered_waiting boolean, id text, endpoint_id text,
               tenant_group text, enqueue_seq integer)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
WITH claimed AS (
    SELECT event_id, tenant_id FROM outbox o
    WHERE fanned_out_at IS NULL
      AND NOT EXISTS (
          SELECT 1 FROM endpoints p
          WHERE p.tenant_id = o.tenant_id AND p.enabled AND p.content_filter IS NOT NULL
      )
    ORDER BY created_at
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED
), targets AS MATERIALIZED (
    SELECT p.id, p.tenant_id, t.tenant_group, hookline_like_patterns(p.event_types) AS patterns
    FROM endpoints p
    JOIN tenants t ON t.id = p.tenant_id
    WHERE p.enabled AND p.tenant_id IN (SELECT tenant_id FROM claimed)
), created AS (
    INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, deadline_at,
                            state, enqueue_seq, lease_expires_at)
    SELECT hookline_delivery_id(e.id, p.id), e.id, p.id, e.tenant_id, p.tenant_group,
           now() + p_deadline, 'queued', 1, now() + p_lease
    FROM claimed c
    JOIN events e ON e.id = c.event_id
    JOIN targets p ON p.tenant_id = e.tenant_id
    WHERE e.type LIKE ANY (p.patterns)
    ON CONFLICT (id) DO NOTHING
    RETURNING id, endpoint_id, tenant_group, enqueue_seq
), marked AS (
    UPDATE outbox o SET fanned_out_at = now()
    FROM claimed c WHERE o.event_id = c.event_id
    RETURNING 1
), due AS (
    SELECT id FROM deliveries
    WHERE state = 'pending' AND next_attempt_at <= now()
    ORDER BY next_attempt_at
    LIMIT p_due_limit
    FOR UPDATE SKIP LOCKED
), requeued AS (
    UPDATE deliveries d
    SET state = 'queued', enqueue_seq = d.enqueue_seq + 1,
        lease_expires_at = now() + p_lease, updated_at = now()
    FROM due WHERE d.id = due.id
    RETURNING d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq
), to_send AS (
    SELECT id, endpoint_id, tenant_group, enqueue_seq FROM created
    UNION ALL
    SELECT id, endpoint_id, tenant_group, enqueue_seq FROM requeued
)
SELECT m.events, (SELECT count(*) FROM requeued) AS due,
       -- CASE: the outbox is looked at only when some enabled endpoint has a content filter
       CASE WHEN EXISTS (SELECT 1 FROM endpoints p
                         WHERE p.enabled AND p.content_filter IS NOT NULL)
            THEN EXISTS (SELECT 1 FROM outbox o
                         WHERE o.fanned_out_at IS NULL
                           AND EXISTS (SELECT 1 FROM endpoints p
                                       WHERE p.tenant_id = o.tenant_id AND p.enabled
                                         AND p.content_filter IS NOT NULL))
            ELSE false END AS filtered_waiting,
       s.id, s.endpoint_id, s.tenant_group, s.enqueue_seq
FROM (SELECT count(*) AS events FROM marked) m
LEFT JOIN to_send s ON true;
END $$;

CREATE FUNCTION hookline_claim_batch(p_ids text[], p_seqs integer[], p_lease interval,
                                     p_now timestamptz, p_lease_seconds double precision,
                                     p_durable boolean)
RETURNS TABLE (id text, attempt_count integer, deadline_at timestamptz, created_at timestamptz,
               tenant_id text, event_id text, tenant_group text, enqueue_seq integer,
               claimed_until timestamptz, endpoint_id text, url text, headers jsonb,
               retry_on_4xx boolean, enabled boolean, deleted boolean, input_transformer jsonb,
               kind text, role_arn text, destination jsonb, auth jsonb, auth_secret text,
               tls jsonb, tls_key text, external_id text, sendable boolean,
               event_type text, payload bytea, content_type text, source_id text,
               secrets text[], wait_seconds double precision)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
WITH opts AS MATERIALIZED (
    SELECT CASE WHEN p_durable THEN NULL::text
                ELSE set_config('synchronous_commit', 'off', true) END AS synchronous_commit
), batch AS (
    SELECT m.id, m.seq
    FROM unnest(p_ids::text[], p_seqs::integer[]) AS m(id, seq)
), claimed AS (
    UPDATE deliveries d
    SET state = 'delivering', lease_expires_at = now() + p_lease, updated_at = now()
    FROM batch b, endpoints p, events e, opts
    WHERE d.id = b.id AND d.enqueue_seq = b.seq
      AND p.id = d.endpoint_id AND e.id = d.event_id
      AND (d.state = 'queued' OR (d.state = 'delivering' AND d.lease_expires_at < now()))
    RETURNING d.id, d.attempt_count, d.deadline_at, d.created_at, d.tenant_id, d.event_id,
              d.tenant_group, d.enqueue_seq, d.lease_expires_at AS claimed_until,
              p.id AS endpoint_id, p.url, p.headers, p.retry_on_4xx, p.enabled,
              p.deleted_at IS NOT NULL AS deleted, p.input_transformer,
              p.kind, p.role_arn, p.destination, p.auth, p.auth_secret, p.tls, p.tls_key,
              (SELECT t.external_id FROM tenants t WHERE t.id = d.tenant_id) AS external_id,
              p.enabled AND p_now < d.deadline_at AS sendable,
              e.type AS event_type, e.payload, e.content_type, e.source_id
), ready AS MATERIALIZED (
    SELECT c.*,
           CASE WHEN c.sendable THEN ARRAY(
               SELECT s.secret FROM endpoint_secrets s
               WHERE s.endpoint_id = c.endpoint_id
                 AND (s.expires_at IS NULL OR s.expires_at > now())
               ORDER BY s.created_at DESC) END AS secrets
    FROM claimed c
)
SELECT r.*,
       CASE WHEN r.sendable
            THEN hookline_take_slot(r.endpoint_id, r.id, p_lease_seconds) END AS wait_seconds
FROM ready r
-- endpoint order: concurrent batches lock the endpoints they share in the same order
ORDER BY r.endpoint_id, r.id;
END $$;

CREATE FUNCTION hookline_record_batch_delivered(
    p_ids text[], p_seqs integer[], p_claimed_until timestamptz[], p_endpoint_ids text[],
    p_attempted_at timestamptz[], p_duration_ms integer[], p_statuses integer[],
    p_excerpts text[])
RETURNS TABLE (id text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
WITH done AS (
    SELECT *
    FROM unnest(p_ids::text[], p_seqs::integer[], p_claimed_until::timestamptz[],
                p_endpoint_ids::text[], p_attempted_at::timestamptz[],
                p_duration_ms::integer[], p_statuses::integer[], p_excerpts::text[])
         AS m(id, seq, claimed_until, endpoint_id, attempted_at, duration_ms, status, excerpt)
), attempt AS (
    INSERT INTO attempts (delivery_id, attempted_at, duration_ms, status_code,
                          response_excerpt, error_class)
    SELECT id, attempted_at, duration_ms, status, excerpt, NULL FROM done
), finished AS (
    UPDATE deliveries d
    SET state = 'delivered', attempt_count = d.attempt_count + 1, lease_expires_at = NULL,
        last_status = coalesce(m.status, d.last_status), last_error = NULL,
        finished_at = now(), updated_at = now()
    FROM done m
    WHERE d.id = m.id AND d.state = 'delivering'
      AND d.enqueue_seq = m.seq AND d.lease_expires_at = m.claimed_until
    RETURNING d.id, d.endpoint_id
), released AS (
    DELETE FROM endpoint_slots s
    USING finished f
    WHERE s.endpoint_id = f.endpoint_id AND s.delivery_id = f.id
), recovered AS (
    UPDATE endpoints SET failing_since = NULL
    WHERE id IN (SELECT DISTINCT endpoint_id FROM done) AND failing_since IS NOT NULL
)
SELECT id FROM finished;
END $$;
