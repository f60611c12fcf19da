-- Restores requested through the management API (docs/decisions/0051): like replays (0008),
-- the API records the request and answers 202; the replay function (or, locally, a thread)
-- claims it (accepted -> running), restores the window and writes the result and the id of
-- its audit entry.
CREATE TABLE restores (
    id            text PRIMARY KEY,                -- rst_<ulid>
    tenant_id     text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    requested_by  text NOT NULL,
    reason        text NOT NULL,
    request       jsonb NOT NULL,                  -- since, until (absolute), dry_run
    state         text NOT NULL DEFAULT 'accepted'
                  CHECK (state IN ('accepted', 'running', 'succeeded', 'failed')),
    result        jsonb,
    audit_id      bigint,
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    finished_at   timestamptz
);
CREATE INDEX restores_tenant_idx ON restores (tenant_id, id);
