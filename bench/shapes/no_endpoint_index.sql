-- A what-if for `bench/pipeline.py --shape bench/shapes/no_endpoint_index.sql`, never a
-- migration: the deliveries' endpoint index (decision 0106) dropped, so a delivery enters
-- its primary key alone. Prices what finding an endpoint's deliveries costs the hot path:
-- the API's, console's and portal's lists by endpoint, its health, replays by endpoint and a
-- tenant's counts and erasure all read that index, so nothing that runs them works under
-- this shape; the pipeline bench runs none.
DROP INDEX deliveries_endpoint_key_idx;
