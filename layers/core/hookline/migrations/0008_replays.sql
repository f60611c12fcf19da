-- Replays requested through the management API (docs/decisions/0016): the request as it will
-- run, who asked and why, and its progress. The API records the row and returns at once; the
-- replay function (or, locally, a background thread) claims it (accepted -> running), reports
-- progress and a heartbeat, and writes the final result and its audit entry's id.
CREATE TABLE replays (
    id            text PRIMARY KEY,                -- rpl_<ulid>
    scope         text NOT NULL,                   -- the caller's scope: a tenant id or '*'
    tenant_id     text REFERENCES tenants (id) ON DELETE CASCADE,  -- the tenant it is confined to
    requested_by  text NOT NULL,
    reason        text NOT NULL,
    request       jsonb NOT NULL,                  -- normalised: absolute window, defaults filled
    state         text NOT NULL DEFAULT 'accepted'
                  CHECK (state IN ('accepted', 'running', 'succeeded', 'failed')),
    total         integer,
    done          integer NOT NULL DEFAULT 0,
    result        jsonb,
    audit_id      bigint,
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    heartbeat_at  timestamptz,
    finished_at   timestamptz
);
CREATE INDEX replays_tenant_idx ON replays (tenant_id, id);
-- Finding runs whose runner went quiet (docs/decisions/0016).
CREATE INDEX replays_unfinished_idx ON replays (state) WHERE state IN ('accepted', 'running');
