-- The tenant portal's look, and which sites may frame it, per tenant (docs/decisions/0042).
-- Values are checked by the service; the constraints are the last line.
CREATE TABLE portal_settings (
    tenant_id        text PRIMARY KEY REFERENCES tenants (id),
    title            text CHECK (char_length(title) <= 100),
    logo_url         text CHECK (logo_url LIKE 'https://%'),
    accent           text CHECK (accent ~ '^#[0-9a-f]{6}$'),
    frame_ancestors  text[] NOT NULL DEFAULT '{}',
    updated_at       timestamptz NOT NULL DEFAULT now()
);
