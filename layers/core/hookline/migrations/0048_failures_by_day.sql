-- A batch's failed attempts recorded by a function with a copy per day partition (decision
-- 0105), as the batch's claim and its delivered attempts are (decisions 0066, 0084). As a
-- plain statement it was planned at every call behind RDS Proxy (~0.45 ms, more than the rest
-- of a single failure's record); a function keeps its generic plan per backend, and a day's
-- copy names the day's partition, so its start-up locks that partition only, where the
-- function over the parent locks every day's (decision 0103).

-- The function (over `target`: the parent or a day's partition of deliveries; `guard`: the
-- day's hand-over to the parent's, or nothing). Each failed attempt recorded (it was made,
-- whoever holds the delivery now); each endpoint of p_streak_endpoints starting its failure
-- streak unless it has, its row written only then (decision 0104); each claim ended (its slot
-- freed, hookline_end_claims) and, only while it stood, its delivery moved to the state the
-- caller decided (failed, dead, pending until p_next_attempt_at, or queued again under a new
-- generation with p_bumps = 1). Returns a row per delivery whose claim stood (its generation
-- now) and one per endpoint on a streak (its start).
CREATE FUNCTION hookline_make_failed_function(name text, target text, guard text) RETURNS void
LANGUAGE plpgsql AS $maker$
BEGIN
    EXECUTE format($tmpl$
CREATE OR REPLACE FUNCTION %1$I(
    p_ids text[], p_seqs integer[], p_claimed_until timestamptz[],
    p_attempted_at timestamptz[], p_duration_ms integer[], p_statuses integer[],
    p_excerpts text[], p_errors text[], p_headers jsonb[], p_states text[],
    p_next_attempt_at timestamptz[], p_lease_expires_at timestamptz[], p_bumps integer[],
    p_reasons text[], p_streak_endpoints text[])
RETURNS TABLE (id text, enqueue_seq integer, endpoint_id text, failing_since timestamptz)
LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $body$
#variable_conflict use_column
DECLARE
    -- the batch's first and last ids bound the update (the claim's bounds, decision 0072)
    lo text;
    hi text;
BEGIN
    SELECT min(i), max(i) INTO lo, hi FROM unnest(p_ids::text[]) AS i;
%3$s    RETURN QUERY
WITH m AS MATERIALIZED (
    SELECT *
    FROM unnest(p_ids::text[], p_seqs::integer[], p_attempted_at::timestamptz[],
                p_duration_ms::integer[], p_statuses::integer[], p_excerpts::text[],
                p_errors::text[], p_headers::jsonb[], p_states::text[],
                p_next_attempt_at::timestamptz[], p_lease_expires_at::timestamptz[],
                p_bumps::integer[], p_reasons::text[])
         AS m(id, seq, attempted_at, duration_ms, status, excerpt, error, headers, state,
              next_attempt_at, lease_expires_at, bump, reason)
), stood AS MATERIALIZED (
    SELECT s.id FROM hookline_end_claims(p_ids, p_seqs, p_claimed_until, NULL) s
), attempt AS (
    INSERT INTO attempts (delivery_id, attempted_at, duration_ms, status_code,
                          response_excerpt, error_class, response_headers)
    SELECT id, attempted_at, duration_ms, status, excerpt, error, headers FROM m
), started AS (
    UPDATE endpoints p SET failing_since = now()
    WHERE p.id = ANY (p_streak_endpoints::text[]) AND p.failing_since IS NULL
    RETURNING p.id, p.failing_since
), finished AS (
    UPDATE %2$I d
    SET state = m.state,
        attempt_count = d.attempt_count + 1,
        next_attempt_at = coalesce(m.next_attempt_at, d.next_attempt_at),
        lease_expires_at = m.lease_expires_at,
        enqueue_seq = d.enqueue_seq + m.bump,
        last_status = coalesce(m.status, d.last_status),
        last_error = m.reason,
        finished_at = CASE WHEN m.state IN ('delivered', 'failed', 'dead') THEN now() END,
        updated_at = now()
    FROM m
    -- `queued` named here is the delivery's state before: only a claimed delivery moves
    WHERE d.id = m.id AND d.state = 'queued' AND d.enqueue_seq = m.seq
      AND m.id IN (SELECT s.id FROM stood s)
      AND d.id = ANY (p_ids::text[]) AND d.id BETWEEN lo AND hi
    RETURNING d.id, d.enqueue_seq
)
SELECT f.id, f.enqueue_seq, NULL::text, NULL::timestamptz FROM finished f
UNION ALL
SELECT NULL::text, NULL::integer, s.id, s.failing_since FROM started s
UNION ALL
-- (the statement's snapshot: a streak `started` begins is not seen here, one begun before is)
SELECT NULL::text, NULL::integer, p.id, p.failing_since FROM endpoints p
WHERE p.id = ANY (p_streak_endpoints::text[]) AND p.failing_since IS NOT NULL;
END $body$
$tmpl$, name, target, guard);
END $maker$;

SELECT hookline_make_failed_function('hookline_record_batch_failed', 'deliveries', '');

-- A day's three functions, when it has a `deliveries` partition and not yet the functions;
-- how many were made (0 or 3). One maker at a time, under the partition makers' lock. A day
-- made before this migration has the first two: it gets all three again.
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
    PERFORM hookline_make_hot_function('record', 'hookline_record_batch_delivered' || suffix,
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

-- A day's three functions dropped (retention drops them with the day's partitions, in one
-- transaction); how many there were.
CREATE OR REPLACE FUNCTION hookline_drop_day_functions(day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    suffix  text := '_d' || to_char(day, 'YYYYMMDD');
    fn      text;
    dropped integer := 0;
BEGIN
    FOREACH fn IN ARRAY ARRAY['hookline_claim_batch', 'hookline_record_batch_delivered',
                              'hookline_record_batch_failed'] LOOP
        CONTINUE WHEN to_regproc(fn || suffix) IS NULL;
        EXECUTE format('DROP FUNCTION %I', fn || suffix);
        dropped := dropped + 1;
    END LOOP;
    RETURN dropped;
END $$;

-- Every day that has a partition gets its copy.
SELECT hookline_make_day_functions(to_date(substr(c.relname, 13), 'YYYYMMDD'))
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'deliveries'::regclass AND c.relname ~ '^deliveries_d[0-9]{8}$';
