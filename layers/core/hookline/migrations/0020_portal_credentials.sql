-- Portal links and portal sessions as rows (docs/decisions/0061): a link opens one session,
-- once; a link or a session can be revoked (the API, the CLI, sign-out); erasing a tenant
-- revokes them all. The signed tokens carry the row's id; a token without a live row is void.
CREATE TABLE portal_links (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES tenants (id),
    created_by  text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz,
    revoked_at  timestamptz
);
CREATE INDEX portal_links_by_tenant ON portal_links (tenant_id, id);

CREATE TABLE portal_sessions (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES tenants (id),
    link_id     text NOT NULL REFERENCES portal_links (id),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    ended_at    timestamptz
);
CREATE INDEX portal_sessions_live_by_tenant ON portal_sessions (tenant_id) WHERE ended_at IS NULL;
CREATE INDEX portal_sessions_by_link ON portal_sessions (link_id);
