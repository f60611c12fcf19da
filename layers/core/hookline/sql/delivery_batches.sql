-- claim_deliveries_to_send --
-- claim_delivery_to_send for a whole SQS batch in one statement (decision 0066): each
-- (id, generation) of the batch is claimed as that statement claims one, and, where the claim
-- holds and the endpoint is enabled and the deadline has not passed, its active secrets are
-- read and a slot taken. One plan and one commit per batch instead of per message; the rows of
-- one endpoint lock its row once (the statement's transaction already holds it). `opts`, as
-- in claim_delivery_to_send, commits without waiting for the disk unless run durable.
WITH opts AS MATERIALIZED (
    SELECT set_config('synchronous_commit', 'off', true) AS synchronous_commit
), batch AS (
    SELECT m.id, m.seq
    FROM unnest(%(ids)s::text[], %(seqs)s::integer[]) AS m(id, seq)
), claimed AS (
    UPDATE deliveries d
    SET state = 'delivering', lease_expires_at = now() + %(lease)s, updated_at = now()
    FROM batch b, endpoints p, events e, opts
    WHERE d.id = b.id AND d.enqueue_seq = b.seq
      AND p.id = d.endpoint_id AND e.id = d.event_id
      AND (d.state = 'queued' OR (d.state = 'delivering' AND d.lease_expires_at < now()))
    RETURNING d.id, d.attempt_count, d.deadline_at, d.created_at, d.tenant_id, d.event_id,
              d.tenant_group, d.enqueue_seq, d.lease_expires_at AS claimed_until,
              p.id AS endpoint_id, p.url, p.headers, p.retry_on_4xx, p.enabled,
              p.deleted_at IS NOT NULL AS deleted, p.input_transformer,
              p.kind, p.role_arn, p.destination,
              (SELECT t.external_id FROM tenants t WHERE t.id = d.tenant_id) AS external_id,
              p.enabled AND %(now)s < d.deadline_at AS sendable,
              e.type AS event_type, e.payload, e.content_type, e.source_id
), ready AS MATERIALIZED (
    SELECT c.*,
           CASE WHEN c.sendable THEN ARRAY(
               SELECT s.secret FROM endpoint_secrets s
               WHERE s.endpoint_id = c.endpoint_id
                 AND (s.expires_at IS NULL OR s.expires_at > now())
               ORDER BY s.created_at DESC) END AS secrets
    FROM claimed c
)
SELECT r.*,
       CASE WHEN r.sendable
            THEN hookline_take_slot(r.endpoint_id, r.id, %(lease_seconds)s) END AS wait_seconds
FROM ready r
-- endpoint order: concurrent batches lock the endpoints they share in the same order
ORDER BY r.endpoint_id, r.id

-- record_deliveries_delivered --
-- record_delivered for every delivered attempt of a batch in one statement (one durable
-- commit per batch, decision 0066): each attempt is recorded; each delivery is finished and
-- its slot freed only while its claim stands (same generation, same lease); every endpoint
-- with a success ends its failure streak. Returns the ids whose claim still stood.
WITH done AS (
    SELECT *
    FROM unnest(%(ids)s::text[], %(seqs)s::integer[], %(claimed_until)s::timestamptz[],
                %(endpoint_ids)s::text[], %(attempted_at)s::timestamptz[],
                %(duration_ms)s::integer[], %(statuses)s::integer[], %(excerpts)s::text[])
         AS m(id, seq, claimed_until, endpoint_id, attempted_at, duration_ms, status, excerpt)
), attempt AS (
    INSERT INTO attempts (delivery_id, attempted_at, duration_ms, status_code,
                          response_excerpt, error_class)
    SELECT id, attempted_at, duration_ms, status, excerpt, NULL FROM done
), finished AS (
    UPDATE deliveries d
    SET state = 'delivered', attempt_count = d.attempt_count + 1, lease_expires_at = NULL,
        last_status = coalesce(m.status, d.last_status), last_error = NULL,
        finished_at = now(), updated_at = now()
    FROM done m
    WHERE d.id = m.id AND d.state = 'delivering'
      AND d.enqueue_seq = m.seq AND d.lease_expires_at = m.claimed_until
    RETURNING d.id, d.endpoint_id
), released AS (
    DELETE FROM endpoint_slots s
    USING finished f
    WHERE s.endpoint_id = f.endpoint_id AND s.delivery_id = f.id
), recovered AS (
    UPDATE endpoints SET failing_since = NULL
    WHERE id IN (SELECT DISTINCT endpoint_id FROM done) AND failing_since IS NOT NULL
)
SELECT id FROM finished
