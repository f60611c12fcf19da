-- A what-if for bench/accept_calls.py --variant (decision 0086, option 1), not a design: the
-- receiver's statement also takes its deliveries' claims at receipt. It takes the endpoints'
-- slot locks in the claim's order (one statement, as hookline_lock_endpoint_slots), reads the
-- crash marker, and gives each delivery whose endpoint has room and no rate limit its
-- in-flight row with a slot, as deliver's claim would. The bench deletes those rows after the
-- call, as deliver's record would.

-- replace:
 SET enable_seqscan TO 'off'
-- with:
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
-- end

-- replace:
        RETURN QUERY
        INSERT INTO deliveries AS d (id, event_id, endpoint_id, tenant_id, tenant_group,
-- with:
        PERFORM pg_advisory_xact_lock(hashtext('hookline_endpoint_slots'), k.key)
        FROM (SELECT DISTINCT hashtext(p.id) AS key FROM endpoints p
              WHERE p.tenant_id = p_tenant_id AND p.enabled
                AND p_type LIKE ANY (hookline_like_patterns(p.event_types))
              ORDER BY 1) k;
        PERFORM 1 FROM deliveries_in_flight f WHERE f.id = '~reset';
        RETURN QUERY
        WITH made AS (
        INSERT INTO deliveries AS d (id, event_id, endpoint_id, tenant_id, tenant_group,
-- end

-- replace:
        RETURNING p_id, true, d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq;
-- with:
        RETURNING d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq
        ), held AS (
            INSERT INTO deliveries_in_flight (id, endpoint_id, enqueue_seq, lease_expires_at,
                                              slot)
            SELECT m.id, m.endpoint_id, m.enqueue_seq, now() + p_lease, true
            FROM made m JOIN endpoints p ON p.id = m.endpoint_id
            WHERE p.rate_limit_per_second IS NULL
              AND (SELECT count(*) FROM deliveries_in_flight x
                   WHERE x.endpoint_id = m.endpoint_id AND x.slot
                     AND x.lease_expires_at >= now()) < p.max_concurrency
        )
        SELECT p_id, true, m.id, m.endpoint_id, m.tenant_group, m.enqueue_seq FROM made m;
-- end
