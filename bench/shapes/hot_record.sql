-- A what-if for `bench/pipeline.py --shape` (decision 0085, stage 2), never a migration: the
-- record becomes a HOT update once no index names `state` (or `lease_expires_at`,
-- `updated_at`) and the day's pages keep room for the new version. Reconcile, ordering and
-- the operational views read the dropped indexes, so a database shaped like this is for the
-- pipeline's hot path only.
DROP INDEX deliveries_due_idx, deliveries_leased_idx, deliveries_state_idx,
           deliveries_delivering_idx, deliveries_ordering_idx;
DO $$
DECLARE
    part text;
BEGIN
    FOR part IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = 'deliveries'::regclass LOOP
        EXECUTE format('ALTER TABLE %I SET (fillfactor = 70)', part);
    END LOOP;
END $$;
