-- Portal links and sessions (docs/decisions/0061): the rows behind the signed tokens.

-- portal_insert_link --
INSERT INTO portal_links (id, tenant_id, created_by, expires_at)
VALUES (%(id)s, %(tenant_id)s, %(created_by)s, %(expires_at)s)

-- portal_open_link --
SELECT id FROM portal_links
WHERE id = %(id)s AND tenant_id = %(tenant_id)s
  AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()

-- portal_use_link --
-- A link opens one session: the first use wins, a used, revoked or expired link opens none.
UPDATE portal_links SET used_at = now()
WHERE id = %(id)s AND tenant_id = %(tenant_id)s
  AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()
RETURNING id, expires_at

-- portal_insert_session --
INSERT INTO portal_sessions (id, tenant_id, link_id, expires_at)
VALUES (%(id)s, %(tenant_id)s, %(link_id)s, %(expires_at)s)

-- portal_live_session --
SELECT id FROM portal_sessions
WHERE id = %(id)s AND tenant_id = %(tenant_id)s AND ended_at IS NULL AND expires_at > now()

-- portal_end_session --
UPDATE portal_sessions SET ended_at = now() WHERE id = %(id)s AND ended_at IS NULL

-- portal_list_links --
SELECT l.id, l.tenant_id, l.created_by, l.created_at, l.expires_at, l.used_at, l.revoked_at,
       (SELECT count(*) FROM portal_sessions s
        WHERE s.link_id = l.id AND s.ended_at IS NULL AND s.expires_at > now()) AS live_sessions
FROM portal_links l
WHERE l.tenant_id = %(tenant_id)s AND (%(after)s::text IS NULL OR l.id < %(after)s)
ORDER BY l.id DESC LIMIT %(limit)s

-- portal_revoke_link --
-- A revoked link opens nothing more, and the session it opened ends.
WITH link AS (
    UPDATE portal_links SET revoked_at = coalesce(revoked_at, now())
    WHERE id = %(id)s AND tenant_id = %(tenant_id)s
    RETURNING id
), ended AS (
    UPDATE portal_sessions SET ended_at = now()
    WHERE link_id IN (SELECT id FROM link) AND ended_at IS NULL
    RETURNING id
)
SELECT (SELECT count(*) FROM link) AS links, (SELECT count(*) FROM ended) AS sessions

-- portal_revoke_tenant --
-- Every link and session of a tenant (erasure, or `hookline portal revoke --all`).
WITH links AS (
    UPDATE portal_links SET revoked_at = now()
    WHERE tenant_id = %(tenant_id)s AND revoked_at IS NULL AND used_at IS NULL
      AND expires_at > now()
    RETURNING id
), ended AS (
    UPDATE portal_sessions SET ended_at = now()
    WHERE tenant_id = %(tenant_id)s AND ended_at IS NULL
    RETURNING id
)
SELECT (SELECT count(*) FROM links) AS links, (SELECT count(*) FROM ended) AS sessions

-- portal_delete_tenant_principals --
-- A tenant's API keys and IAM principals scoped to it (erasure).
DELETE FROM api_principals WHERE scope = %(tenant_id)s
