-- Quarantined fan-out pairs (decision 0059): an (event, endpoint) pair whose matching raised
-- (any exception: the event's document could not be built, the endpoint's pattern failed) is
-- recorded here with its reason instead of rolling back the fan-out of every other event. It
-- is undecided, not dropped: retention keeps its event, and an operator retries it once the
-- cause is fixed (a delivery if the pattern matches, nothing if not, still here if it fails).
CREATE TABLE fanout_quarantine (
    event_id       text COLLATE "C" NOT NULL,
    endpoint_id    text NOT NULL,
    tenant_id      text NOT NULL,
    tenant_group   text NOT NULL,
    stage          text NOT NULL,  -- fanout | reconcile | replay | retry: who found it
    reason         text NOT NULL,
    failures       integer NOT NULL DEFAULT 1,
    quarantined_at timestamptz NOT NULL DEFAULT now(),
    last_failed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, endpoint_id)
);
CREATE INDEX fanout_quarantine_tenant_idx ON fanout_quarantine (tenant_id, event_id);

-- Endpoints that must never reach a private address, whatever the deployment allows (decision
-- 0059, after 0043): those a tenant's customer added or re-pointed in the portal. The
-- deliverer connects to them through a client that refuses private addresses at connect time.
ALTER TABLE endpoints ADD COLUMN public_only boolean NOT NULL DEFAULT false;
