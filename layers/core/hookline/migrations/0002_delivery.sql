-- Fan-out and delivery: queue generations, per-endpoint concurrency slots and rate limits,
-- event-type matching and time-ordered ids in SQL.

-- Each enqueue of a delivery bumps its generation; a queue message carries the generation it
-- was sent with, so a stale copy (SQS is at-least-once, reconcile may re-enqueue) is skipped.
ALTER TABLE deliveries ADD COLUMN enqueue_seq integer NOT NULL DEFAULT 0;

-- A time-ordered id like the application's: prefix, 12 hex digits of milliseconds, 16 random.
CREATE FUNCTION hookline_id(prefix text) RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT prefix || '_'
        || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
        || substr(replace(gen_random_uuid()::text, '-', ''), 1, 16)
$$;

-- Does an event type match an endpoint's filters? Same reading as hookline.filters:
-- no filters = every type; `*` is any run of characters; everything else literal.
CREATE FUNCTION hookline_type_matches(patterns text[], event_type text)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT cardinality(patterns) = 0 OR EXISTS (
        SELECT 1 FROM unnest(patterns) AS f(pattern)
        WHERE event_type LIKE replace(replace(replace(replace(
            f.pattern, '\', '\\'), '%', '\%'), '_', '\_'), '*', '%')
    )
$$;

-- Slots held by deliveries in flight to an endpoint; a lease that expires frees the slot,
-- so a crashed worker cannot leak one.
CREATE TABLE endpoint_slots (
    endpoint_id       text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    delivery_id       text NOT NULL,
    lease_expires_at  timestamptz NOT NULL,
    PRIMARY KEY (endpoint_id, delivery_id)
);

-- Token bucket of an endpoint's rate limit (burst = one second's worth, at least 1).
CREATE TABLE endpoint_rate (
    endpoint_id  text PRIMARY KEY REFERENCES endpoints (id) ON DELETE CASCADE,
    tokens       double precision NOT NULL,
    refilled_at  timestamptz NOT NULL
);

-- Take a slot (and a token) for one delivery. Returns 0 when granted, else the seconds to
-- wait before trying again. The endpoint row lock serialises takers of one endpoint only.
CREATE FUNCTION hookline_take_slot(p_endpoint text, p_delivery text, p_lease_seconds double precision)
RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE
    cap     integer;
    rate    double precision;
    busy    integer;
    burst   double precision;
    bucket  endpoint_rate%ROWTYPE;
    level   double precision;
BEGIN
    SELECT max_concurrency, rate_limit_per_second INTO cap, rate
    FROM endpoints WHERE id = p_endpoint FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 0;  -- the caller finds the endpoint gone and finishes the delivery
    END IF;
    DELETE FROM endpoint_slots WHERE endpoint_id = p_endpoint AND lease_expires_at < now();
    SELECT count(*) INTO busy FROM endpoint_slots
    WHERE endpoint_id = p_endpoint AND delivery_id <> p_delivery;
    IF busy >= cap THEN
        RETURN 1;
    END IF;
    IF rate IS NOT NULL THEN
        burst := greatest(rate, 1);
        SELECT * INTO bucket FROM endpoint_rate WHERE endpoint_id = p_endpoint;
        IF NOT FOUND THEN
            level := burst;
        ELSE
            level := least(burst, bucket.tokens
                + rate * extract(epoch FROM clock_timestamp() - bucket.refilled_at));
        END IF;
        IF level < 1 THEN
            RETURN (1 - level) / rate;
        END IF;
        INSERT INTO endpoint_rate (endpoint_id, tokens, refilled_at)
        VALUES (p_endpoint, level - 1, clock_timestamp())
        ON CONFLICT (endpoint_id) DO UPDATE
            SET tokens = EXCLUDED.tokens, refilled_at = EXCLUDED.refilled_at;
    END IF;
    INSERT INTO endpoint_slots (endpoint_id, delivery_id, lease_expires_at)
    VALUES (p_endpoint, p_delivery, now() + make_interval(secs => p_lease_seconds))
    ON CONFLICT (endpoint_id, delivery_id) DO UPDATE
        SET lease_expires_at = EXCLUDED.lease_expires_at;
    RETURN 0;
END $$;
