-- read_sendable_endpoints --
-- What deliver needs of each endpoint to send a delivery whose message carries its event,
-- without a claim (decision 0108): the columns the claim returns of the endpoint, its
-- tenant's external id, its secrets with their expiry (checked when used, so a copy kept a
-- few seconds never signs with an expired one), and what decides whether it needs a claim
-- (its cap, its rate limit, an ordering). One statement for the endpoints a batch misses.
SELECT p.id, p.url, p.headers, p.retry_on_4xx, p.enabled, p.deleted_at IS NOT NULL AS deleted,
       p.input_transformer, p.kind, p.role_arn, p.destination, p.auth, p.auth_secret, p.tls,
       p.tls_key, p.public_only, p.max_concurrency, p.rate_limit_per_second,
       p.ordering IS NOT NULL AS ordered,
       (SELECT t.external_id FROM tenants t WHERE t.id = p.tenant_id) AS external_id,
       ARRAY(SELECT s.secret FROM endpoint_secrets s
             WHERE s.endpoint_id = p.id AND (s.expires_at IS NULL OR s.expires_at > now())
             ORDER BY s.created_at DESC) AS secrets,
       ARRAY(SELECT s.expires_at FROM endpoint_secrets s
             WHERE s.endpoint_id = p.id AND (s.expires_at IS NULL OR s.expires_at > now())
             ORDER BY s.created_at DESC) AS secrets_expire_at
FROM endpoints p
WHERE p.id = ANY (%(ids)s::text[])
