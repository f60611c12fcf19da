-- Two reconcilers (or a reconciler and `hookline retention --once`) making the same day's
-- partitions at once both saw none and the second CREATE failed with DuplicateTable. The
-- maker now holds a transaction-level advisory lock, so the second waits and skips.
CREATE OR REPLACE FUNCTION hookline_create_day_partitions(day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    suffix  text := to_char(day, 'YYYYMMDD');
    lo      text := hookline_ulid_time(day::timestamp AT TIME ZONE 'UTC');
    hi      text := hookline_ulid_time((day + 1)::timestamp AT TIME ZONE 'UTC');
    spec    record;
    made    integer := 0;
    crowded boolean;
BEGIN
    -- One maker at a time: a second caller waits here, then finds the partitions made.
    PERFORM pg_advisory_xact_lock(hashtext('hookline_create_day_partitions'));
    FOR spec IN SELECT * FROM (VALUES
        ('events', 'evt_', 'id'), ('outbox', 'evt_', 'event_id'),
        ('deliveries', 'dlv_', 'id'), ('attempts', 'dlv_', 'delivery_id')) AS t(tbl, prefix, col)
    LOOP
        CONTINUE WHEN to_regclass(spec.tbl || '_d' || suffix) IS NOT NULL;
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I >= $1 AND %I < $2)',
                       spec.tbl || '_default', spec.col, spec.col)
            INTO crowded USING spec.prefix || lo, spec.prefix || hi;
        CONTINUE WHEN crowded;
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                       spec.tbl || '_d' || suffix, spec.tbl, spec.prefix || lo, spec.prefix || hi);
        made := made + 1;
    END LOOP;
    RETURN made;
END $$;
