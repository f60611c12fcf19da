-- A what-if for `bench/pipeline.py --shape bench/shapes/half_free_pages.sql` (decision 0107),
-- never a migration: the deliveries' day partitions leave half of each page free instead of
-- 30 % (migration 0043), so a record that writes the attempt's columns on the row
-- (`first_attempt_on_row.sql`) still finds room on its page for a HOT update. It applies to
-- the pages written from now on, which in the bench's fresh database is all of them.
DO $$
DECLARE
    part text;
BEGIN
    FOR part IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = 'deliveries'::regclass LOOP
        EXECUTE format('ALTER TABLE %I SET (fillfactor = 50)', part);
    END LOOP;
END $$;
