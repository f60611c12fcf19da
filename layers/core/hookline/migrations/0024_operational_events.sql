-- Operational events and endpoint health (issue 26, decision 0068). The monitor derives an
-- endpoint's state from the attempts and deliveries the pipeline already writes; these tables
-- hold only what it decided, so the delivery path writes nothing more.

-- One row per endpoint the monitor has looked at: its state as last announced, when that
-- changed, the per-endpoint thresholds (NULL: the deployment's defaults), and the quiet
-- period of its notifications (the last e-mail/chat message and the state it announced).
CREATE TABLE endpoint_health (
    endpoint_id             text PRIMARY KEY REFERENCES endpoints (id) ON DELETE CASCADE,
    tenant_id               text NOT NULL,
    state                   text NOT NULL DEFAULT 'healthy'
        CHECK (state IN ('healthy', 'failing', 'disabled')),
    changed_at              timestamptz NOT NULL DEFAULT now(),
    failing_after_attempts  integer CHECK (failing_after_attempts > 0),
    failing_error_rate      double precision
        CHECK (failing_error_rate > 0 AND failing_error_rate <= 1),
    failing_window_seconds  integer CHECK (failing_window_seconds BETWEEN 60 AND 86400),
    notified_at             timestamptz,
    notified_state          text
);

-- Who hears about a tenant's endpoints besides its subscribed endpoints (opt-in): e-mail
-- addresses and a Slack-compatible incoming webhook URL (fetched through the SSRF guard).
CREATE TABLE tenant_notifications (
    tenant_id   text PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    emails      text[] NOT NULL DEFAULT '{}',
    chat_url    text,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Where the monitor's scan of dead deliveries stopped (by updated_at; each run re-reads a
-- short overlap, and the events' idempotency keys make a second look harmless).
CREATE TABLE operational_positions (
    name        text PRIMARY KEY,
    position    timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- The monitor reads the last minutes of attempts every run. A BRIN index on attempted_at
-- (rows arrive in time order) costs the insert path next to nothing — new pages are only
-- summarised by vacuum — and lets the scan skip every older block range.
CREATE INDEX attempts_attempted_at_brin ON attempts USING brin (attempted_at)
    WITH (autosummarize = on);

-- What an endpoint answered besides its status and body: its response headers, bounded by the
-- deliverer (at most 32, names 64 and values 256 characters; Set-Cookie values withheld), for
-- the console's and the portal's delivery page. Written by the statements that already record
-- the attempt: no statement more per delivery.
ALTER TABLE attempts ADD COLUMN response_headers jsonb;
