-- An endpoint's concurrency slots are its deliveries in `delivering` with a live lease
-- (decision 0071), not `endpoint_slots` rows inserted at each claim and deleted at each
-- record: the claim's own update of the delivery is the slot, and whatever moves a delivery
-- out of `delivering` (its record, a retry, reconcile, a deadline) frees it. A lease that
-- runs out frees it too, as a slot row's lease did.
--
-- Claimers of one endpoint are serialised by a transaction-scoped advisory lock on the
-- endpoint's id, taken before the slots are counted, instead of a row lock on the endpoint
-- (migration 0021): an advisory lock writes nothing, where the row lock dirtied and logged
-- the endpoint's row on every claim. RDS Proxy never sees it (it is inside the function, and
-- gone at the commit), so nothing pins (decision 0036).
--
-- endpoint_slots and hookline_take_slot stay: the previous version's per-message claim calls
-- them, and migrations only expand within a major version (docs/compatibility.md).

-- One small index per day partition (a partitioned table has no global index): only the rows
-- being delivered, by endpoint, with their lease. The slot count reads every partition's,
-- since a retried or replayed delivery is delivered from its own (old) day's partition.
CREATE INDEX deliveries_delivering_idx ON deliveries (endpoint_id, lease_expires_at)
    WHERE state = 'delivering';

-- The batch claim (migrations 0022, 0026), also the per-message claim's body (one-element
-- arrays), in two steps so the count sees every slot taken before it:
-- 1. the advisory locks of the batch's endpoints, in one order (two batches sharing
--    endpoints queue behind each other, never deadlock);
-- 2. in a snapshot taken after them, each claimable delivery (this generation; queued, or
--    delivering with its lease run out) is claimed. A sendable one (enabled endpoint, before
--    the deadline) gets a slot while fewer than max_concurrency of the endpoint's deliveries
--    are delivering — in id order within a batch — and a token when the endpoint is rate
--    limited; it becomes `delivering`, wait_seconds 0, and gets its active secrets. Every
--    other claimed delivery stays `queued` under the claim's lease, so `delivering` means
--    "holds a slot" and nothing else: one without a slot has the seconds to wait (1 at the
--    cap; until its token is due under the rate limit) for the deliverer to defer or park
--    it; one that is not sendable has wait_seconds NULL, for the deliverer to finish at once.
--    The deliverer's next statement for it matches the claim by generation and lease, in
--    either state. Same columns as 0026's.
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
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    endpoint_key integer;
BEGIN
    IF NOT p_durable THEN
        -- commit without waiting for the disk (decision 0014); never behind RDS Proxy (0036)
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    FOR endpoint_key IN
        -- joined id by id, so each lookup reads only its own day's partition
        SELECT DISTINCT hashtext(d.endpoint_id)
        FROM unnest(p_ids::text[]) AS m(id) JOIN deliveries d ON d.id = m.id
        ORDER BY 1
    LOOP
        PERFORM pg_advisory_xact_lock(hashtext('hookline_endpoint_slots'), endpoint_key);
    END LOOP;
    RETURN QUERY
WITH found AS MATERIALIZED (
    SELECT d.id, d.enqueue_seq, d.endpoint_id, p.max_concurrency,
           p.rate_limit_per_second AS rate, p.enabled AND p_now < d.deadline_at AS sendable
    FROM unnest(p_ids::text[], p_seqs::integer[]) AS m(id, seq)
    JOIN deliveries d ON d.id = m.id AND d.enqueue_seq = m.seq
    JOIN endpoints p ON p.id = d.endpoint_id
    WHERE d.state = 'queued' OR (d.state = 'delivering' AND d.lease_expires_at < now())
), busy AS MATERIALIZED (
    -- the slots taken, for every endpoint of the batch at once: one scan of each day
    -- partition's small index (no partition key to prune by), not one per endpoint
    SELECT x.endpoint_id, count(*) AS taken FROM deliveries x
    WHERE x.endpoint_id = ANY (ARRAY(SELECT endpoint_id FROM found WHERE sendable))
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
    SELECT f.id, f.enqueue_seq, f.sendable,
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
    WHERE d.id = j.id AND d.enqueue_seq = j.enqueue_seq
      AND p.id = d.endpoint_id AND e.id = d.event_id
      AND (d.state = 'queued' OR (d.state = 'delivering' AND d.lease_expires_at < now()))
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

-- The batch record (migrations 0022, 0025), also the per-message record's body: the slot is
-- the delivery's own `delivering` state, so finishing it frees the slot; nothing to delete.
CREATE OR REPLACE FUNCTION hookline_record_batch_delivered(
    p_ids text[], p_seqs integer[], p_claimed_until timestamptz[], p_endpoint_ids text[],
    p_attempted_at timestamptz[], p_duration_ms integer[], p_statuses integer[],
    p_excerpts text[], p_headers jsonb[])
RETURNS TABLE (id text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
WITH done AS (
    SELECT *
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
    WHERE d.id = m.id AND d.state = 'delivering'
      AND d.enqueue_seq = m.seq AND d.lease_expires_at = m.claimed_until
    RETURNING d.id
), recovered AS (
    UPDATE endpoints SET failing_since = NULL
    WHERE id IN (SELECT DISTINCT endpoint_id FROM done) AND failing_since IS NOT NULL
)
SELECT id FROM finished;
END $$;
