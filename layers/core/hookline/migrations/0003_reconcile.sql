-- Reconcile: one report row per run, and the provider catch-up state of each source.

-- What one reconcile run found and repaired. `repairs` holds counts of what the run fixed
-- (late outbox rows fanned out, leases requeued, deliveries declared dead, missing deliveries
-- created, catch-up events stored, redeliveries requested); `findings` holds what it saw
-- (deliveries per state, DLQ depth per tenant group, deliveries never attempted, catch-up
-- results, errors). `unreconciled` is the headline: what is still wrong after the run.
CREATE TABLE reconcile_runs (
    id            text PRIMARY KEY,
    trigger       text NOT NULL,              -- schedule | cli | test
    started_at    timestamptz NOT NULL,
    finished_at   timestamptz NOT NULL,
    repairs       jsonb NOT NULL DEFAULT '{}',
    findings      jsonb NOT NULL DEFAULT '{}',
    unreconciled  integer NOT NULL CHECK (unreconciled >= 0)
);
CREATE INDEX reconcile_runs_started_idx ON reconcile_runs (started_at DESC);

-- Where a source's provider catch-up stands. `position` is the provider's own cursor
-- (Stripe: the newest event `created` seen, and a walk to resume; GitHub: the newest delivery
-- time checked). `leased_until` is the claim of the run working on it, so two reconcile runs
-- never call the same provider for the same source at once.
CREATE TABLE source_catchup (
    source_id     text PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
    position      jsonb NOT NULL DEFAULT '{}',
    leased_until  timestamptz,
    last_run_at   timestamptz,
    last_error    text
);

-- Redeliveries asked of a provider (GitHub), so one failed delivery is not asked for again
-- on every run: at most `max_redeliveries` times, spaced by the source's interval.
CREATE TABLE catchup_redeliveries (
    source_id          text NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    delivery_key       text NOT NULL,         -- GitHub: the delivery guid (X-GitHub-Delivery)
    requests           integer NOT NULL DEFAULT 1,
    last_requested_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, delivery_key)
);
