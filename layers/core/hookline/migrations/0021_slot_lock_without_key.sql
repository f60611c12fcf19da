-- Slot takers lock the endpoint's row FOR NO KEY UPDATE instead of FOR UPDATE (decision 0066).
-- Taking a slot changes no key of the endpoint, and FOR UPDATE also conflicts with the
-- FOR KEY SHARE that every insert of a delivery takes on its endpoint (the foreign key): a
-- deliver batch that takes slots of several endpoints in one statement and a fan-out that
-- inserts deliveries to the same endpoints in another order deadlocked (bench/pipeline.py
-- --endpoints 10). Takers of one endpoint still queue behind each other.
CREATE OR REPLACE FUNCTION hookline_take_slot(p_endpoint text, p_delivery text, p_lease_seconds double precision)
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
    FROM endpoints WHERE id = p_endpoint FOR NO KEY UPDATE;
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
