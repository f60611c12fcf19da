-- The operator console's own reads (everything else goes through the management services).

-- console_attempts_by_hour --
-- Attempts of the last 24 hours per hour: how many, and how many got a 2xx.
SELECT date_trunc('hour', attempted_at) AS hour,
       count(*) AS attempts,
       count(*) FILTER (WHERE status_code BETWEEN 200 AND 299) AS succeeded
FROM attempts
WHERE attempted_at >= now() - interval '24 hours'
GROUP BY 1
ORDER BY 1

-- console_recent_audit --
SELECT id, at, actor, action, object_type, object_id, params
FROM audit_log
ORDER BY id DESC
LIMIT %(limit)s

-- console_get_portal_settings --
SELECT tenant_id, title, logo_url, accent, frame_ancestors
FROM portal_settings WHERE tenant_id = %(tenant_id)s

-- console_put_portal_settings --
INSERT INTO portal_settings (tenant_id, title, logo_url, accent, frame_ancestors)
VALUES (%(tenant_id)s, %(title)s, %(logo_url)s, %(accent)s, %(frame_ancestors)s)
ON CONFLICT (tenant_id) DO UPDATE
SET title = EXCLUDED.title, logo_url = EXCLUDED.logo_url, accent = EXCLUDED.accent,
    frame_ancestors = EXCLUDED.frame_ancestors, updated_at = now()
