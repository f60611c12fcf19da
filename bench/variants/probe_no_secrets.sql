-- A probe, not a design (bench/deliver_calls.py --variant): what a part of deliver's calls
-- costs, measured by leaving it out. It leaves out the claim's secrets: nothing could then be
-- signed.

-- replace:
       CASE WHEN c.wait_seconds = 0 THEN ARRAY(
           SELECT s.secret FROM endpoint_secrets s
           WHERE s.endpoint_id = c.endpoint_id
             AND (s.expires_at IS NULL OR s.expires_at > now())
           ORDER BY s.created_at DESC) END AS secrets,
-- with:
       NULL::text[] AS secrets,
-- end
