-- event_traces --
-- The traced events of deliveries about to be enqueued (decision 0070): run only when
-- tracing is on; deliveries of untraced events are not returned.
SELECT d.id AS delivery_id, d.event_id, o.traceparent
FROM deliveries d JOIN outbox o ON o.event_id = d.event_id
WHERE d.id = ANY(%(ids)s) AND o.traceparent IS NOT NULL
