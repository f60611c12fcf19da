-- Restores requested through the API and their outcome (docs/decisions/0051). Only operators
-- make and read them, so no query is scoped to a tenant.

-- insert_restore --
INSERT INTO restores (id, tenant_id, requested_by, reason, request)
VALUES (%(id)s, %(tenant_id)s, %(requested_by)s, %(reason)s, %(request)s)
RETURNING *

-- get_restore --
SELECT * FROM restores WHERE id = %(id)s

-- list_restores --
SELECT * FROM restores
WHERE (%(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s)
  AND (%(after)s::text IS NULL OR id < %(after)s)
ORDER BY id DESC LIMIT %(limit)s

-- claim_restore --
-- The runner takes an accepted restore; a second delivery of the same invocation finds it
-- taken and does nothing.
UPDATE restores SET state = 'running', started_at = now()
WHERE id = %(id)s AND state = 'accepted'
RETURNING *

-- finish_restore --
UPDATE restores SET state = %(state)s, result = %(result)s, audit_id = %(audit_id)s,
    finished_at = now()
WHERE id = %(id)s AND state IN ('accepted', 'running')
RETURNING *
