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

-- The delivery of the pair (event, endpoint), whatever its id's shape: what keeps reconcile's
-- missing-delivery walk and a refanout from making a second one. Its id is the pair's
-- (decision 0040), one probe of the day's primary key however many deliveries share the
-- event's millisecond; an id made before 0040 is in the default partition, found by that
-- partition's own index. A set-returning SQL function that is neither STRICT nor VOLATILE is
-- inlined into the calling statement, where the partition is chosen per pair.
CREATE FUNCTION hookline_pair_deliveries(p_event text, p_endpoint text) RETURNS SETOF text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT d.id FROM deliveries d WHERE d.id = hookline_delivery_id(p_event, p_endpoint)
    UNION ALL
    SELECT d.id FROM deliveries_default d
    WHERE d.event_id = p_event AND d.endpoint_id = p_endpoint
$$;

DROP INDEX deliveries_event_idx;
CREATE INDEX deliveries_default_event_idx ON deliveries_default (event_id, endpoint_id);
