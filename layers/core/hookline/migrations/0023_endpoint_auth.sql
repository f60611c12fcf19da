-- How an https endpoint authenticates and is signed (decision 0067): OAuth2 client
-- credentials (`auth`: public parts; `auth_secret`: the sealed client secret), mutual TLS
-- (`tls`: the client certificate and CA bundle, both public PEM; `tls_key`: the sealed private
-- key; `tls_not_after`: the certificate's expiry, for the reconciler's warning), and the
-- signing scheme. Ed25519 keys live in endpoint_secrets like HMAC secrets (a `whsk_` value,
-- sealed), with their public key beside them, so rotation works the same for both.
ALTER TABLE endpoints
    ADD COLUMN signing text NOT NULL DEFAULT 'hmac' CHECK (signing IN ('hmac', 'ed25519')),
    ADD COLUMN auth jsonb,
    ADD COLUMN auth_secret text,
    ADD COLUMN tls jsonb,
    ADD COLUMN tls_key text,
    ADD COLUMN tls_not_after timestamptz,
    -- set when `endpoint.certificate_expiring` was published for this certificate
    ADD COLUMN tls_expiry_announced_at timestamptz;

ALTER TABLE endpoint_secrets ADD COLUMN public_key text;

-- The reconciler's daily look for certificates about to expire reads only these rows.
CREATE INDEX endpoints_tls_not_after ON endpoints (tls_not_after)
    WHERE tls_not_after IS NOT NULL AND tls_expiry_announced_at IS NULL AND deleted_at IS NULL;
