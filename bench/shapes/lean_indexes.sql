-- A what-if for `bench/pipeline.py --shape bench/shapes/lean_indexes.sql` (issue 24), never a
-- migration: the WAL of two index changes a 1.x release could make to the deliveries, with
-- their read paths left to the change that builds them.
-- * No lease index: a delivery created at receipt has the lease its id's time implies (the
--   id is minted at receipt, the lease 15 minutes on), so reconcile's sweeps could read those
--   by the primary key's range; only leases written later (requeues, replays) would need an
--   index, a partial one on a column the receipt leaves empty.
-- * The endpoint index keyed by a 4-byte hash of the endpoint's id instead of its text (the
--   portal's and the API's lists would ask for both, the hash and the id).
DROP INDEX deliveries_lease_idx;
DROP INDEX deliveries_endpoint_idx;
CREATE INDEX deliveries_endpoint_idx ON deliveries (hashtext(endpoint_id), created_at);
