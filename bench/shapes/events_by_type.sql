-- A what-if for `bench/pipeline.py --shape
-- bench/shapes/no_endpoint_index.sql,bench/shapes/events_by_type.sql`, never a migration:
-- the events indexed by tenant and type, one entry an event, which a reader could follow to
-- an endpoint's deliveries (the ids `hookline_delivery_id` implies) in place of the endpoint
-- index's entry a delivery (docs/performance.md, "What dominates now"). Priced with the
-- endpoint index dropped; the readers that would use it are not built.
CREATE INDEX events_tenant_type_idx ON events (tenant_id, type, received_at);
