-- A what-if for `bench/pipeline.py --shape bench/shapes/implied_receipt_times.sql`, never a
-- migration: a delivery made at receipt writes no `next_attempt_at`, `updated_at` or
-- `deadline_at` (each would be implied by the id's time, as the receipt's lease is since
-- decision 0111): the row is 24 B narrower. Only for a bench whose deliveries go without a
-- claim (its endpoints' cap above the in-flight ceiling, the default) and deliver at the
-- first attempt: a claim reads the deadline, and a NULL one is a passed one.
ALTER TABLE deliveries
    ALTER COLUMN next_attempt_at DROP NOT NULL, ALTER COLUMN next_attempt_at DROP DEFAULT,
    ALTER COLUMN updated_at DROP NOT NULL, ALTER COLUMN updated_at DROP DEFAULT,
    ALTER COLUMN deadline_at DROP NOT NULL;
-- the receipt's deadline written as NULL: an edit of the function as migrated (the edit must
-- match once), not a copy of it
DO $shape$
DECLARE
    src text := pg_get_functiondef('hookline_accept_event'::regproc);
    old text := $$               now() + p_deadline, 'queued', 1,$$;
BEGIN
    IF array_length(string_to_array(src, old), 1) <> 2 THEN
        RAISE EXCEPTION 'implied_receipt_times: no single match for the receipt''s deadline';
    END IF;
    EXECUTE replace(src, old, $$               NULL, 'queued', 1,$$);
END $shape$;
