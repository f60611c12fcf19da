-- A delivery made at receipt writes no lease: its lease is the one its id implies, the id's time
-- plus the receipt lease (decision 0111). Every delivery entered the lease index once, when it
-- was made, ~670 B of the WAL per delivered event with ten endpoints (7 %, bench/pipeline.py
-- --wal-mix), yet reconcile only ever looks for the few whose message was lost. Now:
--
-- * `hookline_receipt_lease()` is the lease a delivery made at receipt has without writing it
--   (the default `delivery_queued_lease_seconds`, 900). The receipt writes NULL when it is
--   given that lease, and the lease itself when it is given another (a setting changed).
-- * `hookline_lease_of(id, lease_expires_at)` is a delivery's lease: the one written, else the
--   one its id implies. Only a delivery made at receipt is queued without a lease written:
--   every other path that queues one writes it (fan-out, due claims, released heads, a
--   replay, a short retry).
-- * `hookline_leased(since, until)` reads the deliveries whose lease falls in [since, until):
--   the written ones through the lease index, now partial (`lease_expires_at IS NOT NULL`),
--   and the implied ones by the range of their ids, through the primary key. Reconcile's
--   sweeps, the status counts and a replay's judgement read leases through these two.
-- * A version from before this one reads written leases alone. docs/operations.md ("Rolling
--   back past migration 0052") writes the implied leases and stops leaving them out
--   (`hookline_set_receipt_lease(NULL)`) before it is deployed; setting it again turns it
--   back on.

CREATE FUNCTION hookline_receipt_lease() RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT interval '900 seconds'
$$;

-- A delivery's lease: the one written, else the one its making at receipt implies. (STABLE,
-- as adding an interval to a time is: so the planner inlines it into its caller.)
CREATE FUNCTION hookline_lease_of(id text, lease timestamptz) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce(lease, hookline_ulid_at(substr(id, 5, 10)) + hookline_receipt_lease())
$$;

-- The deliveries whose lease falls in [since, until), written or implied. SQL, STABLE and not
-- STRICT, so the planner inlines it into its caller: each arm reads its own index, and only
-- the day partitions of the implied arm's ids are opened. (The ids' bounds are clamped to the
-- times a ULID can hold: a floor of -infinity reads every id, an until of infinity too; with
-- the receipt lease off, for a rollback, the implied arm reads nothing.)
CREATE FUNCTION hookline_leased(since timestamptz, until timestamptz DEFAULT 'infinity')
RETURNS SETOF deliveries LANGUAGE sql STABLE AS $$
    SELECT * FROM deliveries d
    WHERE d.lease_expires_at >= since AND d.lease_expires_at < until
    UNION ALL
    SELECT * FROM deliveries d
    WHERE d.lease_expires_at IS NULL AND hookline_receipt_lease() IS NOT NULL
      AND d.id >= 'dlv_' || hookline_ulid_time(greatest(since - hookline_receipt_lease(),
                                                        'epoch'::timestamptz))
      AND d.id < 'dlv_' || hookline_ulid_time(least(until - hookline_receipt_lease(),
                                                    '9999-12-31'::timestamptz))
$$;

-- Every lease written stays in the index; the receipt's, implied, are not written.
DROP INDEX deliveries_lease_idx;
CREATE INDEX deliveries_lease_idx ON deliveries (lease_expires_at)
    WHERE lease_expires_at IS NOT NULL;

-- The receipt lease set: `lease`, or NULL for none (a rollback to a version that reads written
-- leases alone, docs/operations.md; or a deployment whose `delivery_queued_lease_seconds` is
-- not 900, which writes its leases until this is called with its own). The queued deliveries'
-- implied leases are written first, so none moves. Returns how many were written.
CREATE FUNCTION hookline_set_receipt_lease(lease interval) RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
    written bigint;
BEGIN
    UPDATE deliveries d
    SET lease_expires_at = hookline_lease_of(d.id, NULL)
    WHERE d.lease_expires_at IS NULL AND d.state IN ('queued', 'delivering')
      AND hookline_receipt_lease() IS NOT NULL;
    GET DIAGNOSTICS written = ROW_COUNT;
    EXECUTE format('CREATE OR REPLACE FUNCTION hookline_receipt_lease() RETURNS interval '
                   'LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT %L::interval $$', lease);
    RETURN written;
END $fn$;

-- The receipt leaves its lease out when it is the receipt lease.
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
               now() + p_deadline, 'queued', 1,
               -- the receipt's lease is the one its id implies: none written (0111)
               CASE WHEN p_lease = hookline_receipt_lease() THEN NULL ELSE now() + p_lease END
        FROM endpoints p
        WHERE p.tenant_id = p_tenant_id AND p.enabled
          AND p_type LIKE ANY (hookline_like_patterns(p.event_types))
        -- no ON CONFLICT: the event is new (its key was just inserted), so are its delivery
        -- ids; a speculative insertion would cost a confirm record per delivery
        RETURNING p_id, true, d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq;
    END IF;
END $$;
