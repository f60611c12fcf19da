-- Deliver's two statements update the day partition their batch lies in, not the parent
-- (decision 0084).
--
-- An UPDATE of the partitioned `deliveries` in a cached (generic) plan opens every day
-- partition as a result relation at executor start-up, whichever the batch touches: with the
-- default retention's ~100 partitions, that start-up was the largest part of a claim left
-- after decision 0082. A batch's deliveries nearly always lie in one day's partition, so each
-- day with a `deliveries` partition gets its own claim and record functions, made with the
-- partition and dropped with it, whose UPDATE names that partition; their plans are cached
-- per session like the parent's. Deliver calls the day's function for a batch whose ids
-- share a day (`hookline.repositories.delivery_batches`), and the function over the parent
-- otherwise. A day function checks its batch against its partition's bounds and hands a
-- batch outside them to the function over the parent, so a wrong choice costs time, never a
-- claim.
--
-- Both bodies are stated once, here, as templates: the functions over the parent are made
-- from them too (replacing migration 0035's claim and 0031's record). One change to both: the
-- updated rows are reached only through the batch's ids (`d.id = ANY (p_ids)`, nothing else
-- joined in the claim's UPDATE: its endpoints and events are looked up one by one after it),
-- so the plan reads the batch's rows whatever the statistics were when the session made it.
-- A copy's plan made while its partition was empty reached the rows through their endpoint's
-- index, or scanned the range lo..hi and the day's events, for every row.

-- One function of the two: `name`, its UPDATE on `target`, `guard` at the top of its body.
CREATE FUNCTION hookline_make_hot_function(kind text, name text, target text, guard text)
RETURNS void LANGUAGE plpgsql AS $maker$
BEGIN
    IF kind = 'claim' THEN
        EXECUTE format($tmpl$
CREATE OR REPLACE FUNCTION %1$I(p_ids text[], p_seqs integer[], p_lease interval,
                                                p_now timestamptz,
                                                p_lease_seconds double precision,
                                                p_durable boolean)
RETURNS TABLE (id text, attempt_count integer, deadline_at timestamptz, created_at timestamptz,
               tenant_id text, event_id text, tenant_group text, enqueue_seq integer,
               claimed_until timestamptz, endpoint_id text, url text, headers jsonb,
               retry_on_4xx boolean, enabled boolean, deleted boolean, input_transformer jsonb,
               kind text, role_arn text, destination jsonb, auth jsonb, auth_secret text,
               tls jsonb, tls_key text, public_only boolean, external_id text, sendable boolean,
               event_type text, payload bytea, content_type text, source_id text,
               secrets text[], wait_seconds double precision)
LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $body$
#variable_conflict use_column
DECLARE
    endpoint_key integer;
    -- the batch's first and last ids: every lookup of a delivery below is bounded by them,
    -- so executor start-up prunes the day partitions outside them instead of opening every
    -- partition's indexes (decision 0072)
    lo text := (SELECT min(i) FROM unnest(p_ids::text[]) AS i);
    hi text := (SELECT max(i) FROM unnest(p_ids::text[]) AS i);
    -- and their events': a delivery's id carries its event's time (hookline_delivery_id), or
    -- for a test event's a moment after it; a day's margin below covers both
    event_lo text := 'evt_' || hookline_ulid_time(hookline_ulid_at(substr(lo, 5, 10))
                                                  - interval '1 day');
    event_hi text := 'evt_' || substr(hi, 5, 10) || '~';
    -- the first and last spans holding slots: the slot count reads only the day partitions
    -- between them
    span_lo text;
    span_hi text;
    recorded boolean;
BEGIN
%3$s    IF NOT p_durable THEN
        -- commit without waiting for the disk (decision 0014); never behind RDS Proxy (0036)
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    -- the batch's spans are on record before any of its deliveries takes a slot; the shared
    -- lock is taken first (before any endpoint's) and keeps reconcile from pruning a span
    -- whose slots this claim has not yet committed
    PERFORM pg_advisory_xact_lock_shared(hashtext('hookline_slot_spans'));
    -- (the few spans on record read whole: their bounds, and whether the batch's one span is
    -- among them, as it nearly always is)
    SELECT min(s.prefix), max(s.prefix) || '~', bool_or(s.prefix = left(lo, 9))
    INTO span_lo, span_hi, recorded FROM slot_spans s;
    IF recorded IS NOT TRUE OR left(lo, 9) <> left(hi, 9) THEN
        INSERT INTO slot_spans (prefix)
        SELECT b.prefix FROM (SELECT DISTINCT left(i, 9) AS prefix
                              FROM unnest(p_ids::text[]) AS i) b
        WHERE NOT EXISTS (SELECT 1 FROM slot_spans s WHERE s.prefix = b.prefix)
        ON CONFLICT DO NOTHING;
        SELECT min(s.prefix), max(s.prefix) || '~' INTO span_lo, span_hi FROM slot_spans s;
    END IF;
    FOR endpoint_key IN
        -- looked up id by id, each in its own day's partition
        SELECT DISTINCT hashtext(d.endpoint_id)
        FROM unnest(p_ids::text[]) AS m(id)
        CROSS JOIN LATERAL (SELECT x.endpoint_id FROM deliveries x
                            WHERE x.id = m.id AND x.id BETWEEN lo AND hi OFFSET 0) d
        ORDER BY 1
    LOOP
        PERFORM pg_advisory_xact_lock(hashtext('hookline_endpoint_slots'), endpoint_key);
    END LOOP;
    RETURN QUERY
WITH found AS MATERIALIZED (
    -- each id looked up alone (OFFSET 0 keeps the lookup from being planned as a join)
    SELECT d.id, d.enqueue_seq, d.endpoint_id, d.state, d.lease_expires_at, p.max_concurrency,
           p.rate_limit_per_second AS rate, p.enabled AND p_now < d.deadline_at AS sendable
    FROM unnest(p_ids::text[], p_seqs::integer[]) AS m(id, seq)
    CROSS JOIN LATERAL (SELECT x.id, x.enqueue_seq, x.endpoint_id, x.state, x.lease_expires_at,
                               x.deadline_at
                        FROM deliveries x WHERE x.id = m.id AND x.id BETWEEN lo AND hi
                        OFFSET 0) d
    JOIN endpoints p ON p.id = d.endpoint_id
    WHERE d.enqueue_seq = m.seq
      AND (d.state = 'queued' OR (d.state = 'delivering' AND d.lease_expires_at < now()))
), busy AS MATERIALIZED (
    -- the slots taken, endpoint by endpoint: each a scan of the small index of `delivering`
    -- rows in the day partitions the spans holding slots cover (pruned at executor start-up),
    -- never of all the leased rows
    SELECT f.endpoint_id, n.taken
    FROM (SELECT DISTINCT endpoint_id FROM found WHERE sendable) f
    CROSS JOIN LATERAL (SELECT count(*) AS taken FROM deliveries x
                        WHERE x.endpoint_id = f.endpoint_id AND x.state = 'delivering'
                          AND x.lease_expires_at >= now()
                          AND x.id BETWEEN span_lo AND span_hi) n
), room AS MATERIALIZED (
    -- per endpoint with something to send: its free slots, and its tokens when rate limited
    -- (burst = one second's worth, at least 1)
    SELECT f.endpoint_id, f.rate,
           f.max_concurrency - coalesce((SELECT u.taken FROM busy u
                                         WHERE u.endpoint_id = f.endpoint_id), 0) AS free,
           CASE WHEN f.rate IS NOT NULL THEN least(greatest(f.rate, 1), coalesce(
               b.tokens + f.rate * extract(epoch FROM clock_timestamp() - b.refilled_at),
               greatest(f.rate, 1))) END AS tokens
    FROM (SELECT DISTINCT endpoint_id, max_concurrency, rate FROM found WHERE sendable) f
    LEFT JOIN endpoint_rate b ON b.endpoint_id = f.endpoint_id
), judged AS (
    SELECT f.id, f.enqueue_seq, f.state, f.lease_expires_at, f.sendable,
           CASE WHEN NOT f.sendable THEN NULL
                WHEN f.nth > r.free THEN 1::double precision
                WHEN r.rate IS NOT NULL AND r.tokens - f.nth < 0 THEN (f.nth - r.tokens) / r.rate
                ELSE 0::double precision END AS wait_seconds
    FROM (SELECT found.*, row_number() OVER (PARTITION BY found.endpoint_id, found.sendable
                                              ORDER BY found.id) AS nth
          FROM found) f
    LEFT JOIN room r ON r.endpoint_id = f.endpoint_id AND f.sendable
), claimed AS (
    UPDATE %2$I d
    SET state = CASE WHEN j.wait_seconds = 0 THEN 'delivering' ELSE 'queued' END,
        lease_expires_at = now() + p_lease, updated_at = now()
    FROM judged j
    -- the row as `found` saw it (compare and set): no state named here, so no partial index
    -- on state is a way in, and nothing else joined here, so only the batch's ids are: a
    -- plan made while the partition was empty otherwise reached the rows through their
    -- endpoint's index, or scanned the range lo..hi
    WHERE d.id = j.id AND d.enqueue_seq = j.enqueue_seq AND d.state = j.state
      AND d.lease_expires_at IS NOT DISTINCT FROM j.lease_expires_at
      AND d.id = ANY (p_ids::text[]) AND d.id BETWEEN lo AND hi
    RETURNING d.id, d.attempt_count, d.deadline_at, d.created_at, d.tenant_id, d.event_id,
              d.tenant_group, d.enqueue_seq, d.lease_expires_at AS claimed_until,
              d.endpoint_id, j.sendable, j.wait_seconds
), spent AS (
    -- the tokens of the slots granted (a claim that lost a race spends none)
    INSERT INTO endpoint_rate (endpoint_id, tokens, refilled_at)
    SELECT r.endpoint_id, r.tokens - count(*), clock_timestamp()
    FROM claimed c JOIN room r ON r.endpoint_id = c.endpoint_id
    WHERE r.rate IS NOT NULL AND c.wait_seconds = 0
    GROUP BY r.endpoint_id, r.tokens
    ON CONFLICT (endpoint_id) DO UPDATE
        SET tokens = EXCLUDED.tokens, refilled_at = EXCLUDED.refilled_at
)
SELECT c.id, c.attempt_count, c.deadline_at, c.created_at, c.tenant_id, c.event_id,
       c.tenant_group, c.enqueue_seq, c.claimed_until, c.endpoint_id, p.url, p.headers,
       p.retry_on_4xx, p.enabled, p.deleted_at IS NOT NULL AS deleted, p.input_transformer,
       p.kind, p.role_arn, p.destination, p.auth, p.auth_secret, p.tls, p.tls_key,
       p.public_only, (SELECT t.external_id FROM tenants t WHERE t.id = c.tenant_id),
       c.sendable, e.type AS event_type, e.payload, e.content_type, e.source_id,
       CASE WHEN c.wait_seconds = 0 THEN ARRAY(
           SELECT s.secret FROM endpoint_secrets s
           WHERE s.endpoint_id = c.endpoint_id
             AND (s.expires_at IS NULL OR s.expires_at > now())
           ORDER BY s.created_at DESC) END AS secrets,
       c.wait_seconds
FROM claimed c
-- each claimed delivery's endpoint and event looked up alone (OFFSET 0), the event in its
-- day's partitions
CROSS JOIN LATERAL (SELECT x.* FROM endpoints x WHERE x.id = c.endpoint_id OFFSET 0) p
CROSS JOIN LATERAL (SELECT x.type, x.payload, x.content_type, x.source_id FROM events x
                    WHERE x.id = c.event_id AND x.id BETWEEN event_lo AND event_hi
                    OFFSET 0) e
ORDER BY c.endpoint_id, c.id;
END $body$
$tmpl$, name, target, guard);
    ELSIF kind = 'record' THEN
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
    lo text := (SELECT min(i) FROM unnest(p_ids::text[]) AS i);
    hi text := (SELECT max(i) FROM unnest(p_ids::text[]) AS i);
BEGIN
%3$s    RETURN QUERY
WITH done AS MATERIALIZED (
    SELECT *, 'delivering'::text AS state
    FROM unnest(p_ids::text[], p_seqs::integer[], p_claimed_until::timestamptz[],
                p_endpoint_ids::text[], p_attempted_at::timestamptz[],
                p_duration_ms::integer[], p_statuses::integer[], p_excerpts::text[],
                p_headers::jsonb[])
         AS m(id, seq, claimed_until, endpoint_id, attempted_at, duration_ms, status, excerpt,
              headers)
), attempt AS (
    INSERT INTO attempts (delivery_id, attempted_at, duration_ms, status_code,
                          response_excerpt, error_class, response_headers)
    SELECT id, attempted_at, duration_ms, status, excerpt, NULL, headers FROM done
), finished AS (
    UPDATE %2$I d
    SET state = 'delivered', attempt_count = d.attempt_count + 1, lease_expires_at = NULL,
        last_status = coalesce(m.status, d.last_status), last_error = NULL,
        finished_at = now(), updated_at = now()
    FROM done m
    -- `delivering` compared with done's column, not named: the join stays id by id, through
    -- the batch's ids however the plan was costed
    WHERE d.id = m.id AND d.state = m.state
      AND d.enqueue_seq = m.seq AND d.lease_expires_at = m.claimed_until
      AND d.id = ANY (p_ids::text[]) AND d.id BETWEEN lo AND hi
    RETURNING d.id
), recovered AS (
    UPDATE endpoints SET failing_since = NULL
    WHERE id IN (SELECT DISTINCT endpoint_id FROM done) AND failing_since IS NOT NULL
)
SELECT id FROM finished;
END $body$
$tmpl$, name, target, guard);
    ELSE
        RAISE EXCEPTION 'not a hot function: %', kind;
    END IF;
END $maker$;

-- The functions over the parent, from the templates.
SELECT hookline_make_hot_function('claim', 'hookline_claim_batch', 'deliveries', '');
SELECT hookline_make_hot_function('record', 'hookline_record_batch_delivered', 'deliveries', '');

-- A day's two functions, when it has a `deliveries` partition and not yet the functions; how
-- many were made (0 or 2). One maker at a time, under the partition makers' lock.
CREATE FUNCTION hookline_make_day_functions(day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    suffix text := '_d' || to_char(day, 'YYYYMMDD');
    lo     text := 'dlv_' || hookline_ulid_time(day::timestamp AT TIME ZONE 'UTC');
    hi     text := 'dlv_' || hookline_ulid_time((day + 1)::timestamp AT TIME ZONE 'UTC');
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('hookline_create_day_partitions'));
    IF to_regclass('deliveries' || suffix) IS NULL
       OR to_regproc('hookline_record_batch_delivered' || suffix) IS NOT NULL THEN
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
    RETURN 2;
END $$;

-- A day's two functions dropped (retention drops them with the day's partitions, in one
-- transaction); how many there were.
CREATE FUNCTION hookline_drop_day_functions(day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    suffix  text := '_d' || to_char(day, 'YYYYMMDD');
    fn      text;
    dropped integer := 0;
BEGIN
    FOREACH fn IN ARRAY ARRAY['hookline_claim_batch', 'hookline_record_batch_delivered'] LOOP
        CONTINUE WHEN to_regproc(fn || suffix) IS NULL;
        EXECUTE format('DROP FUNCTION %I', fn || suffix);
        dropped := dropped + 1;
    END LOOP;
    RETURN dropped;
END $$;

-- The day's four partitions (migrations, tests: callers holding no other lock, migration
-- 0030), and now its functions.
CREATE OR REPLACE FUNCTION hookline_create_day_partitions(day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    made integer;
BEGIN
    SELECT coalesce(sum(hookline_create_day_partition(day, t)), 0)::integer INTO made
    FROM unnest(ARRAY['events', 'outbox', 'deliveries', 'attempts']) AS t;
    PERFORM hookline_make_day_functions(day);
    RETURN made;
END $$;

-- The days that have a partition already.
SELECT hookline_make_day_functions(to_date(substr(c.relname, 13), 'YYYYMMDD'))
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'deliveries'::regclass AND c.relname ~ '^deliveries_d[0-9]{8}$';
