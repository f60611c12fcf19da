-- What a source last saw (decision 0038): handshakes and rejections, which store no event, so
-- the events table cannot tell them. One row per source, upserted when one happens.
CREATE TABLE source_activity (
    source_id text PRIMARY KEY REFERENCES sources (id),
    last_handshake_at timestamptz,
    last_handshake_kind text,
    handshakes bigint NOT NULL DEFAULT 0,
    last_rejected_at timestamptz,
    last_rejected_reason text,
    rejected jsonb NOT NULL DEFAULT '{}'::jsonb
);
