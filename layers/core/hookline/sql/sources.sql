-- insert_source --
INSERT INTO sources (id, tenant_id, name, scheme, secrets, tolerance_seconds, options)
VALUES (%(id)s, %(tenant_id)s, %(name)s, %(scheme)s, %(secrets)s, %(tolerance_seconds)s,
        %(options)s)
RETURNING id, tenant_id, name, scheme, tolerance_seconds, options, enabled, created_at

-- get_source --
SELECT id, tenant_id, name, scheme, secrets, tolerance_seconds, options, enabled, created_at
FROM sources WHERE id = %(id)s AND deleted_at IS NULL

-- list_sources --
SELECT id, tenant_id, name, scheme, tolerance_seconds, options, enabled, created_at
FROM sources
WHERE (%(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s) AND deleted_at IS NULL
ORDER BY id

-- set_source_enabled --
UPDATE sources SET enabled = %(enabled)s, updated_at = now()
WHERE id = %(id)s AND deleted_at IS NULL
RETURNING id, enabled

-- The management API's source queries (scoped_*). Their `tenant` parameter is the caller's
-- scope: NULL for an operator, else its tenant, so another tenant's source is simply not
-- found; so is a deleted one (docs/decisions/0019-soft-delete.md). Lists are newest first,
-- paged by id.

-- scoped_get_source --
SELECT id, tenant_id, name, scheme, tolerance_seconds, options, enabled, created_at, updated_at
FROM sources
WHERE id = %(id)s AND deleted_at IS NULL
  AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)

-- scoped_list_sources --
SELECT id, tenant_id, name, scheme, tolerance_seconds, options, enabled, created_at, updated_at
FROM sources
WHERE deleted_at IS NULL
  AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
  AND (%(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s)
  AND (%(after)s::text IS NULL OR id < %(after)s)
ORDER BY id DESC LIMIT %(limit)s

-- scoped_set_source_enabled --
UPDATE sources SET enabled = %(enabled)s, updated_at = now()
WHERE id = %(id)s AND deleted_at IS NULL
  AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
RETURNING id

-- scoped_lock_source --
-- The source with its stored (sealed) secrets, locked for a change.
SELECT id, tenant_id, name, scheme, secrets, tolerance_seconds, options, enabled FROM sources
WHERE id = %(id)s AND deleted_at IS NULL
  AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
FOR UPDATE

-- scoped_set_source_secrets --
UPDATE sources SET secrets = %(secrets)s, updated_at = now()
WHERE id = %(id)s AND deleted_at IS NULL
  AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
RETURNING id

-- scoped_update_source --
-- NULL parameters keep the current value (the API's PATCH).
UPDATE sources SET
    name = coalesce(%(name)s, name),
    tolerance_seconds = coalesce(%(tolerance_seconds)s, tolerance_seconds),
    options = coalesce(%(options)s, options),
    updated_at = now()
WHERE id = %(id)s AND deleted_at IS NULL
  AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
RETURNING id

-- scoped_delete_source --
-- Soft delete: disabled for good, its secrets wiped; events keep referring to the row.
UPDATE sources SET deleted_at = now(), enabled = false, secrets = '{}', updated_at = now()
WHERE id = %(id)s AND deleted_at IS NULL
  AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
RETURNING id, tenant_id, name, scheme, tolerance_seconds, options, enabled, created_at,
          updated_at, deleted_at
