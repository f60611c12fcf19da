-- Retention gives way to the pipeline (decision 0116).
--
-- A day's transaction waits for a lock at most this long. It is set inside a function:
-- `set_config` in a statement's text would make RDS Proxy pin the session for good, while the
-- setting is the transaction's own and outlives nothing (decision 0081's reasoning: the proxy
-- sees `SELECT hookline_set_lock_wait(…)`).
CREATE FUNCTION hookline_set_lock_wait(p_wait_ms integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_wait_ms IS NULL OR p_wait_ms < 1 THEN
        RAISE EXCEPTION 'lock wait must be at least 1 ms, not %', p_wait_ms
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM set_config('lock_timeout', p_wait_ms || 'ms', true);
END $$;

-- A day's drop locks the hot tables' parents before any of the day's partitions, in the order
-- an event's writes take them (the event, its outbox row, its deliveries, their attempts): a
-- statement over a parent locks it before its partitions, so it never holds a parent the drop
-- waits for while it waits for the day's partition (decision 0116). ONLY: the other days'
-- partitions stay free.
CREATE FUNCTION hookline_lock_hot_parents() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    LOCK TABLE ONLY events, ONLY outbox, ONLY deliveries, ONLY attempts
        IN ACCESS EXCLUSIVE MODE;
END $$;
