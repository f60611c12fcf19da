-- A what-if for `bench/pipeline.py --shape`, never a migration: the receiver writes no outbox
-- row for an event it fans out at receipt (the row is written already fanned out, read later
-- only by reconcile's walk, replay, tracing and retention, which would then have to take "no
-- row" as "fanned out at receipt" and find the traceparent elsewhere). Prices that row: one
-- heap tuple and one primary-key entry per event. An event of a tenant with a filtered or
-- ordered endpoint keeps its pending row. Made by editing the function as migrated (the edit
-- must match once), not a copy of it.
DO $shape$
DECLARE
    src text := pg_get_functiondef('hookline_accept_event'::regproc);
    old text := $$    INSERT INTO outbox (event_id, tenant_id, created_at, traceparent, fanned_out_at)
    VALUES (p_id, p_tenant_id, received, p_traceparent,
            CASE WHEN at_receipt THEN received END);$$;
BEGIN
    IF array_length(string_to_array(src, old), 1) <> 2 THEN
        RAISE EXCEPTION 'no_receipt_outbox: no single match for the outbox insert';
    END IF;
    EXECUTE replace(src, old, $$    IF NOT at_receipt THEN
        INSERT INTO outbox (event_id, tenant_id, created_at, traceparent)
        VALUES (p_id, p_tenant_id, received, p_traceparent);
    END IF;$$);
END $shape$;
