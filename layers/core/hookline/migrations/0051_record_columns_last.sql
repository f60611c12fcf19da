-- A delivery's day partition keeps the columns the record writes last in its rows (decision
-- 0110). A HOT update's WAL record carries the new version of the row from its first changed
-- byte to its last (Postgres cuts the prefix and suffix the old version shares). With the
-- columns in the order they were added, the record's first change (`state`) came sixth and its
-- last (the first attempt's columns, decision 0109) at the end, so the record logged the
-- deadline, the lease, the times and the generation it never changes: ~45 of its ~260 bytes.
-- Now a partition of deliveries is made as a table of its own, its columns those of
-- `deliveries` with the record's last (`hookline_delivery_columns`), and attached. Postgres
-- maps a row between the parent's order and the partition's, so every statement reads and
-- writes `deliveries` as before.
--
-- * Partitions that hold rows keep their order; those made ahead (the week to come, and
--   today's when it is still empty) are made again in the new one.
-- * ATTACH takes a lighter lock on `deliveries` than CREATE TABLE ... PARTITION OF did
--   (SHARE UPDATE EXCLUSIVE, not ACCESS EXCLUSIVE): a new day no longer waits for every
--   reader of the table.

-- The columns a day partition of deliveries is made with: those of `deliveries`, the ones
-- the record of a delivered attempt writes last (hookline_make_hot_function's `record`: the
-- state, the counts, the times and the first attempt), then its CHECK constraints.
CREATE FUNCTION hookline_delivery_columns() RETURNS text
LANGUAGE sql STABLE AS $$
    WITH recorded(name, pos) AS (
        SELECT * FROM unnest(ARRAY['state', 'attempt_count', 'last_status', 'first_duration_ms',
                                   'first_status', 'updated_at', 'finished_at',
                                   'first_attempt_id', 'first_attempted_at', 'last_error',
                                   'first_excerpt', 'first_headers']) WITH ORDINALITY
    )
    SELECT string_agg(format('%I %s%s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                             CASE WHEN a.attcollation NOT IN (0, t.typcollation)
                                  THEN ' COLLATE ' || a.attcollation::regcollation::text
                                  ELSE '' END,
                             CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
                             coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')),
                      ', ' ORDER BY r.pos NULLS FIRST, a.attnum)
           || coalesce((SELECT string_agg(format(', CONSTRAINT %I %s', c.conname,
                                                 pg_get_constraintdef(c.oid)), '' ORDER BY c.conname)
                        FROM pg_constraint c
                        WHERE c.conrelid = 'deliveries'::regclass AND c.contype = 'c'), '')
    FROM pg_attribute a
    JOIN pg_type t ON t.oid = a.atttypid
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    LEFT JOIN recorded r ON r.name = a.attname::text
    WHERE a.attrelid = 'deliveries'::regclass AND a.attnum > 0 AND NOT a.attisdropped
$$;

CREATE OR REPLACE FUNCTION hookline_create_day_partition(day date, tbl text)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    suffix  text := to_char(day, 'YYYYMMDD');
    lo      text := hookline_ulid_time(day::timestamp AT TIME ZONE 'UTC');
    hi      text := hookline_ulid_time((day + 1)::timestamp AT TIME ZONE 'UTC');
    spec    record;
    crowded boolean;
BEGIN
    SELECT * INTO spec FROM (VALUES
        ('events', 'evt_', 'id', ''), ('outbox', 'evt_', 'event_id', ''),
        -- a delivery's record is a HOT update that may write its first attempt: its page keeps
        -- half its room for the new version (decision 0109)
        ('deliveries', 'dlv_', 'id', ' WITH (fillfactor = 50)'),
        ('attempts', 'dlv_', 'delivery_id', '')) AS t(tbl, prefix, col, storage)
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
    IF spec.tbl = 'deliveries' THEN
        -- the record's columns last (decision 0110); the parent's indexes, foreign key and
        -- triggers come with the attach
        EXECUTE format('CREATE TABLE %I (%s)%s', spec.tbl || '_d' || suffix,
                       hookline_delivery_columns(), spec.storage);
        EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                       spec.tbl, spec.tbl || '_d' || suffix, spec.prefix || lo, spec.prefix || hi);
    ELSE
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)%s',
                       spec.tbl || '_d' || suffix, spec.tbl, spec.prefix || lo, spec.prefix || hi,
                       spec.storage);
    END IF;
    PERFORM hookline_unsummarise_first_range((spec.tbl || '_d' || suffix)::regclass);
    RETURN 1;
END $function$;

-- The day partitions of deliveries that hold no row yet are made again, in the new order,
-- with their day's functions.
DO $$
DECLARE
    day date;
    empty boolean;
BEGIN
    FOR day IN SELECT to_date(substr(c.relname, 13), 'YYYYMMDD')
               FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
               WHERE i.inhparent = 'deliveries'::regclass
                 AND c.relname ~ '^deliveries_d[0-9]{8}$' LOOP
        EXECUTE format('SELECT NOT EXISTS (SELECT 1 FROM %I)', 'deliveries_d' || to_char(day, 'YYYYMMDD'))
            INTO empty;
        CONTINUE WHEN NOT empty;
        PERFORM hookline_drop_day_functions(day);
        EXECUTE format('DROP TABLE %I', 'deliveries_d' || to_char(day, 'YYYYMMDD'));
        PERFORM hookline_create_day_partition(day, 'deliveries');
        PERFORM hookline_make_day_functions(day);
    END LOOP;
END $$;
