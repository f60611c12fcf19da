-- The management API's queries. Every list and read takes `%(tenant)s`: NULL for an operator
-- (every tenant), else the caller's tenant, so an object of another tenant is simply not found.
-- Lists are newest first, paged by id (`%(after)s` = the last id of the previous page).

-- active_secret_key --
SELECT id, wrapped FROM secret_keys WHERE active

-- insert_secret_key --
INSERT INTO secret_keys (id, wrapped, wrapped_by) VALUES (%(id)s, %(wrapped)s, %(wrapped_by)s)
ON CONFLICT DO NOTHING
RETURNING id, wrapped

-- get_secret_key --
SELECT id, wrapped FROM secret_keys WHERE id = %(id)s

-- plaintext_endpoint_secrets --
SELECT endpoint_id, created_at, secret FROM endpoint_secrets
WHERE secret NOT LIKE 'hlenc1:%%' FOR UPDATE

-- seal_endpoint_secret --
UPDATE endpoint_secrets SET secret = %(secret)s
WHERE endpoint_id = %(endpoint_id)s AND created_at = %(created_at)s

-- plaintext_source_secrets --
SELECT id, secrets FROM sources
WHERE EXISTS (SELECT 1 FROM unnest(secrets) s WHERE s NOT LIKE 'hlenc1:%%') FOR UPDATE

-- seal_source_secrets --
UPDATE sources SET secrets = %(secrets)s WHERE id = %(id)s

-- find_api_principal --
SELECT principal, scope FROM api_principals WHERE principal = ANY(%(principals)s)
ORDER BY (principal = %(first)s) DESC
LIMIT 1

-- upsert_api_principal --
INSERT INTO api_principals (principal, scope, description)
VALUES (%(principal)s, %(scope)s, %(description)s)
ON CONFLICT (principal) DO UPDATE SET scope = EXCLUDED.scope, description = EXCLUDED.description
RETURNING principal, scope, description, created_at

-- list_api_principals --
SELECT principal, scope, description, created_at FROM api_principals ORDER BY principal

-- delete_api_principal --
DELETE FROM api_principals WHERE principal = %(principal)s RETURNING principal

-- reserve_idempotency_key --
-- A key older than the time to live is free again: its row starts over as this request's.
INSERT INTO api_idempotency (scope, key, request_hash)
VALUES (%(scope)s, %(key)s, %(request_hash)s)
ON CONFLICT (scope, key) DO UPDATE
    SET request_hash = EXCLUDED.request_hash, status = NULL, response = NULL, created_at = now()
    WHERE api_idempotency.created_at < now() - %(ttl)s::interval
RETURNING key

-- purge_idempotency_keys --
-- Expired answers, a bounded batch at a time (each create removes some: the table stays about
-- the size of one time to live of creates).
DELETE FROM api_idempotency
WHERE (scope, key) IN (
    SELECT scope, key FROM api_idempotency
    WHERE created_at < now() - %(ttl)s::interval
    ORDER BY created_at LIMIT %(batch)s
)

-- get_idempotency_key --
SELECT request_hash, status, response FROM api_idempotency
WHERE scope = %(scope)s AND key = %(key)s

-- complete_idempotency_key --
UPDATE api_idempotency SET status = %(status)s, response = %(response)s
WHERE scope = %(scope)s AND key = %(key)s

-- release_idempotency_key --
DELETE FROM api_idempotency WHERE scope = %(scope)s AND key = %(key)s AND status IS NULL

-- api_get_tenant --
SELECT id, name, tenant_group, created_at, external_id FROM tenants
WHERE id = %(id)s AND (%(tenant)s::text IS NULL OR id = %(tenant)s)

-- api_list_tenants --
SELECT id, name, tenant_group, created_at, external_id FROM tenants
WHERE (%(tenant)s::text IS NULL OR id = %(tenant)s)
  AND (%(after)s::text IS NULL OR id < %(after)s)
ORDER BY id DESC LIMIT %(limit)s

-- api_endpoint_secret_expiry --
SELECT max(expires_at) AS previous_expire_at FROM endpoint_secrets
WHERE endpoint_id = %(id)s AND expires_at IS NOT NULL AND expires_at > now()

-- api_insert_test_event --
-- A test event goes to one endpoint only: the event enters the ledger fanned out at receipt
-- (no outbox row, decision 0096), and its one delivery is due now, its id made from the pair
-- (0087).
WITH new_event AS (
    INSERT INTO events (id, tenant_id, origin, type, dedupe_key, payload, content_type)
    VALUES (%(event_id)s, %(tenant_id)s, 'test', %(type)s, %(event_id)s, %(payload)s,
            'application/json')
    RETURNING id, tenant_id, received_at
)
INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, deadline_at)
SELECT hookline_delivery_id(e.id, %(endpoint_id)s), e.id, %(endpoint_id)s, e.tenant_id,
       t.tenant_group, now() + %(deadline)s
FROM new_event e JOIN tenants t ON t.id = e.tenant_id
RETURNING id, event_id

-- api_get_event --
SELECT e.id, e.tenant_id, e.source_id, e.origin, e.type, e.payload, e.content_type,
       e.headers, e.received_at,
       hookline_fanned_out_at(o.event_id, o.fanned_out_at, e.received_at) AS fanned_out_at
FROM events e LEFT JOIN outbox o ON o.event_id = e.id
WHERE e.id = %(id)s AND (%(tenant)s::text IS NULL OR e.tenant_id = %(tenant)s)

-- api_list_events --
SELECT e.id, e.tenant_id, e.source_id, e.origin, e.type, e.received_at,
       length(e.payload) AS size
FROM events e
WHERE (%(tenant)s::text IS NULL OR e.tenant_id = %(tenant)s)
  AND (%(tenant_id)s::text IS NULL OR e.tenant_id = %(tenant_id)s)
  AND (%(type)s::text IS NULL OR e.type = %(type)s)
  AND (%(source_id)s::text IS NULL OR e.source_id = %(source_id)s)
  AND (%(since)s::timestamptz IS NULL OR e.received_at >= %(since)s)
  AND (%(until)s::timestamptz IS NULL OR e.received_at < %(until)s)
  AND (%(after)s::text IS NULL OR e.id < %(after)s)
ORDER BY e.id DESC LIMIT %(limit)s

-- api_get_delivery --
SELECT id, event_id, endpoint_id, tenant_id, tenant_group,
       hookline_shown_state(state, id) AS state, attempt_count,
       next_attempt_at, deadline_at, last_status, last_error, created_at, updated_at,
       finished_at
FROM deliveries
WHERE id = %(id)s AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)

-- api_list_deliveries --
-- (a delivery being sent is stored queued; hookline_shown_state says `delivering`, and
-- hookline_stored_state lets a filter by state still read the state index, migration 0037)
SELECT id, event_id, endpoint_id, tenant_id, tenant_group,
       hookline_shown_state(state, id) AS state, attempt_count,
       next_attempt_at, deadline_at, last_status, last_error, created_at, updated_at,
       finished_at
FROM deliveries
WHERE (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
  AND (%(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s)
  AND (%(state)s::text IS NULL OR (state = hookline_stored_state(%(state)s)
                                  AND hookline_shown_state(state, id) = %(state)s))
  AND (%(endpoint_id)s::text IS NULL
       OR (hookline_endpoint_key(endpoint_id) = hookline_endpoint_key(%(endpoint_id)s)
           AND endpoint_id = %(endpoint_id)s))  -- by key (decision 0106)
  AND (%(event_id)s::text IS NULL OR (event_id = %(event_id)s  -- by key (decision 0087)
       AND id >= hookline_event_deliveries_from(%(event_id)s)
       AND id < hookline_event_deliveries_to(%(event_id)s)))
  AND (%(since)s::timestamptz IS NULL OR created_at >= %(since)s)
  AND (%(until)s::timestamptz IS NULL OR created_at < %(until)s)
  AND (%(after)s::text IS NULL OR id < %(after)s)
ORDER BY id DESC LIMIT %(limit)s

-- api_list_tenant_deliveries --
-- One tenant's deliveries, newest first, through its events (`hookline_tenant_deliveries`,
-- migration 0039): deliveries carry no tenant index (decision 0091). `walk_id` bounds the
-- events a page after `after` reads. repositories/tenant_walk.py says which filters walk.
SELECT d.id, d.event_id, d.endpoint_id, d.tenant_id, d.tenant_group,
       hookline_shown_state(d.state, d.id) AS state, d.attempt_count,
       d.next_attempt_at, d.deadline_at, d.last_status, d.last_error, d.created_at,
       d.updated_at, d.finished_at
FROM hookline_tenant_deliveries(%(tenant_id)s) d
WHERE (%(after)s::text IS NULL
       OR (d.walk_id < hookline_events_to(%(after)s) AND d.id < %(after)s))
  AND (%(state)s::text IS NULL OR (d.state = hookline_stored_state(%(state)s)
                                  AND hookline_shown_state(d.state, d.id) = %(state)s))
  AND (%(since)s::timestamptz IS NULL OR d.created_at >= %(since)s)
  AND (%(until)s::timestamptz IS NULL OR d.created_at < %(until)s)
ORDER BY d.walk_id DESC, d.id DESC LIMIT %(limit)s

-- api_list_attempts --
SELECT a.id, a.delivery_id, a.attempted_at, a.duration_ms, a.status_code,
       a.response_excerpt, a.error_class
FROM attempt_log a JOIN deliveries d ON d.id = a.delivery_id
WHERE a.delivery_id = %(delivery_id)s
  AND (%(tenant)s::text IS NULL OR d.tenant_id = %(tenant)s)
  AND (%(after)s::bigint IS NULL OR a.id > %(after)s)
ORDER BY a.id LIMIT %(limit)s

-- api_status_deliveries --
-- Every delivery for an operator; a tenant's are its endpoints' (deliveries carry no tenant
-- index, decision 0091; endpoints are never deleted, only marked so), joined by their keys
-- (decision 0106). Two branches, not one `IN` under an `OR`: a sub-query there is a filter
-- on every delivery of every tenant.
SELECT state, count(*) AS n FROM deliveries
WHERE %(tenant)s::text IS NULL
GROUP BY state
UNION ALL
SELECT d.state, count(*) AS n
FROM endpoints p
JOIN deliveries d ON hookline_endpoint_key(d.endpoint_id) = hookline_endpoint_key(p.id)
                 AND d.endpoint_id = p.id
WHERE p.tenant_id = %(tenant)s AND d.tenant_id = %(tenant)s
GROUP BY d.state

-- api_status_summary --
SELECT
    (SELECT count(*) FROM events
     WHERE (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
       AND received_at > now() - interval '24 hours') AS events_24h,
    (SELECT count(*) FROM outbox
     WHERE fanned_out_at IS NULL AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s))
        AS outbox_pending,
    (SELECT extract(epoch FROM now() - min(created_at)) FROM outbox
     WHERE fanned_out_at IS NULL AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s))
        AS outbox_oldest_seconds,
    (SELECT count(*) FROM endpoints
     WHERE enabled AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)) AS endpoints_enabled,
    (SELECT count(*) FROM endpoints
     WHERE NOT enabled AND deleted_at IS NULL
       AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s))
        AS endpoints_disabled
