-- The event-type catalogue: per tenant, the types it publishes, described, optionally with a
-- JSON Schema that published payloads of that type must match (docs/decisions/0015).
--
-- Retiring a type archives it (archived_at) instead of deleting the row: the catalogue keeps
-- what a type meant and which schema held while it was live, and the name becomes free for a
-- new definition. Only a live (unarchived) type validates payloads.
CREATE TABLE event_types (
    id           text PRIMARY KEY,                 -- ety_<ulid>
    tenant_id    text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name         text NOT NULL
                 CHECK (length(name) <= 255
                        AND name ~ '^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$'),
    description  text NOT NULL DEFAULT '',
    schema       jsonb,                            -- a JSON Schema (Draft 2020-12 by default)
    archived_at  timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- One live definition per name and tenant; this is also publish's lookup (tenant, name).
CREATE UNIQUE INDEX event_types_live_name ON event_types (tenant_id, name)
    WHERE archived_at IS NULL;
CREATE INDEX event_types_tenant_idx ON event_types (tenant_id, id);
