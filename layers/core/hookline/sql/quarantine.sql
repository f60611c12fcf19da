-- Quarantined fan-out pairs (decision 0059): (event, endpoint) pairs whose matching raised.

-- quarantine_pairs --
-- Record pairs whose matching raised, with the reason; a pair already there keeps the stage
-- that found it and counts one more failure, with the newest reason (the reconciler's walk
-- and a retry meet it again). Idempotent, so any stage may record the same pair.
INSERT INTO fanout_quarantine (event_id, endpoint_id, tenant_id, tenant_group, stage, reason)
SELECT q.event_id, q.endpoint_id, q.tenant_id, q.tenant_group, %(stage)s, q.reason
FROM unnest(%(event_ids)s::text[], %(endpoint_ids)s::text[], %(tenant_ids)s::text[],
            %(groups)s::text[], %(reasons)s::text[])
     AS q(event_id, endpoint_id, tenant_id, tenant_group, reason)
ON CONFLICT (event_id, endpoint_id) DO UPDATE
SET reason = EXCLUDED.reason,
    failures = fanout_quarantine.failures + 1, last_failed_at = now()

-- list_quarantine --
-- A page of quarantined pairs, by event then endpoint id (`key`, the cursor), of one tenant
-- (all when NULL).
SELECT q.event_id || ' ' || q.endpoint_id AS key, q.event_id, q.endpoint_id, q.tenant_id,
       q.stage, q.reason, q.failures, q.quarantined_at, q.last_failed_at
FROM fanout_quarantine q
WHERE (%(tenant_id)s::text IS NULL OR q.tenant_id = %(tenant_id)s)
  AND (%(after)s::text IS NULL OR q.event_id || ' ' || q.endpoint_id > %(after)s COLLATE "C")
ORDER BY q.event_id || ' ' || q.endpoint_id COLLATE "C"
LIMIT %(limit)s

-- count_quarantine --
SELECT count(*) AS n, coalesce(extract(epoch FROM now() - min(quarantined_at)), 0)::double
       precision AS oldest_seconds
FROM fanout_quarantine

-- claim_quarantine_for_retry --
-- Quarantined pairs to decide again (of one tenant, or all when NULL; only the given events
-- when given), locked so two retries never take the same pair, with what deciding needs: the
-- event's document parts and the endpoint as it is now. `eligible`: the endpoint still takes
-- the event's type (enabled, not deleted, type filter matching), as the fan-out requires.
SELECT q.event_id, q.endpoint_id, q.tenant_id, t.tenant_group, e.source_id, e.type,
       e.payload, p.content_filter,
       (p.enabled AND p.deleted_at IS NULL AND hookline_type_matches(p.event_types, e.type))
           AS eligible
FROM fanout_quarantine q
JOIN events e ON e.id = q.event_id
JOIN endpoints p ON p.id = q.endpoint_id
JOIN tenants t ON t.id = q.tenant_id
WHERE (%(tenant_id)s::text IS NULL OR q.tenant_id = %(tenant_id)s)
  AND (%(event_ids)s::text[] IS NULL OR q.event_id = ANY(%(event_ids)s::text[]))
ORDER BY q.event_id, q.endpoint_id
LIMIT %(limit)s
FOR UPDATE OF q SKIP LOCKED

-- release_quarantine --
-- Pairs decided (a delivery made, or no longer due one): out of quarantine.
DELETE FROM fanout_quarantine q
USING unnest(%(event_ids)s::text[], %(endpoint_ids)s::text[]) AS r(event_id, endpoint_id)
WHERE q.event_id = r.event_id AND q.endpoint_id = r.endpoint_id
