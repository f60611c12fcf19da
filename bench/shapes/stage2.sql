-- A what-if for `bench/pipeline.py --shape bench/shapes/stage2.sql` (decisions 0085 and 0109),
-- never a migration: the floor of the attempt log's cost. A successful first attempt is
-- written nowhere: not on the delivery's row (the rule turned off) and not as a row of
-- `attempts` (the record's insert cut out). What is left is the delivery's row and its
-- indexes, which the rest of stage 2 (a narrower row; the lease index went with decision 0111)
-- would take on.
SELECT hookline_first_attempts_off();
DO $$
DECLARE
    maker text := pg_get_functiondef(
        'hookline_make_hot_function(text,text,text,text)'::regprocedure);
    cut_from integer := position('), attempt AS (' IN maker);
    cut_to integer := position(E')\nSELECT f.id FROM finished f;' IN maker);
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
