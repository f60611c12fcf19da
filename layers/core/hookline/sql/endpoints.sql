-- insert_endpoint --
INSERT INTO endpoints (id, tenant_id, url, description, event_types, max_concurrency,
                       rate_limit_per_second, headers, retry_on_4xx, content_filter,
                       input_transformer, kind, role_arn, destination, ordering)
VALUES (%(id)s, %(tenant_id)s, %(url)s, %(description)s, %(event_types)s, %(max_concurrency)s,
        %(rate_limit_per_second)s, %(headers)s, %(retry_on_4xx)s, %(content_filter)s,
        %(input_transformer)s, %(kind)s, %(role_arn)s, %(destination)s, %(ordering)s)
RETURNING id, tenant_id, url, description, event_types, max_concurrency, rate_limit_per_second,
          headers, retry_on_4xx, content_filter, input_transformer, enabled, disabled_reason,
          created_at, ordering

-- insert_endpoint_secret --
-- `public_key`: the `whpk_` key of an Ed25519 signing key (decision 0067), else NULL.
INSERT INTO endpoint_secrets (endpoint_id, secret, public_key, created_at)
VALUES (%(endpoint_id)s, %(secret)s, %(public_key)s, clock_timestamp())

-- expire_endpoint_secrets --
-- Rotation: every secret still active keeps signing until the overlap ends.
UPDATE endpoint_secrets SET expires_at = now() + %(overlap)s
WHERE endpoint_id = %(endpoint_id)s AND (expires_at IS NULL OR expires_at > now() + %(overlap)s)

-- get_endpoint --
SELECT id, tenant_id, url, description, event_types, max_concurrency, rate_limit_per_second,
       headers, retry_on_4xx, content_filter, input_transformer, enabled, disabled_reason,
       failing_since, created_at, updated_at, kind, role_arn, destination, ordering,
       CASE WHEN kind <> 'https' THEN (SELECT t.external_id FROM tenants t
                                       WHERE t.id = endpoints.tenant_id) END AS external_id,
       signing, auth, auth_secret IS NOT NULL AS has_client_secret, tls,
       tls_key IS NOT NULL AS has_client_key,
       ARRAY(SELECT s.public_key FROM endpoint_secrets s
             WHERE s.endpoint_id = endpoints.id AND s.public_key IS NOT NULL
               AND (s.expires_at IS NULL OR s.expires_at > now())
             ORDER BY s.created_at DESC) AS public_keys
FROM endpoints WHERE id = %(id)s AND deleted_at IS NULL

-- list_endpoints --
SELECT id, tenant_id, url, event_types, max_concurrency, rate_limit_per_second, enabled,
       disabled_reason, created_at
FROM endpoints
WHERE (%(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s) AND deleted_at IS NULL
ORDER BY id

-- set_endpoint_enabled --
UPDATE endpoints
SET enabled = %(enabled)s, disabled_reason = %(reason)s, updated_at = now(),
    failing_since = CASE WHEN %(enabled)s THEN NULL ELSE failing_since END
WHERE id = %(id)s AND deleted_at IS NULL
RETURNING id, tenant_id, url, enabled, disabled_reason

-- disable_endpoint_if_enabled --
UPDATE endpoints SET enabled = false, disabled_reason = %(reason)s, updated_at = now()
WHERE id = %(id)s AND enabled
RETURNING id, tenant_id, url, disabled_reason

-- active_endpoint_secrets --
SELECT secret FROM endpoint_secrets
WHERE endpoint_id = %(endpoint_id)s AND (expires_at IS NULL OR expires_at > now())
ORDER BY created_at DESC

-- The management API's endpoint queries (scoped_*). Their `tenant` parameter is the caller's
-- scope: NULL for an operator, else its tenant, so another tenant's endpoint is simply not
-- found; so is a deleted one (docs/decisions/0019-soft-delete.md). Lists are newest first,
-- paged by id.

-- scoped_get_endpoint --
SELECT id, tenant_id, url, description, event_types, max_concurrency, rate_limit_per_second,
       headers, retry_on_4xx, content_filter, input_transformer, enabled, disabled_reason,
       failing_since, created_at, updated_at, kind, role_arn, destination, ordering,
       CASE WHEN kind <> 'https' THEN (SELECT t.external_id FROM tenants t
                                       WHERE t.id = endpoints.tenant_id) END AS external_id,
       signing, auth, auth_secret IS NOT NULL AS has_client_secret, tls,
       tls_key IS NOT NULL AS has_client_key,
       ARRAY(SELECT s.public_key FROM endpoint_secrets s
             WHERE s.endpoint_id = endpoints.id AND s.public_key IS NOT NULL
               AND (s.expires_at IS NULL OR s.expires_at > now())
             ORDER BY s.created_at DESC) AS public_keys
FROM endpoints
WHERE id = %(id)s AND deleted_at IS NULL
  AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)

-- scoped_lock_endpoint --
SELECT id, tenant_id FROM endpoints
WHERE id = %(id)s AND deleted_at IS NULL
  AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
FOR UPDATE

-- scoped_list_endpoints --
SELECT id, tenant_id, url, description, event_types, max_concurrency, rate_limit_per_second,
       headers, retry_on_4xx, content_filter, input_transformer, enabled, disabled_reason,
       failing_since, created_at, updated_at, kind, role_arn, destination, ordering,
       CASE WHEN kind <> 'https' THEN (SELECT t.external_id FROM tenants t
                                       WHERE t.id = endpoints.tenant_id) END AS external_id,
       signing, auth, auth_secret IS NOT NULL AS has_client_secret, tls,
       tls_key IS NOT NULL AS has_client_key,
       ARRAY(SELECT s.public_key FROM endpoint_secrets s
             WHERE s.endpoint_id = endpoints.id AND s.public_key IS NOT NULL
               AND (s.expires_at IS NULL OR s.expires_at > now())
             ORDER BY s.created_at DESC) AS public_keys
FROM endpoints
WHERE deleted_at IS NULL
  AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
  AND (%(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s)
  AND (%(enabled)s::boolean IS NULL OR enabled = %(enabled)s)
  AND (%(after)s::text IS NULL OR id < %(after)s)
ORDER BY id DESC LIMIT %(limit)s

-- scoped_update_endpoint --
-- NULL parameters keep the current value (the API's PATCH); rate_limit is cleared with
-- clear_rate_limit.
UPDATE endpoints SET
    url = coalesce(%(url)s, url),
    description = coalesce(%(description)s, description),
    event_types = coalesce(%(event_types)s, event_types),
    max_concurrency = coalesce(%(max_concurrency)s, max_concurrency),
    rate_limit_per_second = CASE WHEN %(clear_rate_limit)s THEN NULL
                                 ELSE coalesce(%(rate_limit_per_second)s, rate_limit_per_second)
                            END,
    headers = coalesce(%(headers)s, headers),
    retry_on_4xx = coalesce(%(retry_on_4xx)s, retry_on_4xx),
    content_filter = CASE WHEN %(clear_filter)s THEN NULL
                          ELSE coalesce(%(content_filter)s, content_filter) END,
    input_transformer = CASE WHEN %(clear_transform)s THEN NULL
                             ELSE coalesce(%(input_transformer)s, input_transformer) END,
    ordering = CASE WHEN %(clear_ordering)s THEN NULL ELSE coalesce(%(ordering)s, ordering) END,
    role_arn = coalesce(%(role_arn)s, role_arn),
    destination = coalesce(%(destination)s, destination),
    updated_at = now()
WHERE id = %(id)s AND deleted_at IS NULL
  AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
RETURNING id

-- scoped_set_endpoint_enabled --
UPDATE endpoints
SET enabled = %(enabled)s, disabled_reason = %(reason)s, updated_at = now(),
    failing_since = CASE WHEN %(enabled)s THEN NULL ELSE failing_since END
WHERE id = %(id)s AND deleted_at IS NULL
  AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
RETURNING id

-- scoped_delete_endpoint --
-- Soft delete: disabled for good (fan-out never matches it; the deliverer fails what is
-- still queued for it), its signing secrets wiped; deliveries keep referring to the row.
WITH deleted AS (
    UPDATE endpoints
    SET deleted_at = now(), enabled = false, disabled_reason = 'deleted', updated_at = now(),
        auth_secret = NULL, tls_key = NULL
    WHERE id = %(id)s AND deleted_at IS NULL
      AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
    RETURNING id, tenant_id, url, description, event_types, max_concurrency,
              rate_limit_per_second, headers, retry_on_4xx, content_filter,
              input_transformer, enabled, disabled_reason, failing_since, created_at,
              updated_at, deleted_at, kind, role_arn, destination, ordering, signing, auth,
              false AS has_client_secret, tls, false AS has_client_key
), wiped AS (
    DELETE FROM endpoint_secrets WHERE endpoint_id IN (SELECT id FROM deleted)
)
SELECT * FROM deleted

-- keep_endpoint_public --
-- From now on the endpoint reaches public addresses only, checked at connect time (decision
-- 0059); nothing clears it.
UPDATE endpoints SET public_only = true
WHERE id = %(id)s AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)

-- release_endpoint_held --
-- An endpoint's ordering removed (decision 0069): what it held goes out unordered, due now.
UPDATE deliveries d
SET state = 'pending', next_attempt_at = now(),
    deadline_at = now() + (d.deadline_at - d.created_at), updated_at = now()
WHERE d.endpoint_id = %(id)s AND d.ordering_open AND d.state = 'held'
