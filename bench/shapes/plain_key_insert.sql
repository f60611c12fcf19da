-- A what-if for `bench/pipeline.py --shape`, never a migration: the receiver's dedupe key is
-- inserted without ON CONFLICT, a duplicate caught as unique_violation in an exception block
-- (a subtransaction per call). Prices the speculative insertion: its confirm record and its
-- pre-check of the unique index. Made by editing the function as migrated (the edit must
-- match once), not a copy of it.
DO $shape$
DECLARE
    src text := pg_get_functiondef('hookline_accept_event'::regproc);
    old text := $$    INSERT INTO event_keys (tenant_id, origin, dedupe_key, event_id)
    VALUES (p_tenant_id, p_origin, p_dedupe_key, p_id)
    ON CONFLICT (tenant_id, origin, dedupe_key) DO NOTHING;
    IF NOT FOUND THEN
        RETURN;  -- a duplicate: nothing stored
    END IF;$$;
BEGIN
    IF array_length(string_to_array(src, old), 1) <> 2 THEN
        RAISE EXCEPTION 'plain_key_insert: no single match for the key insert';
    END IF;
    EXECUTE replace(src, old, $$    BEGIN
        INSERT INTO event_keys (tenant_id, origin, dedupe_key, event_id)
        VALUES (p_tenant_id, p_origin, p_dedupe_key, p_id);
    EXCEPTION WHEN unique_violation THEN
        RETURN;  -- a duplicate: nothing stored
    END;$$);
END $shape$;
