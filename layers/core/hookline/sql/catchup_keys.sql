-- A source's inline catch-up API key (`options.catchup.api_key`) is a secret: stored sealed
-- like `sources.secrets` (docs/decisions/0020-catch-up-credentials-sealed.md).

-- plaintext_catchup_keys --
-- Keys written before they were sealed (a string or number without the sealed prefix).
SELECT id, options -> 'catchup' ->> 'api_key' AS api_key FROM sources
WHERE jsonb_typeof(options -> 'catchup' -> 'api_key') IN ('string', 'number')
  AND options -> 'catchup' ->> 'api_key' <> ''
  AND options -> 'catchup' ->> 'api_key' NOT LIKE 'hlenc1:%%'
FOR UPDATE

-- seal_catchup_key --
UPDATE sources SET options = jsonb_set(options, '{catchup,api_key}', to_jsonb(%(api_key)s::text))
WHERE id = %(id)s

-- wipe_catchup_key --
-- A deleted source keeps no secret (decision 0019): its catch-up key goes with it.
UPDATE sources SET options = options #- '{catchup,api_key}'
WHERE id = %(id)s AND deleted_at IS NOT NULL
  AND jsonb_typeof(options -> 'catchup') = 'object'
RETURNING options
