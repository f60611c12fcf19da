-- A what-if for `bench/pipeline.py --shape bench/shapes/half_free_pages.sql` (decision 0107),
-- never a migration: the deliveries' day partitions leave half of each page free instead of
-- 30 % (migration 0043), so a record that writes the attempt's columns on the row
-- (`first_attempt_on_row.sql`) still finds room on its page for a HOT update. It applies to
-- the pages written from now on, which in the bench's fresh database is all of them.
DO $$
BEGIN
    EXECUTE (SELECT string_agg(
                 format('ALTER TABLE %s SET (fillfactor = 50)', inhrelid::regclass), '; ')
             FROM pg_inherits WHERE inhparent = 'deliveries'::regclass);
END $$;
