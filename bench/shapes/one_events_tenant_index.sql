-- A what-if for `bench/pipeline.py --shape bench/shapes/one_events_tenant_index.sql`, never a
-- migration: the events keep one tenant index, `(tenant_id, id)`, and lose `(tenant_id,
-- received_at)`, so an event enters two indexes besides its key's table, not three. Prices
-- what the second tenant index costs the receiver. Its readers (the API's and console's
-- event lists by time, replays by time window, a source's last receipt, the status's events
-- of the day) would have to bound `id` by the time its ULID carries and recheck
-- `received_at`, and replays would go in id order; none of that is built.
DROP INDEX events_tenant_received_idx;
