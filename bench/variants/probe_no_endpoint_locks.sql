-- A probe, not a design (bench/deliver_calls.py --variant): what a part of deliver's calls
-- costs, measured by leaving it out. It leaves out the claim's endpoint locks: two claims of
-- one endpoint could then both count a free slot.

-- (The loop is skipped, not run: PL/pgSQL prepares its query at its first run, so a loop
-- that never runs costs what no loop costs.)

-- replace:
    FOR endpoint_key IN
-- with:
    IF false THEN FOR endpoint_key IN
-- end

-- replace:
    END LOOP;
-- with:
    END LOOP; END IF;
-- end
