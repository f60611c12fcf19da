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

-- fail_stale_restores --
-- A restore whose run died (the replay function's time limit, a crash) stays running, and one
-- whose run was never started stays accepted: after the given quiet times each is failed, with
-- why, so it does not look alive forever (reconcile's sweep, decision 0051).
UPDATE restores SET state = 'failed', finished_at = now(), result = jsonb_build_object('error',
    CASE WHEN state = 'accepted'
         THEN 'the restore never started (its run was not invoked or was lost); create it again'
         ELSE 'the restore''s run ended before it reported (see the replay function''s logs); '
              || 'restore again: events already back are skipped'
    END)
WHERE (state = 'running' AND started_at < now() - %(running_quiet)s::interval)
   OR (state = 'accepted' AND created_at < now() - %(accepted_quiet)s::interval)
RETURNING *

-- set_restore_audit_id --
UPDATE restores SET audit_id = %(audit_id)s WHERE id = %(id)s
