-- Deliveries carry no tenant index (decision 0091). The record is not a HOT update (decision
-- 0085), so each delivery entered `(tenant_id, id)` twice, when made and when recorded: 14 %
-- of the WAL per delivered event with ten endpoints (bench/pipeline.py --wal-mix,
-- docs/performance.md). What read it now reads around it:
--
-- * a tenant's delivery list walks the tenant's events (`events_tenant_id_idx`) and reads each
--   millisecond's deliveries as one range of the key: a delivery's id starts with its event's
--   millisecond (decision 0040);
-- * a tenant's counts by state and its erasure go through its endpoints
--   (`deliveries_endpoint_idx`): every delivery belongs to one endpoint of its tenant, and
--   endpoints are never deleted, only marked so.

-- The end of the event ids of the millisecond an event or a delivery id carries (both are a
-- four-character prefix and a ULID; '~' sorts after every character an id holds).
CREATE FUNCTION hookline_events_to(id text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT 'evt_' || substr(id, 5, 10) || '~'
$$;

DROP INDEX deliveries_tenant_idx;
