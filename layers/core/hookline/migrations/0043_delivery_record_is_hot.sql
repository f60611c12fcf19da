-- A delivery's record is a HOT update (decision 0097, stage 2's first part of decision 0085).
--
-- Recording a delivered attempt changed `state` (and cleared the lease), and five partial
-- indexes named `state` in their predicates: Postgres compares every column an index names,
-- so every record wrote a new tuple version into all of the table's indexes. Now no index
-- names a column the hot path's record changes:
--
-- * The slow states' indexes are on marker columns that one rule keeps
--   (`hookline_delivery_markers`): `due_at` (a pending delivery's next_attempt_at),
--   `failed_at` (when a delivery failed or died) and `ordering_open` (an ordered delivery not
--   finished yet). A queued, unordered delivery has none. Row triggers apply the rule, their
--   WHEN false for the hot path, so they are not called there: before an insert, and after
--   an update (a BEFORE UPDATE trigger would lock every row it might fire for, and log the
--   lock, before looking at its WHEN: the hot path's record included).
-- * Queued deliveries are found by their lease through a plain index, above a floor that
--   reconcile moves (`hookline_lease_floor`): below it no delivery is queued. The record
--   leaves the lease as it was.
-- * Day partitions of deliveries keep 30 % of each page free, so the record's new version
--   fits on its page.

ALTER TABLE deliveries ADD COLUMN due_at timestamptz, ADD COLUMN failed_at timestamptz,
                       ADD COLUMN ordering_open boolean;

-- The one rule for the markers: what a delivery's row carries, from its other columns.
CREATE FUNCTION hookline_delivery_markers(p_state text, p_next_attempt_at timestamptz,
                                          p_updated_at timestamptz, p_ordering_key text,
                                          OUT due_at timestamptz, OUT failed_at timestamptz,
                                          OUT ordering_open boolean)
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_state = 'pending' THEN p_next_attempt_at END,
           CASE WHEN p_state IN ('failed', 'dead') THEN p_updated_at END,
           CASE WHEN p_ordering_key IS NOT NULL
                     AND p_state IN ('held', 'pending', 'queued', 'delivering') THEN true END
$$;

-- A new delivery is written with its markers.
CREATE FUNCTION hookline_mark_new_delivery() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    SELECT m.due_at, m.failed_at, m.ordering_open
    INTO NEW.due_at, NEW.failed_at, NEW.ordering_open
    FROM hookline_delivery_markers(NEW.state, NEW.next_attempt_at, NEW.updated_at,
                                   NEW.ordering_key) m;
    RETURN NEW;
END $$;

-- A changed one gets them right after its statement, written again only if they moved.
CREATE FUNCTION hookline_mark_changed_delivery() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    m record;
BEGIN
    SELECT * INTO m FROM hookline_delivery_markers(NEW.state, NEW.next_attempt_at,
                                                   NEW.updated_at, NEW.ordering_key);
    IF (NEW.due_at, NEW.failed_at, NEW.ordering_open)
       IS DISTINCT FROM (m.due_at, m.failed_at, m.ordering_open) THEN
        UPDATE deliveries
        SET due_at = m.due_at, failed_at = m.failed_at, ordering_open = m.ordering_open
        WHERE id = NEW.id;
    END IF;
    RETURN NULL;
END $$;

-- Not called for an unordered delivery queued, being sent or delivered that carries no
-- marker (nothing to put right): the hot path's create, claim and record.
CREATE TRIGGER deliveries_markers_on_insert BEFORE INSERT ON deliveries FOR EACH ROW
    WHEN (NEW.ordering_key IS NOT NULL OR NEW.state NOT IN ('queued', 'delivering', 'delivered')
          OR NEW.due_at IS NOT NULL OR NEW.failed_at IS NOT NULL OR NEW.ordering_open IS NOT NULL)
    EXECUTE FUNCTION hookline_mark_new_delivery();
CREATE TRIGGER deliveries_markers_on_update AFTER UPDATE ON deliveries FOR EACH ROW
    WHEN (NEW.ordering_key IS NOT NULL OR NEW.state NOT IN ('queued', 'delivering', 'delivered')
          OR NEW.due_at IS NOT NULL OR NEW.failed_at IS NOT NULL OR NEW.ordering_open IS NOT NULL)
    EXECUTE FUNCTION hookline_mark_changed_delivery();

-- The rows that carry a marker now (read through the indexes that go below).
UPDATE deliveries d
SET (due_at, failed_at, ordering_open) = (
    SELECT m.due_at, m.failed_at, m.ordering_open
    FROM hookline_delivery_markers(d.state, d.next_attempt_at, d.updated_at, d.ordering_key) m)
WHERE d.state IN ('pending', 'failed', 'dead', 'held')
   OR (d.ordering_key IS NOT NULL AND d.state IN ('queued', 'delivering'));

-- The lease floor: no delivery whose lease ran out before it is queued. Reconcile's sweeps
-- read leases from it on, and move it (advance_lease_floor) up to the first lease that ran
-- out on a delivery still queued. It starts at -infinity: until now the lease was cleared
-- when a delivery left `queued`, so the only leases stored are those of queued deliveries.
ALTER TABLE reconcile_positions ADD COLUMN after_at timestamptz;

CREATE FUNCTION hookline_lease_floor() RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT coalesce((SELECT after_at FROM reconcile_positions WHERE name = 'lease_floor'),
                    '-infinity')
$$;

DROP INDEX deliveries_due_idx, deliveries_leased_idx, deliveries_state_idx,
           deliveries_delivering_idx, deliveries_ordering_idx;
CREATE INDEX deliveries_due_idx ON deliveries (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX deliveries_failed_idx ON deliveries (failed_at) WHERE failed_at IS NOT NULL;
CREATE INDEX deliveries_lease_idx ON deliveries (lease_expires_at);
CREATE INDEX deliveries_ordering_idx ON deliveries (endpoint_id, ordering_key, ordering_position)
    WHERE ordering_open;

-- Room for the record's version on every delivery page written from now on (the partitions
-- made ahead and the default one; new days get it from hookline_create_day_partition).
DO $$
DECLARE
    part text;
BEGIN
    FOR part IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = 'deliveries'::regclass LOOP
        EXECUTE format('ALTER TABLE %I SET (fillfactor = 70)', part);
    END LOOP;
END $$;

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
        -- a delivery's record is a HOT update: its page keeps room for the new version
        ('deliveries', 'dlv_', 'id', ' WITH (fillfactor = 70)'),
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

CREATE OR REPLACE FUNCTION hookline_fan_out_round(p_limit integer, p_deadline interval, p_lease interval, p_due_limit integer)
 RETURNS TABLE(events bigint, due bigint, filtered_waiting boolean, id text, endpoint_id text, tenant_group text, enqueue_seq integer)
 LANGUAGE plpgsql
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
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
    --    claim_due_deliveries does: found through every day's small index of pending rows (due_at),
    --    then updated within their first and last id
    IF p_due_limit > 0 THEN
        SELECT array_agg(q.id) INTO due_ids FROM (
            SELECT d.id FROM deliveries d
            WHERE d.due_at <= now()
            ORDER BY d.due_at
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
END $function$;

CREATE OR REPLACE FUNCTION hookline_claim_released_heads(p_ids text[], p_lease interval)
 RETURNS TABLE(id text, endpoint_id text, tenant_group text, enqueue_seq integer)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
BEGIN
    RETURN QUERY
WITH finished AS (
    SELECT f.endpoint_id, f.ordering_key FROM deliveries f
    WHERE f.id = ANY(p_ids) AND f.ordering_key IS NOT NULL
), due AS (
    SELECT d.id FROM deliveries d
    JOIN finished f ON d.endpoint_id = f.endpoint_id AND d.ordering_key = f.ordering_key
    WHERE d.due_at <= now()
    FOR UPDATE OF d SKIP LOCKED
)
UPDATE deliveries d
SET state = 'queued', enqueue_seq = d.enqueue_seq + 1,
    lease_expires_at = now() + p_lease, updated_at = now()
FROM due WHERE d.id = due.id
RETURNING d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq;
END $function$;

CREATE OR REPLACE FUNCTION hookline_release_next_held()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF EXISTS (SELECT 1 FROM deliveries a
               WHERE a.endpoint_id = NEW.endpoint_id AND a.ordering_key = NEW.ordering_key
                 AND a.ordering_open AND a.state IN ('pending', 'queued', 'delivering')) THEN
        RETURN NULL;  -- another delivery of the key runs (a replayed one): it releases next
    END IF;
    UPDATE deliveries d
    SET state = 'pending', next_attempt_at = now(),
        deadline_at = now() + (d.deadline_at - d.created_at), updated_at = now()
    WHERE d.id = (SELECT h.id FROM deliveries h
                  WHERE h.endpoint_id = NEW.endpoint_id AND h.ordering_key = NEW.ordering_key
                    AND h.ordering_open AND h.state = 'held'
                  ORDER BY h.ordering_position LIMIT 1)
      AND d.state = 'held';
    RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION hookline_release_heads(p_endpoint_ids text[], p_keys text[])
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
    released integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(k.endpoint_id || chr(31) || k.key, 69))
    FROM (SELECT DISTINCT endpoint_id, key
          FROM unnest(p_endpoint_ids, p_keys) AS u(endpoint_id, key)
          ORDER BY endpoint_id, key) k;
    PERFORM 1 FROM deliveries d
    WHERE (d.endpoint_id, d.ordering_key) IN (SELECT * FROM unnest(p_endpoint_ids, p_keys))
      AND d.ordering_open AND d.state IN ('pending', 'queued', 'delivering')
    ORDER BY d.id
    FOR UPDATE;
    -- a new statement, so a new snapshot: what the waited-for transactions committed is seen
    WITH keys AS (
        SELECT DISTINCT endpoint_id, key FROM unnest(p_endpoint_ids, p_keys) AS u(endpoint_id, key)
    ), heads AS (
        SELECT (SELECT h.id FROM deliveries h
                WHERE h.endpoint_id = k.endpoint_id AND h.ordering_key = k.key
                  AND h.ordering_open AND h.state = 'held'
                ORDER BY h.ordering_position LIMIT 1) AS id
        FROM keys k
        WHERE NOT EXISTS (SELECT 1 FROM deliveries a
                          WHERE a.endpoint_id = k.endpoint_id AND a.ordering_key = k.key
                            AND a.ordering_open
                            AND a.state IN ('pending', 'queued', 'delivering'))
    ), moved AS (
        UPDATE deliveries d
        -- the retry window starts when the delivery may first be tried
        SET state = 'pending', next_attempt_at = now(),
            deadline_at = now() + (d.deadline_at - d.created_at), updated_at = now()
        FROM heads WHERE d.id = heads.id AND d.state = 'held'
        RETURNING 1
    )
    SELECT count(*) INTO released FROM moved;
    RETURN released;
END $function$;

-- The hot functions' templates (migration 0040), the record leaving the lease as it was.
CREATE OR REPLACE FUNCTION hookline_make_hot_function(kind text, name text, target text, guard text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
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
    PERFORM hookline_lock_endpoint_slots(ARRAY(
        -- looked up id by id, each in its own day's partition
        SELECT d.endpoint_id
        FROM unnest(p_ids::text[]) AS m(id)
        CROSS JOIN LATERAL (SELECT x.endpoint_id FROM %2$I x
                            WHERE x.id = m.id AND x.id BETWEEN lo AND hi OFFSET 0) d));
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
                        FROM %2$I x WHERE x.id = m.id AND x.id BETWEEN lo AND hi) d
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
    -- the lease left as it was: no indexed column changes, so the update is HOT (0043)
    SET state = 'delivered', attempt_count = d.attempt_count + 1,
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
END $function$;

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
