-- A day's partitions are made one table per statement (and so per transaction): creating a
-- partition locks its parent until commit, and the old function made four in one transaction.
-- A reader that held one parent (say `attempts`, read first by the operational monitor) and
-- then wanted another (`deliveries`) while the maker held `deliveries` and wanted `attempts`
-- was a deadlock, one of them aborted. Holding one parent at a time, the maker never waits on
-- a lock while holding another, so no cycle passes through it.
CREATE FUNCTION hookline_create_day_partition(day date, tbl text) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    suffix  text := to_char(day, 'YYYYMMDD');
    lo      text := hookline_ulid_time(day::timestamp AT TIME ZONE 'UTC');
    hi      text := hookline_ulid_time((day + 1)::timestamp AT TIME ZONE 'UTC');
    spec    record;
    crowded boolean;
BEGIN
    SELECT * INTO spec FROM (VALUES
        ('events', 'evt_', 'id'), ('outbox', 'evt_', 'event_id'),
        ('deliveries', 'dlv_', 'id'), ('attempts', 'dlv_', 'delivery_id')) AS t(tbl, prefix, col)
    WHERE t.tbl = hookline_create_day_partition.tbl;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'not a day-partitioned table: %', tbl;
    END IF;
    -- One maker at a time: a second caller waits here, then finds the partition made (the
    -- lock comes before the first look, so that look is not a stale cached miss).
    PERFORM pg_advisory_xact_lock(hashtext('hookline_create_day_partitions'));
    IF to_regclass(spec.tbl || '_d' || suffix) IS NOT NULL THEN
        RETURN 0;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I >= $1 AND %I < $2)',
                   spec.tbl || '_default', spec.col, spec.col)
        INTO crowded USING spec.prefix || lo, spec.prefix || hi;
    IF crowded THEN
        RETURN 0;
    END IF;
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                   spec.tbl || '_d' || suffix, spec.tbl, spec.prefix || lo, spec.prefix || hi);
    RETURN 1;
END $$;

-- The day's four, for callers that hold no other lock (migrations, tests): the same rule.
CREATE OR REPLACE FUNCTION hookline_create_day_partitions(day date) RETURNS integer
LANGUAGE sql AS $$
    SELECT coalesce(sum(hookline_create_day_partition(day, t)), 0)::integer
    FROM unnest(ARRAY['events', 'outbox', 'deliveries', 'attempts']) AS t
$$;
