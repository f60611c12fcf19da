-- claim_deliveries_to_send --
-- claim_delivery_to_send for a whole SQS batch in one statement (decision 0066): each
-- (id, generation) of the batch is claimed as that statement claims one, and, where the claim
-- holds and the endpoint is enabled and the deadline has not passed, its active secrets are
-- read and a slot taken (in endpoint order: concurrent batches lock the endpoints they share
-- in one order). One plan and one commit per batch instead of per message; it commits without
-- waiting for the disk unless %(durable)s (behind RDS Proxy, decision 0036). The body is
-- hookline_claim_batch's (migrations 0022, 0026), whose plan the backend caches.
SELECT * FROM hookline_claim_batch(%(ids)s::text[], %(seqs)s::integer[], %(lease)s::interval,
                                   %(now)s::timestamptz,
                                   %(lease_seconds)s::double precision, %(durable)s::boolean)

-- record_deliveries_delivered --
-- record_delivered for every delivered attempt of a batch in one statement (one durable
-- commit per batch, decision 0066): each attempt is recorded; each delivery is finished and
-- its slot freed only while its claim stands (same generation, same lease); every endpoint
-- with a success ends its failure streak. Returns the ids whose claim still stood. The body
-- is hookline_record_batch_delivered's (migration 0025, with the response headers).
SELECT * FROM hookline_record_batch_delivered(
    %(ids)s::text[], %(seqs)s::integer[], %(claimed_until)s::timestamptz[],
    %(endpoint_ids)s::text[], %(attempted_at)s::timestamptz[], %(duration_ms)s::integer[],
    %(statuses)s::integer[], %(excerpts)s::text[], %(headers)s::jsonb[])
