-- The hot path's functions reach rows by key, one lookup at a time (decision 0072).
--
-- PL/pgSQL caches a generic plan per statement for the session, made without the partition
-- key and from the partitions' statistics at that moment. Day partitions start empty and are
-- made a week ahead, and the share of `queued` or `delivering` rows in a partition's
-- statistics is whatever it was at its last analyze: a backlog that builds up after it is
-- invisible. The old statements joined the batch's ids to `deliveries`, `events` and
-- `outbox`, and named states as constants, so a plan could start from a partial index on
-- state (every queued row of every partition) or a tenant's whole index of events and hash-
-- or loop-join the batch against it: bench/pipeline.py measured ~850 blocks and 6 ms per batch
-- claim of 10, and a fan-out round reading every event of its tenant.
--
-- These statements always touch a handful of rows reachable by key from their arrays or from
-- a small claimed set, so they now say so:
-- * a lookup by id is a LATERAL subquery with OFFSET 0 (never flattened into a join), whose
--   only condition is its key: the primary key, in the one partition that run-time pruning
--   leaves;
-- * an UPDATE joined to its targets compares state (and lease) with the values its read saw,
--   never with a constant, so no partial index on state can be its way in; it becomes a
--   compare-and-set, which is what the re-check under a concurrent update wanted anyway;
-- * hash and merge joins are off inside these functions: each join has a few rows on one side
--   and a key on the other;
-- * the plans are generic, made once per session: with the batch's size unknown to it, the
--   planner otherwise finds a custom plan cheaper every time and plans each call afresh
--   (3.6 ms for the claim's statement over nine partitions).
-- Same signatures, columns and results as migrations 0027 and 0028.

CREATE OR REPLACE FUNCTION hookline_fan_out_round(p_limit integer, p_deadline interval, p_lease interval,
                                       p_due_limit integer)
RETURNS TABLE (events bigint, due bigint, filtered_waiting boolean, id text, endpoint_id text,
               tenant_group text, enqueue_seq integer)
LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    claimed text[];
    lo text;
    hi text;
    due_ids text[];
    sent_ids text[] := '{}';
    sent_endpoints text[] := '{}';
    sent_groups text[] := '{}';
    sent_seqs integer[] := '{}';
    filtered boolean := false;
BEGIN
    -- 1. the outbox rows to fan out (events of tenants with a content-filtered or ordered
    --    endpoint are left to fan_out_batch): the one step that must look at every day's
    --    partition, through each one's small index of pending rows
    SELECT array_agg(c.event_id) INTO claimed FROM (
        SELECT o.event_id FROM outbox o
        WHERE o.fanned_out_at IS NULL
          AND NOT EXISTS (
              SELECT 1 FROM endpoints p
              WHERE p.tenant_id = o.tenant_id AND p.enabled
                AND (p.content_filter IS NOT NULL OR p.ordering IS NOT NULL)
          )
        ORDER BY o.created_at
        LIMIT p_limit
        FOR UPDATE SKIP LOCKED
    ) c;
    -- 2. their deliveries, created queued with a lease, and the rows marked: bounded by the
    --    first and last event id, so only those days' partitions are opened
    IF claimed IS NOT NULL THEN
        lo := (SELECT min(x) FROM unnest(claimed) AS x);
        hi := (SELECT max(x) FROM unnest(claimed) AS x);
        WITH event AS MATERIALIZED (
            SELECT e.id, e.tenant_id, e.type
            FROM unnest(claimed) AS c(event_id)
            CROSS JOIN LATERAL (SELECT x.id, x.tenant_id, x.type FROM events x
                                WHERE x.id = c.event_id AND x.id BETWEEN lo AND hi
                                OFFSET 0) e
        ), targets AS MATERIALIZED (
            SELECT p.id, p.tenant_id, t.tenant_group,
                   hookline_like_patterns(p.event_types) AS patterns
            FROM endpoints p
            JOIN tenants t ON t.id = p.tenant_id
            WHERE p.enabled AND p.tenant_id IN (SELECT tenant_id FROM event)
        ), created AS (
            INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group,
                                    deadline_at, state, enqueue_seq, lease_expires_at)
            SELECT hookline_delivery_id(e.id, p.id), e.id, p.id, e.tenant_id, p.tenant_group,
                   now() + p_deadline, 'queued', 1, now() + p_lease
            FROM event e
            JOIN targets p ON p.tenant_id = e.tenant_id
            WHERE e.type LIKE ANY (p.patterns)
            ON CONFLICT (id) DO NOTHING
            RETURNING id, endpoint_id, tenant_group, enqueue_seq
        ), marked AS (
            UPDATE outbox o SET fanned_out_at = now()
            WHERE o.event_id = ANY (claimed) AND o.event_id BETWEEN lo AND hi
        )
        SELECT coalesce(array_agg(c.id), '{}'), coalesce(array_agg(c.endpoint_id), '{}'),
               coalesce(array_agg(c.tenant_group), '{}'), coalesce(array_agg(c.enqueue_seq), '{}')
        INTO sent_ids, sent_endpoints, sent_groups, sent_seqs
        FROM created c;
    END IF;
    -- 3. deliveries that came due otherwise (retries, parked and unsent ones), as
    --    claim_due_deliveries does: found through every day's small index of pending rows,
    --    then updated within their first and last id
    IF p_due_limit > 0 THEN
        SELECT array_agg(q.id) INTO due_ids FROM (
            SELECT d.id FROM deliveries d
            WHERE d.state = 'pending' AND d.next_attempt_at <= now()
            ORDER BY d.next_attempt_at
            LIMIT p_due_limit
            FOR UPDATE SKIP LOCKED
        ) q;
    END IF;
    IF due_ids IS NOT NULL THEN
        lo := (SELECT min(x) FROM unnest(due_ids) AS x);
        hi := (SELECT max(x) FROM unnest(due_ids) AS x);
        WITH requeued AS (
            UPDATE deliveries d
            SET state = 'queued', enqueue_seq = d.enqueue_seq + 1,
                lease_expires_at = now() + p_lease, updated_at = now()
            WHERE d.id = ANY (due_ids) AND d.id BETWEEN lo AND hi
            RETURNING d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq
        )
        SELECT sent_ids || array_agg(r.id), sent_endpoints || array_agg(r.endpoint_id),
               sent_groups || array_agg(r.tenant_group), sent_seqs || array_agg(r.enqueue_seq)
        INTO sent_ids, sent_endpoints, sent_groups, sent_seqs
        FROM requeued r;
    END IF;
    -- 4. whether events wait for fan_out_batch: the outbox is looked at only when some
    --    enabled endpoint has a content filter or an ordering
    IF EXISTS (SELECT 1 FROM endpoints p
               WHERE p.enabled AND (p.content_filter IS NOT NULL OR p.ordering IS NOT NULL)) THEN
        filtered := EXISTS (SELECT 1 FROM outbox o
                            WHERE o.fanned_out_at IS NULL
                              AND EXISTS (SELECT 1 FROM endpoints p
                                          WHERE p.tenant_id = o.tenant_id AND p.enabled
                                            AND (p.content_filter IS NOT NULL
                                                 OR p.ordering IS NOT NULL)));
    END IF;
    -- one head row with the counts (`id` NULL), then the deliveries to send
    RETURN QUERY SELECT coalesce(cardinality(claimed), 0)::bigint,
                        coalesce(cardinality(due_ids), 0)::bigint, filtered,
                        NULL::text, NULL::text, NULL::text, NULL::integer;
    RETURN QUERY SELECT coalesce(cardinality(claimed), 0)::bigint,
                        coalesce(cardinality(due_ids), 0)::bigint, filtered, u.id, u.endpoint_id,
                        u.tenant_group, u.seq
                 FROM unnest(sent_ids, sent_endpoints, sent_groups, sent_seqs)
                      AS u(id, endpoint_id, tenant_group, seq);
END $$;


-- An endpoint's filters as LIKE patterns (migration 0005), in PL/pgSQL with the same
-- result: the SQL version has a sub-select, so it could not be inlined and was parsed and
-- planned at every call, once per endpoint per fan-out round.
CREATE OR REPLACE FUNCTION hookline_like_patterns(patterns text[])
RETURNS text[] LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    made text[] := '{}';
    pattern text;
BEGIN
    IF cardinality(patterns) = 0 THEN
        RETURN ARRAY['%'];
    END IF;
    FOREACH pattern IN ARRAY patterns LOOP
        made := made || replace(replace(replace(replace(
            pattern, '\', '\\'), '%', '\%'), '_', '\_'), '*', '%');
    END LOOP;
    RETURN made;
END $$;

-- The time a ULID-style id's ten time characters encode (hookline_ulid_time's inverse).
-- PL/pgSQL, not SQL: a SQL function with a FROM is parsed and planned at every call.
CREATE FUNCTION hookline_ulid_at(encoded text) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    ms bigint := 0;
BEGIN
    FOR i IN 1..10 LOOP
        ms := ms * 32 + strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', substr(encoded, i, 1)) - 1;
    END LOOP;
    RETURN to_timestamp(ms / 1000.0);
END $$;

CREATE OR REPLACE FUNCTION hookline_claim_batch(p_ids text[], p_seqs integer[], p_lease interval,
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
AS $$
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
BEGIN
    IF NOT p_durable THEN
        -- commit without waiting for the disk (decision 0014); never behind RDS Proxy (0036)
        PERFORM set_config('synchronous_commit', 'off', true);
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
    -- the slots taken, endpoint by endpoint: each a scan of every day partition's small index
    -- of `delivering` rows (no partition key to prune by), never of all the leased rows
    SELECT f.endpoint_id, n.taken
    FROM (SELECT DISTINCT endpoint_id FROM found WHERE sendable) f
    CROSS JOIN LATERAL (SELECT count(*) AS taken FROM deliveries x
                        WHERE x.endpoint_id = f.endpoint_id AND x.state = 'delivering'
                          AND x.lease_expires_at >= now()) n
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
    UPDATE deliveries d
    SET state = CASE WHEN j.wait_seconds = 0 THEN 'delivering' ELSE 'queued' END,
        lease_expires_at = now() + p_lease, updated_at = now()
    FROM judged j, endpoints p, events e
    -- the row as `found` saw it (compare and set): no state named here, so no partial index
    -- on state is a way in
    WHERE d.id = j.id AND d.enqueue_seq = j.enqueue_seq AND d.state = j.state
      AND d.lease_expires_at IS NOT DISTINCT FROM j.lease_expires_at
      AND p.id = d.endpoint_id AND e.id = d.event_id
      AND d.id BETWEEN lo AND hi AND e.id BETWEEN event_lo AND event_hi
    RETURNING d.id, d.attempt_count, d.deadline_at, d.created_at, d.tenant_id, d.event_id,
              d.tenant_group, d.enqueue_seq, d.lease_expires_at AS claimed_until,
              p.id AS endpoint_id, p.url, p.headers, p.retry_on_4xx, p.enabled,
              p.deleted_at IS NOT NULL AS deleted, p.input_transformer,
              p.kind, p.role_arn, p.destination, p.auth, p.auth_secret, p.tls, p.tls_key,
              p.public_only,
              (SELECT t.external_id FROM tenants t WHERE t.id = d.tenant_id) AS external_id,
              j.sendable, e.type AS event_type, e.payload, e.content_type, e.source_id,
              j.wait_seconds
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
       c.tenant_group, c.enqueue_seq, c.claimed_until, c.endpoint_id, c.url, c.headers,
       c.retry_on_4xx, c.enabled, c.deleted, c.input_transformer, c.kind, c.role_arn,
       c.destination, c.auth, c.auth_secret, c.tls, c.tls_key, c.public_only, c.external_id,
       c.sendable, c.event_type, c.payload, c.content_type, c.source_id,
       CASE WHEN c.wait_seconds = 0 THEN ARRAY(
           SELECT s.secret FROM endpoint_secrets s
           WHERE s.endpoint_id = c.endpoint_id
             AND (s.expires_at IS NULL OR s.expires_at > now())
           ORDER BY s.created_at DESC) END AS secrets,
       c.wait_seconds
FROM claimed c
ORDER BY c.endpoint_id, c.id;
END $$;


CREATE OR REPLACE FUNCTION hookline_record_batch_delivered(
    p_ids text[], p_seqs integer[], p_claimed_until timestamptz[], p_endpoint_ids text[],
    p_attempted_at timestamptz[], p_duration_ms integer[], p_statuses integer[],
    p_excerpts text[], p_headers jsonb[])
RETURNS TABLE (id text)
LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    -- the batch's first and last ids bound the update (the claim's bounds, decision 0072)
    lo text := (SELECT min(i) FROM unnest(p_ids::text[]) AS i);
    hi text := (SELECT max(i) FROM unnest(p_ids::text[]) AS i);
BEGIN
    RETURN QUERY
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
    UPDATE deliveries d
    SET state = 'delivered', attempt_count = d.attempt_count + 1, lease_expires_at = NULL,
        last_status = coalesce(m.status, d.last_status), last_error = NULL,
        finished_at = now(), updated_at = now()
    FROM done m
    -- `delivering` compared with done's column, not named: the join stays id by id
    WHERE d.id = m.id AND d.state = m.state
      AND d.enqueue_seq = m.seq AND d.lease_expires_at = m.claimed_until
      AND d.id BETWEEN lo AND hi
    RETURNING d.id
), recovered AS (
    UPDATE endpoints SET failing_since = NULL
    WHERE id IN (SELECT DISTINCT endpoint_id FROM done) AND failing_since IS NOT NULL
)
SELECT id FROM finished;
END $$;
