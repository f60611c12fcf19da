-- The console's and the portal's delivery log and delivery page (issue 26): deliveries with
-- what names them — the event's type, the endpoint's URL and description, the tenant's name.
-- `tenant` is the caller's scope (NULL: an operator).

-- delivery_log --
-- Newest first; filters by endpoint, state, event type and creation time. An operator's
-- unfiltered log crosses tenants; a tenant's log without a filter that names an index of its
-- own walks the tenant's events (`delivery_log_by_tenant`, repositories/tenant_walk.py).
SELECT d.id, d.event_id, d.endpoint_id, d.tenant_id, hookline_shown_state(d.state, d.id) AS state,
       d.attempt_count, d.last_status,
       d.last_error, d.created_at, d.updated_at, e.type AS event_type,
       p.url AS endpoint_url, p.description AS endpoint_description, t.name AS tenant_name
FROM deliveries d
JOIN events e ON e.id = d.event_id
JOIN endpoints p ON p.id = d.endpoint_id
JOIN tenants t ON t.id = d.tenant_id
WHERE (%(tenant)s::text IS NULL OR d.tenant_id = %(tenant)s)
  AND (%(tenant_id)s::text IS NULL OR d.tenant_id = %(tenant_id)s)
  AND (%(endpoint_id)s::text IS NULL
       OR (hookline_endpoint_key(d.endpoint_id) = hookline_endpoint_key(%(endpoint_id)s)
           AND d.endpoint_id = %(endpoint_id)s))  -- by key (decision 0106)
  AND (%(state)s::text IS NULL OR (d.state = hookline_stored_state(%(state)s)
                                  AND hookline_shown_state(d.state, d.id) = %(state)s))
  AND (%(event_type)s::text IS NULL OR e.type = %(event_type)s)
  AND (%(since)s::timestamptz IS NULL OR d.created_at >= %(since)s)
  AND (%(until)s::timestamptz IS NULL OR d.created_at < %(until)s)
ORDER BY d.id DESC
LIMIT %(limit)s

-- delivery_log_by_tenant --
-- One tenant's log through its events (`hookline_tenant_deliveries`, migration 0039), in the
-- order of the deliveries' ids (decision 0091).
SELECT d.id, d.event_id, d.endpoint_id, d.tenant_id, hookline_shown_state(d.state, d.id) AS state,
       d.attempt_count, d.last_status,
       d.last_error, d.created_at, d.updated_at, e.type AS event_type,
       p.url AS endpoint_url, p.description AS endpoint_description, t.name AS tenant_name
FROM hookline_tenant_deliveries(%(tenant_id)s) d
JOIN events e ON e.id = d.event_id
JOIN endpoints p ON p.id = d.endpoint_id
JOIN tenants t ON t.id = d.tenant_id
WHERE (%(state)s::text IS NULL OR (d.state = hookline_stored_state(%(state)s)
                                  AND hookline_shown_state(d.state, d.id) = %(state)s))
  AND (%(event_type)s::text IS NULL OR e.type = %(event_type)s)
  AND (%(since)s::timestamptz IS NULL OR d.created_at >= %(since)s)
  AND (%(until)s::timestamptz IS NULL OR d.created_at < %(until)s)
ORDER BY d.walk_id DESC, d.id DESC
LIMIT %(limit)s

-- delivery_as_sent --
-- One delivery in scope with its event (type, the exact payload bytes, content type) and its
-- endpoint (URL, description, custom headers, transformer, kind).
SELECT d.id, d.event_id, d.endpoint_id, d.tenant_id, hookline_shown_state(d.state, d.id) AS state,
       d.attempt_count, d.last_status,
       d.last_error, d.created_at, d.updated_at, d.finished_at,
       e.type AS event_type, e.payload, e.content_type, e.source_id,
       p.url AS endpoint_url, p.description AS endpoint_description, p.headers,
       p.input_transformer, p.kind, t.name AS tenant_name
FROM deliveries d
JOIN events e ON e.id = d.event_id
JOIN endpoints p ON p.id = d.endpoint_id
JOIN tenants t ON t.id = d.tenant_id
WHERE d.id = %(id)s AND (%(tenant)s::text IS NULL OR d.tenant_id = %(tenant)s)

-- delivery_attempts_shown --
-- A delivery's attempts, oldest first, with the response headers kept (the caller has already
-- found the delivery in its scope).
SELECT id, attempted_at, duration_ms, status_code, response_excerpt, error_class,
       response_headers
FROM attempt_log WHERE delivery_id = %(id)s ORDER BY attempted_at, id LIMIT %(limit)s
