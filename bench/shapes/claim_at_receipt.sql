-- A what-if for `bench/pipeline.py --shape` (decision 0086, option 1), never a migration: the
-- receiver's statement also does a claim's work at receipt (the endpoint locks, the reset
-- marker's lookup, a slot count per delivery and an in-flight row each), to price what taking
-- claims at receipt adds to the receiver. Its rows hold no slot, so deliver's claim, which
-- this shape leaves as it is, takes them over: the deliver stage's figures are not option 1's.
-- Made by editing the function as migrated (each edit must match once), not a copy of it.
DO $shape$
DECLARE
    src text := pg_get_functiondef('hookline_accept_event'::regproc);
    edit text[];
BEGIN
    FOREACH edit SLICE 1 IN ARRAY ARRAY[
        -- the slot count reads the in-flight rows by plain index scans, as the claim does
        [$$ SET enable_seqscan TO 'off'
$$, $$ SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
$$],
        [$$    group_name text;
BEGIN$$, $$    group_name text;
    endpoint_key integer;
BEGIN$$],
        [$$        RETURN QUERY
        INSERT INTO deliveries AS d$$, $$        -- the claim's locks, in the claim's order (migration 0037)
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
        INSERT INTO deliveries AS d$$],
        [$$        RETURNING p_id, true, d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq;$$,
         $$        RETURNING d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq
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
        SELECT p_id, true, m.id, m.endpoint_id, m.tenant_group, m.enqueue_seq FROM made m;$$]
    ] LOOP
        IF array_length(string_to_array(src, edit[1]), 1) <> 2 THEN
            RAISE EXCEPTION 'claim_at_receipt: no single match for %', left(edit[1], 60);
        END IF;
        src := replace(src, edit[1], edit[2]);
    END LOOP;
    EXECUTE src;
END $shape$;
