-- A step of bench/call_overhead.py, on step 1: without the endpoint locks' statement (which
-- also reads the rates and the crash marker) and the commit mode. A probe, not a design.

-- replace:
    SELECT hookline_lock_endpoint_slots(array_agg(d.endpoint_id)),
           coalesce(bool_or(p.rate_limit_per_second IS NOT NULL), false),
           (SELECT f.lease_expires_at FROM deliveries_in_flight f WHERE f.id = '~reset')
    INTO locked, rated, recovering_until
    -- looked up id by id, each in its own day's partition
    FROM unnest(p_ids::text[]) AS m(id)
    CROSS JOIN LATERAL (SELECT x.endpoint_id FROM %2$I x
                        WHERE x.id = m.id AND x.id BETWEEN lo AND hi OFFSET 0) d
    CROSS JOIN LATERAL (SELECT y.rate_limit_per_second FROM endpoints y
                        WHERE y.id = d.endpoint_id OFFSET 0) p;
-- with:
    rated := false; recovering_until := now() + interval '1 hour';
-- end

-- replace:
    IF NOT p_durable THEN
        -- commit without waiting for the disk (decision 0014); never behind RDS Proxy (0036)
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
-- with:
-- end
