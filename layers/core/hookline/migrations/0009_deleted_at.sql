-- Soft delete of sources and endpoints (docs/decisions/0019-soft-delete.md): events and
-- deliveries reference them, so the rows stay and history stays readable; `deleted_at` hides
-- them from the API, and a deleted row is disabled for good and keeps no secret.
ALTER TABLE sources ADD COLUMN deleted_at timestamptz;
ALTER TABLE endpoints ADD COLUMN deleted_at timestamptz;

-- A deleted source's secrets are wiped: an empty array only then.
ALTER TABLE sources DROP CONSTRAINT sources_secrets_check;
ALTER TABLE sources ADD CONSTRAINT sources_secrets_check CHECK (
    cardinality(secrets) BETWEEN 1 AND 2
    OR (deleted_at IS NOT NULL AND cardinality(secrets) = 0)
);

-- Deleted is disabled for good: no path may enable it again.
ALTER TABLE sources ADD CONSTRAINT sources_deleted_disabled
    CHECK (deleted_at IS NULL OR NOT enabled);
ALTER TABLE endpoints ADD CONSTRAINT endpoints_deleted_disabled
    CHECK (deleted_at IS NULL OR NOT enabled);
