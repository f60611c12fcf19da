-- A nudged fan-out run looks at the recent days only (decision 0101, issue 24). The fan-out
-- round's outbox and due scans read every day partition's small index of pending rows
-- (decision 0072), because an event restored from the archive, or a retried delivery of an
-- older event, lives in its own day: an empty round cost 179 µs with 9 day partitions, 602
-- with the default retention's 99 and 1,976 with a year's (bench/call_overhead.py). Runs
-- nudged after an accept (a tenant with a content filter or an ordering: one run per event or
-- two) look for what the accept made, which is in today's partition. The round takes
-- p_since, a ULID time (ten characters): the scans look at the ids from then on (that day's
-- partition and the later ones), the earlier partitions pruned at the plan's start-up. NULL
-- (the default, and every scheduled run's) reads every day, so whatever a nudged run leaves
-- waits at most for the next scheduled run. One function replaces the four-argument one: a caller of 1.x that
-- passes four arguments gets the default.

DROP FUNCTION hookline_fan_out_round(integer, interval, interval, integer);

CREATE FUNCTION hookline_fan_out_round(p_limit integer, p_deadline interval, p_lease interval,
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
    due_ids text[];
    sent_ids text[] := '{}';
    sent_endpoints text[] := '{}';
    sent_groups text[] := '{}';
    sent_seqs integer[] := '{}';
    filtered boolean := false;
    -- the first ids the scans look at ('' is below every id: every day's)
    events_from text := coalesce('evt_' || p_since, '');
    deliveries_from text := coalesce('dlv_' || p_since, '');
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
    -- 3. deliveries that came due otherwise (retries, parked and unsent ones), as
    --    claim_due_deliveries does: found through each day's small index of pending rows
    --    (due_at), every day's or those from p_since's day, then updated within their first and
    --    last id
    IF p_due_limit > 0 THEN
        SELECT array_agg(q.id) INTO due_ids FROM (
            SELECT d.id FROM deliveries d
            WHERE d.due_at <= now() AND d.id >= deliveries_from
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
                            WHERE o.fanned_out_at IS NULL AND o.event_id >= events_from
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
