-- A what-if for `bench/pipeline.py --shape`: the receiver's function as one statement (its
-- tenant lookup, dedupe key, event, outbox row and deliveries as data-modifying CTEs) instead
-- of six, each of which PL/pgSQL sets up and runs on its own. The unknown tenant is told
-- from a duplicate only when the statement stored nothing.
CREATE OR REPLACE FUNCTION hookline_accept_event(
    p_id text, p_tenant_id text, p_source_id text, p_origin text, p_type text,
    p_dedupe_key text, p_payload bytea, p_content_type text, p_headers jsonb,
    p_traceparent text, p_deadline interval, p_lease interval)
RETURNS TABLE (event_id text, fanned_out boolean, id text, endpoint_id text,
               tenant_group text, enqueue_seq integer)
LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH tenant AS MATERIALIZED (
        SELECT t.tenant_group FROM tenants t WHERE t.id = p_tenant_id
    ), stored_key AS (
        INSERT INTO event_keys (tenant_id, origin, dedupe_key, event_id)
        SELECT p_tenant_id, p_origin, p_dedupe_key, p_id FROM tenant
        ON CONFLICT (tenant_id, origin, dedupe_key) DO NOTHING
        RETURNING event_id
    ), stored AS (
        INSERT INTO events (id, tenant_id, source_id, origin, type, dedupe_key, payload,
                            content_type, headers)
        SELECT p_id, p_tenant_id, p_source_id, p_origin, p_type, p_dedupe_key, p_payload,
               p_content_type, p_headers
        FROM stored_key
        RETURNING received_at
    ), head AS MATERIALIZED (
        SELECT s.received_at, NOT EXISTS (
                   SELECT 1 FROM endpoints p
                   WHERE p.tenant_id = p_tenant_id AND p.enabled
                     AND (p.content_filter IS NOT NULL OR p.ordering IS NOT NULL)
               ) AS at_receipt
        FROM stored s
    ), boxed AS (
        INSERT INTO outbox (event_id, tenant_id, created_at, traceparent, fanned_out_at)
        SELECT p_id, p_tenant_id, h.received_at, p_traceparent,
               CASE WHEN h.at_receipt THEN h.received_at END
        FROM head h
    ), made AS (
        INSERT INTO deliveries AS d (id, event_id, endpoint_id, tenant_id, tenant_group,
                                     deadline_at, state, enqueue_seq, lease_expires_at)
        SELECT hookline_delivery_id(p_id, p.id), p_id, p.id, p_tenant_id, t.tenant_group,
               now() + p_deadline, 'queued', 1, now() + p_lease
        FROM head h CROSS JOIN tenant t
        JOIN endpoints p ON p.tenant_id = p_tenant_id AND p.enabled
                        AND p_type LIKE ANY (hookline_like_patterns(p.event_types))
        WHERE h.at_receipt
        RETURNING d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq
    )
    SELECT r.* FROM (
        SELECT p_id, h.at_receipt, NULL::text AS id, NULL::text, NULL::text, NULL::integer
        FROM head h
        UNION ALL
        SELECT p_id, true, m.id, m.endpoint_id, m.tenant_group, m.enqueue_seq FROM made m
    ) r
    ORDER BY r.id NULLS FIRST;
    IF NOT FOUND THEN
        PERFORM hookline_require_tenant(p_tenant_id);  -- a duplicate, or no such tenant
    END IF;
END $$;
