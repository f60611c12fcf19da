-- Ordered delivery (decision 0069). An endpoint's `ordering` ({"key": "$.payload.x"} or
-- {"key": null}) makes its deliveries of one key go one at a time, in ledger order. Ordering
-- is a gate on which deliveries are sendable, not a change to claim or record: a delivery of
-- an ordered endpoint carries its key and a position (`ordering_position`, from one sequence,
-- taken when fan-out or a replay makes it the key's newest); it is created `held` (in no
-- queue, never claimed) and a key's oldest held one becomes `pending` (due now: the fan-out
-- round's due arm sends it) only when the key has nothing pending, queued or delivering.
-- That release is done by hookline_release_heads (after fan-out and replay) and by a row
-- trigger when a delivery of the key finishes (delivered, failed, dead), in the transaction
-- that finished it, whoever that was: the deliverer's record, a deadline kill, a delete.

ALTER TABLE endpoints ADD COLUMN ordering jsonb;

ALTER TABLE deliveries
    ADD COLUMN ordering_key text,
    ADD COLUMN ordering_position bigint;
-- The state check's name depends on the history (0011 renamed the table it was first made on).
DO $$
DECLARE
    c text;
BEGIN
    FOR c IN SELECT conname FROM pg_constraint
             WHERE conrelid = 'deliveries'::regclass AND contype = 'c'
               AND pg_get_constraintdef(oid) LIKE '%state%delivering%'
    LOOP
        EXECUTE format('ALTER TABLE deliveries DROP CONSTRAINT %I', c);
    END LOOP;
END $$;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_state_check
    CHECK (state IN ('pending', 'queued', 'delivering', 'delivered', 'failed', 'dead', 'held'));

-- A key's unfinished deliveries, oldest first: what the gate reads. Unordered rows (NULL key)
-- are not in it.
CREATE INDEX deliveries_ordering_idx ON deliveries (endpoint_id, ordering_key, ordering_position)
    WHERE ordering_key IS NOT NULL AND state IN ('held', 'pending', 'queued', 'delivering');

CREATE SEQUENCE hookline_ordering_position;

-- Release the oldest held delivery of each given (endpoint, key) that has none pending,
-- queued or delivering. Callers that add held deliveries (fan-out, replay) call it in their
-- transaction after adding them. Serialised per key with an advisory lock (taken in a fixed
-- order, so two callers cannot deadlock), and it first waits for any transaction finishing a
-- key's active delivery (FOR UPDATE on those rows): that transaction's trigger then either
-- ran before (its release is visible now) or runs after this commit (and sees these rows).
-- Returns how many it released.
CREATE FUNCTION hookline_release_heads(p_endpoint_ids text[], p_keys text[])
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    released integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(k.endpoint_id || chr(31) || k.key, 69))
    FROM (SELECT DISTINCT endpoint_id, key
          FROM unnest(p_endpoint_ids, p_keys) AS u(endpoint_id, key)
          ORDER BY endpoint_id, key) k;
    PERFORM 1 FROM deliveries d
    WHERE (d.endpoint_id, d.ordering_key) IN (SELECT * FROM unnest(p_endpoint_ids, p_keys))
      AND d.ordering_key IS NOT NULL AND d.state IN ('pending', 'queued', 'delivering')
    ORDER BY d.id
    FOR UPDATE;
    -- a new statement, so a new snapshot: what the waited-for transactions committed is seen
    WITH keys AS (
        SELECT DISTINCT endpoint_id, key FROM unnest(p_endpoint_ids, p_keys) AS u(endpoint_id, key)
    ), heads AS (
        SELECT (SELECT h.id FROM deliveries h
                WHERE h.endpoint_id = k.endpoint_id AND h.ordering_key = k.key
                  AND h.state = 'held'
                ORDER BY h.ordering_position LIMIT 1) AS id
        FROM keys k
        WHERE NOT EXISTS (SELECT 1 FROM deliveries a
                          WHERE a.endpoint_id = k.endpoint_id AND a.ordering_key = k.key
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
END $$;

-- The trigger: a finished delivery of a key releases the key's next held one. It runs in the
-- finishing transaction, which holds the finished row's lock, so a concurrent
-- hookline_release_heads waits for it (see above); unordered rows pay only the WHEN test.
CREATE FUNCTION hookline_release_next_held() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM deliveries a
               WHERE a.endpoint_id = NEW.endpoint_id AND a.ordering_key = NEW.ordering_key
                 AND a.state IN ('pending', 'queued', 'delivering')) THEN
        RETURN NULL;  -- another delivery of the key runs (a replayed one): it releases next
    END IF;
    UPDATE deliveries d
    SET state = 'pending', next_attempt_at = now(),
        deadline_at = now() + (d.deadline_at - d.created_at), updated_at = now()
    WHERE d.id = (SELECT h.id FROM deliveries h
                  WHERE h.endpoint_id = NEW.endpoint_id AND h.ordering_key = NEW.ordering_key
                    AND h.state = 'held'
                  ORDER BY h.ordering_position LIMIT 1)
      AND d.state = 'held';
    RETURN NULL;
END $$;

CREATE TRIGGER deliveries_release_next_held
AFTER UPDATE OF state ON deliveries
FOR EACH ROW
WHEN (NEW.ordering_key IS NOT NULL AND NEW.state IN ('delivered', 'failed', 'dead')
      AND OLD.state IS DISTINCT FROM NEW.state)
EXECUTE FUNCTION hookline_release_next_held();

-- Fan-out insert for ordered endpoints: the pairs in ledger order, each with its key, created
-- held with the next positions, then each key's head released. ON CONFLICT: a repeat makes
-- nothing (the unique (event, endpoint) id).
CREATE FUNCTION hookline_insert_ordered_deliveries(
    p_event_ids text[], p_endpoint_ids text[], p_tenant_ids text[], p_groups text[],
    p_keys text[], p_deadline interval)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    created integer;
BEGIN
    -- the key locks before the positions are taken, so positions follow the lock order
    PERFORM pg_advisory_xact_lock(hashtextextended(k.endpoint_id || chr(31) || k.key, 69))
    FROM (SELECT DISTINCT endpoint_id, key
          FROM unnest(p_endpoint_ids, p_keys) AS u(endpoint_id, key)
          ORDER BY endpoint_id, key) k;
    WITH made AS (
        INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, deadline_at,
                                state, ordering_key, ordering_position)
        SELECT hookline_delivery_id(m.event_id, m.endpoint_id), m.event_id, m.endpoint_id,
               m.tenant_id, m.tenant_group, now() + p_deadline, 'held', m.key,
               nextval('hookline_ordering_position')
        FROM unnest(p_event_ids, p_endpoint_ids, p_tenant_ids, p_groups, p_keys)
             WITH ORDINALITY AS m(event_id, endpoint_id, tenant_id, tenant_group, key, n)
        ORDER BY m.n
        ON CONFLICT (id) DO NOTHING
        RETURNING 1
    )
    SELECT count(*) INTO created FROM made;
    PERFORM hookline_release_heads(p_endpoint_ids, p_keys);
    RETURN created;
END $$;

-- Deliveries just created pending by SQL that computes no keys (the reconciler's repair of
-- missing deliveries, a replay's re-fan-out), given with their keys in ledger order: held
-- with the next positions, then each key's head released, as hookline_insert_ordered_deliveries
-- does for the fan-out. Only fresh ones (pending, no key yet) change; returns how many.
CREATE FUNCTION hookline_hold_deliveries(p_ids text[], p_keys text[])
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    held integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(k.endpoint_id || chr(31) || k.key, 69))
    FROM (SELECT DISTINCT d.endpoint_id, u.key
          FROM unnest(p_ids, p_keys) AS u(id, key) JOIN deliveries d ON d.id = u.id
          ORDER BY 1, 2) k;
    WITH positions AS (
        SELECT x.id, x.key, nextval('hookline_ordering_position') AS position
        FROM (SELECT u.id, u.key FROM unnest(p_ids, p_keys) WITH ORDINALITY AS u(id, key, n)
              ORDER BY u.n) x
    ), moved AS (
        UPDATE deliveries d
        SET state = 'held', ordering_key = o.key, ordering_position = o.position,
            updated_at = now()
        FROM positions o
        WHERE d.id = o.id AND d.state = 'pending' AND d.ordering_key IS NULL
        RETURNING d.endpoint_id, d.ordering_key
    )
    SELECT count(*) INTO held FROM moved;
    PERFORM hookline_release_heads(
        ARRAY(SELECT d.endpoint_id FROM deliveries d WHERE d.id = ANY(p_ids) ORDER BY d.id),
        ARRAY(SELECT d.ordering_key FROM deliveries d WHERE d.id = ANY(p_ids) ORDER BY d.id));
    RETURN held;
END $$;

-- After a deliver batch: the deliveries its finished ordered ones released, queued with a
-- lease and a new generation for the deliverer to send (sql/deliveries.sql,
-- claim_released_heads). The function caches its plan in the backend (decision 0066).
CREATE FUNCTION hookline_claim_released_heads(p_ids text[], p_lease interval)
RETURNS TABLE (id text, endpoint_id text, tenant_group text, enqueue_seq integer)
LANGUAGE plpgsql
-- a custom plan (pruning the ids' partitions when planned) was chosen every call, and
-- planning cost six times the run; the generic plan prunes at run time
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
WITH finished AS (
    SELECT f.endpoint_id, f.ordering_key FROM deliveries f
    WHERE f.id = ANY(p_ids) AND f.ordering_key IS NOT NULL
), due AS (
    SELECT d.id FROM deliveries d
    JOIN finished f ON d.endpoint_id = f.endpoint_id AND d.ordering_key = f.ordering_key
    WHERE d.state = 'pending' AND d.next_attempt_at <= now()
    FOR UPDATE OF d SKIP LOCKED
)
UPDATE deliveries d
SET state = 'queued', enqueue_seq = d.enqueue_seq + 1,
    lease_expires_at = now() + p_lease, updated_at = now()
FROM due WHERE d.id = due.id
RETURNING d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq;
END $$;

-- The fan-out round of migration 0022 with one change: tenants with an ordered endpoint leave
-- it, as content-filtered ones do, for the Python path (fan_out_batch) that computes keys.
CREATE OR REPLACE FUNCTION hookline_fan_out_round(p_limit integer, p_deadline interval, p_lease interval,
                                       p_due_limit integer)
RETURNS TABLE (events bigint, due bigint, filtered_waiting boolean, id text, endpoint_id text,
               tenant_group text, enqueue_seq integer)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
WITH claimed AS (
    SELECT event_id, tenant_id FROM outbox o
    WHERE fanned_out_at IS NULL
      AND NOT EXISTS (
          SELECT 1 FROM endpoints p
          WHERE p.tenant_id = o.tenant_id AND p.enabled
            AND (p.content_filter IS NOT NULL OR p.ordering IS NOT NULL)
      )
    ORDER BY created_at
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED
), targets AS MATERIALIZED (
    SELECT p.id, p.tenant_id, t.tenant_group, hookline_like_patterns(p.event_types) AS patterns
    FROM endpoints p
    JOIN tenants t ON t.id = p.tenant_id
    WHERE p.enabled AND p.tenant_id IN (SELECT tenant_id FROM claimed)
), created AS (
    INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, deadline_at,
                            state, enqueue_seq, lease_expires_at)
    SELECT hookline_delivery_id(e.id, p.id), e.id, p.id, e.tenant_id, p.tenant_group,
           now() + p_deadline, 'queued', 1, now() + p_lease
    FROM claimed c
    JOIN events e ON e.id = c.event_id
    JOIN targets p ON p.tenant_id = e.tenant_id
    WHERE e.type LIKE ANY (p.patterns)
    ON CONFLICT (id) DO NOTHING
    RETURNING id, endpoint_id, tenant_group, enqueue_seq
), marked AS (
    UPDATE outbox o SET fanned_out_at = now()
    FROM claimed c WHERE o.event_id = c.event_id
    RETURNING 1
), due AS (
    SELECT id FROM deliveries
    WHERE state = 'pending' AND next_attempt_at <= now()
    ORDER BY next_attempt_at
    LIMIT p_due_limit
    FOR UPDATE SKIP LOCKED
), requeued AS (
    UPDATE deliveries d
    SET state = 'queued', enqueue_seq = d.enqueue_seq + 1,
        lease_expires_at = now() + p_lease, updated_at = now()
    FROM due WHERE d.id = due.id
    RETURNING d.id, d.endpoint_id, d.tenant_group, d.enqueue_seq
), to_send AS (
    SELECT id, endpoint_id, tenant_group, enqueue_seq FROM created
    UNION ALL
    SELECT id, endpoint_id, tenant_group, enqueue_seq FROM requeued
)
SELECT m.events, (SELECT count(*) FROM requeued) AS due,
       -- CASE: the outbox is looked at only when some enabled endpoint has a content filter
       -- or an ordering
       CASE WHEN EXISTS (SELECT 1 FROM endpoints p
                         WHERE p.enabled
                           AND (p.content_filter IS NOT NULL OR p.ordering IS NOT NULL))
            THEN EXISTS (SELECT 1 FROM outbox o
                         WHERE o.fanned_out_at IS NULL
                           AND EXISTS (SELECT 1 FROM endpoints p
                                       WHERE p.tenant_id = o.tenant_id AND p.enabled
                                         AND (p.content_filter IS NOT NULL
                                              OR p.ordering IS NOT NULL)))
            ELSE false END AS filtered_waiting,
       s.id, s.endpoint_id, s.tenant_group, s.enqueue_seq
FROM (SELECT count(*) AS events FROM marked) m
LEFT JOIN to_send s ON true;
END $$;
