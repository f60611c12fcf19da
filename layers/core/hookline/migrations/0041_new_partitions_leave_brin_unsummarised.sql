-- A day partition's BRIN indexes start with their first block range unsummarised (decision
-- 0095).
--
-- Building a BRIN index summarises the table's last block range even when the table is
-- empty, so every partition made ahead began with a summary of range 0 (its first 128
-- pages). A summary is updated by each insert whose value lies outside it, and attempts
-- arrive in time order: every attempt in the first megabyte of a day's attempts partition
-- wrote a BRIN record (~70 B of WAL), where the ranges after it, left unsummarised until
-- full (autosummarize), write none. Unsummarised, range 0 behaves as the later ones: a scan
-- reads it whole, and it is summarised once the next range begins.

CREATE OR REPLACE FUNCTION hookline_unsummarise_first_range(tbl regclass) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    idx  regclass;
    done integer := 0;
BEGIN
    FOR idx IN
        SELECT i.indexrelid::regclass
        FROM pg_index i
        JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_am a ON a.oid = c.relam
        WHERE i.indrelid = tbl AND a.amname = 'brin'
    LOOP
        PERFORM brin_desummarize_range(idx, 0);
        done := done + 1;
    END LOOP;
    RETURN done;
END $$;

-- Migration 0030's maker, each new partition's BRIN ranges left unsummarised.
CREATE OR REPLACE FUNCTION hookline_create_day_partition(day date, tbl text) RETURNS integer
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
    PERFORM hookline_unsummarise_first_range((spec.tbl || '_d' || suffix)::regclass);
    RETURN 1;
END $$;

-- The partitions made ahead already, while they are still empty. One being filled keeps its
-- summary: unsummarised, a scan would read its first megabyte until vacuum summarised it.
DO $$
DECLARE
    part regclass;
    empty boolean;
BEGIN
    FOR part IN
        SELECT (p.partition_name)::regclass FROM hookline_day_partitions p
    LOOP
        EXECUTE format('SELECT NOT EXISTS (SELECT 1 FROM %s)', part) INTO empty;
        IF empty THEN
            PERFORM hookline_unsummarise_first_range(part);
        END IF;
    END LOOP;
END $$;
