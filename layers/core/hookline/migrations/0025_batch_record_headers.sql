-- The batch record (migration 0022) carries each attempt's response headers too: 0024 added
-- attempts.response_headers after 0022's function was written, so attempts recorded by a
-- batch showed no response headers on the console's and the portal's delivery pages. Same
-- body as 0022's, with one more array; the old signature is dropped so nothing calls it.
DROP FUNCTION hookline_record_batch_delivered(
    text[], integer[], timestamptz[], text[], timestamptz[], integer[], integer[], text[]);

CREATE FUNCTION hookline_record_batch_delivered(
    p_ids text[], p_seqs integer[], p_claimed_until timestamptz[], p_endpoint_ids text[],
    p_attempted_at timestamptz[], p_duration_ms integer[], p_statuses integer[],
    p_excerpts text[], p_headers jsonb[])
RETURNS TABLE (id text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
WITH done AS (
    SELECT *
    FROM unnest(p_ids::text[], p_seqs::integer[], p_claimed_until::timestamptz[],
                p_endpoint_ids::text[], p_attempted_at::timestamptz[],
                p_duration_ms::integer[], p_statuses::integer[], p_excerpts::text[],
                p_headers::jsonb[])
         AS m(id, seq, claimed_until, endpoint_id, attempted_at, duration_ms, status, excerpt,
              headers)
), attempt AS (
    INSERT INTO attempts (delivery_id, attempted_at, duration_ms, status_code,
                          response_excerpt, error_class, response_headers)
    SELECT id, attempted_at, duration_ms, status, excerpt, NULL, headers FROM done
), finished AS (
    UPDATE deliveries d
    SET state = 'delivered', attempt_count = d.attempt_count + 1, lease_expires_at = NULL,
        last_status = coalesce(m.status, d.last_status), last_error = NULL,
        finished_at = now(), updated_at = now()
    FROM done m
    WHERE d.id = m.id AND d.state = 'delivering'
      AND d.enqueue_seq = m.seq AND d.lease_expires_at = m.claimed_until
    RETURNING d.id, d.endpoint_id
), released AS (
    DELETE FROM endpoint_slots s
    USING finished f
    WHERE s.endpoint_id = f.endpoint_id AND s.delivery_id = f.id
), recovered AS (
    UPDATE endpoints SET failing_since = NULL
    WHERE id IN (SELECT DISTINCT endpoint_id FROM done) AND failing_since IS NOT NULL
)
SELECT id FROM finished;
END $$;
