-- A what-if for `bench/pipeline.py --shape bench/shapes/tenant_off_deliveries.sql`, never a
-- migration: a delivery made at receipt writes no `tenant_id` or `tenant_group` (both would be
-- read through its endpoint and the endpoint's tenant), so the row is ~40 B narrower. Prices
-- the part of the 2.0 change of docs/performance.md ("What dominates now") that takes the
-- tenant off the delivery row; the readers that would join the endpoint are not built, so
-- only the receipt's path and deliver's claim-free first attempt (the bench's endpoints: a cap
-- above the in-flight ceiling) work under this shape.
ALTER TABLE deliveries
    ALTER COLUMN tenant_id DROP NOT NULL,
    ALTER COLUMN tenant_group DROP NOT NULL;
-- edits of the function as migrated (each must match once), not a copy of it
DO $shape$
DECLARE
    src text := pg_get_functiondef('hookline_accept_event'::regproc);
    edits text[][] := ARRAY[
        -- the new rows' tenant and group written as NULL
        ARRAY[$$p_id, p.id, p_tenant_id, group_name,$$, $$p_id, p.id, NULL, NULL,$$],
        -- the receiver still learns each delivery's group (its queue) from the statement
        ARRAY[$$d.tenant_group, d.enqueue_seq;$$, $$group_name, d.enqueue_seq;$$]
    ];
    i int;
BEGIN
    FOR i IN 1 .. array_length(edits, 1) LOOP
        IF array_length(string_to_array(src, edits[i][1]), 1) <> 2 THEN
            RAISE EXCEPTION 'tenant_off_deliveries: no single match for %', edits[i][1];
        END IF;
        src := replace(src, edits[i][1], edits[i][2]);
    END LOOP;
    EXECUTE src;
END $shape$;
