-- The batch claim (migration 0022) returns endpoints.public_only too, as the per-message
-- claim does: 0019 added the column (portal endpoints reach public addresses only, at connect
-- time too, decision 0059) while 0022's function was written without it, so a batch-claimed
-- delivery to a portal endpoint re-pointed at a private address was sent where the deployment
-- allows private targets. Same body as 0022's, one more column; the return type changes, so
-- the function is dropped and made again.
DROP FUNCTION hookline_claim_batch(text[], integer[], interval, timestamptz, double precision,
                                   boolean);

CREATE FUNCTION hookline_claim_batch(p_ids text[], p_seqs integer[], p_lease interval,
                                     p_now timestamptz, p_lease_seconds double precision,
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
BEGIN
    RETURN QUERY
WITH opts AS MATERIALIZED (
    SELECT CASE WHEN p_durable THEN NULL::text
                ELSE set_config('synchronous_commit', 'off', true) END AS synchronous_commit
), batch AS (
    SELECT m.id, m.seq
    FROM unnest(p_ids::text[], p_seqs::integer[]) AS m(id, seq)
), claimed AS (
    UPDATE deliveries d
    SET state = 'delivering', lease_expires_at = now() + p_lease, updated_at = now()
    FROM batch b, endpoints p, events e, opts
    WHERE d.id = b.id AND d.enqueue_seq = b.seq
      AND p.id = d.endpoint_id AND e.id = d.event_id
      AND (d.state = 'queued' OR (d.state = 'delivering' AND d.lease_expires_at < now()))
    RETURNING d.id, d.attempt_count, d.deadline_at, d.created_at, d.tenant_id, d.event_id,
              d.tenant_group, d.enqueue_seq, d.lease_expires_at AS claimed_until,
              p.id AS endpoint_id, p.url, p.headers, p.retry_on_4xx, p.enabled,
              p.deleted_at IS NOT NULL AS deleted, p.input_transformer,
              p.kind, p.role_arn, p.destination, p.auth, p.auth_secret, p.tls, p.tls_key,
              p.public_only,
              (SELECT t.external_id FROM tenants t WHERE t.id = d.tenant_id) AS external_id,
              p.enabled AND p_now < d.deadline_at AS sendable,
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
            THEN hookline_take_slot(r.endpoint_id, r.id, p_lease_seconds) END AS wait_seconds
FROM ready r
-- endpoint order: concurrent batches lock the endpoints they share in the same order
ORDER BY r.endpoint_id, r.id;
END $$;
