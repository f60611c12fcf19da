-- The hot tables stop locking their parents' rows (decision 0080).
--
-- A foreign key's check runs `SELECT 1 FROM ONLY <parent> WHERE id = $1 FOR KEY SHARE` for
-- every row inserted: each event locked its tenant's row twice (the event and its dedupe
-- key) and its source's row once, and each delivery its endpoint's row. A row lock writes
-- the row's header and a WAL record, and concurrent lockers of one row share it through a
-- MultiXact: every receiver of a busy tenant, and every fan-out to a busy endpoint, queued on
-- the same row's lock word. Tenants, sources and endpoints are never deleted (they are
-- disabled, or marked `deleted_at`), and the hot statements take the endpoint and the source
-- from rows they have just read, so the keys guarded nothing that can happen. The one value
-- that comes from a caller, an event's tenant (`hookline.publish`, POST /v1/events), is
-- checked by hookline_require_tenant below without a lock; it raises the same error as the
-- key did, so callers still answer "unknown tenant".
DO $$
DECLARE
    k record;
BEGIN
    FOR k IN SELECT conrelid::regclass AS tbl, conname FROM pg_constraint
             WHERE contype = 'f' AND conparentid = 0
               AND (conrelid, confrelid) IN (('events'::regclass, 'tenants'::regclass),
                                             ('events'::regclass, 'sources'::regclass),
                                             ('event_keys'::regclass, 'tenants'::regclass),
                                             ('deliveries'::regclass, 'endpoints'::regclass))
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', k.tbl, k.conname);
    END LOOP;
END $$;

-- Raise foreign_key_violation, as the dropped keys did, unless the tenant exists. No lock:
-- tenants are never deleted.
CREATE FUNCTION hookline_require_tenant(p_tenant_id text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM tenants WHERE id = p_tenant_id) THEN
        RAISE foreign_key_violation USING MESSAGE = format('unknown tenant %s', p_tenant_id);
    END IF;
    RETURN true;
END $$;

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
    INSERT INTO outbox (event_id, tenant_id, created_at, traceparent, fanned_out_at)
    VALUES (p_id, p_tenant_id, received, p_traceparent,
            CASE WHEN at_receipt THEN received END);
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
