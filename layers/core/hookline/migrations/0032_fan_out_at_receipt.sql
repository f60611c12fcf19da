-- Fan-out at receipt (decision 0076): the receiver's one statement stores the dedupe key, the
-- event and its outbox row and, for a tenant without a content-filtered or ordered endpoint,
-- creates the event's deliveries queued with a lease. Its outbox row is then written already
-- fanned out (`fanned_out_at` = the event's `received_at`): no entry in the pending index, no
-- later update, no fan-out round for it. Reconcile, replay, the archive and tracing read the
-- outbox row as before. The receiver sends the deliveries to their queues after the commit;
-- what it cannot send goes back to pending (return_unsent_deliveries), and what a crash leaves
-- queued is the reconciler's lease check's, as for the fan-out's own sends.
--
-- A tenant with a content-filtered or ordered endpoint gets a pending outbox row, exactly as
-- before: the fan-out matches filters in Python and orders keys (fan_out_batch, 0028).
-- The endpoints an event goes to are hookline_fan_out_round's `targets` (migration 0031):
-- enabled endpoints of the tenant whose event types match. Keep the two in step.
--
-- Returns nothing for a duplicate dedupe key (the caller looks the original up), else a head
-- row (`id` NULL, `fanned_out` whether the deliveries were made here), then one row per
-- delivery created.
CREATE FUNCTION hookline_accept_event(
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
BEGIN
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
        RETURN QUERY
        INSERT INTO deliveries AS d (id, event_id, endpoint_id, tenant_id, tenant_group,
                                     deadline_at, state, enqueue_seq, lease_expires_at)
        SELECT hookline_delivery_id(p_id, p.id), p_id, p.id, p_tenant_id, t.tenant_group,
               now() + p_deadline, 'queued', 1, now() + p_lease
        FROM endpoints p
        JOIN tenants t ON t.id = p.tenant_id
        WHERE p.tenant_id = p_tenant_id AND p.enabled
          AND p_type LIKE ANY (hookline_like_patterns(p.event_types))
        -- no ON CONFLICT: the event is new (its key was just inserted), so are its delivery
        -- ids; a speculative insertion would cost a confirm record per delivery
        RETURNING p_id, true, d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq;
    END IF;
END $$;
