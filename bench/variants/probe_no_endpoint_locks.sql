-- A probe, not a design (bench/deliver_calls.py --variant): what a part of deliver's calls
-- costs, measured by leaving it out. It leaves out the claim's endpoint locks: two claims of
-- one endpoint could then both count a free slot.

-- replace:
    FOR endpoint_key IN
        -- looked up id by id, each in its own day's partition
        SELECT DISTINCT hashtext(d.endpoint_id)
        FROM unnest(p_ids::text[]) AS m(id)
        CROSS JOIN LATERAL (SELECT x.endpoint_id FROM %2$I x
                            WHERE x.id = m.id AND x.id BETWEEN lo AND hi OFFSET 0) d
        ORDER BY 1
    LOOP
        PERFORM pg_advisory_xact_lock(hashtext('hookline_endpoint_slots'), endpoint_key);
    END LOOP;
-- with:
    NULL;
-- end
