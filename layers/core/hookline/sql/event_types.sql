-- The event-type catalogue. Like the API's other queries, `%(tenant)s` is the caller's scope:
-- NULL for an operator (every tenant), else the caller's tenant, so another tenant's type is
-- simply not found.

-- insert_event_type --
INSERT INTO event_types (id, tenant_id, name, description, schema)
VALUES (%(id)s, %(tenant_id)s, %(name)s, %(description)s, %(schema)s)
ON CONFLICT (tenant_id, name) WHERE archived_at IS NULL DO NOTHING
RETURNING id, tenant_id, name, description, schema, archived_at, created_at, updated_at

-- get_event_type --
SELECT id, tenant_id, name, description, schema, archived_at, created_at, updated_at
FROM event_types
WHERE id = %(id)s AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)

-- list_event_types --
SELECT id, tenant_id, name, description, schema, archived_at, created_at, updated_at
FROM event_types
WHERE (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
  AND (%(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s)
  AND (%(name)s::text IS NULL OR name = %(name)s)
  AND (%(archived)s OR archived_at IS NULL)
  AND (%(after)s::text IS NULL OR id < %(after)s)
ORDER BY id DESC LIMIT %(limit)s

-- update_event_type --
-- Only the given fields change (a NULL parameter keeps the value; `clear_schema` drops it).
UPDATE event_types SET
    description = coalesce(%(description)s, description),
    schema = CASE WHEN %(clear_schema)s THEN NULL ELSE coalesce(%(schema)s, schema) END,
    updated_at = clock_timestamp()
WHERE id = %(id)s AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
  AND archived_at IS NULL
RETURNING id, tenant_id, name, description, schema, archived_at, created_at, updated_at

-- archive_event_type --
UPDATE event_types SET archived_at = clock_timestamp(), updated_at = clock_timestamp()
WHERE id = %(id)s AND (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
  AND archived_at IS NULL
RETURNING id, tenant_id, name, description, schema, archived_at, created_at, updated_at

-- event_type_schema_version --
-- Publish's check: the live type with a schema, if any. The version (id, updated_at) keys the
-- compiled validator cache; the schema itself is read only on a cache miss.
SELECT id, updated_at FROM event_types
WHERE tenant_id = %(tenant_id)s AND name = %(name)s AND archived_at IS NULL
  AND schema IS NOT NULL

-- event_type_schema --
SELECT schema FROM event_types WHERE id = %(id)s
