-- insert_source --
INSERT INTO sources (id, tenant_id, name, scheme, secrets, tolerance_seconds, options)
VALUES (%(id)s, %(tenant_id)s, %(name)s, %(scheme)s, %(secrets)s, %(tolerance_seconds)s,
        %(options)s)
RETURNING id, tenant_id, name, scheme, tolerance_seconds, options, enabled, created_at

-- get_source --
SELECT id, tenant_id, name, scheme, secrets, tolerance_seconds, options, enabled, created_at
FROM sources WHERE id = %(id)s

-- list_sources --
SELECT id, tenant_id, name, scheme, tolerance_seconds, options, enabled, created_at
FROM sources
WHERE (%(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s)
ORDER BY id

-- set_source_enabled --
UPDATE sources SET enabled = %(enabled)s, updated_at = now() WHERE id = %(id)s
RETURNING id, enabled
