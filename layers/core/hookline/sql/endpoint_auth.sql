-- An endpoint's OAuth2 client credentials, mutual TLS material and signing scheme
-- (docs/decisions/0067). Secret parts arrive sealed (hookline.secretbox).

-- set_endpoint_auth --
-- Replaces the OAuth2 client or the TLS material (or clears it); a given part replaces the
-- whole of it. A new certificate is announced again when it nears its expiry.
UPDATE endpoints SET
    auth = CASE WHEN %(set_auth)s THEN %(auth)s ELSE auth END,
    auth_secret = CASE WHEN %(set_auth)s THEN %(auth_secret)s ELSE auth_secret END,
    tls = CASE WHEN %(set_tls)s THEN %(tls)s ELSE tls END,
    tls_key = CASE WHEN %(set_tls)s THEN %(tls_key)s ELSE tls_key END,
    tls_not_after = CASE WHEN %(set_tls)s THEN %(tls_not_after)s ELSE tls_not_after END,
    tls_expiry_announced_at = CASE WHEN %(set_tls)s THEN NULL ELSE tls_expiry_announced_at END,
    signing = coalesce(%(signing)s, signing),
    updated_at = now()
WHERE id = %(id)s AND deleted_at IS NULL
RETURNING id

-- claim_expiring_certificates --
-- Client certificates expiring before %(before)s not yet announced: marked announced in the
-- transaction that publishes their operational events. Crosses tenants (the reconciler's
-- sweep), on a partial index of the few endpoints with a certificate.
UPDATE endpoints e SET tls_expiry_announced_at = now()
FROM (SELECT id FROM endpoints
      WHERE tls_not_after IS NOT NULL AND tls_expiry_announced_at IS NULL
        AND deleted_at IS NULL AND tls_not_after < %(before)s
      ORDER BY tls_not_after LIMIT %(limit)s
      FOR UPDATE SKIP LOCKED) due
WHERE e.id = due.id
RETURNING e.id, e.tenant_id, e.url, e.tls_not_after, e.tls ->> 'certificate_subject' AS subject

-- endpoint_signing --
SELECT signing FROM endpoints WHERE id = %(id)s AND deleted_at IS NULL
