-- record_handshake --
INSERT INTO source_activity (source_id, last_handshake_at, last_handshake_kind, handshakes)
VALUES (%(source_id)s, now(), %(kind)s, 1)
ON CONFLICT (source_id) DO UPDATE
SET last_handshake_at = now(), last_handshake_kind = EXCLUDED.last_handshake_kind,
    handshakes = source_activity.handshakes + 1

-- record_rejection --
INSERT INTO source_activity (source_id, last_rejected_at, last_rejected_reason, rejected)
VALUES (%(source_id)s, now(), %(reason)s, jsonb_build_object(%(reason)s::text, 1))
ON CONFLICT (source_id) DO UPDATE
SET last_rejected_at = now(), last_rejected_reason = EXCLUDED.last_rejected_reason,
    rejected = source_activity.rejected || jsonb_build_object(
        %(reason)s::text, COALESCE((source_activity.rejected ->> %(reason)s)::bigint, 0) + 1)

-- source_activity --
SELECT GREATEST(accepted.at, a.last_handshake_at, a.last_rejected_at) AS last_received_at,
    accepted.at AS last_accepted_at,
    a.last_handshake_at, a.last_handshake_kind, COALESCE(a.handshakes, 0) AS handshakes,
    a.last_rejected_at, a.last_rejected_reason, COALESCE(a.rejected, '{}'::jsonb) AS rejected
FROM (
    -- the tenant's (tenant_id, received_at) index, newest first: quick for a live source
    SELECT (SELECT received_at FROM events
            WHERE tenant_id = %(tenant_id)s AND source_id = %(source_id)s
            ORDER BY received_at DESC LIMIT 1) AS at
) AS accepted
LEFT JOIN source_activity AS a ON a.source_id = %(source_id)s

-- adopt_handshake_secret --
-- Once only: a source whose secret already came by handshake keeps it.
UPDATE sources
SET secrets = ARRAY[%(secret)s]::text[],
    options = options || '{"handshake_secret": "adopted"}'::jsonb, updated_at = now()
WHERE id = %(source_id)s AND deleted_at IS NULL AND NOT (options ? 'handshake_secret')
RETURNING id
