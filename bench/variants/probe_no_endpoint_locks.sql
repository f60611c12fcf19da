-- A probe, not a design (bench/deliver_calls.py --variant): what a part of deliver's calls
-- costs, measured by leaving it out. It leaves out the claim's endpoint locks (and the
-- lookup of the batch's endpoints that takes them, decision 0092): two claims of one
-- endpoint could then both count a free slot.

-- (The statement is skipped, not run: PL/pgSQL prepares its query at its first run, so a
-- statement that never runs costs what no statement costs.)

-- replace:
    PERFORM hookline_lock_endpoint_slots(ARRAY(
-- with:
    IF false THEN PERFORM hookline_lock_endpoint_slots(ARRAY(
-- end

-- replace:
                            WHERE x.id = m.id AND x.id BETWEEN lo AND hi OFFSET 0) d));
-- with:
                            WHERE x.id = m.id AND x.id BETWEEN lo AND hi OFFSET 0) d)); END IF;
-- end
