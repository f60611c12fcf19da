-- The W3C traceparent of a traced event's receive span (decision 0070): fan-out reads it to
-- continue the event's trace into each delivery's queue message. NULL, and so no bytes in the
-- row (its null bitmap is already there for fanned_out_at), unless tracing is on and the event
-- was sampled. Adding a nullable column without a default rewrites nothing.
ALTER TABLE outbox ADD COLUMN traceparent text;
