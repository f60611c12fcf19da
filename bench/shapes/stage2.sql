-- A what-if for `bench/pipeline.py --shape bench/shapes/stage2.sql` (decision 0085, stage 2),
-- never a migration: on top of the HOT record (migration 0043, decision 0097), a successful
-- first attempt written on the delivery's row rather than as a row of `attempts` (here simply
-- not written: the row's extra columns are left out, so this is a floor). The tenant and
-- event indexes are gone since migrations 0039 and 0038.
DO $$
DECLARE
    maker text := pg_get_functiondef(
        'hookline_make_hot_function(text,text,text,text)'::regprocedure);
    cut_from integer := position('), attempt AS (' IN maker);
    cut_to integer := position('), finished AS (' IN maker);
BEGIN
    IF cut_from = 0 OR cut_to = 0 THEN
        RAISE EXCEPTION 'the record template changed: update bench/shapes/stage2.sql';
    END IF;
    EXECUTE substr(maker, 1, cut_from - 1) || substr(maker, cut_to);
END $$;
SELECT hookline_make_hot_function('record', 'hookline_record_batch_delivered', 'deliveries', '');
-- every day's copy made again from the new template
DO $$
DECLARE
    day date;
BEGIN
    FOR day IN SELECT to_date(substr(c.relname, 13), 'YYYYMMDD')
               FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
               WHERE i.inhparent = 'deliveries'::regclass
                 AND c.relname ~ '^deliveries_d[0-9]{8}$' LOOP
        PERFORM hookline_drop_day_functions(day);
        PERFORM hookline_make_day_functions(day);
    END LOOP;
END $$;
