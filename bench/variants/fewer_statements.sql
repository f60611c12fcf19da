-- A variant of deliver's claim and record (bench/deliver_calls.py --variant): fewer statements
-- per call. The batch's bounds in one statement instead of two, in the claim and the record.
-- (Its second part, the claim's endpoint locks in one statement, is gone with the loop it
-- edited: since decision 0092 one function takes them, for the claim and for the sweeps.)

-- replace:
    lo text := (SELECT min(i) FROM unnest(p_ids::text[]) AS i);
    hi text := (SELECT max(i) FROM unnest(p_ids::text[]) AS i);
    -- and their events': a delivery's id carries its event's time (hookline_delivery_id), or
-- with:
    lo text;
    hi text;
    -- and their events': a delivery's id carries its event's time (hookline_delivery_id), or
-- end

-- replace:
    event_lo text := 'evt_' || hookline_ulid_time(hookline_ulid_at(substr(lo, 5, 10))
                                                  - interval '1 day');
    event_hi text := 'evt_' || substr(hi, 5, 10) || '~';
-- with:
    event_lo text;
    event_hi text;
-- end

-- replace:
BEGIN
%3$s    IF NOT p_durable THEN
-- with:
BEGIN
    SELECT min(i), max(i) INTO lo, hi FROM unnest(p_ids::text[]) AS i;
    event_lo := 'evt_' || hookline_ulid_time(hookline_ulid_at(substr(lo, 5, 10))
                                             - interval '1 day');
    event_hi := 'evt_' || substr(hi, 5, 10) || '~';
%3$s    IF NOT p_durable THEN
-- end

-- replace:
    lo text := (SELECT min(i) FROM unnest(p_ids::text[]) AS i);
    hi text := (SELECT max(i) FROM unnest(p_ids::text[]) AS i);
BEGIN
%3$s    RETURN QUERY
-- with:
    lo text;
    hi text;
BEGIN
    SELECT min(i), max(i) INTO lo, hi FROM unnest(p_ids::text[]) AS i;
%3$s    RETURN QUERY
-- end
