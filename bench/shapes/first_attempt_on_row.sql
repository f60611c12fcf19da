-- A what-if for `bench/pipeline.py --shape bench/shapes/first_attempt_on_row.sql` (decision
-- 0085, stage 2), never a migration: a successful first attempt written on the delivery's row,
-- in the record's HOT update (decision 0097), instead of as a row of `attempts`. The row gets
-- the attempt's columns (when, how long, the status, the excerpt, the response's headers), so
-- the update logs them and needs the room on its page: what `stage2.sql`, its floor, leaves
-- out. (Every attempt the pipeline makes is a first one that succeeds.)
ALTER TABLE deliveries
    ADD COLUMN first_attempted_at timestamptz, ADD COLUMN first_duration_ms integer,
    ADD COLUMN first_status integer, ADD COLUMN first_excerpt text,
    ADD COLUMN first_headers jsonb;
DO $$
DECLARE
    maker text := pg_get_functiondef(
        'hookline_make_hot_function(text,text,text,text)'::regprocedure);
    cut_from integer := position('), attempt AS (' IN maker);
    cut_to integer := position('), finished AS (' IN maker);
    set_at text := 'SET state = ''delivered'', attempt_count = d.attempt_count + 1,';
BEGIN
    IF cut_from = 0 OR cut_to = 0 OR position(set_at IN maker) = 0 THEN
        RAISE EXCEPTION 'the record template changed: update %', 'first_attempt_on_row.sql';
    END IF;
    maker := substr(maker, 1, cut_from - 1) || substr(maker, cut_to);
    EXECUTE replace(maker, set_at, set_at || '
        first_attempted_at = m.attempted_at, first_duration_ms = m.duration_ms,
        first_status = m.status, first_excerpt = m.excerpt, first_headers = m.headers,');
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
