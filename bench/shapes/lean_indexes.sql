-- A what-if for `bench/pipeline.py --shape bench/shapes/lean_indexes.sql` (issue 24), never a
-- migration: the WAL of dropping the deliveries' lease index, which a 1.x release could do
-- with its read path left to the change that builds it. A delivery created at receipt has the
-- lease its id's time implies (the id is minted at receipt, the lease 15 minutes on), so
-- reconcile's sweeps could read those by the primary key's range; only leases written later
-- (requeues, replays) would need an index, a partial one on a column the receipt leaves
-- empty. (The shape's other half, the endpoint index keyed by a hash of the endpoint's id, is
-- built: decision 0106, migration 0049.)
DROP INDEX deliveries_lease_idx;
