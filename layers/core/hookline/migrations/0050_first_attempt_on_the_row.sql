-- A delivery's first attempt, when it delivers it within five minutes of the delivery's
-- making, is written on the delivery's own row by the record's HOT update instead of as a row
-- of `attempts` (decision 0109, the first part of decision 0085's stage 2). On the hot path
-- (made at receipt, delivered at the first try) a delivered event then writes its delivery
-- rows and nothing else: no attempt row and no entry in the attempts' key, ~18 % of the WAL
-- per delivered event with ten endpoints and ~10 % of deliver's server CPU
-- (bench/pipeline.py --shape, docs/performance.md).
--
-- * Every later attempt, every failed one and a first one made later than that (a backlog, a
--   paused endpoint, a lease that ran out) is a row of `attempts` as before.
-- * `attempt_log` is the one place that says what a delivery's attempts are: its rows of
--   `attempts` and its row's first attempt. A reader of one delivery's attempts reads it by
--   `delivery_id`. A reader of a window of time across endpoints reads the attempts by their
--   time and the rows by their ids from `hookline_first_attempts_from(start)` on: the five
--   minutes bound which deliveries can hold a first attempt made since `start`.
-- * The attempt keeps an id from the attempts' own sequence, so the API's ids and their order
--   stay what they were.
-- * The row is wider when it is recorded: the deliveries' day partitions now leave half of
--   each page free (`fillfactor = 50`), so the record still finds room for a HOT update.
-- * A version from before this one reads `attempts` alone. docs/operations.md ("Rolling back
--   past migration 0050") moves the first attempts into `attempts` and stops writing them on
--   the rows (`hookline_first_attempts_off`) before it is deployed, and turns it back on
--   (`hookline_first_attempts_on`) when this version is deployed again.

ALTER TABLE deliveries
    ADD COLUMN first_attempt_id bigint,
    ADD COLUMN first_attempted_at timestamptz,
    ADD COLUMN first_duration_ms integer,
    ADD COLUMN first_status integer,
    ADD COLUMN first_excerpt text,
    ADD COLUMN first_headers jsonb;

-- The first attempts the rows hold, shaped as attempts are.
CREATE VIEW first_attempts AS
    SELECT first_attempt_id AS id, id AS delivery_id, first_attempted_at AS attempted_at,
           first_duration_ms AS duration_ms, first_status AS status_code,
           first_excerpt AS response_excerpt, NULL::text AS error_class,
           first_headers AS response_headers
    FROM deliveries
    WHERE first_attempt_id IS NOT NULL;

-- One delivery's attempts, for a reader that has its row already (a lateral join, which
-- inlines this SQL): its rows of `attempts`, and the first attempt the row holds, as
-- `first_attempts` shapes it.
CREATE FUNCTION hookline_attempts_of(d deliveries) RETURNS SETOF attempts
LANGUAGE sql STABLE AS $$
    SELECT * FROM attempts a WHERE a.delivery_id = d.id
    UNION ALL
    SELECT d.first_attempt_id, d.id, d.first_attempted_at, d.first_duration_ms, d.first_status,
           d.first_excerpt, NULL::text, d.first_headers
    WHERE d.first_attempt_id IS NOT NULL
$$;

-- Every delivery's attempts, wherever they are kept: what a reader of one delivery's (or one
-- day's) attempts reads, by `delivery_id` (both parts are keyed by it).
CREATE VIEW attempt_log AS
    SELECT id, delivery_id, attempted_at, duration_ms, status_code, response_excerpt,
           error_class, response_headers
    FROM attempts
    UNION ALL
    SELECT * FROM first_attempts;

-- The rule, stated once: a first attempt goes on its row when the delivery's id (its event's
-- millisecond) is at most five minutes older than the attempt. Given an attempt's time, the
-- lowest id that can hold it; `dlv_~`, above every id, while the rule is off.
CREATE FUNCTION hookline_first_attempts_on() RETURNS void
LANGUAGE plpgsql AS $on$
BEGIN
    CREATE OR REPLACE FUNCTION hookline_first_attempts_from(at timestamptz) RETURNS text
    LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $rule$
        SELECT 'dlv_' || hookline_ulid_time(at - interval '5 minutes')
    $rule$;
END $on$;

-- For a rollback past this migration: no first attempt is written on a row any more, and
-- those written move to `attempts` under their ids. Returns how many moved. Run it before the
-- earlier version is deployed and once more after (a record that began before it may still
-- write one).
CREATE FUNCTION hookline_first_attempts_off() RETURNS bigint
LANGUAGE plpgsql AS $off$
DECLARE
    moved bigint;
BEGIN
    CREATE OR REPLACE FUNCTION hookline_first_attempts_from(at timestamptz) RETURNS text
    LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $rule$
        SELECT 'dlv_~'::text
    $rule$;
    WITH written AS (
        INSERT INTO attempts (id, delivery_id, attempted_at, duration_ms, status_code,
                              response_excerpt, error_class, response_headers)
        OVERRIDING SYSTEM VALUE
        SELECT * FROM first_attempts
        RETURNING delivery_id
    )
    UPDATE deliveries d
    SET first_attempt_id = NULL, first_attempted_at = NULL, first_duration_ms = NULL,
        first_status = NULL, first_excerpt = NULL, first_headers = NULL
    FROM written w WHERE d.id = w.delivery_id;
    GET DIAGNOSTICS moved = ROW_COUNT;
    RETURN moved;
END $off$;

SELECT hookline_first_attempts_on();

-- Every attempt made since `since`, across endpoints: the attempts by their time (their BRIN
-- index), the rows' first attempts by the ids that can hold one made since then. SQL with one
-- statement, so it is inlined into its caller's query and planned with it.
CREATE FUNCTION hookline_attempts_since(since timestamptz) RETURNS SETOF attempt_log
LANGUAGE sql STABLE AS $$
    SELECT id, delivery_id, attempted_at, duration_ms, status_code, response_excerpt,
           error_class, response_headers
    FROM attempts
    WHERE attempted_at >= since
    UNION ALL
    SELECT * FROM first_attempts
    WHERE delivery_id >= hookline_first_attempts_from(since) AND attempted_at >= since
$$;

-- The record of a batch's delivered attempts (decisions 0066, 0084, 0097, 0099), its template
-- now in a maker of its own as the failed one's is (migration 0048); `hookline_make_hot_function`
-- makes the claim. Over `target` (the parent or a day's partition of deliveries) with `guard`
-- (the day's hand-over to the parent's, or nothing). Each claim ended; each delivery whose claim
-- stood delivered, with its first attempt on its row when the rule above says so; every other
-- attempt a row of `attempts` (it was made, whoever holds the delivery now).
CREATE FUNCTION hookline_make_record_function(name text, target text, guard text) RETURNS void
LANGUAGE plpgsql AS $maker$
BEGIN
    EXECUTE format($tmpl$
CREATE OR REPLACE FUNCTION %1$I(
    p_ids text[], p_seqs integer[], p_claimed_until timestamptz[], p_endpoint_ids text[],
    p_attempted_at timestamptz[], p_duration_ms integer[], p_statuses integer[],
    p_excerpts text[], p_headers jsonb[])
RETURNS TABLE (id text)
LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $body$
#variable_conflict use_column
DECLARE
    -- the batch's first and last ids bound the update (the claim's bounds, decision 0072)
    lo text;
    hi text;
    -- whether an endpoint of the batch is on a failure streak, which a success ends
    failing boolean;
    -- the ids whose first attempt, made by now, goes on their row (decision 0109)
    on_row_from text;
BEGIN
    SELECT min(i), max(i),
           EXISTS (SELECT 1 FROM endpoints p
                   WHERE p.id = ANY (p_endpoint_ids::text[]) AND p.failing_since IS NOT NULL),
           (SELECT hookline_first_attempts_from(max(a))
            FROM unnest(p_attempted_at::timestamptz[]) AS a)
    INTO lo, hi, failing, on_row_from
    FROM unnest(p_ids::text[]) AS i;
%3$s    RETURN QUERY
WITH done AS MATERIALIZED (
    -- each attempt's id taken here, so the record knows where it wrote it
    SELECT *, 'queued'::text AS state, nextval(%4$L::regclass) AS attempt_id,
           m.id >= on_row_from AS soon
    FROM unnest(p_ids::text[], p_seqs::integer[], p_endpoint_ids::text[],
                p_attempted_at::timestamptz[], p_duration_ms::integer[], p_statuses::integer[],
                p_excerpts::text[], p_headers::jsonb[])
         AS m(id, seq, endpoint_id, attempted_at, duration_ms, status, excerpt, headers)
), stood AS MATERIALIZED (
    -- the claims ended; those that still stood finish their delivery
    SELECT s.id FROM hookline_end_claims(p_ids, p_seqs, p_claimed_until, NULL) s
), finished AS (
    UPDATE %2$I d
    -- the lease left as it was and the attempt's columns in no index: the update is HOT (0043)
    SET state = 'delivered', attempt_count = d.attempt_count + 1,
        last_status = coalesce(m.status, d.last_status), last_error = NULL,
        finished_at = now(), updated_at = now(),
        -- the delivery's first attempt (none before, none on the row: a replay starts its
        -- count again), made soon after the delivery was: on the row (decision 0109)
        first_attempt_id = CASE WHEN d.attempt_count = 0 AND d.first_attempt_id IS NULL
                                     AND m.soon THEN m.attempt_id ELSE d.first_attempt_id END,
        first_attempted_at = CASE WHEN d.attempt_count = 0 AND d.first_attempt_id IS NULL
                                       AND m.soon THEN m.attempted_at
                                  ELSE d.first_attempted_at END,
        first_duration_ms = CASE WHEN d.attempt_count = 0 AND d.first_attempt_id IS NULL
                                      AND m.soon THEN m.duration_ms
                                 ELSE d.first_duration_ms END,
        first_status = CASE WHEN d.attempt_count = 0 AND d.first_attempt_id IS NULL
                                 AND m.soon THEN m.status ELSE d.first_status END,
        first_excerpt = CASE WHEN d.attempt_count = 0 AND d.first_attempt_id IS NULL
                                  AND m.soon THEN m.excerpt ELSE d.first_excerpt END,
        first_headers = CASE WHEN d.attempt_count = 0 AND d.first_attempt_id IS NULL
                                  AND m.soon THEN m.headers ELSE d.first_headers END
    FROM done m
    -- `queued` compared with done's column, not named: the join stays id by id, through
    -- the batch's ids however the plan was costed
    WHERE d.id = m.id AND d.state = m.state AND d.enqueue_seq = m.seq
      AND m.id IN (SELECT s.id FROM stood s)
      AND d.id = ANY (p_ids::text[]) AND d.id BETWEEN lo AND hi
    RETURNING d.id, coalesce(d.first_attempt_id = m.attempt_id, false) AS on_row
), attempt AS (
    -- every attempt not written on its row above
    INSERT INTO attempts (id, delivery_id, attempted_at, duration_ms, status_code,
                          response_excerpt, error_class, response_headers)
    OVERRIDING SYSTEM VALUE
    SELECT m.attempt_id, m.id, m.attempted_at, m.duration_ms, m.status, m.excerpt, NULL,
           m.headers
    FROM done m
    WHERE NOT EXISTS (SELECT 1 FROM finished f WHERE f.id = m.id AND f.on_row)
)
SELECT f.id FROM finished f;
    IF failing THEN
        -- written only when there is a streak to end: most records have none (0099)
        UPDATE endpoints p SET failing_since = NULL
        WHERE p.id = ANY (p_endpoint_ids::text[]) AND p.failing_since IS NOT NULL;
    END IF;
END $body$
$tmpl$, name, target, guard, pg_get_serial_sequence('attempts', 'id'));
END $maker$;

SELECT hookline_make_record_function('hookline_record_batch_delivered', 'deliveries', '');

-- A day's three functions, the record's from its new maker.
CREATE OR REPLACE FUNCTION hookline_make_day_functions(day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    suffix text := '_d' || to_char(day, 'YYYYMMDD');
    lo     text := 'dlv_' || hookline_ulid_time(day::timestamp AT TIME ZONE 'UTC');
    hi     text := 'dlv_' || hookline_ulid_time((day + 1)::timestamp AT TIME ZONE 'UTC');
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('hookline_create_day_partitions'));
    IF to_regclass('deliveries' || suffix) IS NULL
       OR to_regproc('hookline_record_batch_failed' || suffix) IS NOT NULL THEN
        RETURN 0;
    END IF;
    PERFORM hookline_make_hot_function('claim', 'hookline_claim_batch' || suffix,
                                       'deliveries' || suffix, format($guard$
    -- a batch outside this day's partition goes to the function over the parent
    IF lo < %L OR hi >= %L THEN
        RETURN QUERY SELECT * FROM hookline_claim_batch(p_ids, p_seqs, p_lease, p_now,
                                                        p_lease_seconds, p_durable);
        RETURN;
    END IF;
$guard$, lo, hi));
    PERFORM hookline_make_record_function('hookline_record_batch_delivered' || suffix,
                                          'deliveries' || suffix, format($guard$
    -- a batch outside this day's partition goes to the function over the parent
    IF lo < %L OR hi >= %L THEN
        RETURN QUERY SELECT * FROM hookline_record_batch_delivered(
            p_ids, p_seqs, p_claimed_until, p_endpoint_ids, p_attempted_at, p_duration_ms,
            p_statuses, p_excerpts, p_headers);
        RETURN;
    END IF;
$guard$, lo, hi));
    PERFORM hookline_make_failed_function('hookline_record_batch_failed' || suffix,
                                          'deliveries' || suffix, format($guard$
    -- a batch outside this day's partition goes to the function over the parent
    IF lo < %L OR hi >= %L THEN
        RETURN QUERY SELECT * FROM hookline_record_batch_failed(
            p_ids, p_seqs, p_claimed_until, p_attempted_at, p_duration_ms, p_statuses,
            p_excerpts, p_errors, p_headers, p_states, p_next_attempt_at,
            p_lease_expires_at, p_bumps, p_reasons, p_streak_endpoints);
        RETURN;
    END IF;
$guard$, lo, hi));
    RETURN 3;
END $$;


-- Every day that has a partition gets its functions again, from the new template.
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

-- New days' partitions of deliveries leave half of each page free; those that exist do from
-- their next page on.
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
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)%s',
                   spec.tbl || '_d' || suffix, spec.tbl, spec.prefix || lo, spec.prefix || hi,
                   spec.storage);
    PERFORM hookline_unsummarise_first_range((spec.tbl || '_d' || suffix)::regclass);
    RETURN 1;
END $function$;


DO $$
BEGIN
    EXECUTE (SELECT string_agg(
                 format('ALTER TABLE %s SET (fillfactor = 50)', inhrelid::regclass), '; ')
             FROM pg_inherits WHERE inhparent = 'deliveries'::regclass);
END $$;
