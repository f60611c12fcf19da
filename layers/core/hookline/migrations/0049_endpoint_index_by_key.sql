-- The deliveries' endpoint index is keyed by a 64-bit hash of the endpoint's id instead of
-- the id's text (decision 0106). Every delivery enters it once, when it is made: with the id
-- (29 characters) an entry is ~48 bytes, with the key 24, which takes ~5 % off the WAL per
-- delivered event with ten endpoints (bench/pipeline.py, docs/performance.md) and halves the
-- index. Every reader of one endpoint's deliveries names both, the key for the index and the
-- id for the answer (two ids whose keys collide share index entries, never results):
--
--     hookline_endpoint_key(d.endpoint_id) = hookline_endpoint_key(:id) AND d.endpoint_id = :id
--
-- A reader of a tenant's deliveries asks for its endpoints' keys and the delivery's tenant.
-- A version from before this one finds no index for its endpoint filters: docs/operations.md
-- ("Rolling back past migration 0049") creates the old one again first.

-- The key: SQL, IMMUTABLE and STRICT, so the planner inlines it into the index's expression
-- and the readers' alike, and they match.
CREATE FUNCTION hookline_endpoint_key(endpoint_id text) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT hashtextextended(endpoint_id, 0)
$$;

DROP INDEX deliveries_endpoint_idx;
CREATE INDEX deliveries_endpoint_key_idx
    ON deliveries (hookline_endpoint_key(endpoint_id), created_at);
