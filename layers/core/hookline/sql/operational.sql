-- The operational monitor's statements (hookline.operational, decision 0068). It reads what
-- the pipeline already writes (attempts, deliveries) and writes only its own tables.

-- endpoint_attempt_stats --
-- Per endpoint with attempts in its window (its own or the default, and never before its last
-- state change, so a recovered endpoint starts afresh): attempts, failures, the failures since
-- its last success (the streak), the last attempt's outcome. Attempts of operational events
-- are left out: an operational event's own delivery never feeds another (no loops). Crosses
-- tenants by design (one monitor for all); the attempts' time and the ids that can hold a
-- first attempt made since then bound the scan (hookline_attempts_since, decision 0109).
WITH recent AS (
    SELECT d.endpoint_id, a.attempted_at, a.status_code, a.error_class, a.response_excerpt,
           (a.error_class IS NULL AND a.status_code BETWEEN 200 AND 299) AS ok
    FROM hookline_attempts_since(%(now)s::timestamptz - %(max_window)s::interval) a
    JOIN deliveries d ON d.id = a.delivery_id
    JOIN events e ON e.id = d.event_id
    LEFT JOIN endpoint_health h ON h.endpoint_id = d.endpoint_id
    WHERE a.attempted_at > %(now)s::timestamptz - %(max_window)s::interval
      AND a.attempted_at > %(now)s::timestamptz
          - coalesce(h.failing_window_seconds * interval '1 second', %(window)s::interval)
      AND a.attempted_at > coalesce(h.changed_at, '-infinity')
      AND NOT (e.origin = 'publish' AND e.type = ANY(%(operational_types)s::text[]))
), last_ok AS (
    SELECT endpoint_id, max(attempted_at) FILTER (WHERE ok) AS at FROM recent GROUP BY 1
)
SELECT r.endpoint_id, p.tenant_id, p.url, p.description, p.enabled,
       coalesce(h.state, 'healthy') AS state, h.changed_at,
       count(*) AS attempts,
       count(*) FILTER (WHERE NOT r.ok) AS failures,
       count(*) FILTER (WHERE NOT r.ok AND r.attempted_at > coalesce(l.at, '-infinity'))
           AS streak,
       l.at AS last_success_at,
       (array_agg(r.ok ORDER BY r.attempted_at DESC))[1] AS last_ok,
       max(r.attempted_at) AS last_attempt_at,
       (array_agg(r.status_code ORDER BY r.attempted_at DESC)
           FILTER (WHERE NOT r.ok))[1] AS last_failure_status,
       (array_agg(r.error_class ORDER BY r.attempted_at DESC)
           FILTER (WHERE NOT r.ok))[1] AS last_failure_error,
       (array_agg(left(r.response_excerpt, 300) ORDER BY r.attempted_at DESC)
           FILTER (WHERE NOT r.ok))[1] AS last_failure_excerpt,
       max(r.attempted_at) FILTER (WHERE NOT r.ok) AS last_failure_at,
       coalesce(h.failing_after_attempts, %(after_attempts)s) AS failing_after_attempts,
       coalesce(h.failing_error_rate, %(error_rate)s) AS failing_error_rate,
       coalesce(h.failing_window_seconds, %(window_seconds)s) AS failing_window_seconds
FROM recent r
JOIN last_ok l ON l.endpoint_id = r.endpoint_id
JOIN endpoints p ON p.id = r.endpoint_id
LEFT JOIN endpoint_health h ON h.endpoint_id = r.endpoint_id
WHERE p.deleted_at IS NULL
GROUP BY r.endpoint_id, p.tenant_id, p.url, p.description, p.enabled, h.state, h.changed_at,
         l.at, h.failing_after_attempts, h.failing_error_rate, h.failing_window_seconds
ORDER BY r.endpoint_id

-- disabled_endpoints_to_announce --
-- Endpoints the pipeline (or someone) disabled lately whose disablement the monitor has not
-- announced yet.
SELECT p.id AS endpoint_id, p.tenant_id, p.url, p.description, p.disabled_reason,
       p.updated_at AS disabled_at
FROM endpoints p
LEFT JOIN endpoint_health h ON h.endpoint_id = p.id
WHERE NOT p.enabled AND p.deleted_at IS NULL
  AND p.updated_at > %(now)s::timestamptz - interval '1 day'
  AND h.state IS DISTINCT FROM 'disabled'
ORDER BY p.id
LIMIT %(limit)s

-- reset_reenabled_endpoints --
-- An endpoint enabled again starts healthy, quietly (enabling it was someone's decision).
UPDATE endpoint_health h SET state = 'healthy', changed_at = %(now)s
FROM endpoints p
WHERE p.id = h.endpoint_id AND h.state = 'disabled' AND p.enabled
RETURNING h.endpoint_id

-- lock_endpoint_health --
-- The endpoint's health row, created healthy when missing, locked for this transaction: two
-- monitors at once decide one state change once.
INSERT INTO endpoint_health (endpoint_id, tenant_id, changed_at)
VALUES (%(endpoint_id)s, %(tenant_id)s, %(now)s)
ON CONFLICT (endpoint_id) DO UPDATE SET endpoint_id = EXCLUDED.endpoint_id
RETURNING endpoint_id, state, changed_at, notified_at, notified_state

-- set_endpoint_health_state --
UPDATE endpoint_health SET state = %(state)s, changed_at = %(now)s
WHERE endpoint_id = %(endpoint_id)s

-- set_endpoint_notified --
UPDATE endpoint_health SET notified_at = %(now)s, notified_state = %(state)s
WHERE endpoint_id = %(endpoint_id)s

-- operational_position --
SELECT position FROM operational_positions WHERE name = %(name)s

-- set_operational_position --
INSERT INTO operational_positions (name, position, updated_at)
VALUES (%(name)s, %(position)s, now())
ON CONFLICT (name) DO UPDATE SET position = greatest(operational_positions.position,
                                                     EXCLUDED.position),
                                 updated_at = now()

-- dead_deliveries_since --
-- Deliveries that died (retries exhausted or deadline passed) after `since`, oldest first,
-- through the failed index (failed_at is updated_at while failed or dead, decision 0097);
-- with their event's type and the endpoint, and whether the event was itself operational
-- (never announced again).
SELECT d.id AS delivery_id, d.event_id, d.endpoint_id, d.tenant_id, d.attempt_count,
       d.last_status, d.last_error, d.updated_at AS dead_at, e.type AS event_type,
       (e.origin = 'publish' AND e.type = ANY(%(operational_types)s::text[])) AS operational,
       p.url, p.description
FROM deliveries d
JOIN events e ON e.id = d.event_id
JOIN endpoints p ON p.id = d.endpoint_id
WHERE d.failed_at > %(since)s AND d.state = 'dead'
ORDER BY d.failed_at, d.id
LIMIT %(limit)s

-- tenant_notifications --
SELECT tenant_id, emails, chat_url FROM tenant_notifications WHERE tenant_id = %(tenant_id)s

-- put_tenant_notifications --
INSERT INTO tenant_notifications (tenant_id, emails, chat_url, updated_at)
VALUES (%(tenant_id)s, %(emails)s, %(chat_url)s, now())
ON CONFLICT (tenant_id) DO UPDATE SET emails = EXCLUDED.emails, chat_url = EXCLUDED.chat_url,
                                      updated_at = now()
RETURNING tenant_id, emails, chat_url, updated_at

-- endpoint_health_row --
SELECT endpoint_id, state, changed_at, failing_after_attempts, failing_error_rate,
       failing_window_seconds
FROM endpoint_health WHERE endpoint_id = %(endpoint_id)s

-- put_endpoint_thresholds --
INSERT INTO endpoint_health (endpoint_id, tenant_id, failing_after_attempts, failing_error_rate,
                             failing_window_seconds)
VALUES (%(endpoint_id)s, %(tenant_id)s, %(after_attempts)s, %(error_rate)s, %(window_seconds)s)
ON CONFLICT (endpoint_id) DO UPDATE
SET failing_after_attempts = EXCLUDED.failing_after_attempts,
    failing_error_rate = EXCLUDED.failing_error_rate,
    failing_window_seconds = EXCLUDED.failing_window_seconds

-- endpoint_health_summary --
-- One endpoint's attempts over the last `period`: success rate, p50/p99 duration, last
-- success, and the failures since its last success. Reads the endpoint's deliveries through
-- its key and `created_at` (decision 0106), bounded by how old a delivery still attempted
-- can be.
WITH recent AS (
    SELECT a.attempted_at, a.duration_ms,
           (a.error_class IS NULL AND a.status_code BETWEEN 200 AND 299) AS ok
    FROM deliveries d
    CROSS JOIN LATERAL hookline_attempts_of(d) a  -- wherever they are kept (decision 0109)
    WHERE hookline_endpoint_key(d.endpoint_id) = hookline_endpoint_key(%(endpoint_id)s)
      AND d.endpoint_id = %(endpoint_id)s
      AND d.created_at > %(now)s::timestamptz - %(period)s::interval - %(deadline)s::interval
      AND a.attempted_at > %(now)s::timestamptz - %(period)s::interval
)
SELECT count(*) AS attempts,
       count(*) FILTER (WHERE ok) AS successes,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50_ms,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99_ms,
       max(attempted_at) FILTER (WHERE ok) AS last_success_at,
       count(*) FILTER (WHERE NOT ok AND attempted_at >
           coalesce((SELECT max(attempted_at) FROM recent WHERE ok), '-infinity'))
           AS consecutive_failures
FROM recent

-- endpoint_health_buckets --
-- The endpoint's attempts per hour of the last day, for the portal's and console's chart.
SELECT date_trunc('hour', a.attempted_at) AS hour, count(*) AS attempts,
       count(*) FILTER (WHERE a.error_class IS NULL AND a.status_code BETWEEN 200 AND 299)
           AS successes
FROM deliveries d
CROSS JOIN LATERAL hookline_attempts_of(d) a  -- wherever they are kept (decision 0109)
WHERE hookline_endpoint_key(d.endpoint_id) = hookline_endpoint_key(%(endpoint_id)s)
  AND d.endpoint_id = %(endpoint_id)s
  AND d.created_at > %(now)s::timestamptz - interval '1 day' - %(deadline)s::interval
  AND a.attempted_at > %(now)s::timestamptz - interval '1 day'
GROUP BY 1 ORDER BY 1
