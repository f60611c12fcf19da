-- A fan-out run's fan_out_batch and claim_due_deliveries become functions with cached plans
-- (decision 0101, issue 24), as the round is (decisions 0066, 0072). Behind RDS Proxy nothing
-- is prepared, so as plain statements they were planned at every call, and planning an UPDATE
-- or a join over a partitioned table plans every partition the bound does not prune: a nudged
-- run (the last day's partitions) 1.5 and 0.8 ms a call with nothing to do, a scheduled run
-- (every day's) 9 and 7 ms with the default retention's 99 partitions, 76 and 58 with a
-- year's (bench/call_overhead.py). A generic plan is made once per backend and prunes at its
-- start-up. The round claims its due deliveries through hookline_claim_due too, so the rule of
-- which due deliveries are claimed, and how, is stated once.

-- Up to p_limit pending deliveries whose time has come (made from p_since on, a ULID time;
-- NULL: every day), marked queued with a lease and a new generation: found through each
-- day's small index of pending rows (due_at), then updated within their first and last id.
CREATE FUNCTION hookline_claim_due(p_limit integer, p_lease interval, p_since text DEFAULT NULL)
RETURNS TABLE(id text, endpoint_id text, tenant_group text, enqueue_seq integer)
LANGUAGE plpgsql
SET enable_hashjoin TO 'off'
SET enable_mergejoin TO 'off'
SET enable_seqscan TO 'off'
SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
DECLARE
    due_ids text[];
    lo text;
    hi text;
    -- the first id the scan looks at ('' is below every id: every day's)
    deliveries_from text := coalesce('dlv_' || p_since, '');
BEGIN
    SELECT array_agg(q.id) INTO due_ids FROM (
        SELECT d.id FROM deliveries d
        WHERE d.due_at <= now() AND d.id >= deliveries_from
        ORDER BY d.due_at
        LIMIT p_limit
        FOR UPDATE SKIP LOCKED
    ) q;
    IF due_ids IS NULL THEN
        RETURN;
    END IF;
    lo := (SELECT min(x) FROM unnest(due_ids) AS x);
    hi := (SELECT max(x) FROM unnest(due_ids) AS x);
    RETURN QUERY WITH requeued AS (
        UPDATE deliveries d
        SET state = 'queued', enqueue_seq = d.enqueue_seq + 1,
            lease_expires_at = now() + p_lease, updated_at = now()
        WHERE d.id = ANY (due_ids) AND d.id BETWEEN lo AND hi
        RETURNING d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq
    )
    SELECT r.id, r.endpoint_id, r.tenant_group, r.enqueue_seq FROM requeued r;
END $function$;

-- fan_out_batch's statement (sql/deliveries.sql says what it does), with p_since as the
-- round's: the outbox rows of events made from then on (NULL: every day).
CREATE FUNCTION hookline_fan_out_batch(p_limit integer, p_deadline interval,
                                       p_since text DEFAULT NULL)
RETURNS TABLE(events bigint, deliveries bigint, event_id text, tenant_id text, source_id text,
              type text, endpoint_ids text[], tenant_groups text[], payload bytea,
              content_filters jsonb, orderings jsonb)
LANGUAGE plpgsql
SET enable_hashjoin TO 'off'
SET enable_mergejoin TO 'off'
SET enable_seqscan TO 'off'
SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
DECLARE
    -- the first id its references to day-partitioned tables look at ('' is below every id)
    events_from text := coalesce('evt_' || p_since, '');
BEGIN
    RETURN QUERY WITH claimed AS (
        SELECT event_id, tenant_id FROM outbox
        WHERE fanned_out_at IS NULL
          AND event_id >= events_from
        ORDER BY created_at
        LIMIT p_limit
        FOR UPDATE SKIP LOCKED
    ), targets AS MATERIALIZED (
        SELECT p.id, p.tenant_id, t.tenant_group, hookline_like_patterns(p.event_types) AS patterns,
               p.content_filter, p.ordering
        FROM endpoints p
        JOIN tenants t ON t.id = p.tenant_id
        WHERE p.enabled AND p.tenant_id IN (SELECT tenant_id FROM claimed)
    ), pairs AS MATERIALIZED (
        SELECT e.id AS event_id, e.tenant_id, e.source_id, e.type, p.id AS endpoint_id,
               p.tenant_group, p.content_filter IS NOT NULL OR p.ordering IS NOT NULL AS filtered
        FROM claimed c
        JOIN events e ON e.id = c.event_id AND e.id >= events_from
        JOIN targets p ON p.tenant_id = e.tenant_id
        WHERE e.type LIKE ANY (p.patterns)
    ), created AS (
        INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, deadline_at)
        SELECT hookline_delivery_id(event_id, endpoint_id), event_id, endpoint_id, tenant_id,
               tenant_group,
               now() + p_deadline
        FROM pairs
        WHERE NOT filtered
        ON CONFLICT (id) DO NOTHING
        RETURNING 1
    ), marked AS (
        UPDATE outbox o SET fanned_out_at = now()
        FROM claimed c WHERE o.event_id = c.event_id AND o.event_id >= events_from
        RETURNING 1
    ), counts AS (
        SELECT (SELECT count(*) FROM marked) AS events, (SELECT count(*) FROM created) AS deliveries
    ), filtered AS (
        SELECT event_id, tenant_id, source_id, type,
               array_agg(endpoint_id ORDER BY endpoint_id) AS endpoint_ids,
               array_agg(tenant_group ORDER BY endpoint_id) AS tenant_groups
        FROM pairs WHERE filtered
        GROUP BY event_id, tenant_id, source_id, type
    )
    SELECT k.events, k.deliveries, f.event_id, f.tenant_id, f.source_id, f.type, f.endpoint_ids,
           f.tenant_groups, (SELECT e.payload FROM events e
                             WHERE e.id = f.event_id AND e.id >= events_from) AS payload,
           -- the patterns and orderings once, on the first row: {endpoint id: pattern}
           CASE WHEN row_number() OVER () = 1 THEN (
               SELECT jsonb_object_agg(t.id, t.content_filter) FROM targets t
               WHERE t.content_filter IS NOT NULL) END AS content_filters,
           CASE WHEN row_number() OVER () = 1 THEN (
               SELECT jsonb_object_agg(t.id, t.ordering) FROM targets t
               WHERE t.ordering IS NOT NULL) END AS orderings
    FROM counts k
    LEFT JOIN filtered f ON true;
END $function$;

CREATE OR REPLACE FUNCTION hookline_fan_out_round(p_limit integer, p_deadline interval, p_lease interval,
                                       p_due_limit integer, p_since text DEFAULT NULL)
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
    due_count bigint := 0;
    sent_ids text[] := '{}';
    sent_endpoints text[] := '{}';
    sent_groups text[] := '{}';
    sent_seqs integer[] := '{}';
    filtered boolean := false;
    -- the first ids the scans look at ('' is below every id: every day's)
    events_from text := coalesce('evt_' || p_since, '');
BEGIN
    -- 1. the outbox rows to fan out (events of tenants with a content-filtered or ordered
    --    endpoint are left to fan_out_batch), through each day's small index of pending rows:
    --    every day's, or those from p_since's day (a nudged run, decision 0101)
    SELECT array_agg(c.event_id) INTO claimed FROM (
        SELECT o.event_id FROM outbox o
        WHERE o.fanned_out_at IS NULL AND o.event_id >= events_from
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
    -- 3. deliveries that came due otherwise (retries, parked and unsent ones), claimed as
    --    claim_due_deliveries claims them (hookline_claim_due)
    IF p_due_limit > 0 THEN
        SELECT count(*), sent_ids || coalesce(array_agg(r.id), '{}'),
               sent_endpoints || coalesce(array_agg(r.endpoint_id), '{}'),
               sent_groups || coalesce(array_agg(r.tenant_group), '{}'),
               sent_seqs || coalesce(array_agg(r.enqueue_seq), '{}')
        INTO due_count, sent_ids, sent_endpoints, sent_groups, sent_seqs
        FROM hookline_claim_due(p_due_limit, p_lease, p_since) r;
    END IF;
    -- 4. whether events wait for fan_out_batch: the outbox is looked at only when some
    --    enabled endpoint has a content filter or an ordering
    IF EXISTS (SELECT 1 FROM endpoints p
               WHERE p.enabled AND (p.content_filter IS NOT NULL OR p.ordering IS NOT NULL)) THEN
        filtered := EXISTS (SELECT 1 FROM outbox o
                            WHERE o.fanned_out_at IS NULL AND o.event_id >= events_from
                              AND EXISTS (SELECT 1 FROM endpoints p
                                          WHERE p.tenant_id = o.tenant_id AND p.enabled
                                            AND (p.content_filter IS NOT NULL
                                                 OR p.ordering IS NOT NULL)));
    END IF;
    -- one head row with the counts (`id` NULL), then the deliveries to send
    RETURN QUERY SELECT coalesce(cardinality(claimed), 0)::bigint,
                        due_count, filtered,
                        NULL::text, NULL::text, NULL::text, NULL::integer;
    RETURN QUERY SELECT coalesce(cardinality(claimed), 0)::bigint,
                        due_count, filtered, u.id, u.endpoint_id,
                        u.tenant_group, u.seq
                 FROM unnest(sent_ids, sent_endpoints, sent_groups, sent_seqs)
                      AS u(id, endpoint_id, tenant_group, seq);
END $function$;
