-- claim_deliveries_to_send --
-- The claims of a whole SQS batch in one statement (decision 0066): each (id, generation) is
-- claimed, and where the endpoint is enabled and the deadline has not passed, given a slot
-- (while fewer than the endpoint's cap are taken: slots are the live rows of the unlogged
-- in-flight table that hold one, decision 0085) and its active secrets, or held without one. One plan and
-- one commit per batch instead of per message; it commits without waiting for the disk
-- (decision 0014), behind RDS Proxy too: the set_config doing it runs inside the function,
-- where the proxy never sees it, and lasts only for its transaction (decision 0081). The body
-- is hookline_claim_batch's (migration 0037), which claim_delivery_to_send calls with one
-- message. Deliver calls the function's copy for the day partition the batch lies in, when
-- there is one (decision 0084).
SELECT * FROM hookline_claim_batch(%(ids)b::text[], %(seqs)b::integer[], %(lease)s::interval,
                                   %(now)s::timestamptz,
                                   %(lease_seconds)s::double precision, false)

-- record_deliveries_delivered --
-- record_delivered for every delivered attempt of a batch in one statement (one durable
-- commit per batch, decision 0066): each attempt is recorded; each claim ends (its in-flight
-- row deleted, which frees its slot), and its delivery is finished only while the claim
-- stood (hookline_end_claims, decision 0085); every endpoint with a success ends its failure streak. Returns the ids whose claim
-- still stood. The body is hookline_record_batch_delivered's (migration 0037); deliver calls
-- its copy for the batch's day partition, when there is one (decision 0084). The arrays go
-- in binary (`%(…)b`): psycopg writes a text array by escaping every element's quotes with a
-- regular expression, 309 µs of Python per batch of ten against 66 in binary.
SELECT * FROM hookline_record_batch_delivered(
    %(ids)b::text[], %(seqs)b::integer[], %(claimed_until)b::timestamptz[],
    %(endpoint_ids)b::text[], %(attempted_at)b::timestamptz[], %(duration_ms)b::integer[],
    %(statuses)b::integer[], %(excerpts)b::text[], %(headers)b::jsonb[])

-- record_deliveries_failed --
-- The failed attempts of a batch, or of one message, in one statement committed durably
-- (decision 0105): each attempt recorded; each endpoint of the streak list starting its
-- failure streak unless it has, its row written only then (decision 0104); each claim ended
-- (its slot freed) and, only while it stood, its delivery moved to the state the caller
-- decided (failed, dead, pending until a later due time, or queued again under a new
-- generation for a retry on an SQS delay). Returns a row per delivery whose claim stood (its
-- generation now) and one per endpoint on a streak (its start). The body is
-- hookline_record_batch_failed's (migration 0048), which keeps its plan; deliver calls its
-- copy for the batch's day partition, when there is one (decision 0084).
SELECT * FROM hookline_record_batch_failed(
    %(ids)b::text[], %(seqs)b::integer[], %(claimed_until)b::timestamptz[],
    %(attempted_at)b::timestamptz[], %(duration_ms)b::integer[], %(statuses)b::integer[],
    %(excerpts)b::text[], %(errors)b::text[], %(headers)b::jsonb[], %(states)b::text[],
    %(next_attempt_at)b::timestamptz[], %(lease_expires_at)b::timestamptz[],
    %(bumps)b::integer[], %(reasons)b::text[], %(streak_endpoints)b::text[])
