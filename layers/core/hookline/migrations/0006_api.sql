-- Management API: who may call it (principal -> tenant scope), idempotent creates, and the
-- data key that encrypts endpoint and source secrets at rest (envelope encryption).

-- An API caller and its scope: an IAM principal ARN (a user, or a role; assumed-role sessions
-- match their role) or `key:<sha256 hex>` of a local bearer key. `scope` is a tenant id, or
-- `*` for an operator who sees every tenant.
CREATE TABLE api_principals (
    principal   text PRIMARY KEY,
    scope       text NOT NULL CHECK (scope <> ''),
    description text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- The answer to a create request, kept per scope and Idempotency-Key so a retried request
-- gets the same answer instead of a second object. `status` is NULL while the first request
-- is still being served.
CREATE TABLE api_idempotency (
    scope         text NOT NULL,
    key           text NOT NULL,
    request_hash  text NOT NULL,
    status        integer,
    response      jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, key)
);
CREATE INDEX api_idempotency_created_idx ON api_idempotency (created_at);

-- Data keys of the secrets at rest: the plaintext key never touches the database; `wrapped`
-- is the key encrypted by KMS (or by the local master key file in development).
CREATE TABLE secret_keys (
    id          text PRIMARY KEY,
    wrapped     bytea NOT NULL,
    wrapped_by  text NOT NULL,              -- the KMS key id, or 'local'
    active      boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now()
);
-- One active data key at a time; two processes creating the first one race on this.
CREATE UNIQUE INDEX secret_keys_one_active ON secret_keys (active) WHERE active;

-- Listing filters of the API.
CREATE INDEX deliveries_tenant_idx ON deliveries (tenant_id, id);
CREATE INDEX deliveries_event_idx ON deliveries (event_id);
CREATE INDEX events_tenant_id_idx ON events (tenant_id, id);
