-- Bounded storage (docs/decisions/0039, 0040): the hot tables become partitioned by day, so
-- retention drops whole partitions; dedupe moves to a key table of its own that outlives them.
--
-- Every hot table is partitioned by RANGE of its time-ordered text id (C collation), not by a
-- timestamp: the primary key stays the id alone, a lookup by id prunes to one partition, and an
-- event's outbox row, deliveries and attempts all fall in the event's day:
--   events, outbox     by the event id    'evt_' + ULID (10 characters of milliseconds first)
--   deliveries         by the delivery id 'dlv_' + the event's 10 ULID time characters + hash
--   attempts           by the delivery id
-- Day D's partition of each table holds ['<prefix>' || ulid_time(D), '<prefix>' || ulid_time(D+1)).
-- A default partition takes whatever falls outside the days created (delivery ids made before
-- this migration, in another format, live there until retention removes them).
--
-- No foreign keys between the partitioned tables: a foreign key to a partitioned table costs a
-- check per inserted row that grows with the number of partitions (the check's generic plan
-- locks every partition): 23 us a delivery with 9 partitions, 54 us with 99 (bench/fanout.py
-- --past-days, docs/performance.md). The rows are only ever made from their parent in the same
-- statement (fan-out, reconcile, replay, restore), and removed children first (retention,
-- erasure), which checks for unfinished children itself.
--
-- The conversion copies the rows into the new tables inside this migration's transaction, under
-- the migrator's advisory lock: no row is lost, and a failure leaves the old tables as they were.

-- The 10 Crockford base32 characters of a ULID's time part for an instant (milliseconds).
CREATE FUNCTION hookline_ulid_time(at timestamptz) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    ms       bigint := floor(extract(epoch FROM at) * 1000)::bigint;
    alphabet text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    encoded  text := '';
BEGIN
    FOR i IN 1..10 LOOP
        encoded := substr(alphabet, (ms % 32)::integer + 1, 1) || encoded;
        ms := ms / 32;
    END LOOP;
    RETURN encoded;
END $$;

-- A delivery's id: the event's time (so the delivery lives in the event's day partition) and a
-- hash of (event, endpoint). The same pair always gets the same id, so the primary key is the
-- "one delivery per event and endpoint" rule, and an event restored from the archive and
-- fanned out again gets the webhook-ids it had before.
CREATE FUNCTION hookline_delivery_id(event_id text, endpoint_id text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT 'dlv_' || substr(event_id, 5, 10) || substr(md5(event_id || '/' || endpoint_id), 1, 16)
$$;

-- Create day `day`'s partition of every hot table, if missing. Returns how many were created.
-- A day whose rows already sit in a default partition is left alone (creating it would fail):
-- the caller reports it.
CREATE FUNCTION hookline_create_day_partitions(day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    suffix  text := to_char(day, 'YYYYMMDD');
    lo      text := hookline_ulid_time(day::timestamp AT TIME ZONE 'UTC');
    hi      text := hookline_ulid_time((day + 1)::timestamp AT TIME ZONE 'UTC');
    spec    record;
    made    integer := 0;
    crowded boolean;
BEGIN
    FOR spec IN SELECT * FROM (VALUES
        ('events', 'evt_', 'id'), ('outbox', 'evt_', 'event_id'),
        ('deliveries', 'dlv_', 'id'), ('attempts', 'dlv_', 'delivery_id')) AS t(tbl, prefix, col)
    LOOP
        CONTINUE WHEN to_regclass(spec.tbl || '_d' || suffix) IS NOT NULL;
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I >= $1 AND %I < $2)',
                       spec.tbl || '_default', spec.col, spec.col)
            INTO crowded USING spec.prefix || lo, spec.prefix || hi;
        CONTINUE WHEN crowded;
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                       spec.tbl || '_d' || suffix, spec.tbl, spec.prefix || lo, spec.prefix || hi);
        made := made + 1;
    END LOOP;
    RETURN made;
END $$;

-- The day partitions of the hot tables: table, day, and how its range reads.
CREATE VIEW hookline_day_partitions AS
SELECT parent.relname AS table_name, child.relname AS partition_name,
       to_date(substr(child.relname, length(parent.relname) + 3), 'YYYYMMDD') AS day
FROM pg_inherits i
JOIN pg_class parent ON parent.oid = i.inhparent
JOIN pg_class child ON child.oid = i.inhrelid
WHERE parent.relname IN ('events', 'outbox', 'deliveries', 'attempts')
  AND child.relname ~ '_d[0-9]{8}$';

-- Out of the way: the old tables and their index names.
ALTER TABLE attempts RENAME TO attempts_unpartitioned;
ALTER TABLE deliveries RENAME TO deliveries_unpartitioned;
ALTER TABLE outbox RENAME TO outbox_unpartitioned;
ALTER TABLE events RENAME TO events_unpartitioned;
DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT i.relname FROM pg_index x
             JOIN pg_class i ON i.oid = x.indexrelid
             JOIN pg_class t ON t.oid = x.indrelid
             WHERE t.relname IN ('events_unpartitioned', 'outbox_unpartitioned',
                                 'deliveries_unpartitioned', 'attempts_unpartitioned')
    LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', r.relname, r.relname || '_unpartitioned');
    END LOOP;
END $$;

-- Dedupe keys, kept apart from the ledger's partitions (decision 0039): a provider's retry or
-- a repeated Idempotency-Key finds its original event id here for `dedupe_retention_days`, and
-- for as long as the event itself is in the ledger, also after the event was archived.
CREATE TABLE event_keys (
    tenant_id   text NOT NULL REFERENCES tenants (id),
    origin      text NOT NULL,
    dedupe_key  text NOT NULL,
    event_id    text COLLATE "C" NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, origin, dedupe_key)
);
CREATE INDEX event_keys_created_idx ON event_keys (created_at);
-- Retention deletes one day of keys a day, 1/30 of the table or less: at the default 20 % it
-- would carry up to a fifth of dead rows between vacuums (bench/soak.py); 2 % is about daily.
ALTER TABLE event_keys SET (autovacuum_vacuum_scale_factor = 0.02);

CREATE TABLE events (
    id            text COLLATE "C" NOT NULL,
    tenant_id     text NOT NULL REFERENCES tenants (id),
    source_id     text REFERENCES sources (id),
    origin        text NOT NULL,
    type          text NOT NULL,
    dedupe_key    text NOT NULL,
    payload       bytea NOT NULL,
    content_type  text NOT NULL DEFAULT 'application/json',
    headers       jsonb NOT NULL DEFAULT '{}',
    received_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (id)
) PARTITION BY RANGE (id);
CREATE INDEX events_tenant_received_idx ON events (tenant_id, received_at);
CREATE INDEX events_tenant_id_idx ON events (tenant_id, id);
CREATE TRIGGER events_immutable BEFORE UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION hookline_events_immutable();

CREATE TABLE outbox (
    event_id       text COLLATE "C" NOT NULL,
    tenant_id      text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    fanned_out_at  timestamptz,
    PRIMARY KEY (event_id)
) PARTITION BY RANGE (event_id);
CREATE INDEX outbox_pending_idx ON outbox (created_at) WHERE fanned_out_at IS NULL;

CREATE TABLE deliveries (
    id               text COLLATE "C" NOT NULL,
    event_id         text COLLATE "C" NOT NULL,
    endpoint_id      text NOT NULL REFERENCES endpoints (id),
    tenant_id        text NOT NULL,
    tenant_group     text NOT NULL,
    state            text NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'queued', 'delivering', 'delivered', 'failed', 'dead')),
    attempt_count    integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    lease_expires_at timestamptz,
    deadline_at      timestamptz NOT NULL,
    last_status      integer,
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    enqueue_seq      integer NOT NULL DEFAULT 0,
    PRIMARY KEY (id)
) PARTITION BY RANGE (id);
CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX deliveries_leased_idx ON deliveries (lease_expires_at)
    WHERE state IN ('queued', 'delivering');
CREATE INDEX deliveries_endpoint_idx ON deliveries (endpoint_id, created_at);
CREATE INDEX deliveries_state_idx ON deliveries (state, updated_at)
    WHERE state IN ('failed', 'dead');
CREATE INDEX deliveries_tenant_idx ON deliveries (tenant_id, id);
CREATE INDEX deliveries_event_idx ON deliveries (event_id, endpoint_id);

CREATE TABLE attempts (
    id                bigint GENERATED ALWAYS AS IDENTITY,
    delivery_id       text COLLATE "C" NOT NULL,
    attempted_at      timestamptz NOT NULL DEFAULT now(),
    duration_ms       integer NOT NULL,
    status_code       integer,
    response_excerpt  text,
    error_class       text,
    PRIMARY KEY (delivery_id, id)
) PARTITION BY RANGE (delivery_id);
CREATE INDEX attempts_delivery_idx ON attempts (delivery_id, attempted_at);

CREATE TABLE events_default PARTITION OF events DEFAULT;
CREATE TABLE outbox_default PARTITION OF outbox DEFAULT;
CREATE TABLE deliveries_default PARTITION OF deliveries DEFAULT;
CREATE TABLE attempts_default PARTITION OF attempts DEFAULT;

-- The update-heavy tables' partitions are small; vacuum them sooner than the 20 % default
-- (bench/soak.py, docs/performance.md).
ALTER TABLE deliveries_default SET (autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE outbox_default SET (autovacuum_vacuum_scale_factor = 0.05);

-- A day partition for every day that has an event, and for the week ahead.
SELECT hookline_create_day_partitions(d::date)
FROM generate_series(
    date_trunc('day', (SELECT coalesce(min(received_at), now()) FROM events_unpartitioned)
                      AT TIME ZONE 'UTC'),
    (now() + interval '7 days') AT TIME ZONE 'UTC',
    interval '1 day') AS d;

INSERT INTO events SELECT id, tenant_id, source_id, origin, type, dedupe_key, payload,
                          content_type, headers, received_at
FROM events_unpartitioned;
INSERT INTO event_keys (tenant_id, origin, dedupe_key, event_id, created_at)
SELECT tenant_id, origin, dedupe_key, id, received_at FROM events_unpartitioned
WHERE origin <> 'test';
INSERT INTO outbox SELECT event_id, tenant_id, created_at, fanned_out_at
FROM outbox_unpartitioned;
INSERT INTO deliveries
SELECT id, event_id, endpoint_id, tenant_id, tenant_group, state, attempt_count,
       next_attempt_at, lease_expires_at, deadline_at, last_status, last_error, created_at,
       updated_at, finished_at, enqueue_seq
FROM deliveries_unpartitioned;
INSERT INTO attempts (id, delivery_id, attempted_at, duration_ms, status_code,
                      response_excerpt, error_class)
OVERRIDING SYSTEM VALUE
SELECT id, delivery_id, attempted_at, duration_ms, status_code, response_excerpt, error_class
FROM attempts_unpartitioned;
SELECT setval(pg_get_serial_sequence('attempts', 'id'),
              (SELECT coalesce(max(id), 0) + 1 FROM attempts_unpartitioned), false);

DROP TABLE attempts_unpartitioned;
DROP TABLE deliveries_unpartitioned;
DROP TABLE outbox_unpartitioned;
DROP TABLE events_unpartitioned;

-- Tenants may keep their ledger shorter or longer than the global `ledger_retention_days`.
ALTER TABLE tenants ADD COLUMN retention_days integer CHECK (retention_days > 0);

-- A restored window is held in the ledger for a while, so the next retention run does not
-- archive and drop it again at once (docs/decisions/0041).
CREATE TABLE retention_holds (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    since       timestamptz NOT NULL,
    until       timestamptz NOT NULL CHECK (until > since),
    expires_at  timestamptz NOT NULL,
    reason      text NOT NULL
);
CREATE INDEX retention_holds_tenant_idx ON retention_holds (tenant_id, expires_at);

-- Drop day `day`'s partitions of every hot table, children first, with the rows of the day's
-- events that sit in the default partitions (deliveries made before this migration). The
-- caller has archived them. Returns how many partitions were dropped.
CREATE FUNCTION hookline_drop_day_partitions(day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    suffix text := to_char(day, 'YYYYMMDD');
    lo     text := 'evt_' || hookline_ulid_time(day::timestamp AT TIME ZONE 'UTC');
    hi     text := 'evt_' || hookline_ulid_time((day + 1)::timestamp AT TIME ZONE 'UTC');
    tbl    text;
    busy   boolean;
    made   integer := 0;
BEGIN
    -- Nothing unfinished is ever removed: with the day's deliveries locked against change, a
    -- delivery a replay made pending again since the caller looked stops the drop.
    IF to_regclass('deliveries_d' || suffix) IS NOT NULL THEN
        EXECUTE format('LOCK TABLE %I IN SHARE MODE', 'deliveries_d' || suffix);
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE state IN '
                       '(''pending'', ''queued'', ''delivering''))', 'deliveries_d' || suffix)
            INTO busy;
        IF busy THEN
            RAISE EXCEPTION 'day % has unfinished deliveries', day
                USING ERRCODE = 'object_in_use';
        END IF;
    END IF;
    DELETE FROM attempts_default a USING deliveries_default d
    WHERE a.delivery_id = d.id AND d.event_id >= lo AND d.event_id < hi;
    DELETE FROM deliveries_default WHERE event_id >= lo AND event_id < hi;
    FOREACH tbl IN ARRAY ARRAY['attempts', 'deliveries', 'outbox', 'events'] LOOP
        CONTINUE WHEN to_regclass(tbl || '_d' || suffix) IS NULL;
        EXECUTE format('ALTER TABLE %I DETACH PARTITION %I', tbl, tbl || '_d' || suffix);
        EXECUTE format('DROP TABLE %I', tbl || '_d' || suffix);
        made := made + 1;
    END LOOP;
    RETURN made;
END $$;
