-- An event's deliveries are found by their key, not by an index on `event_id` (decision
-- 0087). A delivery's id carries its event's millisecond (`hookline_delivery_id`, decision
-- 0040), so every delivery of an event sits in one short range of the primary key:
-- `['dlv_' || the event's ten time characters, the same || '~')` (ids are ASCII in C
-- collation, '~' sorts after every character an id holds). The (event_id, endpoint_id)
-- index cost each delivery one index entry when it was made and another when it was recorded
-- (the record is not a HOT update): 13 % of the WAL per delivered event with ten endpoints
-- (bench/pipeline.py --wal-mix, docs/performance.md).
--
-- The default partition keeps an index of its own on (event_id, endpoint_id): the delivery
-- ids made before decision 0040 (another shape) live there, and the pair check below and
-- retention still find those by event.

CREATE FUNCTION hookline_event_deliveries_from(event_id text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT 'dlv_' || substr(event_id, 5, 10)
$$;

CREATE FUNCTION hookline_event_deliveries_to(event_id text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT 'dlv_' || substr(event_id, 5, 10) || '~'
$$;

-- Whether the pair (event, endpoint) has a delivery, whatever its id's shape: the check that
-- keeps reconcile's missing-delivery walk and a refanout from making a second one.
CREATE FUNCTION hookline_delivery_exists(p_event text, p_endpoint text) RETURNS boolean
LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $$
    SELECT EXISTS (SELECT 1 FROM deliveries d
                   WHERE d.id >= hookline_event_deliveries_from(p_event)
                     AND d.id < hookline_event_deliveries_to(p_event)
                     AND d.event_id = p_event AND d.endpoint_id = p_endpoint)
        OR EXISTS (SELECT 1 FROM deliveries_default d
                   WHERE d.event_id = p_event AND d.endpoint_id = p_endpoint)
$$;

DROP INDEX deliveries_event_idx;
CREATE INDEX deliveries_default_event_idx ON deliveries_default (event_id, endpoint_id);
