-- A deliverer's claim lives in an unlogged table, not on the delivery row (decision 0085,
-- stage 1).
--
-- The claim updated every delivery it took (`delivering`, a new lease), and the record
-- updated it again: two versions of the row, each entering all nine of its indexes, for a
-- lease that lasts seconds. Now the claim inserts `(id, endpoint_id, enqueue_seq,
-- lease_expires_at, slot)` into `deliveries_in_flight`, or takes over a row whose lease ran
-- out, and the delivery stays `queued`; the record deletes the row and updates the delivery
-- once, from `queued`. An endpoint's slots are its live in-flight rows with `slot` (which
-- replaces the `delivering` rows of decision 0071 and the spans of 0082; `slot_spans` stays
-- for 1.x's rollback, written by nothing); a claim without a slot holds its row with `slot`
-- false for the deferral that follows.
--
-- UNLOGGED: the table writes no WAL, and a crash or a fail-over empties it. A worker's claim
-- then has no row left: its record still stands when nothing claimed the delivery since
-- (hookline_end_claims). The slots taken before are unknown, so for one lease after the
-- table was emptied no claim is granted one (the table's reset marker, below, says when):
-- an endpoint's cap holds across a crash, and deliveries wait out that lease. Delivery stays
-- at least once: SQS visibility and the delivery's own lease keep a second sender out until
-- they run out, and reconcile requeues a delivery only when neither it nor a live claim
-- holds it.
CREATE UNLOGGED TABLE deliveries_in_flight (
    id               text COLLATE "C" PRIMARY KEY,
    endpoint_id      text NOT NULL,
    enqueue_seq      integer NOT NULL,
    lease_expires_at timestamptz NOT NULL,
    slot             boolean NOT NULL
);

-- An endpoint's slots: the claim counts the live ones with a plain index scan (a bitmap scan
-- never marks a deleted row's entry dead, so every claim would revisit them until vacuum).
CREATE INDEX deliveries_in_flight_slots ON deliveries_in_flight (endpoint_id, lease_expires_at)
    WHERE slot;

-- The claims made before this migration, moved over: each `delivering` delivery becomes
-- `queued` with its in-flight row under the same lease and generation, so its worker's
-- record still matches.
INSERT INTO deliveries_in_flight (id, endpoint_id, enqueue_seq, lease_expires_at, slot)
SELECT id, endpoint_id, enqueue_seq, lease_expires_at, true
FROM deliveries WHERE state = 'delivering' AND lease_expires_at IS NOT NULL;
UPDATE deliveries SET state = 'queued', updated_at = now() WHERE state = 'delivering';

-- The reset marker: a row no delivery id can take ('~' sorts after every id), gone whenever
-- the table is emptied. A claim that finds it missing puts it back with the end of one lease
-- (hookline_make_hot_function); until then no slot is granted. Here the table is new, not
-- emptied, and every claim made before is in it: no wait.
INSERT INTO deliveries_in_flight (id, endpoint_id, enqueue_seq, lease_expires_at, slot)
VALUES ('~reset', '', 0, now(), false);

-- Whether a claim holds the delivery now. VOLATILE and PL/pgSQL (never inlined), so each call
-- reads with a fresh snapshot: reconcile's sweeps ask it after locking a delivery, and see a
-- claim committed after their statement began.
CREATE FUNCTION hookline_in_flight(p_id text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM deliveries_in_flight f
                   WHERE f.id = p_id AND f.lease_expires_at >= now());
END $$;

-- The state a delivery is shown in: `delivering` while a live claim holds a slot for it,
-- otherwise the one it is stored in. Readers that filter by state pair it with
-- hookline_stored_state, so an index on `state` still finds the rows.
CREATE FUNCTION hookline_shown_state(p_state text, p_id text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_state = 'queued'
                 AND EXISTS (SELECT 1 FROM deliveries_in_flight f
                             WHERE f.id = p_id AND f.slot AND f.lease_expires_at >= now())
                THEN 'delivering' ELSE p_state END
$$;

CREATE FUNCTION hookline_stored_state(p_shown text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_shown = 'delivering' THEN 'queued' ELSE p_shown END
$$;

-- The end of claims, the one rule for whether each still stands: the ids of those that do.
-- A claim stands while its in-flight row is as the claim made it (same generation, same
-- lease), and then ends here: the row is deleted, or with `p_hold` kept without a slot for
-- that long (a deferral: the message comes back after a delay). A claim whose row is gone
-- altogether (the table emptied by a crash or a fail-over) still stands: its caller's update
-- of the delivery then compares the generation and `queued`. One taken over by a later claim
-- (its lease had run out) does not.
CREATE FUNCTION hookline_end_claims(p_ids text[], p_seqs integer[],
                                    p_claimed_until timestamptz[], p_hold interval)
RETURNS TABLE (id text)
LANGUAGE plpgsql VOLATILE
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
WITH claim AS MATERIALIZED (
    SELECT * FROM unnest(p_ids::text[], p_seqs::integer[], p_claimed_until::timestamptz[])
        AS m(id, seq, claimed_until)
), ended AS (
    DELETE FROM deliveries_in_flight f USING claim m
    WHERE p_hold IS NULL
      AND f.id = m.id AND f.enqueue_seq = m.seq AND f.lease_expires_at = m.claimed_until
    RETURNING f.id
), held AS (
    UPDATE deliveries_in_flight f SET lease_expires_at = now() + p_hold, slot = false
    FROM claim m
    WHERE p_hold IS NOT NULL
      AND f.id = m.id AND f.enqueue_seq = m.seq AND f.lease_expires_at = m.claimed_until
    RETURNING f.id
)
SELECT e.id FROM ended e
UNION ALL
SELECT h.id FROM held h
UNION ALL
-- (the statement's snapshot still holds the rows it deletes, so these are only the gone ones)
SELECT m.id FROM claim m
WHERE NOT EXISTS (SELECT 1 FROM deliveries_in_flight f WHERE f.id = m.id);
END $$;

-- Forget the claims whose lease ran out (reconcile): how many. Nothing reads an expired row
-- but the claim that takes it over, and a record finding none falls back as after a crash.
CREATE FUNCTION hookline_prune_expired_claims() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    pruned integer;
BEGIN
    DELETE FROM deliveries_in_flight WHERE lease_expires_at < now() AND id <> '~reset';
    GET DIAGNOSTICS pruned = ROW_COUNT;
    RETURN pruned;
END $$;

-- The two hot functions' templates (migration 0036), with the claim in the in-flight table.
CREATE OR REPLACE FUNCTION hookline_make_hot_function(kind text, name text, target text,
                                                      guard text)
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
SET enable_bitmapscan = off SET plan_cache_mode = force_generic_plan
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
    -- until when no slot is granted: the end of one lease after the in-flight table was
    -- emptied by a crash or a fail-over (migration 0037)
    recovering_until timestamptz;
BEGIN
%3$s    IF NOT p_durable THEN
        -- commit without waiting for the disk (decision 0014); never behind RDS Proxy (0036)
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    FOR endpoint_key IN
        -- looked up id by id, each in its own day's partition
        SELECT DISTINCT hashtext(d.endpoint_id)
        FROM unnest(p_ids::text[]) AS m(id)
        CROSS JOIN LATERAL (SELECT x.endpoint_id FROM %2$I x
                            WHERE x.id = m.id AND x.id BETWEEN lo AND hi OFFSET 0) d
        ORDER BY 1
    LOOP
        PERFORM pg_advisory_xact_lock(hashtext('hookline_endpoint_slots'), endpoint_key);
    END LOOP;
    SELECT f.lease_expires_at INTO recovering_until
    FROM deliveries_in_flight f WHERE f.id = '~reset';
    IF NOT FOUND THEN
        -- emptied: the slots of the claims made before are unknown until their leases end
        INSERT INTO deliveries_in_flight (id, endpoint_id, enqueue_seq, lease_expires_at, slot)
        VALUES ('~reset', '', 0, now() + p_lease, false)
        ON CONFLICT (id) DO NOTHING;
        SELECT f.lease_expires_at INTO recovering_until
        FROM deliveries_in_flight f WHERE f.id = '~reset';
    END IF;
    RETURN QUERY
WITH found AS MATERIALIZED (
    -- each id looked up alone, queued in this generation and held by no live claim with a
    -- slot (one without, a deferral's, is taken over by the message it deferred); its row
    -- share-locked by key, which keeps reconcile's sweeps (FOR UPDATE) off it until the
    -- in-flight row below is committed
    SELECT d.id, d.enqueue_seq, d.endpoint_id, d.attempt_count, d.deadline_at, d.created_at,
           d.tenant_id, d.event_id, d.tenant_group, p.max_concurrency,
           p.rate_limit_per_second AS rate, p.enabled AND p_now < d.deadline_at AS sendable
    FROM unnest(p_ids::text[], p_seqs::integer[]) AS m(id, seq)
    CROSS JOIN LATERAL (SELECT x.id, x.enqueue_seq, x.endpoint_id, x.state, x.attempt_count,
                               x.deadline_at, x.created_at, x.tenant_id, x.event_id,
                               x.tenant_group
                        FROM %2$I x WHERE x.id = m.id AND x.id BETWEEN lo AND hi
                        FOR KEY SHARE OF x) d
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
           CASE WHEN f.rate IS NOT NULL THEN least(greatest(f.rate, 1), coalesce(
               b.tokens + f.rate * extract(epoch FROM clock_timestamp() - b.refilled_at),
               greatest(f.rate, 1))) END AS tokens
    FROM (SELECT DISTINCT endpoint_id, max_concurrency, rate FROM found WHERE sendable) f
    LEFT JOIN endpoint_rate b ON b.endpoint_id = f.endpoint_id
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
    SELECT *, 'queued'::text AS state
    FROM unnest(p_ids::text[], p_seqs::integer[], p_endpoint_ids::text[],
                p_attempted_at::timestamptz[], p_duration_ms::integer[], p_statuses::integer[],
                p_excerpts::text[], p_headers::jsonb[])
         AS m(id, seq, endpoint_id, attempted_at, duration_ms, status, excerpt, headers)
), stood AS MATERIALIZED (
    -- the claims ended; those that still stood finish their delivery
    SELECT s.id FROM hookline_end_claims(p_ids, p_seqs, p_claimed_until, NULL) s
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
    -- `queued` compared with done's column, not named: the join stays id by id, through
    -- the batch's ids however the plan was costed
    WHERE d.id = m.id AND d.state = m.state AND d.enqueue_seq = m.seq
      AND m.id IN (SELECT s.id FROM stood s)
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

-- The functions over the parent and every day's, made again from the new templates.
SELECT hookline_make_hot_function('claim', 'hookline_claim_batch', 'deliveries', '');
SELECT hookline_make_hot_function('record', 'hookline_record_batch_delivered', 'deliveries', '');
-- (dropped first: the maker skips a day that has its functions)
SELECT hookline_drop_day_functions(to_date(substr(c.relname, 13), 'YYYYMMDD'))
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'deliveries'::regclass AND c.relname ~ '^deliveries_d[0-9]{8}$';
SELECT hookline_make_day_functions(to_date(substr(c.relname, 13), 'YYYYMMDD'))
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'deliveries'::regclass AND c.relname ~ '^deliveries_d[0-9]{8}$';
