-- A what-if for `bench/pipeline.py --shape` (decision 0086, option 1), never a migration: the
-- receiver's statement also does a claim's work at receipt (the endpoint locks, the reset
-- marker's lookup, a slot count per delivery and an in-flight row each), to price what taking
-- claims at receipt adds to the receiver. Its rows hold no slot, so deliver's claim, which
-- this shape leaves as it is, takes them over: the deliver stage's figures are not option 1's.
CREATE OR REPLACE FUNCTION hookline_accept_event(
    p_id text, p_tenant_id text, p_source_id text, p_origin text, p_type text,
    p_dedupe_key text, p_payload bytea, p_content_type text, p_headers jsonb,
    p_traceparent text, p_deadline interval, p_lease interval)
RETURNS TABLE (event_id text, fanned_out boolean, id text, endpoint_id text,
               tenant_group text, enqueue_seq integer)
LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    received timestamptz;
    at_receipt boolean;
    group_name text;
    endpoint_key integer;
BEGIN
    -- the tenant's group, read once: it is the tenant check and the deliveries' group
    SELECT t.tenant_group INTO group_name FROM tenants t WHERE t.id = p_tenant_id;
    IF NOT FOUND THEN
        RAISE foreign_key_violation USING MESSAGE = format('unknown tenant %s', p_tenant_id);
    END IF;
    INSERT INTO event_keys (tenant_id, origin, dedupe_key, event_id)
    VALUES (p_tenant_id, p_origin, p_dedupe_key, p_id)
    ON CONFLICT (tenant_id, origin, dedupe_key) DO NOTHING;
    IF NOT FOUND THEN
        RETURN;  -- a duplicate: nothing stored
    END IF;
    INSERT INTO events (id, tenant_id, source_id, origin, type, dedupe_key, payload,
                        content_type, headers)
    VALUES (p_id, p_tenant_id, p_source_id, p_origin, p_type, p_dedupe_key, p_payload,
            p_content_type, p_headers)
    RETURNING received_at INTO received;
    at_receipt := NOT EXISTS (
        SELECT 1 FROM endpoints p
        WHERE p.tenant_id = p_tenant_id AND p.enabled
          AND (p.content_filter IS NOT NULL OR p.ordering IS NOT NULL)
    );
    INSERT INTO outbox (event_id, tenant_id, created_at, traceparent, fanned_out_at)
    VALUES (p_id, p_tenant_id, received, p_traceparent,
            CASE WHEN at_receipt THEN received END);
    RETURN QUERY SELECT p_id, at_receipt, NULL::text, NULL::text, NULL::text, NULL::integer;
    IF at_receipt THEN
        -- the claim's locks, in the claim's order (migration 0037)
        FOR endpoint_key IN
            SELECT DISTINCT hashtext(p.id) FROM endpoints p
            WHERE p.tenant_id = p_tenant_id AND p.enabled
              AND p_type LIKE ANY (hookline_like_patterns(p.event_types))
            ORDER BY 1
        LOOP
            PERFORM pg_advisory_xact_lock(hashtext('hookline_endpoint_slots'), endpoint_key);
        END LOOP;
        PERFORM 1 FROM deliveries_in_flight f WHERE f.id = '~reset';
        RETURN QUERY
        WITH made AS (
            INSERT INTO deliveries AS d (id, event_id, endpoint_id, tenant_id, tenant_group,
                                         deadline_at, state, enqueue_seq, lease_expires_at)
            SELECT hookline_delivery_id(p_id, p.id), p_id, p.id, p_tenant_id, group_name,
                   now() + p_deadline, 'queued', 1, now() + p_lease
            FROM endpoints p
            WHERE p.tenant_id = p_tenant_id AND p.enabled
              AND p_type LIKE ANY (hookline_like_patterns(p.event_types))
            RETURNING d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq
        ), held AS (
            -- each delivery's in-flight row where its endpoint has room; without a slot, so
            -- that deliver's claim (unchanged here) takes it over as it takes a deferral's
            INSERT INTO deliveries_in_flight (id, endpoint_id, enqueue_seq, lease_expires_at,
                                              slot)
            SELECT m.id, m.endpoint_id, m.enqueue_seq, now() + p_lease, false
            FROM made m JOIN endpoints p ON p.id = m.endpoint_id
            WHERE (SELECT count(*) FROM deliveries_in_flight x
                   WHERE x.endpoint_id = m.endpoint_id AND x.slot
                     AND x.lease_expires_at >= now()) < p.max_concurrency
        )
        SELECT p_id, true, m.id, m.endpoint_id, m.tenant_group, m.enqueue_seq FROM made m;
    END IF;
END $$;
