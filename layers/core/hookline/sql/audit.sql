-- The audit log: who did what to which object, with parameters. Append-only.

-- insert_audit_entry --
INSERT INTO audit_log (actor, action, object_type, object_id, params)
VALUES (%(actor)s, %(action)s, %(object_type)s, %(object_id)s, %(params)s)
RETURNING id, at

-- list_audit_entries --
SELECT id, at, actor, action, object_type, object_id, params
FROM audit_log
WHERE (%(action)s::text IS NULL OR action = %(action)s)
ORDER BY id DESC
LIMIT %(limit)s
