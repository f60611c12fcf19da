-- A delivery's first attempt, when it delivers it within five minutes of the delivery's
-- making, is written on the delivery's own row by the record's HOT update instead of as a row
-- of `attempts` (decision 0109, the first part of decision 0085's stage 2). On the hot path
-- (made at receipt, delivered at the first try) a delivered event then writes its delivery
-- rows and nothing else: no attempt row and no entry in the attempts' key, ~17 % of the WAL
-- per delivered event with ten endpoints (bench/against.py, docs/performance.md).
--
-- * Every later attempt, every failed one and a first one made later than that (a backlog, a
--   paused endpoint, a lease that ran out) is a row of `attempts` as before.
-- * A delivery's attempts are its rows of `attempts` and its row's first attempt
--   (`first_attempts`). A reader of one delivery's attempts reads `attempt_log` by
--   `delivery_id`; one holding the delivery's row, `hookline_attempts_of(d)`; one of a window
--   of time across endpoints, `hookline_attempts_since(start)`: the attempts by their time and
--   the rows by their ids from `hookline_first_attempts_from(start)` on (the five minutes
--   bound which deliveries can hold a first attempt made since `start`).
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

-- The record of a batch's delivered attempts (decisions 0066, 0084, 0097, 0099) in the hot
-- functions' maker, restated as migration 0045 left it with the record's template changed: each
-- claim ended; each delivery whose claim stood delivered, with its first attempt on its row
-- when the rule above says so; every other attempt a row of `attempts` (it was made, whoever
-- holds the delivery now).
CREATE OR REPLACE FUNCTION hookline_make_hot_function(kind text, name text, target text, guard text)
RETURNS void LANGUAGE plpgsql AS $function$
DECLARE
    -- where the claim reads each delivery's event (decision 0100): a day's function from the
    -- day's partition of events, named as its deliveries partition is (through the parent, a
    -- generic plan's start-up locks and sets up every partition kept); the function over the
    -- parent, and a day whose events sit in the default partition, through the parent
    day_events text := CASE WHEN target ~ '^deliveries_d[0-9]{8}$'
                            THEN 'events_' || substr(target, 12) END;
    events_from text := CASE
        WHEN day_events IS NOT NULL AND to_regclass(day_events) IS NOT NULL
        THEN format('%I x WHERE x.id = c.event_id', day_events)
        ELSE 'events x WHERE x.id = c.event_id AND x.id BETWEEN event_lo AND event_hi' END;
    -- the claim's main statement: %1$I its target, then the rate limits' three parts (the
    -- tokens of each endpoint, the join that reads them, the statement that spends them), and
    -- %5$s where it reads events from
    claim_query text := $query$
WITH found AS MATERIALIZED (
    -- each id looked up alone, queued in this generation and held by no live claim with a
    -- slot (one without, a deferral's, is taken over by the message it deferred); read, not
    -- locked: the endpoint locks above keep reconcile's sweeps and replay off it until the
    -- in-flight row below is committed (they take the same locks before they look)
    SELECT d.id, d.enqueue_seq, d.endpoint_id, d.attempt_count, d.deadline_at, d.created_at,
           d.tenant_id, d.event_id, d.tenant_group, p.max_concurrency,
           p.rate_limit_per_second AS rate, p.enabled AND p_now < d.deadline_at AS sendable
    FROM unnest(p_ids::text[], p_seqs::integer[]) AS m(id, seq)
    CROSS JOIN LATERAL (SELECT x.id, x.enqueue_seq, x.endpoint_id, x.state, x.attempt_count,
                               x.deadline_at, x.created_at, x.tenant_id, x.event_id,
                               x.tenant_group
                        FROM %1$I x WHERE x.id = m.id AND x.id BETWEEN lo AND hi) d
    JOIN endpoints p ON p.id = d.endpoint_id
    WHERE d.enqueue_seq = m.seq AND d.state = 'queued'
      AND NOT EXISTS (SELECT 1 FROM deliveries_in_flight f
                      WHERE f.id = d.id AND f.slot AND f.lease_expires_at >= now())
), busy AS MATERIALIZED (
    -- the slots taken, endpoint by endpoint: its live in-flight rows holding one
    SELECT f.endpoint_id, n.taken
    FROM (SELECT DISTINCT endpoint_id FROM found WHERE sendable) f
    CROSS JOIN LATERAL (SELECT count(*) AS taken FROM deliveries_in_flight x
                        WHERE x.endpoint_id = f.endpoint_id AND x.slot
                          AND x.lease_expires_at >= now()) n
), room AS MATERIALIZED (
    -- per endpoint with something to send: its free slots, and its tokens when rate limited
    -- (burst = one second's worth, at least 1)
    SELECT f.endpoint_id, f.rate,
           CASE WHEN recovering_until > now() THEN 0
                ELSE f.max_concurrency - coalesce((SELECT u.taken FROM busy u
                                                   WHERE u.endpoint_id = f.endpoint_id), 0)
           END AS free,
           %2$s AS tokens
    FROM (SELECT DISTINCT endpoint_id, max_concurrency, rate FROM found WHERE sendable) f%3$s
), judged AS MATERIALIZED (
    SELECT f.*,
           CASE WHEN NOT f.sendable THEN NULL
                WHEN f.nth > r.free THEN greatest(
                    1, extract(epoch FROM recovering_until - now()))::double precision
                WHEN r.rate IS NOT NULL AND r.tokens - f.nth < 0 THEN (f.nth - r.tokens) / r.rate
                ELSE 0::double precision END AS wait_seconds
    FROM (SELECT found.*, row_number() OVER (PARTITION BY found.endpoint_id, found.sendable
                                              ORDER BY found.id) AS nth
          FROM found) f
    LEFT JOIN room r ON r.endpoint_id = f.endpoint_id AND f.sendable
), taken AS (
    -- the claims: a slot where one was granted; a row without a slot or whose lease ran out
    -- (its worker crashed) is taken over, a live one with a slot (a claim that won the race)
    -- is left and not returned
    INSERT INTO deliveries_in_flight AS t (id, endpoint_id, enqueue_seq, lease_expires_at, slot)
    SELECT j.id, j.endpoint_id, j.enqueue_seq, now() + p_lease, coalesce(j.wait_seconds = 0, false)
    FROM judged j
    ON CONFLICT (id) DO UPDATE
        SET enqueue_seq = EXCLUDED.enqueue_seq, lease_expires_at = EXCLUDED.lease_expires_at,
            slot = EXCLUDED.slot
        WHERE t.lease_expires_at < now() OR NOT t.slot
    RETURNING t.id, t.lease_expires_at
), claimed AS MATERIALIZED (
    SELECT j.*, k.lease_expires_at AS claimed_until FROM taken k JOIN judged j ON j.id = k.id
)%4$s
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
-- each claimed delivery's endpoint and event looked up alone (OFFSET 0); the event in the
-- day's partition of events for a day's function (a delivery whose event is not there comes
-- back without it, for the caller to read: decision 0100), else through the parent within
-- the batch's days
CROSS JOIN LATERAL (SELECT x.* FROM endpoints x WHERE x.id = c.endpoint_id OFFSET 0) p
LEFT JOIN LATERAL (SELECT x.type, x.payload, x.content_type, x.source_id FROM %5$s
                   OFFSET 0) e ON true
ORDER BY c.endpoint_id, c.id$query$;
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
SET enable_bitmapscan = off SET plan_cache_mode = force_generic_plan
AS $body$
#variable_conflict use_column
DECLARE
    -- the batch's first and last ids: every lookup of a delivery below is bounded by them,
    -- so executor start-up prunes the day partitions outside them instead of opening every
    -- partition's indexes (decision 0072)
    lo text;
    hi text;
    -- and their events': a delivery's id carries its event's time (hookline_delivery_id), or
    -- for a test event's a moment after it; a day's margin below covers both
    event_lo text;
    event_hi text;
    -- until when no slot is granted: the end of one lease after the in-flight table was
    -- emptied by a crash or a fail-over (migration 0037)
    recovering_until timestamptz;
    -- whether an endpoint of the batch has a rate limit (read before the locks: a rate set
    -- since is enforced from the next claim on)
    rated boolean;
    locked boolean;
BEGIN
    SELECT min(i), max(i) INTO lo, hi FROM unnest(p_ids::text[]) AS i;
%3$s%6$s    IF NOT p_durable THEN
        -- commit without waiting for the disk (decision 0014); never behind RDS Proxy (0036)
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    SELECT hookline_lock_endpoint_slots(array_agg(d.endpoint_id)),
           coalesce(bool_or(p.rate_limit_per_second IS NOT NULL), false),
           (SELECT f.lease_expires_at FROM deliveries_in_flight f WHERE f.id = '~reset')
    INTO locked, rated, recovering_until
    -- looked up id by id, each in its own day's partition
    FROM unnest(p_ids::text[]) AS m(id)
    CROSS JOIN LATERAL (SELECT x.endpoint_id FROM %2$I x
                        WHERE x.id = m.id AND x.id BETWEEN lo AND hi OFFSET 0) d
    CROSS JOIN LATERAL (SELECT y.rate_limit_per_second FROM endpoints y
                        WHERE y.id = d.endpoint_id OFFSET 0) p;
    IF recovering_until IS NULL THEN
        -- emptied: the slots of the claims made before are unknown until their leases end
        INSERT INTO deliveries_in_flight (id, endpoint_id, enqueue_seq, lease_expires_at, slot)
        VALUES ('~reset', '', 0, now() + p_lease, false)
        ON CONFLICT (id) DO NOTHING;
        SELECT f.lease_expires_at INTO recovering_until
        FROM deliveries_in_flight f WHERE f.id = '~reset';
    END IF;
    IF rated THEN
        RETURN QUERY %4$s;
    ELSE
        RETURN QUERY %5$s;
    END IF;
END $body$
$tmpl$, name, target, guard,
        format(claim_query, target, $rate$CASE WHEN f.rate IS NOT NULL THEN least(greatest(f.rate, 1), coalesce(
               b.tokens + f.rate * extract(epoch FROM clock_timestamp() - b.refilled_at),
               greatest(f.rate, 1))) END$rate$, $rate$
    LEFT JOIN endpoint_rate b ON b.endpoint_id = f.endpoint_id$rate$, $rate$, spent AS (
    -- the tokens of the slots granted (a claim that lost a race spends none)
    INSERT INTO endpoint_rate (endpoint_id, tokens, refilled_at)
    SELECT r.endpoint_id, r.tokens - count(*), clock_timestamp()
    FROM claimed c JOIN room r ON r.endpoint_id = c.endpoint_id
    WHERE r.rate IS NOT NULL AND c.wait_seconds = 0
    GROUP BY r.endpoint_id, r.tokens
    ON CONFLICT (endpoint_id) DO UPDATE
        SET tokens = EXCLUDED.tokens, refilled_at = EXCLUDED.refilled_at
)$rate$, events_from),
        -- no endpoint of the batch has a rate: no tokens to read or spend
        format(claim_query, target, 'NULL::double precision', '', '', events_from),
        -- the events' bounds, which only the lookup through the parent reads
        CASE WHEN events_from LIKE 'events x %' THEN $bounds$    event_lo := 'evt_' || hookline_ulid_time(hookline_ulid_at(substr(lo, 5, 10))
                                             - interval '1 day');
    event_hi := 'evt_' || substr(hi, 5, 10) || '~';
$bounds$ ELSE '' END);
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
    ELSE
        RAISE EXCEPTION 'not a hot function: %', kind;
    END IF;
END $function$;

SELECT hookline_make_hot_function('record', 'hookline_record_batch_delivered', 'deliveries', '');

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
