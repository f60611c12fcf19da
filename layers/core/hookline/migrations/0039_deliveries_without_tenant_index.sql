-- Deliveries carry no tenant index (decision 0091). The record is not a HOT update (decision
-- 0085), so each delivery entered `(tenant_id, id)` twice, when made and when recorded: 14 %
-- of the WAL per delivered event with ten endpoints (bench/pipeline.py --wal-mix,
-- docs/performance.md). What read it now reads around it:
--
-- * a tenant's delivery list walks the tenant's events (`events_tenant_id_idx`) and reads each
--   millisecond's deliveries as one range of the key: a delivery's id starts with its event's
--   millisecond (decision 0040; `hookline_tenant_deliveries` below);
-- * a tenant's counts by state and its erasure go through its endpoints
--   (`deliveries_endpoint_idx`): every delivery belongs to one endpoint of its tenant, and
--   endpoints are never deleted, only marked so.

-- The end of the event ids of the millisecond an event or a delivery id carries (both are a
-- four-character prefix and a ULID; '~' sorts after every character an id holds).
CREATE FUNCTION hookline_events_to(id text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT 'evt_' || substr(id, 5, 10) || '~'
$$;

-- A tenant's deliveries in the order of their ids, newest first, when ordered by `walk_id DESC,
-- id DESC`: the tenant's events newest first, the newest of each millisecond kept (`walk_id`),
-- and that millisecond's range of the deliveries' key. The ranges are disjoint and follow the
-- events, so that order is the ids' order and a plan stops at its page's end (an incremental
-- sort on the events' index). Inlined into the caller (SQL, STABLE, not STRICT), so the
-- caller's bounds on `walk_id` reach the events' index. Both lookups are sub-plans run per
-- event: the `max` probe, a scalar sub-query, and the range, whose `OFFSET 0` keeps it from
-- being flattened into a join the planner could answer with a scan of every delivery.
CREATE FUNCTION hookline_tenant_deliveries(p_tenant text)
RETURNS TABLE (walk_id text, id text, event_id text, endpoint_id text, tenant_id text,
               tenant_group text, state text, attempt_count integer,
               next_attempt_at timestamptz, deadline_at timestamptz, last_status integer,
               last_error text, created_at timestamptz, updated_at timestamptz,
               finished_at timestamptz)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT e.id, d.id, d.event_id, d.endpoint_id, d.tenant_id, d.tenant_group, d.state,
           d.attempt_count, d.next_attempt_at, d.deadline_at, d.last_status, d.last_error,
           d.created_at, d.updated_at, d.finished_at
    FROM events e
    CROSS JOIN LATERAL (
        SELECT * FROM deliveries x
        WHERE x.id >= hookline_event_deliveries_from(e.id)
          AND x.id < hookline_event_deliveries_to(e.id)
          AND x.tenant_id = e.tenant_id
        OFFSET 0
    ) d
    WHERE e.tenant_id = p_tenant
      AND e.id = (SELECT max(n.id) FROM events n
                  WHERE n.tenant_id = e.tenant_id
                    AND n.id >= e.id AND n.id < hookline_events_to(e.id))
$$;

DROP INDEX deliveries_tenant_idx;
