-- A step of bench/call_overhead.py, on steps 1 and 2: without the batch's bounds statement
-- and the crash marker's check, which leaves the claim's shell (a PL/pgSQL table function of its 32
-- columns, with its parameters and SET clauses, that returns nothing). A probe.

-- replace:
    SELECT min(i), max(i) INTO lo, hi FROM unnest(p_ids::text[]) AS i;
-- with:
-- end

-- replace:
    IF recovering_until IS NULL THEN
        -- emptied: the slots of the claims made before are unknown until their leases end
        INSERT INTO deliveries_in_flight (id, endpoint_id, enqueue_seq, lease_expires_at, slot)
        VALUES ('~reset', '', 0, now() + p_lease, false)
        ON CONFLICT (id) DO NOTHING;
        SELECT f.lease_expires_at INTO recovering_until
        FROM deliveries_in_flight f WHERE f.id = '~reset';
    END IF;
-- with:
-- end
