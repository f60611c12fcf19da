-- An event fanned out in the statement that stored it has no outbox row (decision 0096).
--
-- Since decision 0076 the receiver (and POST /v1/events) creates an event's deliveries in the
-- statement that stores it, and wrote an outbox row already fanned out beside it: nothing
-- ever waited on that row, yet it cost every such event a heap tuple and a primary-key entry
-- (~230 B of WAL of ~3.6 KB with one endpoint). Now an outbox row is written only where the
-- fan-out still has something to do (a tenant with content-filtered or ordered endpoints,
-- `hookline.publish`, a restored event) or to carry a traced event's traceparent. The one
-- rule for readers, stated by hookline_fanned_out_at: an event without an outbox row was
-- fanned out when it was received.

CREATE FUNCTION hookline_fanned_out_at(p_outbox_event_id text, p_fanned_out_at timestamptz,
                                       p_received_at timestamptz)
RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    -- (event, its outbox row LEFT JOINed): no row means fanned out at receipt (0096)
    SELECT CASE WHEN p_outbox_event_id IS NULL THEN p_received_at ELSE p_fanned_out_at END
$$;

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
DECLARE
    received timestamptz;
    at_receipt boolean;
    group_name text;
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
    -- the fan-out's row, or a traced event's traceparent; else none (decision 0096)
    IF NOT at_receipt OR p_traceparent IS NOT NULL THEN
        INSERT INTO outbox (event_id, tenant_id, created_at, traceparent, fanned_out_at)
        VALUES (p_id, p_tenant_id, received, p_traceparent,
                CASE WHEN at_receipt THEN received END);
    END IF;
    RETURN QUERY SELECT p_id, at_receipt, NULL::text, NULL::text, NULL::text, NULL::integer;
    IF at_receipt THEN
        RETURN QUERY
        INSERT INTO deliveries AS d (id, event_id, endpoint_id, tenant_id, tenant_group,
                                     deadline_at, state, enqueue_seq, lease_expires_at)
        SELECT hookline_delivery_id(p_id, p.id), p_id, p.id, p_tenant_id, group_name,
               now() + p_deadline, 'queued', 1, now() + p_lease
        FROM endpoints p
        WHERE p.tenant_id = p_tenant_id AND p.enabled
          AND p_type LIKE ANY (hookline_like_patterns(p.event_types))
        -- no ON CONFLICT: the event is new (its key was just inserted), so are its delivery
        -- ids; a speculative insertion would cost a confirm record per delivery
        RETURNING p_id, true, d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq;
    END IF;
END $$;
