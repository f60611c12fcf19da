-- The operator console's own reads (everything else goes through the management services).

-- console_attempts_by_hour --
-- Attempts of the last 24 hours per hour: how many, and how many got a 2xx.
SELECT date_trunc('hour', attempted_at) AS hour,
       count(*) AS attempts,
       count(*) FILTER (WHERE status_code BETWEEN 200 AND 299) AS succeeded
FROM hookline_attempts_since(now() - interval '24 hours')
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

-- console_attempt_latency_by_hour --
-- Attempts of the last 24 hours per hour: the median and 99th percentile of their duration.
SELECT date_trunc('hour', attempted_at) AS hour,
       count(*) AS attempts,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50_ms,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99_ms
FROM hookline_attempts_since(date_trunc('hour', now()) - interval '23 hours')
GROUP BY 1
ORDER BY 1

-- console_backlog_by_hour --
-- Per hour of the last 24, the deliveries not finished at the end of that hour (now, for the
-- current one): made by then, and finished later or not yet. Only deliveries unfinished or
-- finished within the window can count, so the rest are left out first. Queue depth is not
-- recorded over time; this is the database's own backlog (pending, queued, delivering).
WITH hours AS (
    SELECT h AS hour, least(h + interval '1 hour', now()) AS at
    FROM generate_series(date_trunc('hour', now()) - interval '23 hours',
                         date_trunc('hour', now()), interval '1 hour') AS h
), candidates AS (
    SELECT created_at, finished_at FROM deliveries
    WHERE finished_at IS NULL OR finished_at >= date_trunc('hour', now()) - interval '23 hours'
)
SELECT hours.hour,
       count(c.created_at) AS backlog
FROM hours
LEFT JOIN candidates c
       ON c.created_at <= hours.at AND (c.finished_at IS NULL OR c.finished_at > hours.at)
GROUP BY hours.hour
ORDER BY hours.hour

-- console_source_rotations --
-- When each of these sources last had its secret rotated (the audit log is the record).
SELECT object_id AS source_id, max(at) AS rotated_at
FROM audit_log
WHERE object_type = 'source' AND action = 'rotate_secret' AND object_id = ANY(%(ids)s)
GROUP BY object_id
