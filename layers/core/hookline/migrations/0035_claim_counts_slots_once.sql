-- The batch claim counts its slots in one scan per day partition (decision 0082).
--
-- With a partition per day of the retention window (~100), hookline_claim_batch (migration
-- 0031) counted each endpoint's slots with its own scan of every partition's index of
-- `delivering` rows: ten endpoints, ~1,000 index scans started per claim. It now counts all
-- the batch's endpoints in one scan per partition (`endpoint_id = ANY`).
--
-- The plan is generic and made from whatever the partitions' statistics say (often: empty).
-- Costed that way, a `= ANY` over an array of unknown length looks dearer than reading the
-- whole index of leased rows (`queued` and `delivering`, migration 0011), which with a
-- backlog holds every queued delivery. So that index now holds the `queued` rows only: an
-- expired `delivering` lease is found through `deliveries_delivering_idx`, which holds only
-- the rows in flight, and the reconcile sweeps read the two (sql/reconcile.sql). A delivery's
-- claim no longer enters it either: one index entry fewer per delivery.
--
-- Building the index reads each partition once and holds writes to it meanwhile, as 0027's
-- and 0028's did.

CREATE INDEX deliveries_queued_idx ON deliveries (lease_expires_at) WHERE state = 'queued';
DROP INDEX deliveries_leased_idx;

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
    -- the slots taken by the batch's endpoints: one scan of each day partition's small index
    -- of `delivering` rows for all of them at once (there is no partition key to prune by: a
    -- replay re-arms a delivery in its own day), where 0031 scanned every partition once per
    -- endpoint. `deliveries_delivering_idx` is the one partial index this can read: the
    -- index of leased rows holds `queued` ones only (this migration).
    SELECT x.endpoint_id, count(*) AS taken FROM deliveries x
    WHERE x.endpoint_id = ANY (ARRAY(SELECT DISTINCT endpoint_id FROM found WHERE sendable))
      AND x.state = 'delivering' AND x.lease_expires_at >= now()
    GROUP BY x.endpoint_id
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
