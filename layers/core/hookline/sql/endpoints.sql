-- insert_endpoint --
INSERT INTO endpoints (id, tenant_id, url, description, event_types, max_concurrency,
                       rate_limit_per_second, headers, retry_on_4xx)
VALUES (%(id)s, %(tenant_id)s, %(url)s, %(description)s, %(event_types)s, %(max_concurrency)s,
        %(rate_limit_per_second)s, %(headers)s, %(retry_on_4xx)s)
RETURNING id, tenant_id, url, description, event_types, max_concurrency, rate_limit_per_second,
          headers, retry_on_4xx, enabled, disabled_reason, created_at

-- insert_endpoint_secret --
INSERT INTO endpoint_secrets (endpoint_id, secret, created_at)
VALUES (%(endpoint_id)s, %(secret)s, clock_timestamp())

-- expire_endpoint_secrets --
-- Rotation: every secret still active keeps signing until the overlap ends.
UPDATE endpoint_secrets SET expires_at = now() + %(overlap)s
WHERE endpoint_id = %(endpoint_id)s AND (expires_at IS NULL OR expires_at > now() + %(overlap)s)

-- get_endpoint --
SELECT id, tenant_id, url, description, event_types, max_concurrency, rate_limit_per_second,
       headers, retry_on_4xx, enabled, disabled_reason, failing_since, created_at, updated_at
FROM endpoints WHERE id = %(id)s

-- list_endpoints --
SELECT id, tenant_id, url, event_types, max_concurrency, rate_limit_per_second, enabled,
       disabled_reason, created_at
FROM endpoints
WHERE (%(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s)
ORDER BY id

-- set_endpoint_enabled --
UPDATE endpoints
SET enabled = %(enabled)s, disabled_reason = %(reason)s, updated_at = now(),
    failing_since = CASE WHEN %(enabled)s THEN NULL ELSE failing_since END
WHERE id = %(id)s
RETURNING id, tenant_id, url, enabled, disabled_reason

-- disable_endpoint_if_enabled --
UPDATE endpoints SET enabled = false, disabled_reason = %(reason)s, updated_at = now()
WHERE id = %(id)s AND enabled
RETURNING id, tenant_id, url, disabled_reason

-- endpoint_succeeded --
UPDATE endpoints SET failing_since = NULL WHERE id = %(id)s AND failing_since IS NOT NULL

-- endpoint_failed --
UPDATE endpoints SET failing_since = coalesce(failing_since, now()) WHERE id = %(id)s
RETURNING failing_since, enabled

-- active_endpoint_secrets --
SELECT secret FROM endpoint_secrets
WHERE endpoint_id = %(endpoint_id)s AND (expires_at IS NULL OR expires_at > now())
ORDER BY created_at DESC
